"""Helpers for widget tests: the fake CLI's command, transcript text extraction, bounded polling."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

FAKE_STREAM_CLI = str(Path(__file__).with_name("fake_stream_cli.py"))


def fake_stream_cli_command() -> list[str]:
    return [sys.executable, FAKE_STREAM_CLI]


class _SegmentText(HTMLParser):
    """Collects the text inside ``<span class="elynav-<segment>">`` elements."""

    def __init__(self, css_class: str) -> None:
        super().__init__(convert_charrefs=True)
        self.css_class = css_class
        self.depth = 0
        self.pieces: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth:
            self.depth += 1
        elif tag == "span" and dict(attrs).get("class") == self.css_class:
            self.depth = 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.pieces.append(data)


def segment_text(markup: str, css_class: str = "elynav-text") -> str:
    """The text a reader sees in the transcript's segments of one kind (entities decoded)."""
    parser = _SegmentText(css_class)
    parser.feed(markup)
    parser.close()
    return "".join(parser.pieces)


async def wait_until(condition: Callable[[], bool], timeout: float = 20.0) -> bool:
    """Poll ``condition`` while letting the loop run; False when ``timeout`` passed first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.02)
    return condition()
