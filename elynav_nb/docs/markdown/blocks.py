"""Block-level markdown -> BlockNote block specs (type, inline text, props, nested children, tables).

Where it sits: the pure first step of whole-markdown writing (``DocsSession.insert_markdown`` and
``replace_section``). ``blocknote.builder`` writes the specs into a ``pycrdt.Doc``; ``section_diff``
compares them with the blocks already there. Inline text stays inline markdown here
(``markdown.inline.parse_inline`` turns it into marked runs when it is written). No I/O.

The dialect (what ``markdown.render`` writes, so reading and writing back gives the same blocks):

* Headings ``#`` to ``######`` (and setext ``===`` / ``---`` underlines), paragraphs, bullet items
  (``-``, ``+``, ``*``), ordered items (``1.``, ``1)``; a first item numbered n > 1 gets BlockNote's
  ``start``), check items (``- [ ]``, ``- [x]``), quotes (``>``), fenced code with a language,
  thematic breaks (dividers), lone images ``![name](https://... "caption")`` and pipe tables.
* **Indentation nests**: a block indented two or more spaces deeper than the block above it becomes
  that block's child, whatever its type (BlockNote nests any block). So there are no indented code
  blocks: use fences.
* **Every line break inside a block is kept** as a hard break (a line ending in a backslash, in
  two spaces or in nothing). A line ending in a backslash always continues the block, even when
  the next line looks like a new block. Whitespace at the start and end of lines is not kept.
* Inside a quote, the text is the quote's text (``> - a`` is a quote reading "- a"); a ``>`` line
  with nothing else ends one quote block and starts the next.
* HTML, entities and link reference definitions are text. NUL becomes U+FFFD, CR LF and CR become
  LF; other characters are kept as they are.

Limits, each an ``InvalidInput`` naming the limit: ``MAX_MARKDOWN_BYTES`` of UTF-8 input,
``MAX_NESTING_DEPTH`` levels of nesting, ``MAX_BLOCKS`` blocks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from elynav_nb.docs.markdown import syntax as markdown_syntax
from elynav_nb.docs.markdown.inline import normalize
from elynav_nb.errors import InvalidInput

__all__ = [
    "MAX_BLOCKS",
    "MAX_MARKDOWN_BYTES",
    "MAX_NESTING_DEPTH",
    "BlockSpec",
    "TableSpec",
    "parse_markdown",
    "spec_key",
]

MAX_MARKDOWN_BYTES: Final = 2_000_000
"""Largest markdown accepted at once (UTF-8 bytes)."""
MAX_NESTING_DEPTH: Final = 32
"""Deepest nesting accepted (a top-level block is depth 1)."""
MAX_BLOCKS: Final = 20_000
"""Most blocks one markdown text may make."""

_ATX_HEADING: Final = re.compile(r"(#{1,6})(?:[ \t]+(.*))?$")
_FENCE_OPEN: Final = re.compile(r"(`{3,}|~{3,})[ \t]*(.*)$")
_BULLET: Final = re.compile(r"([-+*])(?:[ \t]+(.*))?$")
_ORDERED: Final = re.compile(r"(\d{1,9})[.)](?:[ \t]+(.*))?$")
_CHECKBOX: Final = re.compile(r"\[([ xX])\](?:[ \t]+(.*))?$")
_SETEXT: Final = re.compile(r"(=+|-+)[ \t]*$")
_QUOTE_MARKERS: Final = re.compile(r">[ \t]?(?:[ \t]*>[ \t]?)*")
_TAB_SIZE: Final = 4


@dataclass(frozen=True)
class TableSpec:
    """A table: cell texts (inline markdown) row by row, column alignments, and whether the first
    row is a header row (BlockNote ``tableHeader`` cells)."""

    rows: tuple[tuple[str, ...], ...]
    alignments: tuple[str, ...]
    header: bool = True

    def canonical_markdown(self) -> str:
        """The table as ``markdown.render`` writes it, cells in their canonical inline markdown."""
        rows = [[normalize(cell) for cell in row] for row in self.rows]
        return markdown_syntax.render_table(rows, self.alignments, header=self.header)


@dataclass(frozen=True)
class BlockSpec:
    """A block to write: ``text`` is inline markdown (plain text for ``codeBlock``; empty for
    ``divider``, ``image`` and ``table``), ``props`` only what markdown says (``level``, ``checked``,
    ``language``, ``start``, an image's ``name``/``url``/``caption``)."""

    type: str
    text: str = ""
    props: Mapping[str, Any] = field(default_factory=dict)
    children: tuple[BlockSpec, ...] = ()
    table: TableSpec | None = None

    def count(self) -> int:
        """This block and its descendants."""
        return 1 + sum(child.count() for child in self.children)


def spec_key(spec: BlockSpec) -> tuple[Any, ...]:
    """What markdown shows of one block, children left out: equal keys read as the same markdown."""
    if spec.table is not None:
        text = spec.table.canonical_markdown()
    elif spec.type == "codeBlock":
        text = spec.text
    else:
        text = normalize(spec.text)
    return (spec.type, tuple(sorted(spec.props.items())), text)


# =============================================================================================
# Parsing
# =============================================================================================


class _Node:
    """A block while it is being parsed."""

    __slots__ = ("children", "code_lines", "lines", "props", "table", "type")

    def __init__(self, block_type: str, props: dict[str, Any] | None = None) -> None:
        self.type = block_type
        self.props: dict[str, Any] = props if props is not None else {}
        self.lines: list[str] = []
        self.code_lines: list[str] = []
        self.children: list[_Node] = []
        self.table: TableSpec | None = None

    def freeze(self) -> BlockSpec:
        if self.type == "codeBlock":
            text = "\n".join(self.code_lines)
        else:
            text = "\n".join(self.lines).rstrip(" \t")
        return BlockSpec(
            type=self.type,
            text=text,
            props=dict(self.props),
            children=tuple(child.freeze() for child in self.children),
            table=self.table,
        )


@dataclass
class _Open:
    """A block that may still take children: those indented at least ``child_indent`` columns."""

    node: _Node
    child_indent: int


@dataclass
class _Fence:
    node: _Node
    character: str
    length: int
    indent: int
    container_indent: int


def _measure(line: str) -> tuple[int, str]:
    """(indentation in columns, the text after it); tabs advance to the next multiple of 4."""
    column = 0
    index = 0
    for character in line:
        if character == " ":
            column += 1
        elif character == "\t":
            column += _TAB_SIZE - column % _TAB_SIZE
        else:
            break
        index += 1
    return column, line[index:]


def _ends_with_hard_break(text: str) -> bool:
    """A line ending in an odd number of backslashes continues its block on the next line."""
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


def _strip_columns(line: str, columns: int) -> str:
    """``line`` with up to ``columns`` columns of indentation removed (code block content)."""
    column = 0
    index = 0
    while index < len(line) and column < columns:
        character = line[index]
        if character == " ":
            column += 1
        elif character == "\t":
            step = _TAB_SIZE - column % _TAB_SIZE
            if column + step > columns:
                return " " * (column + step - columns) + line[index + 1 :]
            column += step
        else:
            break
        index += 1
    return line[index:]


def _check_source(markdown: object) -> str:
    if not isinstance(markdown, str):
        raise InvalidInput("the markdown must be a string")
    try:
        size = len(markdown.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput("the markdown contains unpaired surrogates") from None
    if size > MAX_MARKDOWN_BYTES:
        raise InvalidInput(
            f"the markdown is {size} bytes; the limit is {MAX_MARKDOWN_BYTES} bytes at once",
            details={"size": size, "limit": MAX_MARKDOWN_BYTES},
        )
    return markdown.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")


class _BlockParser:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.root = _Node("root")
        self.open: list[_Open] = [_Open(self.root, 0)]
        self.text_node: _Node | None = None  # the block whose inline text the next line may continue
        self.text_continues = False  # the last text line ended in a hard-break backslash
        self.text_is_lazy = False  # paragraphs, items and quotes take unmarked continuation lines
        self.fence: _Fence | None = None
        self.in_quote_run = False  # the previous line was a quote line
        self.blocks = 0

    # --- the tree --------------------------------------------------------------------------------

    def _append(self, indent: int, node: _Node) -> None:
        """Add ``node`` under the deepest open block it is indented under, and open it."""
        while len(self.open) > 1 and indent < self.open[-1].child_indent:
            self.open.pop()
        self.open[-1].node.children.append(node)
        self.blocks += 1
        if self.blocks > MAX_BLOCKS:
            raise InvalidInput(
                f"the markdown makes more than {MAX_BLOCKS} blocks", details={"limit": MAX_BLOCKS}
            )
        if len(self.open) > MAX_NESTING_DEPTH:
            raise InvalidInput(
                f"the markdown nests blocks more than {MAX_NESTING_DEPTH} levels deep",
                details={"limit": MAX_NESTING_DEPTH},
            )
        self.open.append(_Open(node, indent + 2))

    def _previous_sibling(self, indent: int) -> _Node | None:
        depth = len(self.open)
        while depth > 1 and indent < self.open[depth - 1].child_indent:
            depth -= 1
        siblings = self.open[depth - 1].node.children
        return siblings[-1] if siblings else None

    # --- inline text -----------------------------------------------------------------------------

    def _start_text(self, node: _Node, first_line: str, *, lazy: bool) -> None:
        self.text_node = node
        self.text_is_lazy = lazy
        self.text_continues = False
        if first_line:
            self._add_text_line(first_line)

    def _add_text_line(self, content: str) -> None:
        assert self.text_node is not None
        text = content.strip(" \t") if not self.text_continues else content.lstrip(" \t")
        if _ends_with_hard_break(text):
            self.text_continues = True
            text = text[:-1]
        else:
            self.text_continues = False
            text = text.rstrip(" \t")
        self.text_node.lines.append(text)

    def _close_text(self) -> None:
        self.text_node = None
        self.text_continues = False

    def _interrupts_paragraph(self, content: str) -> bool:
        """Whether a line ends the open text (instead of continuing it lazily)."""
        if not markdown_syntax.line_starts_block(content):
            return False
        if self.text_node is not None and self.text_node.type == "paragraph":
            ordered = _ORDERED.match(content)
            if ordered is not None and (ordered.group(1) != "1" or not ordered.group(2)):
                return False  # CommonMark: only a non-empty "1." item interrupts a paragraph
            bullet = _BULLET.match(content)
            if bullet is not None and not bullet.group(2) and not markdown_syntax.is_thematic_break(content):
                return False  # nor does an empty bullet item
        return True

    # --- the main loop ---------------------------------------------------------------------------

    def parse(self) -> list[BlockSpec]:
        index = 0
        while index < len(self.lines):
            index = self._line(index)
        return [child.freeze() for child in self.root.children]

    def _line(self, index: int) -> int:
        """Handle the line at ``index``; return the index of the next line to handle."""
        line = self.lines[index]
        if self.fence is not None:
            return self._fence_line(index, line)
        indent, content = _measure(line)
        if not content.strip(" \t"):
            if self.text_node is not None and self.text_continues:
                self.text_node.lines.append("")  # a text ending in a line break keeps it
            self._close_text()
            self.in_quote_run = False
            return index + 1
        if self.text_node is not None and self.text_continues:
            if self.text_node.type == "quote" and content.startswith(">"):
                content = _strip_quote_marker(content)  # "> a\\" then "> b": one quote, one marker
            self._add_text_line(content)
            return index + 1
        if content.startswith(">"):
            return self._quote_line(index, indent, content)
        self.in_quote_run = False
        if self.text_node is not None:
            if self.text_node.type == "paragraph" and len(self.text_node.lines) >= 1:
                setext = _SETEXT.match(content)
                if setext is not None and indent < self.open[-1].child_indent + 2:
                    self.text_node.type = "heading"
                    self.text_node.props = {"level": 1 if setext.group(1)[0] == "=" else 2}
                    self._close_text()
                    return index + 1
            if (
                self.text_is_lazy
                and not self._interrupts_paragraph(content)
                and not self._starts_table(index)
            ):
                self._add_text_line(content)
                return index + 1
        self._close_text()
        return self._start_block(index, indent, content)

    def _start_block(self, index: int, indent: int, content: str) -> int:
        heading = _ATX_HEADING.match(content) if content.startswith("#") else None
        if heading is not None:
            node = _Node("heading", {"level": len(heading.group(1))})
            self._append(indent, node)
            self._start_text(node, heading.group(2) or "", lazy=False)
            return index + 1
        fence = _FENCE_OPEN.match(content) if content[0] in "`~" else None
        if fence is not None and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            language = fence.group(2).strip(" \t").split(" ")[0].split("\t")[0]
            node = _Node("codeBlock", {"language": language or "text"})
            self._append(indent, node)
            container_indent = self.open[-2].child_indent if len(self.open) > 1 else 0
            marker = fence.group(1)
            self.fence = _Fence(node, marker[0], len(marker), indent, container_indent)
            return index + 1
        if markdown_syntax.is_thematic_break(content):
            self._append(indent, _Node("divider"))
            return index + 1
        item = self._list_item(index, indent, content)
        if item is not None:
            return item
        if self._starts_table(index):
            return self._table(index, indent)
        image = markdown_syntax.match_image_line(content) if content.startswith("![") else None
        if image is not None:
            props = {"name": image.name, "url": image.url, "caption": image.caption}
            self._append(indent, _Node("image", props))
            return index + 1
        node = _Node("paragraph")
        self._append(indent, node)
        self._start_text(node, content, lazy=True)
        return index + 1

    def _list_item(self, index: int, indent: int, content: str) -> int | None:
        bullet = _BULLET.match(content) if content[0] in "-+*" else None
        ordered = _ORDERED.match(content) if content[0].isdigit() else None
        if bullet is None and ordered is None:
            return None
        marker_match = bullet if bullet is not None else ordered
        assert marker_match is not None
        rest = marker_match.group(2) or ""
        rest_column = indent + (marker_match.start(2) if marker_match.group(2) is not None else len(content))
        if bullet is not None:
            checkbox = _CHECKBOX.match(rest)
            if checkbox is not None:
                node = _Node("checkListItem", {"checked": checkbox.group(1) != " "})
                self._append(indent, node)
                self._start_text(node, checkbox.group(2) or "", lazy=True)
                return index + 1
            node = _Node("bulletListItem")
        else:
            assert ordered is not None
            number = int(ordered.group(1))
            previous = self._previous_sibling(indent)
            starts_list = previous is None or previous.type != "numberedListItem"
            node = _Node("numberedListItem", {"start": number} if starts_list and number != 1 else {})
        self._append(indent, node)
        if rest and markdown_syntax.line_starts_block(rest):
            # "- - x" or "1. # Title": the rest of the line is the item's first child
            self._start_text(node, "", lazy=True)
            self._close_text()
            self.lines[index] = " " * max(rest_column, indent + 2) + rest
            return index
        self._start_text(node, rest, lazy=True)
        return index + 1

    # --- quotes ----------------------------------------------------------------------------------

    def _quote_line(self, index: int, indent: int, content: str) -> int:
        quoted = _strip_quote_markers(content)  # nested quotes are read as one level
        open_quote = self.text_node is not None and self.text_node.type == "quote"
        if not quoted.strip(" \t"):
            if open_quote:
                self._close_text()
            elif not self.in_quote_run:
                self._close_text()
                self._append(indent, _Node("quote"))
            self.in_quote_run = True
            return index + 1
        if open_quote and self.in_quote_run:
            self._add_text_line(quoted)
        elif open_quote and self.text_node is not None and not self.text_node.lines:
            self._add_text_line(quoted)  # an empty quote line, then text: one quote
        else:
            self._close_text()
            node = _Node("quote")
            self._append(indent, node)
            self._start_text(node, quoted, lazy=True)
        self.in_quote_run = True
        return index + 1

    # --- code fences -----------------------------------------------------------------------------

    def _fence_line(self, index: int, line: str) -> int:
        fence = self.fence
        assert fence is not None
        indent, content = _measure(line)
        if content.strip(" \t") and indent < fence.container_indent:
            self.fence = None  # the line leaves the block the code was in: the fence ends unclosed
            return index
        closing = content.startswith(fence.character * fence.length) and not content.strip(" \t").strip(
            fence.character
        )
        if closing and indent - fence.indent < 4:
            self.fence = None
            return index + 1
        fence.node.code_lines.append(_strip_columns(line, fence.indent))
        return index + 1

    # --- tables ----------------------------------------------------------------------------------

    def _starts_table(self, index: int) -> bool:
        if index + 1 >= len(self.lines):
            return False
        _indent, content = _measure(self.lines[index])
        if "|" not in content or _ends_with_hard_break(content.rstrip(" \t")):
            return False
        delimiter = self.lines[index + 1]
        if not markdown_syntax.is_delimiter_row(delimiter):
            return False
        columns = len(markdown_syntax.split_table_row(delimiter))
        return columns >= 1 and len(markdown_syntax.split_table_row(content)) == columns

    def _table(self, index: int, indent: int) -> int:
        header = markdown_syntax.split_table_row(_measure(self.lines[index])[1])
        alignments = tuple(markdown_syntax.table_alignment(self.lines[index + 1]))
        columns = len(alignments)
        rows: list[tuple[str, ...]] = []
        has_header = any(cell for cell in header)
        if has_header:
            rows.append(tuple(header))
        next_index = index + 2
        while next_index < len(self.lines):
            row_indent, content = _measure(self.lines[next_index])
            if not content.strip(" \t") or row_indent < indent or markdown_syntax.line_starts_block(content):
                break
            cells = markdown_syntax.split_table_row(content)[:columns]
            rows.append((*cells, *([""] * (columns - len(cells)))))
            next_index += 1
        node = _Node("table")
        node.table = TableSpec(rows=tuple(rows), alignments=alignments, header=has_header)
        if not rows:
            node.table = TableSpec(rows=((("",) * columns),), alignments=alignments, header=False)
        self._append(indent, node)
        return next_index


def _strip_quote_marker(content: str) -> str:
    """``content`` without its first ``>`` and the one space or tab after it."""
    quoted = content[1:]
    return quoted[1:] if quoted.startswith((" ", "\t")) else quoted


def _strip_quote_markers(content: str) -> str:
    """``content`` without all its leading ``>`` markers (spaces between them allowed)."""
    markers = _QUOTE_MARKERS.match(content)
    return content[markers.end() :] if markers is not None else content


def parse_markdown(markdown: str) -> list[BlockSpec]:
    """Parse block-level markdown into block specs. Never raises on odd markdown (it becomes text);
    raises ``InvalidInput`` for a non-string, unpaired surrogates, or a limit passed."""
    source = _check_source(markdown)
    return _BlockParser(source.split("\n")).parse()
