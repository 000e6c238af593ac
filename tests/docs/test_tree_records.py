"""The pure tree records (``elynav_nb.docs.rest.tree``) and the wire shape of the tree client's requests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.rest import DocsRestClient, RequestThrottle
from elynav_nb.docs.rest.tree import (
    DocumentChange,
    DocumentList,
    DocumentNode,
    DocumentTree,
    nodes_from_nested,
    require_ability,
)
from elynav_nb.errors import InvalidInput, NotAllowed

INSTANCE = "https://docs.example.org"
ROOT_ID = "5b0f7c8e-1d2a-4c3b-9e4f-5a6b7c8d9e0f"
CHILD_ID = "6c1a8d9f-2e3b-4d4c-8f5a-6b7c8d9e0f1a"
GRANDCHILD_ID = "7d2b9e0a-3f4c-4e5d-9a6b-7c8d9e0f1a2b"
OTHER_ID = "8e3c0f1b-4a5d-4f6e-8b7c-8d9e0f1a2b3c"


def item(document_id: str, title: str, path: str, **extra: Any) -> dict[str, Any]:
    return {"id": document_id, "title": title, "path": path, "depth": len(path) // 7, **extra}


def test_a_node_reads_docs_json_and_tolerates_missing_fields() -> None:
    node = DocumentNode.from_json(
        item(
            CHILD_ID,
            "Child",
            "00000010000001",
            computed_link_reach="public",
            computed_link_role="reader",
            user_role="editor",
            abilities={"update": True, "move": False},
            parent={"id": ROOT_ID},
        ),
        instance=INSTANCE,
    )
    assert (node.depth, node.parent_path, node.parent_id, node.is_root) == (2, "0000001", ROOT_ID, False)
    assert node.can("update") and not node.can("move") and not node.can("unknown")
    assert node.link == f"{INSTANCE}/docs/{CHILD_ID}/" and node.is_favorite is None
    bare = DocumentNode.from_json({"id": ROOT_ID, "title": None})
    assert (bare.title, bare.path, bare.depth, bare.abilities) == (None, "", 0, {})
    with pytest.raises(InvalidInput):
        DocumentNode.from_json({"title": "no id"})
    assert "abilities" not in repr(node)  # the repr stays short


def test_the_nested_tree_answer_becomes_nodes_with_their_parents() -> None:
    answer = item(
        ROOT_ID,
        "Root",
        "0000001",
        children=[
            item(
                CHILD_ID,
                "Child",
                "00000010000001",
                children=[item(GRANDCHILD_ID, "Grandchild", "000000100000010000001", children=[])],
            ),
            item(OTHER_ID, "Other", "00000010000002", children=[]),
        ],
    )
    nodes = nodes_from_nested(answer, instance=INSTANCE)
    assert [(n.title, n.parent_id) for n in nodes] == [
        ("Root", None),
        ("Child", ROOT_ID),
        ("Grandchild", CHILD_ID),
        ("Other", ROOT_ID),
    ]
    assert "children" not in nodes[0].raw and nodes_from_nested(None) == []


def test_a_tree_places_documents_whose_parent_is_missing_at_the_top() -> None:
    shared_child = DocumentNode.from_json(item(CHILD_ID, "Shared sub-page", "00000010000001"))
    below = DocumentNode.from_json(item(GRANDCHILD_ID, "Below", "000000100000010000001"))
    elsewhere = DocumentNode.from_json(item(OTHER_ID, "Elsewhere", "0000002"))
    tree = DocumentTree.from_nodes([elsewhere, below, shared_child, below])
    assert [n.title for n in tree] == ["Shared sub-page", "Below", "Elsewhere"]  # by path, once each
    assert [n.title for n in tree.tops()] == ["Shared sub-page", "Elsewhere"]
    assert tree.levels() == {CHILD_ID: 0, GRANDCHILD_ID: 1, OTHER_ID: 0}
    frame = tree.to_frame()
    assert list(frame["title_path"]) == ["Shared sub-page", "Shared sub-page / Below", "Elsewhere"]
    assert list(frame["depth"]) == [2, 3, 1] and list(frame["level"]) == [0, 1, 0]
    assert [n.title for n in tree.pruned(0)] == ["Shared sub-page", "Elsewhere"]
    assert len(DocumentTree.from_nodes([]).to_frame().columns) == 22
    assert "3 documents, 2 tops" in repr(tree) and GRANDCHILD_ID in tree


def test_lists_and_changes_are_tabular() -> None:
    nodes = DocumentList(
        (
            DocumentNode.from_json(item(ROOT_ID, "A", "0000001")),
            DocumentNode.from_json(item(OTHER_ID, "B", "0000002")),
        ),
        count=5,
        requests=1,
    )
    assert (len(nodes), nodes.complete, nodes.ids(), nodes.by_title("B").id) == (
        2,
        False,
        [ROOT_ID, OTHER_ID],
        OTHER_ID,
    )
    assert list(nodes.to_frame()["title"]) == ["A", "B"] and "2 of 5 documents" in repr(nodes)
    with pytest.raises(InvalidInput):
        nodes.by_title("C")
    change = DocumentChange("moved", ROOT_ID, target_document_id=OTHER_ID, position="left")
    assert change.to_frame().iloc[0]["position"] == "left"


def test_abilities_are_checked_only_when_docs_served_them() -> None:
    without = DocumentNode.from_json(item(ROOT_ID, "A", "0000001"))
    require_ability(without, "move", "move it")  # nothing known: the server decides
    refused = DocumentNode.from_json(item(ROOT_ID, "A", "0000001", abilities={"move": False}))
    with pytest.raises(NotAllowed) as error:
        require_ability(refused, "move", "move it")
    assert error.value.details == {"document_id": ROOT_ID, "ability": "move"}


def mocked(handler: Callable[[httpx.Request], httpx.Response], release: str = "v5.4.1") -> DocsRestClient:
    def routed(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1.0/config/":
            return httpx.Response(200, json={"RELEASE_VERSION": release})
        return handler(request)

    credentials = DocsCredentials("session-secret", "csrf-secret", instance=INSTANCE)
    return DocsRestClient(
        INSTANCE,
        credentials,
        transport=httpx.MockTransport(routed),
        throttle=RequestThrottle(1000),
        retry_backoff=0.001,
    )


def page(*items: dict[str, Any]) -> httpx.Response:
    return httpx.Response(
        200, json={"count": len(items), "next": None, "previous": None, "results": list(items)}
    )


@pytest.mark.anyio
async def test_requests_carry_docs_field_names() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith("/move/"):
            return httpx.Response(200, json={"message": "Document moved successfully."})
        if request.url.path.endswith("/duplicate/"):
            return httpx.Response(201, json={"id": OTHER_ID})
        return httpx.Response(200, json=item(ROOT_ID, "Renamed", "0000001"))

    async with mocked(handler) as rest:
        await rest.tree.update_title(ROOT_ID, " Renamed ")
        await rest.tree.move(ROOT_ID, OTHER_ID, "first-sibling")
        await rest.tree.duplicate(ROOT_ID, with_descendants=True)
    bodies = [json.loads(request.content) for request in seen]
    assert [request.method for request in seen] == ["PATCH", "POST", "POST"]
    assert bodies == [
        {"title": "Renamed", "websocket": True},
        {"target_document_id": OTHER_ID, "position": "first-sibling"},
        {"with_descendants": True, "with_accesses": False},
    ]
    assert all(request.headers["X-CSRFToken"] == "csrf-secret" for request in seen)


@pytest.mark.anyio
async def test_a_sibling_move_docs_refuses_is_not_allowed() -> None:
    refusal = {
        "target_document_id": "You do not have permission to move documents as a sibling of this target document."
    }

    async with mocked(lambda request: httpx.Response(400, json=refusal)) as rest:
        with pytest.raises(NotAllowed) as error:
            await rest.tree.move(ROOT_ID, OTHER_ID, "left")
    assert "sibling" in error.value.details["server_message"]


@pytest.mark.anyio
async def test_the_workspace_falls_back_when_docs_turned_all_off_and_docs_4_uses_descendants() -> None:
    paths: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        if request.url.path.endswith("/all/"):
            return httpx.Response(404, json={"detail": "Not found."})
        if request.url.path.endswith("/search/"):
            assert request.url.params["document"] == ROOT_ID and request.url.params["q"] == ""
            return page(
                item(ROOT_ID, "Root", "0000001"),
                item(CHILD_ID, "Child", "00000010000001", parent={"id": ROOT_ID}),
            )
        return page(item(ROOT_ID, "Root", "0000001"))

    async with mocked(handler) as rest:
        workspace = await rest.tree.workspace_tree()
    assert [n.title for n in workspace] == ["Root", "Child"] and workspace.requests == 3
    assert paths == ["/api/v1.0/documents/all/", "/api/v1.0/documents/", "/api/v1.0/documents/search/"]

    def old_handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/descendants/"):
            return page(item(CHILD_ID, "Child", "00000010000001"))
        return httpx.Response(200, json=item(ROOT_ID, "Root", "0000001"))

    async with mocked(old_handler, release="v4.8.6") as rest:
        below = await rest.tree.descendants(ROOT_ID)
    assert [n.title for n in below] == ["Root", "Child"]
