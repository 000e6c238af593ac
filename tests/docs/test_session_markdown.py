"""Whole-markdown writing through ``DocsSession`` on the in-process sandbox: acknowledged, saved, seen by
another participant, refused when read-only or invalid (nothing sent), and the blocking calls."""

from __future__ import annotations

from typing import Any

import pytest

from elynav_nb._sync import private_loop, run_sync
from elynav_nb.docs.blocknote.section_diff import SectionChange
from elynav_nb.docs.session import DocsSession
from elynav_nb.errors import BlockNotFound, DocReadonly, InvalidInput
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio

NOTES = "# Notes\n\n## Tasks\n\n- [ ] write\n- [ ] review\n\n| who | what |\n|---|---|\n| Ana | tests |\n\n## Later\n\nmaybe\n"


@pytest.fixture
async def sandbox() -> Any:
    async with DocsSandbox() as running:
        yield running


async def test_insert_markdown_is_acked_saved_and_seen_by_another_participant(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Notes")
    bob, bob_session = sandbox.create_user("Bob Durand")
    sandbox.share(document.id, bob, "editor")
    link = sandbox.document_link(document.id)
    async with (
        DocsSession.open(link, sandbox.credentials(), save_debounce=0.05) as doc,
        DocsSession.open(link, sandbox.credentials(bob_session)) as bob_doc,
    ):
        changes = bob_doc.watch(timeout=5)
        ids = await doc.insert_markdown(NOTES)
        assert doc.connection is not None and doc.connection.unsynced == 0  # returned once acknowledged
        assert len(ids) == 7 and [block.id for block in doc.blocks] == ids
        change = await changes.__anext__()  # the whole markdown arrives as one change
        assert sorted(change.changed_block_ids) == sorted(ids)
        assert bob_doc.to_markdown() == doc.to_markdown()
        await changes.aclose()
    async with DocsSession.open(document.id, sandbox.credentials()) as reopened:
        assert reopened.to_markdown() == (
            "# Notes\n\n## Tasks\n\n* [ ] write\n* [ ] review\n\n"
            "| who | what |\n| --- | --- |\n| Ana | tests |\n\n## Later\n\nmaybe\n"
        )


async def test_replace_section_keeps_what_another_participant_is_editing(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Shared")
    bob, bob_session = sandbox.create_user("Bob Durand")
    sandbox.share(document.id, bob, "editor")
    link = sandbox.document_link(document.id)
    async with (
        DocsSession.open(link, sandbox.credentials()) as doc,
        DocsSession.open(link, sandbox.credentials(bob_session)) as bob_doc,
    ):
        await doc.insert_markdown(NOTES)
        ids = {block.text: block.id for block in doc.blocks}
        table_id = next(block.id for block in doc.blocks if block.type == "table")
        seen = doc.watch(timeout=5)
        await bob_doc.update_block(ids["review"], "review, Bob is on it")  # a person's edit
        await seen.__anext__()
        bob_sees = bob_doc.watch(timeout=5)
        change = await doc.replace_section(
            ids["Tasks"],
            "- [x] write\n- [ ] review, Bob is on it\n\n| who | what |\n|---|---|\n| Ana | tests |\n",
        )
        assert (
            isinstance(change, SectionChange) and doc.connection is not None and doc.connection.unsynced == 0
        )
        assert change.updated == [ids["write"]] and set(change.kept) == {ids["review"], table_id}
        assert not change.inserted and not change.deleted
        await bob_sees.__anext__()
        assert bob_doc.to_markdown() == doc.to_markdown()
        assert [(block.id, block.props.get("checked")) for block in bob_doc.blocks[2:4]] == [
            (ids["write"], True),
            (ids["review"], False),
        ]
        await seen.aclose()
        await bob_sees.aclose()


async def test_refusals_send_nothing(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Shared")
    reader, reader_session = sandbox.create_user("Rita Reader")
    sandbox.share(document.id, reader, "reader")
    link = sandbox.document_link(document.id)
    async with DocsSession.open(link, sandbox.credentials()) as doc:
        heading = (await doc.insert_markdown("## Kept\n\ntext\n"))[0]
        markdown_before = doc.to_markdown()
        with pytest.raises(InvalidInput):
            await doc.insert_markdown("- " * 100 + "too deep")
        with pytest.raises(InvalidInput):
            await doc.replace_section(heading, "## A sibling heading\n")
        with pytest.raises(BlockNotFound):
            await doc.insert_markdown("x", after="not-a-block")
        assert doc.to_markdown() == markdown_before
    async with DocsSession.open(link, sandbox.credentials(reader_session)) as read_only:
        with pytest.raises(DocReadonly):
            await read_only.insert_markdown("nope")
        with pytest.raises(DocReadonly):
            await read_only.replace_section(heading, "nope")


def test_the_blocking_calls() -> None:
    sandbox = run_sync(DocsSandbox().start(), owner_loop=private_loop())
    try:
        document = sandbox.create_document("Script")
        doc = DocsSession.open_sync(sandbox.document_link(document.id), sandbox.credentials())
        try:
            heading, _paragraph = doc.insert_markdown_sync("## Plan\n\ndraft\n")
            change = doc.replace_section_sync(heading, "final\n")
            assert change.updated and doc.to_markdown() == "## Plan\n\nfinal\n"
        finally:
            doc.close_sync()
    finally:
        run_sync(sandbox.stop(), owner_loop=private_loop())
