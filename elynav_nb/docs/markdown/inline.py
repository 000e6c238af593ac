"""Inline markdown <-> BlockNote inline content (text runs with marks), both ways.

Where it sits: the pure layer between the text an agent reads or writes (``Block.text``) and the
styled runs stored in a BlockNote ``XmlText`` (design note §4.4). To read, ``blocknote.reader`` hands
the Yjs runs to ``markdown._inline_pieces.render_pieces``, which writes simple layouts itself and
calls ``render_inline`` for the rest; to write, the ``blocknote`` writers call ``parse_inline`` and
store the runs. No I/O, no pycrdt. This module is the dialect and its public names: the runs are
``inline_runs``, the parser ``_inline_parse``, the renderer ``_inline_render``.

The dialect ("supported markdown")
----------------------------------
* ``**bold**``, ``*italic*`` (also ``__bold__`` and ``_italic_``, never inside a word), ``~~strike~~``
  (exactly two tildes), `` `code` `` (CommonMark code spans: any number of backticks, one padding
  space stripped on both sides), ``[text](url)`` and ``[text](<url with spaces>)`` (no titles).
* A backslash before an ASCII punctuation character makes it literal; any other backslash is text.
* Emphasis follows the CommonMark delimiter algorithm (the rule of 3 included) with one deliberate
  simplification: a run of ``*`` / ``~~`` can open when it is not followed by whitespace and close
  when it is not preceded by whitespace; punctuation does not matter. So ``**Note:**text`` is bold
  here, as people mean it, and every run whose marked text does not start or end with whitespace
  can be written. ``_`` additionally never opens or closes inside a word (``snake_case`` is text).
* No HTML, entities, autolinks or images: ``<``, ``&`` and ``![`` are plain text.
* Unbalanced markers are text, never an error. A newline is kept as a newline (a hard break) and
  never carries marks (BlockNote's hardBreak node has none).

Rendering (runs -> markdown) always writes ``**``, ``*``, ``~~``, backticks and brackets, escapes only
what would be misread, moves whitespace at the edges of bold/italic/strike outside the markers, and
checks its own output by parsing it back; when a layout would be misread it tries safer ones (more
escapes, ``_`` for italic). ``normalize(markdown)`` is ``render_inline(parse_inline(markdown))``.
Marks markdown cannot show (underline, colours, comments) are not part of ``InlineRun``; callers
that rewrite text keep them on the characters they do not change.
"""

from __future__ import annotations

from elynav_nb.docs.markdown._inline_parse import MARKDOWN_SPECIAL_CHARACTERS, parse_inline
from elynav_nb.docs.markdown._inline_render import clear_render_cache, render_inline
from elynav_nb.docs.markdown.inline_runs import InlineRun, merge_runs, plain_text

__all__ = [
    "MARKDOWN_SPECIAL_CHARACTERS",
    "InlineRun",
    "clear_render_cache",
    "merge_runs",
    "normalize",
    "parse_inline",
    "plain_text",
    "render_inline",
]


def normalize(markdown: str) -> str:
    """The canonical spelling of ``markdown``: ``render_inline(parse_inline(markdown))``."""
    return render_inline(parse_inline(markdown))
