"""``DocsSession.to_frame``'s ``level`` is a nullable integer column, and a closed session still
says how many blocks it holds."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pandas
import pytest

from elynav_nb.docs.session import DocsSession
from elynav_nb.errors import ElynavError
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sandbox() -> AsyncIterator[DocsSandbox]:
    async with DocsSandbox() as running:
        yield running


async def test_level_is_a_nullable_integer_column(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Levels")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        title_id = await doc.insert_block("Title", type="heading", level=1)
        paragraph_id = await doc.insert_block("Body", after=title_id)
        await doc.insert_block("Section", type="heading", level=3, after=paragraph_id)
        frame = doc.to_frame()
    assert str(frame["level"].dtype) == "Int64"
    assert frame["level"].tolist() == [1, pandas.NA, 3]
    assert "1.0" not in frame.to_string() and "NaN" not in frame.to_string()


async def test_an_empty_document_has_an_empty_integer_level_column(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Empty")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        frame = doc.to_frame()
    assert len(frame) == 0 and str(frame["level"].dtype) == "Int64"


async def test_a_closed_session_still_counts_its_blocks(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Count")
    doc = await DocsSession.open(sandbox.document_link(document.id), sandbox.credentials())
    await doc.insert_block("one")
    await doc.insert_block("two")
    await doc.close()
    assert "closed blocks=2 saved" in repr(doc)


async def test_editable_says_which_blocks_update_block_may_rewrite(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Editable")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        await doc.append_markdown("A paragraph\n\n| a | b |\n| - | - |\n| 1 | 2 |")
        frame = doc.to_frame()
        assert list(frame.columns) == ["id", "type", "text", "level", "depth", "parent_id", "editable"]
        assert frame["editable"].tolist() == [True, False]  # a table is shown, never rewritten
        table_id = frame["id"].iloc[1]
        with pytest.raises(ElynavError) as refused:
            await doc.update_block(table_id, "x")
    assert refused.value.code == "UNSUPPORTED_BLOCK_TYPE"


async def test_the_bullet_marker_is_blocknotes_unless_asked(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Bullets")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        await doc.append_markdown("- un\n- deux\n  - [x] trois")
        assert doc.to_markdown() == "* un\n* deux\n  * [x] trois\n"
        assert doc.to_markdown(bullet="-") == "- un\n- deux\n  - [x] trois\n"
        with pytest.raises(ElynavError) as refused:
            doc.to_markdown(bullet="1.")
    assert refused.value.code == "INVALID_INPUT"
