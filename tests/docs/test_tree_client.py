"""The tree client (``rest.tree``) against DocsSandbox: every call, the refusals before a request,
the typed errors, pages past 100 documents, and two instances that never share a cookie."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.rest import DocsRestClient, RequestThrottle
from elynav_nb.docs.rest.tree import MOVE_POSITIONS, DocumentNode
from elynav_nb.docs.rest.tree_client import DocsTreeClient
from elynav_nb.errors import (
    AuthRequired,
    DocNotFound,
    Duplicate,
    InstanceMismatch,
    InvalidInput,
    NotAllowed,
    RateLimited,
    ServiceError,
)
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


class RecordingTransport(httpx.AsyncBaseTransport):
    """The real network transport, keeping every request it sends (host, path, cookie)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.sent: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
async def sandbox() -> AsyncIterator[DocsSandbox]:
    async with DocsSandbox(throttle_per_minute=100_000) as running:
        yield running


def client_for(
    sandbox: DocsSandbox, session_id: str | None = None, transport: httpx.AsyncBaseTransport | None = None
) -> DocsRestClient:
    return DocsRestClient(
        sandbox.url,
        sandbox.credentials(session_id),
        throttle=RequestThrottle(10_000),
        transport=transport,
    )


async def child_titles(tree: DocsTreeClient, document: str | DocumentNode) -> list[str | None]:
    return [child.title for child in await tree.children(document)]


async def test_create_rename_and_read_the_tree_as_a_frame(sandbox: DocsSandbox) -> None:
    async with client_for(sandbox) as rest:
        tree = rest.tree
        handbook = await tree.create("Handbook")
        onboarding = await tree.create("Onboarding", parent=handbook)
        await tree.create("Day one", parent=onboarding.id)
        await tree.create("Archive")
        renamed = await tree.update_title(onboarding, "  Welcome  ")
        assert (renamed.title, renamed.path, renamed.depth) == ("Welcome", handbook.path + "0000001", 2)
        assert (
            handbook.is_favorite is None and renamed.is_favorite is False
        )  # a new instance is not annotated
        workspace = await tree.workspace_tree()
        frame = workspace.to_frame()
    assert workspace.requests == 1
    assert list(frame["title_path"]) == [
        "Handbook",
        "Handbook / Welcome",
        "Handbook / Welcome / Day one",
        "Archive",
    ]
    assert list(frame["level"]) == [0, 1, 2, 0]
    assert frame["parent_id"].isna().tolist() == [True, False, False, True]  # the tops
    assert list(frame["parent_id"])[1:3] == [handbook.id, onboarding.id]
    assert list(frame.columns)[:9] == [
        "id",
        "title",
        "parent_id",
        "depth",
        "level",
        "path",
        "title_path",
        "numchild",
        "updated_at",
    ]
    assert frame["can_move"].all() and frame["user_role"].eq("owner").all()
    assert set(frame["link_reach"]) == {"restricted"}


async def test_list_search_children_descendants_and_ancestors(sandbox: DocsSandbox) -> None:
    root = sandbox.create_document("Projets")
    alpha = sandbox.create_document("Alpha", parent=root.id)
    step = sandbox.create_document("Étape 1", parent=alpha.id)
    sandbox.create_document("Détail", parent=step.id)
    sandbox.create_document("Beta", parent=root.id)
    sandbox.create_document("Notes")
    async with client_for(sandbox) as rest:
        tree = rest.tree
        assert [d.title for d in await tree.list_documents()] == ["Notes", "Projets"]
        assert [d.title for d in await tree.list_documents(ordering="title")] == ["Notes", "Projets"]
        found = await tree.search("etape")
        assert [(d.title, d.parent_id) for d in found] == [("Étape 1", root.id)]
        assert await child_titles(tree, root.id) == ["Alpha", "Beta"]
        everything = await tree.descendants(root.id)
        assert [d.title for d in everything] == ["Projets", "Alpha", "Étape 1", "Détail", "Beta"]
        one_level = await tree.descendants(root.id, max_depth=1)
        assert [d.title for d in one_level] == ["Projets", "Alpha", "Beta"] and one_level.requests == 2
        two_levels = await tree.descendants(sandbox.document_link(root.id), max_depth=2, include_self=False)
        assert [d.title for d in two_levels] == ["Alpha", "Étape 1", "Beta"]
        path = await tree.ancestors(step.id, include_self=True)
        assert [d.title for d in path] == ["Projets", "Alpha", "Étape 1"]
        around = await tree.tree(step.id)
        assert [d.title for d in around.children_of(root.id)] == ["Alpha", "Beta"]


async def test_every_move_position_and_the_refused_moves(sandbox: DocsSandbox) -> None:
    async with client_for(sandbox) as rest:
        tree = rest.tree
        top = await tree.create("Top")
        a, b, c = [await tree.create(name, parent=top) for name in "abc"]
        x = await tree.create("x")
        expected = {
            "first-child": None,
            "last-child": None,
            "first-sibling": ["x", "a", "b", "c"],
            "last-sibling": ["a", "b", "c", "x"],
            "left": ["a", "x", "b", "c"],
            "right": ["a", "b", "x", "c"],
        }
        for position in MOVE_POSITIONS:
            change = await tree.move(x, b, position)
            assert change.position == position and change.message == "Document moved successfully."
            if expected[position] is None:
                assert await child_titles(tree, b) == ["x"]
            else:
                assert await child_titles(tree, top) == expected[position]
            await tree.move(x.id, top.id, "last-sibling")  # back to the top level between runs
        fresh_top = await tree.retrieve(top)
        with pytest.raises(InvalidInput) as into_itself:
            await tree.move(fresh_top, fresh_top, "first-child")
        assert into_itself.value.details["reason"] == "MOVE_INTO_OWN_DESCENDANT"
        sent = tree.requests_sent
        with pytest.raises(InvalidInput):
            await tree.move(fresh_top, await tree.retrieve(a), "last-child")  # known paths: refused locally
        assert tree.requests_sent == sent + 1  # only the retrieve
        with pytest.raises(InvalidInput) as by_server:
            await tree.move(top.id, a.id, "last-child")
        assert by_server.value.details["reason"] == "MOVE_INTO_OWN_DESCENDANT"
        with pytest.raises(InvalidInput):
            await tree.move(a, c, "inside")
        missing = "0b7ad3a2-2fb0-4c5e-9d5e-0a3a7c8a5a11"
        with pytest.raises(DocNotFound):
            await tree.move(a, missing)


async def test_trash_restore_and_a_child_of_a_trashed_parent(sandbox: DocsSandbox) -> None:
    async with client_for(sandbox) as rest:
        tree = rest.tree
        parent = await tree.create("Parent")
        child = await tree.create("Child", parent=parent)
        await tree.delete(child)
        await tree.delete(parent)
        assert [d.title for d in await tree.trash()] == ["Parent", "Child"]
        hidden = await tree.retrieve(child.id)
        assert hidden.is_deleted and hidden.can("restore") and not hidden.can("move")
        with pytest.raises(NotAllowed):
            await tree.children(parent.id)
        with pytest.raises(NotAllowed):  # refused before any request: Docs said destroy is false
            await tree.delete(hidden)
        await tree.restore(hidden)  # its parent is still in the trash: it stays hidden
        assert (await tree.retrieve(child.id)).is_deleted
        assert [d.title for d in await tree.trash()] == ["Parent"]
        await tree.restore(parent.id)
        assert not (await tree.retrieve(child.id)).is_deleted
        assert await child_titles(tree, parent) == ["Child"]
        with pytest.raises(NotAllowed):
            await tree.restore(parent.id)  # not in the trash


async def test_a_node_read_before_the_trash_can_be_restored_by_its_owner(sandbox: DocsSandbox) -> None:
    # Docs grants `restore` only once a document is in the trash: the node kept from before says false,
    # which must not refuse the owner's restore.
    async with client_for(sandbox) as rest:
        tree = rest.tree
        page = await tree.create("Page")
        assert not page.can("restore")
        await tree.delete(page)
        change = await tree.restore(page)
        assert change.action == "restored" and not (await tree.retrieve(page.id)).is_deleted


async def test_duplicate_and_favourites(sandbox: DocsSandbox) -> None:
    async with client_for(sandbox) as rest:
        tree = rest.tree
        template = await tree.create("Template")
        await tree.create("Section", parent=template)
        copy = await tree.duplicate(template, with_descendants=True)
        assert copy.new_document_id is not None
        copied = await tree.retrieve(copy.new_document_id)
        assert copied.title == "Copy of Template" and await child_titles(tree, copied) == ["Copy of Section"]
        shallow = await tree.duplicate(template.id)
        assert await child_titles(tree, shallow.new_document_id or "") == []
        first = await tree.add_favorite(template)
        again = await tree.add_favorite(template.id)
        assert (first.changed, again.changed, again.message) == (
            True,
            False,
            "Document already marked as favorite",
        )
        assert [d.title for d in await tree.favorites()] == ["Template"]
        assert (await tree.remove_favorite(template)).changed
        assert not (await tree.remove_favorite(template)).changed
        assert len(await tree.favorites()) == 0


async def test_pagination_past_100_documents(sandbox: DocsSandbox) -> None:
    for number in range(130):
        sandbox.create_document(f"doc {number:03}")
    async with client_for(sandbox) as rest:
        everything = await rest.tree.list_documents(page_size=100, ordering="title")
        limited = await rest.tree.list_documents(limit=105, page_size=50)
        second_page = await rest.tree.list_documents(page=2, page_size=100, ordering="title")
    assert (len(everything), everything.count, everything.requests, everything.complete) == (
        130,
        130,
        2,
        True,
    )
    assert len({d.id for d in everything}) == 130 and everything[100].title == "doc 100"
    assert (len(limited), limited.requests) == (105, 3)
    assert [d.title for d in second_page][:1] == ["doc 100"] and len(second_page) == 30
    frame = everything.to_frame()
    assert len(frame) == 130 and frame["can_update"].all()


async def test_a_reader_is_refused_before_any_request(sandbox: DocsSandbox) -> None:
    reader, reader_session = sandbox.create_user("Rita Reader")
    root = sandbox.create_document("Shared")
    child = sandbox.create_document("Child", parent=root.id)
    sandbox.share(root.id, reader, "reader")
    async with client_for(sandbox, reader_session) as rest:
        tree = rest.tree
        seen = await tree.retrieve(child.id)
        assert seen.user_role == "reader" and not seen.can("update")
        sent = tree.requests_sent
        for refused in (
            tree.update_title(seen, "Mine"),
            tree.move(seen, root.id, "last-child"),
            tree.delete(seen),
            tree.create("Sub", parent=seen),
            tree.restore(seen),
        ):
            with pytest.raises(NotAllowed):
                await refused
        assert tree.requests_sent == sent  # nothing was sent
        with pytest.raises(NotAllowed):  # by id: Docs refuses (403)
            await tree.update_title(child.id, "Mine")
        copy = await tree.duplicate(seen)  # a reader copies a sub-page into a root of their own
        own = await tree.retrieve(copy.new_document_id or "")
        assert own.is_root and own.user_role == "owner"
    assert child.title == "Child"


async def test_anonymous_callers_are_refused_locally_and_see_an_empty_list(sandbox: DocsSandbox) -> None:
    public = sandbox.create_document("Public", link_reach="public", link_role="editor")
    async with DocsRestClient(sandbox.url, DocsCredentials.anonymous()) as rest:
        tree = rest.tree
        node = await tree.retrieve(public.id)
        assert node.can("update") and not node.can("children_create")
        for refused in (tree.create("x"), tree.duplicate(node), tree.add_favorite(node), tree.favorites()):
            with pytest.raises(AuthRequired):
                await refused
        with pytest.raises(NotAllowed):
            await tree.create("Sub", parent=node)
        assert len(await tree.list_documents()) == 0 and len(await tree.trash()) == 0


async def test_two_instances_never_share_a_cookie() -> None:
    async with DocsSandbox() as first, DocsSandbox() as second:
        on_first = first.create_document("On the first")
        on_second = second.create_document("On the second")
        recorder = RecordingTransport()
        async with client_for(first, transport=recorder) as rest:
            node = await rest.tree.retrieve(on_first.id)
            with pytest.raises(InstanceMismatch):
                await rest.tree.retrieve(second.document_link(on_second.id))
            with pytest.raises(InstanceMismatch):
                await rest.tree.move(node, second.document_link(on_second.id), "last-child")
            async with client_for(second) as other_rest:
                foreign = await other_rest.tree.retrieve(on_second.id)
                with pytest.raises(InstanceMismatch):
                    await rest.tree.delete(foreign)  # a node remembers its instance
                with pytest.raises(InstanceMismatch):
                    await other_rest.tree.delete(node)
        with pytest.raises(InstanceMismatch):
            DocsRestClient(second.url, first.credentials())  # settled on the first instance
        assert recorder.sent and {request.url.port for request in recorder.sent} == {first.port}
        assert all(first.session_id in request.headers["Cookie"] for request in recorder.sent)
        assert on_second.title == "On the second" and on_second.ancestors_deleted_at is None


async def test_typed_errors_for_throttling_duplicates_and_missing_documents() -> None:
    async with DocsSandbox(throttle_per_minute=3) as sandbox:
        document = sandbox.create_document("Busy")
        async with DocsRestClient(sandbox.url, sandbox.credentials(), max_retries=0) as rest:
            with pytest.raises(Duplicate):
                await rest.tree.create("Twin", document_id=document.id)
            with pytest.raises(DocNotFound):
                await rest.tree.retrieve("0b7ad3a2-2fb0-4c5e-9d5e-0a3a7c8a5a11")
            await rest.tree.children(document.id)
            with pytest.raises(RateLimited):
                await rest.tree.children(document.id)
    async with DocsRestClient(
        "https://docs.example.org", transport=httpx.MockTransport(lambda r: httpx.Response(200, json=[]))
    ) as rest:
        with pytest.raises(ServiceError):
            await rest.tree.list_documents()
