"""``InlineRun``: one piece of inline text and the marks markdown can show on it.

Where it sits: the data model of ``docs/markdown`` inline text, shared by the parser
(``_inline_parse``), the renderer (``_inline_render``) and the BlockNote writers and readers
(``blocknote``), all through ``markdown.inline``. Pure: frozen records and two functions on them.

How data flows: runs in -> ``merge_runs`` (empty runs dropped, neighbours with the same marks
joined: the canonical form every parse and render works on) -> ``plain_text`` (marks dropped).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

__all__ = ["STYLE_MARKS", "InlineRun", "merge_runs", "plain_text"]

STYLE_MARKS = ("bold", "italic", "strike")
"""The marks written with delimiters around the text (code and links have their own syntax)."""


@dataclass(frozen=True)
class InlineRun:
    """One piece of text and the markdown-visible marks it carries."""

    text: str
    bold: bool = False
    italic: bool = False
    strike: bool = False
    code: bool = False
    link: str | None = None

    def same_marks(self, other: InlineRun) -> bool:
        return (
            self.bold == other.bold
            and self.italic == other.italic
            and self.strike == other.strike
            and self.code == other.code
            and self.link == other.link
        )

    def has_mark(self, mark: str) -> bool:
        return bool(getattr(self, mark))


def merge_runs(runs: Iterable[InlineRun]) -> list[InlineRun]:
    """Drop empty runs and join neighbours that carry the same marks (the canonical form)."""
    merged: list[InlineRun] = []
    pending_texts: list[str] = []
    for run in runs:
        if not run.text:
            continue
        if merged and merged[-1].same_marks(run):
            pending_texts.append(run.text)
            continue
        if merged and pending_texts:
            merged[-1] = replace(merged[-1], text=merged[-1].text + "".join(pending_texts))
        pending_texts = []
        merged.append(run)
    if merged and pending_texts:
        merged[-1] = replace(merged[-1], text=merged[-1].text + "".join(pending_texts))
    return merged


def plain_text(runs: Iterable[InlineRun]) -> str:
    """The characters of the runs, marks dropped."""
    return "".join(run.text for run in runs)
