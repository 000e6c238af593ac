"""Inline markdown of the pieces a reader takes out of a BlockNote ``XmlText``, fast for simple layouts.

Where it sits: internal, between the document reader (``blocknote.reader``) and ``inline``. The reader
turns each ``(chunk, attributes)`` of ``XmlText.diff()`` into a ``MarkedPiece`` (text, mark bits,
link); ``render_pieces`` gives the same markdown as ``render_inline`` of the equivalent
``InlineRun`` list. No I/O, no pycrdt.

Why it exists: ``render_inline`` is exact for any runs because it parses what it wrote back and tries
safer layouts when the parse differs; that check is most of the cost of reading a big document.
Most text is simple: runs with no markdown character (`` \\`*_~[] ``) and no newline, at most one mark
each, no two marked runs side by side. Those are written directly (``**b**``, ``*i*``, ``~~s~~``,
`` `c` ``, ``[t](url)``) with no check, because such a layout always reads back as written; the
rule is pinned by a property test against ``render_inline`` on random pieces, adversarial
characters included. Anything else goes through ``render_inline`` unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from elynav_nb.docs.markdown.inline import MARKDOWN_SPECIAL_CHARACTERS, InlineRun, render_inline

__all__ = ["MARK_BOLD", "MARK_CODE", "MARK_ITALIC", "MARK_STRIKE", "MarkedPiece", "render_pieces"]

MARK_BOLD: Final = 1
MARK_ITALIC: Final = 2
MARK_STRIKE: Final = 4
MARK_CODE: Final = 8

MarkedPiece = tuple[str, int, "str | None"]
"""(text, ``MARK_*`` bits or-ed together, link href or None): one chunk of a text node, as read."""

_DELIMITERS: Final = {MARK_BOLD: "**", MARK_ITALIC: "*", MARK_STRIKE: "~~"}
_UNSAFE_DESTINATION: Final = re.compile(r"[\x00-\x20\x7f<>()\\]|\s")
"""Characters that make ``render_inline`` escape, percent-encode or bracket an href."""


def render_pieces(pieces: Sequence[MarkedPiece]) -> str:
    """``render_inline`` of the runs these pieces make; simple layouts are written directly."""
    simple = _render_simple(pieces)
    if simple is not None:
        return simple
    return render_inline(
        [
            InlineRun(
                text,
                bold=bool(bits & MARK_BOLD),
                italic=bool(bits & MARK_ITALIC),
                strike=bool(bits & MARK_STRIKE),
                code=bool(bits & MARK_CODE),
                link=link,
            )
            for text, bits, link in pieces
        ]
    )


def _merge_pieces(pieces: Sequence[MarkedPiece]) -> list[MarkedPiece]:
    """Empty pieces dropped, neighbours with the same marks joined (the runs' canonical form)."""
    merged: list[MarkedPiece] = []
    for piece in pieces:
        if not piece[0]:
            continue
        if merged and merged[-1][1] == piece[1] and merged[-1][2] == piece[2]:
            previous = merged[-1]
            merged[-1] = (previous[0] + piece[0], previous[1], previous[2])
        else:
            merged.append(piece)
    return merged


def _is_simple_destination(href: str) -> bool:
    """An href written as it is between parentheses and read back unchanged."""
    return bool(href) and _UNSAFE_DESTINATION.search(href) is None


def _render_simple(pieces: Sequence[MarkedPiece]) -> str | None:
    """The direct rendering of a simple layout, or None when the layout is not simple."""
    merged = pieces if len(pieces) == 1 else _merge_pieces(pieces)
    output: list[str] = []
    previous_marked = False
    for text, bits, link in merged:
        if not text or "\n" in text:
            return None
        if bits == 0 and link is None:
            if MARKDOWN_SPECIAL_CHARACTERS.search(text) is not None:
                return None
            output.append(text)
            previous_marked = False
            continue
        if previous_marked:
            return None  # two marked runs side by side: their delimiters could run together
        previous_marked = True
        if link is not None:
            if (
                bits
                or MARKDOWN_SPECIAL_CHARACTERS.search(text) is not None
                or not _is_simple_destination(link)
            ):
                return None
            output.append(f"[{text}]({link})")
        elif bits == MARK_CODE:
            if "`" in text or text[0] == " " or text[-1] == " ":
                return None
            output.append(f"`{text}`")
        else:
            delimiter = _DELIMITERS.get(bits)
            if delimiter is None or MARKDOWN_SPECIAL_CHARACTERS.search(text) is not None:
                return None
            if text[0].isspace() or text[-1].isspace():
                return None  # render_inline moves edge whitespace outside the mark
            output.append(f"{delimiter}{text}{delimiter}")
    return "".join(output)
