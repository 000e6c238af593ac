"""``DocsSessionView`` re-renders when a person edits the document elsewhere, at a bounded rate, and a
session displayed twice keeps one view."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

import elynav_nb._display as display
from elynav_nb.docs.session import DocsSession
from elynav_nb.sandbox.docs.server import DocsSandbox
from elynav_nb.widgets.docs_view import DocsSessionView

pytestmark = pytest.mark.anyio
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
async def sandbox() -> AsyncIterator[DocsSandbox]:
    async with DocsSandbox() as running:
        yield running


async def _eventually(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def test_the_view_follows_edits_made_by_someone_else(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Suivi")
    link = sandbox.document_link(document.id)
    async with (
        DocsSession.open(link, sandbox.credentials()) as ours,
        DocsSession.open(link, sandbox.credentials()) as theirs,
    ):
        view = DocsSessionView(ours, min_interval=0.05)
        await theirs.insert_block("écrit **ailleurs**")
        assert await _eventually(lambda: "écrit <strong>ailleurs</strong>" in view.widget.value)
        await ours.insert_block("écrit ici")  # our own acked write shows too
        assert await _eventually(lambda: "écrit ici" in view.widget.value)

        before = view.render_count
        for number in range(30):  # a burst: a person typing fast
            await theirs.insert_block(f"ligne {number}")
        assert await _eventually(lambda: "ligne 29" in view.widget.value)
        assert view.render_count - before < 30  # coalesced, the last state shown

        view.close()
        rendered = view.widget.value
        await theirs.insert_block("après la fermeture")
        assert await _eventually(lambda: any(b.text == "après la fermeture" for b in ours.blocks))
        await asyncio.sleep(0.2)
        assert view.widget.value == rendered


async def test_a_session_displayed_twice_has_one_view(
    sandbox: DocsSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(display, "in_notebook_kernel", lambda: True)
    document = sandbox.create_document("Affichage")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        first = doc._repr_mimebundle_()
        second = doc._repr_mimebundle_()
        assert first[WIDGET_MIME]["model_id"] == second[WIDGET_MIME]["model_id"]
        assert first["text/plain"] == repr(doc)
        assert len(doc._changes.listeners) == 1
