"""Writing inline runs into a BlockNote content element: marks, lines, hard breaks, new text nodes.

Where it sits: part of the pure document model of ``elynav_nb.docs``. ``blocknote`` (a new block,
a text update through ``blocknote._text_diff``) and ``blocknote.builder`` (whole markdown) write the runs
``markdown.inline.parse_inline`` made, through a ``blocknote._yxml_writer.NodeWriter``. No I/O here.

How data flows::

    InlineRun (text + bold/italic/strike/code/link) -> mark_attributes -> BlockNote's mark dict
    runs -> split_lines (cut at "\n") -> one list of runs per line
    lines -> insert_new_nodes: a text node per non-empty line, a hardBreak element between lines
      -> insert_runs: each run inserted with its explicit marks (pycrdt inserts never inherit them)

Offsets given to ``insert_runs`` are UTF-8 **byte** offsets, as ``XmlText`` counts them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from elynav_nb.docs.blocknote._yxml_writer import NodeWriter
from elynav_nb.docs.blocknote.schema import HARD_BREAK
from elynav_nb.docs.markdown.inline import InlineRun

__all__ = ["insert_new_nodes", "insert_runs", "mark_attributes", "split_lines"]


def mark_attributes(run: InlineRun) -> dict[str, Any]:
    """BlockNote's marks for a run: ``{}`` for each style, ``{"href"}`` for a link (design note §4.4)."""
    attributes: dict[str, Any] = {}
    if run.bold:
        attributes["bold"] = {}
    if run.italic:
        attributes["italic"] = {}
    if run.strike:
        attributes["strike"] = {}
    if run.code:
        attributes["code"] = {}
    if run.link is not None:
        attributes["link"] = {"href": run.link}
    return attributes


def split_lines(runs: Sequence[InlineRun]) -> list[list[InlineRun]]:
    """Cut runs at newlines: one list of runs per line (hard breaks go between lines)."""
    if all("\n" not in run.text for run in runs):
        return [list(runs)]
    lines: list[list[InlineRun]] = [[]]
    for run in runs:
        parts = run.text.split("\n")
        for index, part in enumerate(parts):
            if index > 0:
                lines.append([])
            if part:
                lines[-1].append(InlineRun(part, run.bold, run.italic, run.strike, run.code, run.link))
    return lines


def insert_runs(
    writer: NodeWriter,
    text_node: Any,
    utf8_offset: int,
    runs: Sequence[InlineRun],
    inherited: Mapping[str, Any],
) -> int:
    """Insert runs at a byte offset, each with its explicit marks; return the offset after them."""
    for run in runs:
        writer.insert_text(text_node, utf8_offset, run.text, {**inherited, **mark_attributes(run)})
        utf8_offset += len(run.text.encode("utf-8"))
    return utf8_offset


def insert_new_nodes(
    writer: NodeWriter,
    content: Any,
    child_index: int,
    lines: Sequence[Sequence[InlineRun]],
    inherited: Mapping[str, Any],
    *,
    tail: Sequence[tuple[str, dict[str, Any]]] = (),
) -> None:
    """Create nodes for ``lines`` at ``child_index`` of ``content`` (a writer handle): text nodes,
    with hard breaks between them. Empty lines get no text node."""
    index = child_index
    last = len(lines) - 1
    for line_number, line in enumerate(lines):
        if line_number > 0:
            writer.element(content, index, HARD_BREAK, {})
            index += 1
        line_tail = tail if line_number == last else ()
        if line or line_tail:
            text_node = writer.text(content, index)
            offset = insert_runs(writer, text_node, 0, line, inherited)
            for chunk, attributes in line_tail:
                writer.insert_text(text_node, offset, chunk, attributes)
                offset += len(chunk.encode("utf-8"))
            index += 1
