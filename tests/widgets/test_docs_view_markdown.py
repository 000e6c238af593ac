"""The Docs live view shows a block's inline markdown as formatting (bold, italic, links), never as raw
asterisks, and never lets the document's text inject HTML into the page."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from html.parser import HTMLParser

import pytest

from elynav_nb.docs.session import DocsSession
from elynav_nb.sandbox.docs.server import DocsSandbox
from elynav_nb.widgets.docs_view import DocsSessionView

pytestmark = pytest.mark.anyio


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


class _Page(HTMLParser):
    """The tags and the visible text of the rendered view, as a browser would parse them."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text_in: dict[str, list[str]] = {}
        self._open: list[str] = []
        self.feed(markup)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag)]

    def handle_data(self, data: str) -> None:
        for tag in set(self._open):
            self.text_in.setdefault(tag, []).append(data)

    def text(self, tag: str) -> str:
        return "".join(self.text_in.get(tag, []))


async def test_the_live_view_renders_inline_markdown_as_formatting(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Réunion")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        view = DocsSessionView(doc, min_interval=0.05)
        heading_id = await doc.insert_block("Ordre du **jour**", type="heading", level=1)
        await doc.update_block(heading_id, "Ordre du **jour 1**")
        await doc.insert_block(
            "Budget *rentrée*, ~~ancien~~ `code` [site](https://example.org/a?b=1&c=2)", after=heading_id
        )
        assert await _eventually(lambda: "example.org" in view.widget.value)

        page = _Page(view.widget.value)
        assert "**" not in view.widget.value and "~~" not in view.widget.value
        assert page.text("strong").endswith("jour 1")
        assert (
            page.text("em") == "rentrée" and page.text("s") == "ancien" and page.text("code").endswith("code")
        )
        links = [attributes for tag, attributes in page.tags if tag == "a" and attributes.get("target")]
        assert [link["href"] for link in links] == ["https://example.org/a?b=1&c=2"]
        assert page.text("a").endswith("site")


async def test_the_live_view_escapes_what_the_document_says(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Hostile")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        view = DocsSessionView(doc, min_interval=0.05)
        await doc.insert_block('<script>alert(1)</script> **<img src=x onerror=alert(2)>** "quoted" & more')
        await doc.insert_block("[click me](javascript:alert(3)) and [mail](mailto:a@example.org)")
        assert await _eventually(lambda: "click me" in view.widget.value)

        page = _Page(view.widget.value)
        tags = {tag for tag, _attributes in page.tags}
        assert "script" not in tags and "img" not in tags
        assert "<script>alert(1)</script>" in page.text("td")  # shown as text, not run
        assert page.text("strong").endswith("<img src=x onerror=alert(2)>")  # the title is bold too
        hrefs = [attributes.get("href") for tag, attributes in page.tags if tag == "a"]
        assert not any(href and href.startswith("javascript:") for href in hrefs)
        assert "mailto:a@example.org" in hrefs
        assert "click me" in page.text("td")  # the unsafe link keeps its text, without a link
