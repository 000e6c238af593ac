"""``DocsSession.to_frame``'s ``level`` is a nullable integer column, and a closed session still
says how many blocks it holds."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pandas
import pytest

from elynav_nb.docs.session import DocsSession
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
