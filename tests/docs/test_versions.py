"""Versions (issue 31): listed newest first, read as blocks and markdown, diffed as a markdown diff
and a frame of changed blocks; a version id of another document and other bad inputs typed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from elynav_nb.docs.blocknote.version_diff import DocumentState, diff_states, read_state
from elynav_nb.docs.session import DocsSession
from elynav_nb.errors import ElynavError
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sandbox() -> AsyncIterator[DocsSandbox]:
    async with DocsSandbox() as running:
        yield running


async def test_versions_are_listed_read_and_diffed(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Compte rendu")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        ids = await doc.append_markdown("# Plan\n\nPremier jet.\n\n- un\n- deux")
        await doc.saved()
        assert await doc.versions() == ()  # the latest save is the content itself, not a version
        await doc.update_block(ids[1], "Premier jet, relu par l'agent.")
        await doc.delete_block(ids[2])
        await doc.saved()
        [version] = await doc.versions()
        read = await doc.read_version(version.id)
        assert read.markdown == "# Plan\n\nPremier jet.\n\n* un\n* deux\n"
        diff = await doc.diff(version.id)
        assert diff.markdown.splitlines()[2:] == [
            "@@ -1,6 +1,5 @@",
            " # Plan",
            " ",
            "-Premier jet.",
            "+Premier jet, relu par l'agent.",
            " ",
            "-* un",
            " * deux",
        ]
        frame = diff.to_frame()
        shown = frame[["change", "old_text", "new_text"]].astype(object)
        assert shown.where(shown.notna(), None).values.tolist() == [
            ["changed", "Premier jet.", "Premier jet, relu par l'agent."],
            ["deleted", "un", None],
        ]
        assert "1 changed, 1 deleted" in repr(diff)


async def test_bad_version_ids_are_typed(sandbox: DocsSandbox) -> None:
    one = sandbox.create_document("One")
    two = sandbox.create_document("Two")
    async with DocsSession.open(sandbox.document_link(one.id), sandbox.credentials()) as doc:
        await doc.append_block("a")
        await doc.saved()
        await doc.append_block("b")
        await doc.saved()
        [version] = await doc.versions()
    async with DocsSession.open(sandbox.document_link(two.id), sandbox.credentials()) as other:
        with pytest.raises(ElynavError) as foreign:
            await other.read_version(version.id)  # a version of another document
        assert foreign.value.code == "NOT_FOUND"
        with pytest.raises(ElynavError) as malformed:
            await other.read_version("../etc/passwd")
        assert malformed.value.code == "INVALID_INPUT"
    _bob, bob_session = sandbox.create_user("Bob")
    shared = sandbox.create_document("By link", link_reach="authenticated", link_role="editor")
    async with DocsSession.open(sandbox.document_link(shared.id), sandbox.credentials(bob_session)) as bob:
        with pytest.raises(ElynavError) as link_only:  # Docs: versions need a role, not a link
            await bob.versions()
        assert link_only.value.code == "NOT_ALLOWED"


def test_moves_are_told_apart_from_edits() -> None:
    from elynav_nb.docs.blocknote.schema import Block

    def block(block_id: str, text: str) -> Block:
        return Block(id=block_id, type="paragraph", text=text)

    old = DocumentState("v1", [block("a", "A"), block("b", "B"), block("c", "C")])
    new = DocumentState("v2", [block("c", "C"), block("a", "A"), block("b", "B!")])
    changes = [(change.block_id, change.change) for change in diff_states(old, new).changes]
    assert changes == [("c", "moved"), ("b", "changed")]
    with pytest.raises(ElynavError) as broken:
        read_state(b"\xff\x00 not yjs", "v0")
    assert broken.value.code == "INVALID_INPUT"
