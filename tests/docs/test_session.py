"""DocsSession end to end on the in-process DocsSandbox: live edits acked, saved over REST, read back."""

from __future__ import annotations

import asyncio
import logging
import pickle
import uuid
from typing import Any

import pytest

from elynav_nb.docs.credentials import DocsCredentials, check_anonymous_access
from elynav_nb.docs.session import DocsSession
from elynav_nb.docs.session.pool import DocsSessionPool
from elynav_nb.errors import (
    AuthRequired,
    BlockNotFound,
    DocNotFound,
    DocNotPublic,
    DocReadonly,
    InstanceMismatch,
    InvalidInput,
)
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sandbox() -> Any:
    async with DocsSandbox() as running:
        yield running


async def test_bold_heading_is_acked_saved_and_survives_the_room_emptying(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Notes")
    link = sandbox.document_link(document.id)
    async with DocsSession.open(link, sandbox.credentials(), save_debounce=0.05) as doc:
        heading_id = await doc.insert_block("A **bold** heading", type="heading", level=2)
        assert doc.connection is not None and doc.connection.unsynced == 0  # returned once acknowledged
        assert "A <bold>bold</bold> heading" in (sandbox.room_text(document.id) or "")  # the server has it
        paragraph_id = await doc.insert_block("first *paragraph*", after=heading_id)
        await doc.update_block(paragraph_id, "first *paragraph*, edited")
        extra_id = await doc.insert_block("to delete", after=paragraph_id)
        await doc.delete_block(extra_id)
        assert doc.to_markdown() == "## A **bold** heading\n\nfirst *paragraph*, edited\n"
        frame = doc.to_frame()
        assert list(frame["type"]) == ["heading", "paragraph"] and frame["level"].iloc[0] == 2
        assert "A bold heading" not in repr(doc) and "read-write" in repr(doc)
    assert sandbox.room_text(document.id) is None  # everybody left: the live room is gone
    async with DocsSession.open(document.id, sandbox.credentials()) as reopened:
        assert [(block.type, block.text) for block in reopened.blocks] == [
            ("heading", "A **bold** heading"),
            ("paragraph", "first *paragraph*, edited"),
        ]
        assert reopened.blocks[0].props["level"] == 2


async def test_a_session_spans_cells(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Cells")
    opened: list[DocsSession] = []

    async def cell_one() -> None:
        opened.append(await DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()))

    async def cell_two() -> str:
        return await opened[0].insert_block("from another cell")

    async def cell_three() -> None:
        await opened[0].close()

    await asyncio.get_running_loop().create_task(cell_one())
    await asyncio.get_running_loop().create_task(cell_two())
    await asyncio.get_running_loop().create_task(cell_three())
    assert document.content is not None  # the close saved it


async def test_watch_yields_changes_made_by_someone_else(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Watched")
    bob, bob_session = sandbox.create_user("Bob Durand")
    sandbox.share(document.id, bob, "editor")
    link = sandbox.document_link(document.id)
    async with (
        DocsSession.open(link, sandbox.credentials()) as alice_doc,
        DocsSession.open(link, sandbox.credentials(bob_session)) as bob_doc,
    ):
        changes = alice_doc.watch(timeout=5)
        block_id = await bob_doc.insert_block("typed by Bob")
        change = await changes.__anext__()
        assert block_id in change.changed_block_ids
        assert [block.text for block in change.blocks] == ["typed by Bob"]
        own_edits = alice_doc.watch(timeout=0.5)
        mine = await alice_doc.insert_block(
            "my own edit"
        )  # our own write, echoed back, is not a remote change
        assert [change async for change in own_edits] == []

        await bob_doc.update_block(block_id, "typed by Bob, then fixed")  # after our write: only Bob's block
        change = await changes.__anext__()
        assert change.changed_block_ids == [block_id]

        await bob_doc.delete_block(block_id)  # a deletion moves no Yjs clock: still a change
        change = await changes.__anext__()
        assert change.changed_block_ids == [block_id]
        assert [block.id for block in alice_doc.blocks] == [mine]
        await changes.aclose()


async def test_anonymous_access_rules(sandbox: DocsSandbox) -> None:
    anonymous = DocsCredentials.anonymous()
    restricted = sandbox.create_document("Private")
    with pytest.raises(AuthRequired):
        await DocsSession.open(sandbox.document_link(restricted.id), anonymous)
    public_reader = sandbox.create_document("Readable", link_reach="public", link_role="reader")
    with pytest.raises(DocReadonly):
        await DocsSession.open(sandbox.document_link(public_reader.id), DocsCredentials.anonymous())
    with pytest.raises(DocNotPublic):
        check_anonymous_access({"link_reach": "authenticated", "link_role": "editor"})
    public_editor = sandbox.create_document("Open", link_reach="public", link_role="editor")
    async with DocsSession.open(sandbox.document_link(public_editor.id), DocsCredentials.anonymous()) as doc:
        await doc.insert_block("anonymous edit")
        result = await doc.save()
        assert not result.saved and "anonymous" in (result.reason or "")
        assert "not saved: anonymous" in repr(doc)
    assert public_editor.content is None


async def test_read_only_users_get_doc_readonly_before_any_write(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Shared")
    reader, reader_session = sandbox.create_user("Rita Reader")
    sandbox.share(document.id, reader, "reader")
    async with DocsSession.open(
        sandbox.document_link(document.id), sandbox.credentials(reader_session)
    ) as doc:
        assert doc.read_only
        with pytest.raises(DocReadonly):
            await doc.insert_block("nope")
        assert doc.blocks == []


async def test_bad_input_is_typed_and_never_corrupts_the_document(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Robust")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        block_id = await doc.insert_block("keep me")
        with pytest.raises(BlockNotFound):
            await doc.update_block(str(uuid.uuid4()), "x")
        with pytest.raises(InvalidInput):
            await doc.insert_block("   ")
        with pytest.raises(InvalidInput):
            await doc.insert_block("x" * 5_000_000)
        with pytest.raises(InvalidInput):
            await doc.insert_block("title", type="heading", level=7)
        await doc.update_block(block_id, "keep **me and *unbalanced")
        assert [block.text for block in doc.blocks] == ["keep \\*\\*me and \\*unbalanced"]
    with pytest.raises(DocNotFound):
        await DocsSession.open(sandbox.document_link(str(uuid.uuid4())), sandbox.credentials())
    with pytest.raises(InvalidInput):
        await DocsSession.open(f"{sandbox.url}/docs/{uuid.uuid1()}/", sandbox.credentials())
    with pytest.raises(InstanceMismatch):
        await DocsSession.open(f"https://other.example.org/docs/{document.id}/", sandbox.credentials())


async def test_the_pool_closes_idle_sessions_on_its_own(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Pooled")
    pool = DocsSessionPool(sandbox.credentials(), idle_ttl=0.3, reap_interval=0.05)
    first = await pool.get(sandbox.document_link(document.id))
    assert await pool.get(document.id) is first
    await first.insert_block("pooled edit")
    for _ in range(100):
        if len(pool) == 0:
            break
        await asyncio.sleep(0.05)
    assert len(pool) == 0 and not first.is_open
    assert document.content is not None  # closing saved the edit
    await pool.close_all()


async def test_secrets_never_show_on_any_surface(
    sandbox: DocsSandbox, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = sandbox.session_id
    credentials = sandbox.credentials()
    document = sandbox.create_document("Secret-free")
    surfaces: list[str] = [repr(credentials), str(credentials)]
    with pytest.raises(TypeError):
        pickle.dumps(credentials)
    async with DocsSession.open(sandbox.document_link(document.id), credentials) as doc:
        await doc.insert_block("hello")
        surfaces += [
            repr(doc),
            doc._repr_html_(),
            repr(doc.connection),
            repr(doc.rest),
            doc.to_frame().to_string(),
        ]
        surfaces += [str(vars(doc)), str(doc.to_frame().to_dict())]
        with pytest.raises(TypeError):
            pickle.dumps(doc)
        try:
            await DocsSession.open(f"https://other.example.org/docs/{document.id}/", credentials)
        except InstanceMismatch as error:
            surfaces += [str(error), repr(error), str(error.to_dict())]
    surfaces.append(caplog.text)
    for surface in surfaces:
        assert secret not in surface
        assert sandbox.csrf_token not in surface


async def test_rights_lost_in_a_reset_are_seen_at_the_next_write(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Demotion")
    bob, bob_session = sandbox.create_user("Bob Durand")
    sandbox.share(document.id, bob, "editor")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials(bob_session)) as doc:
        await doc.insert_block("while still an editor")
        assert (await doc.save()).saved
        sandbox.share(document.id, bob, "reader")  # Docs resets the room after an access change
        assert doc.connection is not None
        await doc.connection.wait_ready(timeout=5)
        for _ in range(100):
            if doc.connection.scope == "readonly":
                break
            await asyncio.sleep(0.02)
        assert doc.read_only
        with pytest.raises(DocReadonly):
            await doc.insert_block("not any more")


async def test_writes_do_not_re_read_the_whole_document(
    sandbox: DocsSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-read is O(blocks): after every write it made inserts into long documents slow (79 ms at
    1,100 blocks). The snapshot for telling our changes from others' is taken only when others edit."""
    from elynav_nb.docs import blocknote

    document = sandbox.create_document("Long")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        reads: list[int] = []
        real_read = blocknote.read_blocks
        monkeypatch.setattr(blocknote, "read_blocks", lambda ydoc: reads.append(1) or real_read(ydoc))
        previous = None
        for number in range(5):
            previous = await doc.insert_block(f"ligne {number}", after=previous)
        await doc.update_block(previous, "dernière ligne")
        assert reads == []
