"""DocsSandbox's tree routes answer as Docs 5.4.1 does (design note docs-tree-api.md), over raw HTTP."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from elynav_nb.sandbox.docs.server import DocsSandbox
from elynav_nb.sandbox.docs.store import SandboxUser

pytestmark = pytest.mark.anyio

API = "/api/v1.0/documents"


class Caller:
    """Raw requests as one user (or anonymous), with the CSRF headers Docs needs on writes."""

    def __init__(self, sandbox: DocsSandbox, http: httpx.AsyncClient, session_id: str | None) -> None:
        self.sandbox = sandbox
        self.http = http
        self.headers: dict[str, str] = {"Origin": sandbox.url}
        if session_id is not None:
            self.headers["Cookie"] = f"docs_sessionid={session_id}; csrftoken=token"
            self.headers["X-CSRFToken"] = "token"

    async def call(self, method: str, path: str, body: Any = None, **params: Any) -> httpx.Response:
        return await self.http.request(
            method, f"{self.sandbox.url}{API}/{path}", json=body, params=params or None, headers=self.headers
        )

    async def json(self, method: str, path: str, body: Any = None, expect: int = 200, **params: Any) -> Any:
        response = await self.call(method, path, body, **params)
        assert response.status_code == expect, (response.status_code, response.text)
        return response.json() if response.content else None


@pytest.fixture
async def sandbox() -> AsyncIterator[DocsSandbox]:
    async with DocsSandbox(throttle_per_minute=100_000) as running:
        yield running


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def user(sandbox: DocsSandbox, http: httpx.AsyncClient, name: str) -> tuple[SandboxUser, Caller]:
    person, session = sandbox.create_user(name)
    return person, Caller(sandbox, http, session)


async def test_pages_past_100_documents_follow_drf(sandbox: DocsSandbox, http: httpx.AsyncClient) -> None:
    for number in range(250):
        sandbox.create_document(f"doc {number:03}")
    alice = Caller(sandbox, http, sandbox.session_id)
    first = await alice.json("GET", "", page_size=100, ordering="title")
    assert first["count"] == 250 and len(first["results"]) == 100 and first["previous"] is None
    assert first["next"] == f"{sandbox.url}{API}/?ordering=title&page=2&page_size=100"
    third = await alice.json("GET", "", page_size=100, ordering="title", page=3)
    assert [item["title"] for item in third["results"]][:2] == ["doc 200", "doc 201"] and third[
        "next"
    ] is None
    assert third["previous"] == f"{sandbox.url}{API}/?ordering=title&page=2&page_size=100"
    second = await alice.json("GET", "", page_size=100, page=2)
    assert second["previous"] == f"{sandbox.url}{API}/?page_size=100"  # the link to page 1 drops page
    last = await alice.json("GET", "", page_size=100, page="last")
    assert len(last["results"]) == 50
    assert len((await alice.json("GET", "", page_size=1000))["results"]) == 200  # max_page_size
    assert len((await alice.json("GET", "", page_size="x"))["results"]) == 20  # default page size
    beyond = await alice.call("GET", "", page_size=100, page=4)
    assert (beyond.status_code, beyond.json()) == (404, {"detail": "Invalid page."})


async def test_the_list_shows_only_the_highest_documents_and_nothing_to_anonymous(
    sandbox: DocsSandbox, http: httpx.AsyncClient
) -> None:
    root = sandbox.create_document("Root")
    child = sandbox.create_document("Child", parent=root.id)
    sandbox.create_document("Grandchild", parent=child.id)
    bob, bob_calls = user(sandbox, http, "Bob")
    sandbox.share(child.id, bob, "reader")
    alice = Caller(sandbox, http, sandbox.session_id)
    assert [item["title"] for item in (await alice.json("GET", ""))["results"]] == ["Root"]
    assert [item["title"] for item in (await bob_calls.json("GET", ""))["results"]] == ["Child"]
    everything = await bob_calls.json("GET", "all/")
    assert sorted(item["title"] for item in everything["results"]) == ["Child", "Grandchild"]
    anonymous = Caller(sandbox, http, None)
    assert (await anonymous.json("GET", ""))["results"] == []
    assert (await anonymous.call("POST", "", {"title": "x"})).status_code == 401


async def test_documents_inherit_roles_and_links_from_their_ancestors(
    sandbox: DocsSandbox, http: httpx.AsyncClient
) -> None:
    root = sandbox.create_document("Root", link_reach="authenticated", link_role="commenter")
    child = sandbox.create_document("Child", parent=root.id)
    _, carol = user(sandbox, http, "Carol")
    seen = await carol.json("GET", f"{child.id}/")
    assert (seen["link_reach"], seen["link_role"]) == ("restricted", "reader")
    assert (seen["ancestors_link_reach"], seen["ancestors_link_role"]) == ("authenticated", "commenter")
    assert (seen["computed_link_reach"], seen["computed_link_role"]) == ("authenticated", "commenter")
    assert seen["user_role"] is None and seen["abilities"]["comment"] and not seen["abilities"]["update"]
    assert seen["abilities"]["link_select_options"] == {
        "authenticated": ["commenter", "editor"],
        "public": ["commenter", "editor"],
    }
    assert len(seen["abilities"]) == 35
    alice_view = await Caller(sandbox, http, sandbox.session_id).json("GET", f"{child.id}/")
    assert alice_view["user_role"] == "owner" and alice_view["nb_accesses_direct"] == 0
    assert alice_view["nb_accesses_ancestors"] == 1 and alice_view["abilities"]["move"]
    assert (await Caller(sandbox, http, None).call("GET", f"{child.id}/")).status_code == 401


async def test_children_are_created_without_access_and_listed_by_path(
    sandbox: DocsSandbox, http: httpx.AsyncClient
) -> None:
    root = sandbox.create_document("Root")
    alice = Caller(sandbox, http, sandbox.session_id)
    created = [
        await alice.json("POST", f"{root.id}/children/", {"title": f" c{n} "}, expect=201) for n in range(3)
    ]
    assert [item["path"] for item in created] == [f"0000001000000{n}" for n in (1, 2, 3)]
    assert created[0]["title"] == "c0" and "is_favorite" not in created[0]
    assert created[0]["nb_accesses_direct"] == 0 and created[0]["user_role"] == "owner"
    listed = await alice.json("GET", f"{root.id}/children/")
    assert [item["title"] for item in listed["results"]] == ["c0", "c1", "c2"]
    too_long = await alice.call("POST", f"{root.id}/children/", {"title": "x" * 256})
    assert too_long.json() == {"title": ["Ensure this field has no more than 255 characters."]}
    taken = await alice.call("POST", "", {"title": "again", "id": root.id})
    assert taken.json() == {"id": ["A document with this ID already exists. You cannot override it."]}
    reader, reader_calls = user(sandbox, http, "Reader")
    sandbox.share(root.id, reader, "reader")
    assert (await reader_calls.call("POST", f"{root.id}/children/", {"title": "no"})).status_code == 403


async def test_move_refusals_and_its_access_rules(sandbox: DocsSandbox, http: httpx.AsyncClient) -> None:
    alice = Caller(sandbox, http, sandbox.session_id)
    first = sandbox.create_document("First")
    second = sandbox.create_document("Second")
    child = sandbox.create_document("Child", parent=first.id)
    grandchild = sandbox.create_document("Grandchild", parent=child.id)
    into_descendant = await alice.call("POST", f"{first.id}/move/", {"target_document_id": grandchild.id})
    assert into_descendant.json() == {"target_document_id": "Cannot move a document to its own descendant."}
    bad = await alice.call("POST", f"{first.id}/move/", {"target_document_id": "nope", "position": "inside"})
    assert bad.json() == {
        "target_document_id": ["Must be a valid UUID."],
        "position": ['"inside" is not a valid choice.'],
    }
    missing = await alice.call("POST", f"{first.id}/move/", {"target_document_id": str(uuid.uuid4())})
    assert missing.json() == {"target_document_id": "Target parent document does not exist."}
    bob, bob_calls = user(sandbox, http, "Bob")
    foreign = sandbox.create_document("Bob's", owner=bob)
    refused = await alice.call("POST", f"{child.id}/move/", {"target_document_id": foreign.id})
    assert refused.json() == {
        "target_document_id": "You do not have permission to move documents as a child to this target document."
    }
    # a root moved under another root loses its own accesses (it now inherits), owner included
    sandbox.share(second.id, bob, "editor")
    await alice.json("POST", f"{second.id}/move/", {"target_document_id": first.id, "position": "last-child"})
    assert second.accesses == {} and second.depth == 2
    # a sub-document moved beside a root gets the owners of its old root back
    await alice.json("POST", f"{child.id}/move/", {"target_document_id": first.id, "position": "right"})
    assert child.depth == 1 and child.accesses == {sandbox.default_user.id: "owner"}
    assert [d.title for d in sandbox.store.tree.roots()] == ["First", "Child", "Bob's"]
    assert grandchild.path.startswith(child.path)
    assert (
        await bob_calls.call("POST", f"{first.id}/move/", {"target_document_id": foreign.id})
    ).status_code == 403


async def test_a_trashed_parent_hides_its_children_and_restore_follows_the_parent(
    sandbox: DocsSandbox, http: httpx.AsyncClient
) -> None:
    alice = Caller(sandbox, http, sandbox.session_id)
    editor, editor_calls = user(sandbox, http, "Eddie")
    parent = sandbox.create_document("Parent")
    child = sandbox.create_document("Child", parent=parent.id)
    sandbox.share(parent.id, editor, "editor")
    await alice.json("DELETE", f"{child.id}/", expect=204)
    await alice.json("DELETE", f"{parent.id}/", expect=204)
    hidden = await alice.json("GET", f"{child.id}/")  # an owner still reads it
    assert hidden["deleted_at"] is not None and hidden["abilities"]["restore"]
    assert not hidden["abilities"]["children_create"] and not hidden["abilities"]["move"]
    assert (await editor_calls.call("GET", f"{child.id}/")).status_code == 404  # not an owner
    assert (await alice.call("GET", f"{parent.id}/children/")).status_code == 403
    assert (await alice.call("POST", f"{parent.id}/children/", {"title": "x"})).status_code == 403
    elsewhere = sandbox.create_document("Elsewhere")
    into_trash = await alice.call("POST", f"{elsewhere.id}/move/", {"target_document_id": parent.id})
    assert into_trash.json() == {"target_document_id": "Target parent document does not exist."}
    trash = await alice.json("GET", "trashbin/")
    assert [item["title"] for item in trash["results"]] == ["Parent", "Child"] and "is_favorite" not in trash[
        "results"
    ][0]
    restored = await alice.json("POST", f"{child.id}/restore/")
    assert restored == {"detail": "Document has been successfully restored."}
    still_hidden = await alice.json("GET", f"{child.id}/")
    assert still_hidden["deleted_at"] == (await alice.json("GET", f"{parent.id}/"))["deleted_at"]
    assert (await alice.call("POST", f"{child.id}/restore/")).status_code == 403  # not trashed itself
    await alice.json("POST", f"{parent.id}/restore/")
    assert (await alice.json("GET", f"{child.id}/"))["deleted_at"] is None
    assert [item["title"] for item in (await alice.json("GET", f"{parent.id}/children/"))["results"]] == [
        "Child"
    ]


async def test_the_trash_keeps_documents_thirty_days(sandbox: DocsSandbox, http: httpx.AsyncClient) -> None:
    alice = Caller(sandbox, http, sandbox.session_id)
    old = sandbox.create_document("Old")
    await alice.json("DELETE", f"{old.id}/", expect=204)
    sandbox.store.clock_offset += timedelta(days=29, hours=23)
    assert [item["title"] for item in (await alice.json("GET", "trashbin/"))["results"]] == ["Old"]
    sandbox.store.clock_offset += timedelta(hours=2)
    assert (await alice.json("GET", "trashbin/"))["results"] == []
    gone = await alice.call("POST", f"{old.id}/restore/")
    assert (gone.status_code, gone.json()) == (404, {"detail": "Not found."})


async def test_duplicate_follows_the_copier_role(sandbox: DocsSandbox, http: httpx.AsyncClient) -> None:
    alice = Caller(sandbox, http, sandbox.session_id)
    reader, reader_calls = user(sandbox, http, "Rita")
    root = sandbox.create_document("Root", link_reach="public", link_role="reader")
    child = sandbox.create_document("Plan", parent=root.id)
    sandbox.create_document("Step", parent=child.id)
    sandbox.share(root.id, reader, "reader")
    copy = await alice.json("POST", f"{child.id}/duplicate/", {"with_descendants": True}, expect=201)
    made = sandbox.store.documents[copy["id"]]
    assert (made.title, made.depth, made.path) == ("Copy of Plan", 2, "00000010000002")
    assert made.accesses == {} and [c.title for c in sandbox.store.tree.children(made)] == ["Copy of Step"]
    as_reader = await reader_calls.json("POST", f"{child.id}/duplicate/", {}, expect=201)
    own_root = sandbox.store.documents[as_reader["id"]]
    assert own_root.depth == 1 and own_root.accesses == {reader.id: "owner"}
    root_copy = await alice.json("POST", f"{root.id}/duplicate/", {"with_accesses": "true"}, expect=201)
    copied = sandbox.store.documents[root_copy["id"]]
    assert copied.accesses == {sandbox.default_user.id: "owner", reader.id: "reader"}
    assert (copied.link_reach, copied.link_role) == ("public", "reader")
    bad = await alice.call("POST", f"{root.id}/duplicate/", {"with_accesses": "maybe"})
    assert bad.json() == {"with_accesses": ["Must be a valid boolean."]}
    assert (await Caller(sandbox, http, None).call("POST", f"{root.id}/duplicate/", {})).status_code == 401


async def test_search_descendants_tree_and_favourites(sandbox: DocsSandbox, http: httpx.AsyncClient) -> None:
    alice = Caller(sandbox, http, sandbox.session_id)
    root = sandbox.create_document("Réunions")
    week = sandbox.create_document("Semaine 1", parent=root.id)
    day = sandbox.create_document("Lundi", parent=week.id)
    sandbox.create_document("Mardi", parent=week.id)
    found = await alice.json("GET", "search/", q="reunion")  # accents and case ignored
    assert [(item["title"], item["parent"]) for item in found["results"]] == [("Réunions", None)]
    below = await alice.json("GET", "search/", q="", document=week.id)
    assert [item["title"] for item in below["results"]] == ["Semaine 1", "Lundi", "Mardi"]
    assert below["results"][0]["parent"] is None and below["results"][1]["parent"]["id"] == week.id
    assert (await alice.call("GET", "search/")).json() == {"q": ["This field is required."]}
    assert (await alice.call("GET", f"{week.id}/descendants/")).status_code == 404  # removed in 5.0
    tree = await alice.json("GET", f"{day.id}/tree/")
    assert tree["title"] == "Réunions" and [c["title"] for c in tree["children"]] == ["Semaine 1"]
    assert [c["title"] for c in tree["children"][0]["children"]] == ["Lundi", "Mardi"]
    assert tree["children"][0]["children"][0]["children"] == []
    assert (await alice.json("POST", f"{day.id}/favorite/", expect=201)) == {
        "detail": "Document marked as favorite"
    }
    assert (await alice.json("POST", f"{day.id}/favorite/")) == {
        "detail": "Document already marked as favorite"
    }
    favourites = await alice.json("GET", "favorite_list/")
    assert [(item["title"], item["is_favorite"]) for item in favourites["results"]] == [("Lundi", True)]
    await alice.json("DELETE", f"{day.id}/favorite/", expect=204)
    assert (await alice.json("DELETE", f"{day.id}/favorite/")) == {
        "detail": "Document was already not marked as favorite"
    }
    assert (await Caller(sandbox, http, None).call("GET", "favorite_list/")).status_code == 401


async def test_a_reader_may_read_but_not_rename_move_or_delete(
    sandbox: DocsSandbox, http: httpx.AsyncClient
) -> None:
    reader, reader_calls = user(sandbox, http, "Rita")
    root = sandbox.create_document("Root")
    child = sandbox.create_document("Child", parent=root.id)
    sandbox.share(root.id, reader, "reader")
    seen = await reader_calls.json("GET", f"{child.id}/")
    assert seen["user_role"] == "reader"
    assert {
        key for key in ("update", "move", "destroy", "children_create") if seen["abilities"][key]
    } == set()
    assert (await reader_calls.call("PATCH", f"{child.id}/", {"title": "Mine"})).status_code == 403
    assert (await reader_calls.call("DELETE", f"{child.id}/")).status_code == 403
    assert (
        await reader_calls.call("POST", f"{child.id}/move/", {"target_document_id": root.id})
    ).status_code == 403
    assert child.title == "Child" and child.ancestors_deleted_at is None


async def test_docs_own_failures_are_reproduced(sandbox: DocsSandbox, http: httpx.AsyncClient) -> None:
    alice = Caller(sandbox, http, sandbox.session_id)
    parent = sandbox.create_document("Parent")
    other = sandbox.create_document("Other")
    child = sandbox.create_document("Child", parent=parent.id)
    await alice.json("DELETE", f"{child.id}/", expect=204)
    await alice.json("POST", f"{child.id}/restore/")
    await alice.json("POST", f"{child.id}/move/", {"target_document_id": other.id})
    # Docs 5.4.1: the parent is no leaf (it had a child trashed) and has no child row: treebeard fails
    assert (await alice.call("POST", f"{parent.id}/children/", {"title": "new"})).status_code == 500
    assert (
        await alice.call("POST", f"{child.id}/move/", {"target_document_id": parent.id})
    ).status_code == 500
    bad_id = await alice.call("GET", "not-a-uuid/tree/")
    assert (bad_id.status_code, bad_id.json()) == (400, ["“%(value)s” is not a valid UUID."])
    assert (await alice.call("GET", "not-a-uuid/")).json() == {"detail": "Not found."}
    anonymous_search = await Caller(sandbox, http, None).call("GET", "search/", q="", document=parent.id)
    assert anonymous_search.status_code == 403  # raised by the view itself, not by the permission
    assert (await alice.call("POST", "", {"title": "x", "websocket": True})).status_code == 500
