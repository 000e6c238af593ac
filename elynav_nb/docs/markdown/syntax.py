"""Line-level markdown syntax shared by the block parser and the block renderer: what starts a block,
how to escape a text so it does not, pipe tables and image lines.

Where it sits: a pure helper under ``markdown.blocks`` (markdown -> block specs) and
``markdown.render`` (blocks -> markdown). Keeping both directions here is what makes the round trip
hold: the renderer escapes exactly what the parser would otherwise read as a new block. No I/O.

The rules (the dialect of ``markdown.blocks``):

* A line **starts a block** when its text (indentation removed) is an ATX heading (``#`` to
  ``######``), a code fence (three or more backticks or tildes), a quote (``>``), a thematic break
  (``***``, ``---``, ``___``, spaces allowed), a bullet item (``-``, ``+``, ``*``) or an ordered item
  (``1.`` or ``1)``, up to nine digits), or a lone image ``![name](http(s)://url "caption")``.
  ``escape_block_start`` puts one backslash where it stops that reading (``\\#``, ``2020\\.``...).
* **Tables** are GitHub pipe tables: a header row, a delimiter row (``---``, ``:--``, ``:-:``,
  ``--:``) with as many cells, then body rows. ``|`` inside a cell is written ``\\|``. A header row
  whose cells are all empty means "no header row" (BlockNote tables may have none).
* **Images** are ``![name](url)`` or ``![name](url "caption")`` alone on their line, for http and
  https URLs; anything else stays text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "ALIGNMENTS",
    "ImageLine",
    "escape_block_start",
    "is_delimiter_row",
    "is_thematic_break",
    "line_starts_block",
    "match_image_line",
    "render_image",
    "render_table",
    "split_table_row",
    "table_alignment",
    "with_hard_breaks",
]

ALIGNMENTS: Final = ("left", "center", "right")

_ATX_HEADING: Final = re.compile(r"#{1,6}(?:[ \t]|$)")
_FENCE: Final = re.compile(r"(?:`{3,}(?!.*`)|~{3,})")
_BLANKS: Final = str.maketrans("", "", " \t")
_BULLET: Final = re.compile(r"[-+*](?:[ \t]|$)")
_ORDERED: Final = re.compile(r"(\d{1,9})([.)])(?:[ \t]|$)")
_CHECKBOX: Final = re.compile(r"\[[ xX]\](?:[ \t]|$)")
_IMAGE: Final = re.compile(
    r"!\[((?:[^\\\[\]]|\\.)*)\]\(\s*(?:<((?:[^\\<>\n]|\\.)*)>|((?:[^\\\s()]|\\.)+))"
    r'(?:\s+"((?:[^\\"]|\\.)*)")?\s*\)[ \t]*$'
)
_BACKSLASH_ESCAPE: Final = re.compile(r"\\([!-/:-@\[-`{-~])")
_IMAGE_SCHEMES: Final = ("http://", "https://")


def line_starts_block(text: str) -> bool:
    """Whether this line text (indentation removed) starts a block other than a paragraph."""
    if not text:
        return False
    first = text[0]
    if first == "#":
        return _ATX_HEADING.match(text) is not None
    if first in "`~":
        return _FENCE.match(text) is not None
    if first == ">":
        return True
    if is_thematic_break(text):
        return True
    if first in "-+*":
        return _BULLET.match(text) is not None
    if first.isdigit():
        return _ORDERED.match(text) is not None
    if first == "!":
        return match_image_line(text) is not None
    return False


def with_hard_breaks(text: str, continuation: str = "") -> str:
    """Inline markdown with every newline written as a hard break: a backslash at the end of the line,
    then ``continuation`` (the indentation, or ``"> "``) before the next line. A line ending in an odd
    number of backslashes (the last one literal) gets one more, so they keep their meaning."""
    if "\n" not in text:
        return text
    lines = text.split("\n")
    for number in range(len(lines) - 1):
        line = lines[number]
        trailing = len(line) - len(line.rstrip("\\"))
        lines[number] = line + ("\\\\" if trailing % 2 else "\\")
    return ("\n" + continuation).join(lines)


def is_thematic_break(text: str) -> bool:
    """``***``, ``---`` or ``___`` (three or more of one of them, spaces and tabs allowed)."""
    if not text or text[0] not in "-*_":
        return False
    marks = text.translate(_BLANKS)
    return len(marks) >= 3 and marks.count(text[0]) == len(marks)


def escape_block_start(text: str, *, bullet: bool = False) -> str:
    """``text`` (inline markdown) with one backslash added so that its first line reads as text.

    ``bullet=True`` for the text of a bullet item, where ``[ ]`` / ``[x]`` would make a check item.
    The backslash goes before an ASCII punctuation character, so the inline parser drops it again.
    """
    if bullet and _CHECKBOX.match(text) is not None:
        return "\\" + text
    if not line_starts_block(text):
        return text
    ordered = _ORDERED.match(text)
    if ordered is not None:
        end = ordered.end(1)
        return text[:end] + "\\" + text[end:]
    return "\\" + text


# --- images ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageLine:
    """A lone image line: BlockNote's ``image`` block props ``name``, ``url`` and ``caption``."""

    name: str
    url: str
    caption: str


def _unescape(text: str) -> str:
    return _BACKSLASH_ESCAPE.sub(r"\1", text)


def match_image_line(text: str) -> ImageLine | None:
    """The image of a line holding only ``![name](url "caption")`` with an http(s) URL, else None."""
    if not text.startswith("!["):
        return None
    match = _IMAGE.match(text)
    if match is None:
        return None
    name, bracketed_url, bare_url, caption = match.groups()
    url = _unescape(bracketed_url if bracketed_url is not None else bare_url)
    if not url.lower().startswith(_IMAGE_SCHEMES):
        return None
    return ImageLine(_unescape(name), url, _unescape(caption or ""))


def _escape_image_text(text: str, specials: str) -> str:
    escaped: list[str] = []
    for character in text:
        if character in specials:
            escaped.append("\\")
        escaped.append(character)
    return "".join(escaped)


def render_image(name: str, url: str, caption: str) -> str:
    """The image line ``match_image_line`` reads back as the same name, url and caption."""
    single_line_name = name.replace("\n", " ")
    rendered_name = _escape_image_text(single_line_name, "\\[]")
    if any(character.isspace() or character in "()<>" for character in url) or not url:
        rendered_url = "<" + _escape_image_text(url.replace("\n", " "), "\\<>") + ">"
    else:
        rendered_url = _escape_image_text(url, "\\")
    rendered = f"![{rendered_name}]({rendered_url}"
    if caption:
        rendered += ' "' + _escape_image_text(caption.replace("\n", " "), '\\"') + '"'
    return rendered + ")"


# --- tables ------------------------------------------------------------------------------------


def split_table_row(line: str) -> list[str]:
    """The cells of a pipe-table row, trimmed, ``\\|`` turned back into ``|``.

    A ``|`` splits cells unless an odd number of backslashes precedes it; one leading and one
    trailing pipe are optional."""
    text = line.strip(" \t")
    cells: list[str] = []
    current: list[str] = []
    backslashes = 0
    ended_with_pipe = False
    for character in text:
        ended_with_pipe = False
        if character == "|" and backslashes % 2 == 0:
            cells.append("".join(current))
            current = []
            backslashes = 0
            ended_with_pipe = True
            continue
        current.append(character)
        backslashes = backslashes + 1 if character == "\\" else 0
    if not ended_with_pipe:
        cells.append("".join(current))
    if text.startswith("|") and cells:
        cells = cells[1:]
    return [cell.strip(" \t").replace("\\|", "|") for cell in cells]


def _delimiter_alignment(cell: str) -> str | None:
    """``left`` / ``center`` / ``right`` of one delimiter cell, None when it is not one."""
    stripped = cell.strip(" \t")
    starts = stripped.startswith(":")
    ends = stripped.endswith(":") and len(stripped) > 1
    dashes = stripped[1 if starts else 0 : len(stripped) - 1 if ends else len(stripped)]
    if not dashes or dashes.strip("-"):
        return None
    if starts and ends:
        return "center"
    if ends:
        return "right"
    return "left"


def is_delimiter_row(line: str) -> bool:
    """Whether this line is a pipe table's delimiter row (``|---|:-:|``)."""
    text = line.strip(" \t")
    if not text or text.strip("|:- \t"):
        return False
    return all(_delimiter_alignment(cell) is not None for cell in split_table_row(text))


def table_alignment(line: str) -> list[str]:
    """The column alignments of a delimiter row (check it with ``is_delimiter_row`` first)."""
    return [_delimiter_alignment(cell) or "left" for cell in split_table_row(line)]


_DELIMITERS: Final = {"left": "---", "center": ":-:", "right": "--:"}


def render_table(rows: Sequence[Sequence[str]], alignments: Sequence[str], *, header: bool) -> str:
    """A pipe table of inline-markdown cells. Without a header row, an empty one is written first.

    Every row gets as many cells as ``alignments`` has columns (missing cells are empty)."""
    columns = len(alignments)

    def row_line(cells: Sequence[str]) -> str:
        padded = [*cells[:columns], *([""] * (columns - len(cells)))]
        return "| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in padded) + " |"

    lines: list[str] = []
    body = list(rows)
    if header and body:
        lines.append(row_line(body[0]))
        body = body[1:]
    else:
        lines.append(row_line([]))
    lines.append("| " + " | ".join(_DELIMITERS.get(alignment, "---") for alignment in alignments) + " |")
    for cells in body:
        lines.append(row_line(cells))
    return "\n".join(lines)
