"""Appending to a document is one obvious call, in reading order; ``after=None`` inserts at the top (said)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from elynav_nb.docs.session import DocsSession
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sandbox() -> Any:
    async with DocsSandbox() as running:
        yield running


async def test_three_appends_come_out_in_order_and_insert_without_after_goes_on_top(
    sandbox: DocsSandbox,
) -> None:
    document = sandbox.create_document("Notes")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        for text in ("un", "deux", "trois"):
            await doc.append_block(text)
        assert [block.text for block in doc.blocks] == ["un", "deux", "trois"]
        await doc.insert_block("zéro")  # after=None: at the top, as documented
        assert [block.text for block in doc.blocks] == ["zéro", "un", "deux", "trois"]
        ids = await doc.append_markdown("# Fin\n\n- a\n- b")
        assert [block.text for block in doc.blocks][-3:] == ["Fin", "a", "b"] and len(ids) == 3


async def test_concurrent_appends_keep_their_order(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Notes")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        await asyncio.gather(*(doc.append_block(f"ligne {index}") for index in range(5)))
        assert [block.text for block in doc.blocks] == [f"ligne {index}" for index in range(5)]
