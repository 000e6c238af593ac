"""Write block specs (from ``markdown.blocks``) into a BlockNote ``pycrdt.Doc``: ``insert_markdown``.

Where it sits: the write half of whole-markdown writing; ``DocsSession.insert_markdown`` calls
``insert_markdown`` and ``section_diff`` calls ``prepare_blocks`` / ``write_blocks`` for the blocks it
adds. No I/O.

How data flows::

    markdown --parse_markdown--> BlockSpec tree --prepare_blocks--> PreparedBlock tree
        (validated before any write: text sizes, inline markdown parsed into marked runs, new ids)
    --write_blocks, inside ONE transaction--> for each block: build the blockContainer, attach it,
        then populate it (content element with BlockNote's full default props, text runs with their
        explicit marks, hard breaks, table rows and cells, nested blockGroup) -> one Yjs update

Only node, attribute and mark names BlockNote 0.51.4 knows are written (design note §4.5), every
``blockContainer`` holds exactly one content element, and a nested ``blockGroup`` is created only with
children in it. The root ``blockGroup`` is created only when the fragment is empty.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pycrdt import Doc

from elynav_nb.docs.blocknote._ids import new_block_id
from elynav_nb.docs.blocknote._inline_writer import mark_attributes, split_lines
from elynav_nb.docs.blocknote._location import insertion_point
from elynav_nb.docs.blocknote._yxml_writer import NodeWriter, writer_for
from elynav_nb.docs.blocknote.schema import DEFAULT_PROPS, HARD_BREAK
from elynav_nb.docs.blocknote.writers import MAX_BLOCK_TEXT_BYTES
from elynav_nb.docs.markdown.blocks import BlockSpec, parse_markdown
from elynav_nb.docs.markdown.inline import InlineRun, parse_inline
from elynav_nb.errors import InvalidInput

__all__ = [
    "PreparedBlock",
    "insert_markdown",
    "prepare_blocks",
    "write_blocks",
]

_TABLE_PROPS: Final = {"textColor": "default"}
_CELL_PROPS: Final = {"textColor": "default", "backgroundColor": "default", "textAlignment": "left"}
_TEXTLESS_TYPES: Final = frozenset({"divider", "image", "table"})

Line = list[InlineRun]


@dataclass(frozen=True)
class PreparedBlock:
    """A block ready to write: its new id, full props, text as lines of marked runs (hard breaks
    between lines; one line of plain text for code), table cells as runs, children."""

    id: str
    type: str
    props: dict[str, Any]
    lines: tuple[Line, ...]
    children: tuple[PreparedBlock, ...] = ()
    table_rows: tuple[tuple[Line, ...], ...] = ()
    table_alignments: tuple[str, ...] = ()
    table_header: bool = False

    def ids(self) -> Iterator[str]:
        """This block's id, then its descendants', depth first."""
        yield self.id
        for child in self.children:
            yield from child.ids()


# =============================================================================================
# Preparing (pure, before any write)
# =============================================================================================


def _check_size(text: str) -> None:
    size = len(text.encode("utf-8"))
    if size > MAX_BLOCK_TEXT_BYTES:
        raise InvalidInput(
            f"a block's text is {size} bytes; the limit is {MAX_BLOCK_TEXT_BYTES}",
            details={"size": size, "limit": MAX_BLOCK_TEXT_BYTES},
        )


def _full_props(spec: BlockSpec) -> dict[str, Any]:
    if spec.type == "table":
        return dict(_TABLE_PROPS)
    props = dict(DEFAULT_PROPS[spec.type])
    for key, value in spec.props.items():
        props[key] = value
    return props


def prepare_blocks(specs: Sequence[BlockSpec]) -> list[PreparedBlock]:
    """Validate specs and turn them into blocks ready to write (raises ``InvalidInput``)."""
    return [_prepare(spec) for spec in specs]


def _prepare(spec: BlockSpec) -> PreparedBlock:
    if spec.type != "table" and spec.type not in DEFAULT_PROPS:
        raise InvalidInput(f"cannot write a block of type {spec.type!r}", details={"type": spec.type})
    lines: tuple[Line, ...] = ()
    rows: tuple[tuple[Line, ...], ...] = ()
    if spec.type == "codeBlock":
        _check_size(spec.text)
        lines = ([InlineRun(spec.text)] if spec.text else [],)
    elif spec.table is not None:
        _check_size("".join(cell for row in spec.table.rows for cell in row))
        rows = tuple(tuple(_join_lines(parse_inline(cell)) for cell in row) for row in spec.table.rows)
    elif spec.type not in _TEXTLESS_TYPES:
        _check_size(spec.text)
        lines = tuple(split_lines(parse_inline(spec.text)))  # a hard break goes between two lines
    return PreparedBlock(
        id=new_block_id(),
        type=spec.type,
        props=_full_props(spec),
        lines=lines,
        children=tuple(_prepare(child) for child in spec.children),
        table_rows=rows,
        table_alignments=spec.table.alignments if spec.table is not None else (),
        table_header=spec.table.header if spec.table is not None else False,
    )


def _join_lines(runs: Sequence[InlineRun]) -> Line:
    """A table cell holds one line: a newline there becomes a space."""
    return [
        InlineRun(run.text.replace("\n", " "), run.bold, run.italic, run.strike, run.code, run.link)
        for run in runs
        if run.text
    ]


# =============================================================================================
# Writing (inside the caller's transaction)
# =============================================================================================


def _write_line(writer: NodeWriter, parent: Any, index: int, line: Line) -> None:
    text_node = writer.text(parent, index)
    offset = 0
    for run in line:
        writer.insert_text(text_node, offset, run.text, mark_attributes(run))
        offset += len(run.text.encode("utf-8"))  # pycrdt offsets are UTF-8 bytes


def _write_inline(writer: NodeWriter, content: Any, lines: Sequence[Line]) -> None:
    """Text nodes, with a ``hardBreak`` between lines; an empty line gets no text node."""
    index = 0
    for number, line in enumerate(lines):
        if number > 0:
            writer.element(content, index, HARD_BREAK, {})
            index += 1
        if line:
            _write_line(writer, content, index, line)
            index += 1


def _write_table(writer: NodeWriter, table: Any, block: PreparedBlock) -> None:
    for row_number, row in enumerate(block.table_rows):
        row_node = writer.element(table, row_number, "tableRow", {})
        cell_tag = "tableHeader" if block.table_header and row_number == 0 else "tableCell"
        for column, cell in enumerate(row):
            alignment = block.table_alignments[column] if column < len(block.table_alignments) else "left"
            props = {**_CELL_PROPS, "textAlignment": alignment, "colspan": 1, "rowspan": 1}
            cell_node = writer.element(row_node, column, cell_tag, props)
            paragraph = writer.element(cell_node, 0, "tableParagraph", {})
            if cell:
                _write_line(writer, paragraph, 0, cell)


def write_blocks(writer: NodeWriter, group: Any, index: int, blocks: Sequence[PreparedBlock]) -> None:
    """Write ``blocks`` into ``group`` (a writer handle) from child ``index`` on: each container is
    attached, then populated, all inside the caller's one transaction."""
    for offset, block in enumerate(blocks):
        container = writer.element(group, index + offset, "blockContainer", {"id": block.id})
        content = writer.element(container, 0, block.type, block.props)
        if block.type == "table":
            _write_table(writer, content, block)
        elif block.lines:
            _write_inline(writer, content, block.lines)
        if block.children:
            write_blocks(writer, writer.element(container, 1, "blockGroup", {}), 0, block.children)


# =============================================================================================
# Public writer
# =============================================================================================


def insert_markdown(
    doc: Doc[Any], markdown: str, after: str | None = None, *, origin: object | None = None
) -> list[str]:
    """Insert the blocks of ``markdown`` in one transaction; return their new ids, depth first.

    ``after=None`` puts them at the top of the document (as ``insert_block``); otherwise right after
    the block with that id, at its depth. Everything is validated before anything is written.
    """
    if after is not None and not isinstance(after, str):
        raise InvalidInput("after must be a block id or None")
    blocks = prepare_blocks(parse_markdown(markdown))
    if not blocks:
        raise InvalidInput("the markdown holds no block to insert")
    with doc.transaction(origin=origin) as transaction:
        writer = writer_for(transaction)
        group, index = insertion_point(doc, writer, after)
        write_blocks(writer, group, index, blocks)
    return [block_id for block in blocks for block_id in block.ids()]
