"""The minimal character edit behind ``update_block_text``: segments, edit script, restyle, delete, insert.

Where it sits: part of the pure document model of ``elynav_nb.docs``; ``blocknote.update_block_text``
calls these inside its one transaction, in this order, after locating the block. No I/O here.

How data flows::

    content element -> content_segments: its children as characters (an XmlText with its runs,
      or a hardBreak as one "\n"; inline nodes such as doc links refuse the edit)
    old text, new text -> diff_opcodes: common prefix and suffix kept, the middle diffed by
      ``difflib`` when small enough (else one replace)
    each "equal" range -> restyle_equal_range: only the markdown marks that differ are formatted
    each other range, from the end -> delete_range, then insert_at the new runs (slice_runs), with
      underline and colours of the character before carried over (inherited_marks)

Characters that stay are never deleted and re-inserted, so a person typing in the same block at the
same time keeps their characters. ``XmlText`` offsets are UTF-8 **byte** offsets, not characters.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pycrdt import XmlElement, XmlFragment, XmlText

from elynav_nb._text_diff import common_ends
from elynav_nb.docs.blocknote._inline_writer import insert_new_nodes, insert_runs, mark_attributes
from elynav_nb.docs.blocknote._location import is_element
from elynav_nb.docs.blocknote._yxml_writer import NodeWriter
from elynav_nb.docs.blocknote.schema import HARD_BREAK, base_mark_name
from elynav_nb.docs.markdown.inline import InlineRun
from elynav_nb.errors import UnsupportedBlockType

__all__ = [
    "Segment",
    "content_segments",
    "delete_range",
    "diff_opcodes",
    "inherited_marks",
    "insert_at",
    "restyle_equal_range",
    "slice_runs",
]

_MARKDOWN_MARKS: Final = ("bold", "italic", "strike", "code", "link")
_INHERITED_MARKS: Final = ("underline", "textColor", "backgroundColor")
_DIFF_WINDOW: Final = 5_000
_MAX_DIFF_EDITS: Final = 50


def _element_children(node: XmlElement | XmlFragment) -> list[XmlElement | XmlText | XmlFragment]:
    return list(node.children)


def _utf8_offset(text: str, character_offset: int) -> int:
    return len(text[:character_offset].encode("utf-8"))


@dataclass
class Segment:
    """One child of a content element, seen as characters: an XmlText, or a hardBreak (one "\\n")."""

    child_index: int
    start: int
    text: str  # the characters (for a hardBreak: "\n")
    node: XmlText | None  # None for a hardBreak
    runs: list[tuple[str, dict[str, Any]]]  # (chunk, raw attributes) for an XmlText

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def content_segments(content: XmlElement, block_type: str) -> list[Segment]:
    segments: list[Segment] = []
    position = 0
    for child_index, child in enumerate(content.children):
        if isinstance(child, XmlText):
            runs: list[tuple[str, dict[str, Any]]] = []
            for chunk, attributes in child.diff():
                if not isinstance(chunk, str):
                    raise UnsupportedBlockType("this block holds embedded objects and is kept as it is")
                runs.append((chunk, dict(attributes or {})))
            text = "".join(chunk for chunk, _ in runs)
            segments.append(Segment(child_index, position, text, child, runs))
            position += len(text)
        elif is_element(child, HARD_BREAK) and block_type != "codeBlock":
            segments.append(Segment(child_index, position, "\n", None, []))
            position += 1
        else:
            raise UnsupportedBlockType(
                "this block holds inline nodes (such as doc links) and is kept as it is"
            )
    return segments


def diff_opcodes(old: str, new: str) -> list[tuple[str, int, int, int, int]]:
    """Character edit script: common prefix and suffix kept, the middle diffed when small enough."""
    prefix, suffix = common_ends(old, new)
    old_middle = old[prefix : len(old) - suffix]
    new_middle = new[prefix : len(new) - suffix]
    opcodes: list[tuple[str, int, int, int, int]] = []
    if prefix:
        opcodes.append(("equal", 0, prefix, 0, prefix))
    if old_middle or new_middle:
        middle_opcodes: list[tuple[str, int, int, int, int]] = []
        if old_middle and new_middle and len(old_middle) <= _DIFF_WINDOW and len(new_middle) <= _DIFF_WINDOW:
            matcher = difflib.SequenceMatcher(None, old_middle, new_middle, autojunk=False)
            middle_opcodes = [
                (tag, i1 + prefix, i2 + prefix, j1 + prefix, j2 + prefix)
                for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            ]
            edits = sum(1 for opcode in middle_opcodes if opcode[0] != "equal")
            if edits > _MAX_DIFF_EDITS:
                middle_opcodes = []
        if not middle_opcodes:
            middle_opcodes = [("replace", prefix, len(old) - suffix, prefix, len(new) - suffix)]
        opcodes.extend(middle_opcodes)
    if suffix:
        opcodes.append(("equal", len(old) - suffix, len(old), len(new) - suffix, len(new)))
    return opcodes


def _old_attributes_at(segments: Sequence[Segment], position: int) -> dict[str, Any]:
    """Raw marks of the old character at ``position`` (empty for a hard break or out of range)."""
    for segment in segments:
        if segment.node is not None and segment.start <= position < segment.end:
            offset = segment.start
            for chunk, attributes in segment.runs:
                if position < offset + len(chunk):
                    return attributes
                offset += len(chunk)
    return {}


def _format_delta(old_attributes: Mapping[str, Any], new_run: InlineRun) -> dict[str, Any]:
    """The ``format`` attributes that turn the markdown marks of ``old`` into those of ``new_run``."""
    wanted = mark_attributes(new_run)
    delta: dict[str, Any] = {}
    for mark in _MARKDOWN_MARKS:
        old_keys = [
            key for key in old_attributes if base_mark_name(key) == mark and old_attributes[key] is not None
        ]
        if mark in wanted:
            if mark == "link":
                same = [
                    key
                    for key in old_keys
                    if isinstance(old_attributes[key], Mapping)
                    and old_attributes[key].get("href") == new_run.link
                ]
                if not same:
                    for key in old_keys:
                        if key != "link":
                            delta[key] = None
                    delta["link"] = wanted["link"]
            elif not old_keys:
                delta[mark] = {}
        else:
            for key in old_keys:
                delta[key] = None
    return delta


def restyle_equal_range(
    segments: Sequence[Segment], new_runs: Sequence[InlineRun], old_start: int, new_start: int, length: int
) -> None:
    """Change the markdown marks of retained characters where the new text styles them differently."""
    new_marks_by_position: list[tuple[int, int, InlineRun]] = []
    offset = 0
    for run in new_runs:
        run_end = offset + len(run.text)
        if run_end > new_start and offset < new_start + length:
            new_marks_by_position.append((max(offset, new_start), min(run_end, new_start + length), run))
        offset = run_end
        if offset >= new_start + length:
            break
    shift = old_start - new_start
    for range_start, range_end, run in new_marks_by_position:
        old_range_start = range_start + shift
        old_range_end = range_end + shift
        for segment in segments:
            if segment.node is None or segment.end <= old_range_start or segment.start >= old_range_end:
                continue
            chunk_start = segment.start
            for chunk, attributes in segment.runs:
                chunk_end = chunk_start + len(chunk)
                overlap_start = max(chunk_start, old_range_start)
                overlap_end = min(chunk_end, old_range_end)
                if overlap_start < overlap_end:
                    delta = _format_delta(attributes, run)
                    if delta:
                        local_start = _utf8_offset(segment.text, overlap_start - segment.start)
                        local_end = _utf8_offset(segment.text, overlap_end - segment.start)
                        segment.node.format(local_start, local_end, delta)
                chunk_start = chunk_end


def delete_range(content: XmlElement, segments: Sequence[Segment], start: int, end: int) -> None:
    for segment in reversed(segments):
        overlap_start = max(segment.start, start)
        overlap_end = min(segment.end, end)
        if overlap_start >= overlap_end:
            continue
        if segment.node is None:
            del content.children[segment.child_index]
            continue
        local_start = _utf8_offset(segment.text, overlap_start - segment.start)
        local_end = _utf8_offset(segment.text, overlap_end - segment.start)
        del segment.node[local_start:local_end]


def _tail_runs(segment: Segment, offset: int) -> list[tuple[str, dict[str, Any]]]:
    tail: list[tuple[str, dict[str, Any]]] = []
    chunk_start = 0
    for chunk, attributes in segment.runs:
        chunk_end = chunk_start + len(chunk)
        if chunk_end > offset:
            tail.append((chunk[max(0, offset - chunk_start) :], attributes))
        chunk_start = chunk_end
    return tail


def insert_at(
    writer: NodeWriter,
    content: XmlElement,
    segments: Sequence[Segment],
    position: int,
    lines: Sequence[Sequence[InlineRun]],
    inherited: Mapping[str, Any],
) -> None:
    """Insert lines (hard breaks between them) at a character position of the content."""
    target: Segment | None = None
    for segment in segments:  # prefer the text that ends at the position (typing continues it)
        if segment.node is not None and segment.start < position <= segment.end:
            target = segment
            break
    if target is None:
        for segment in segments:
            if segment.node is not None and segment.start == position:
                target = segment
                break

    if target is None or target.node is None:
        child_index = len(_element_children(content))
        for segment in segments:
            if segment.start >= position:
                child_index = segment.child_index
                break
        insert_new_nodes(writer, writer.node(content), child_index, lines, inherited)
        return

    offset = position - target.start
    first_line, *other_lines = lines
    text_node = writer.node(target.node)
    if not other_lines:
        insert_runs(writer, text_node, _utf8_offset(target.text, offset), first_line, inherited)
        return
    if offset == 0:
        # new lines go before the text node; the last line joins its start
        insert_new_nodes(writer, writer.node(content), target.child_index, [*lines[:-1], []], inherited)
        insert_runs(writer, text_node, 0, lines[-1], inherited)
        return
    tail = _tail_runs(target, offset)
    if tail:
        del target.node[_utf8_offset(target.text, offset) :]
    insert_runs(writer, text_node, _utf8_offset(target.text, offset), first_line, inherited)
    last_line_index = target.child_index + 1
    insert_new_nodes(writer, writer.node(content), last_line_index, [[], *other_lines], inherited, tail=tail)


def slice_runs(runs: Sequence[InlineRun], start: int, end: int) -> list[InlineRun]:
    sliced: list[InlineRun] = []
    offset = 0
    for run in runs:
        run_end = offset + len(run.text)
        if run_end > start and offset < end:
            piece = run.text[max(0, start - offset) : min(len(run.text), end - offset)]
            sliced.append(InlineRun(piece, run.bold, run.italic, run.strike, run.code, run.link))
        offset = run_end
        if offset >= end:
            break
    return sliced


def inherited_marks(segments: Sequence[Segment], position: int) -> dict[str, Any]:
    """Underline and colours of the character before ``position`` carry over to typed text."""
    if position == 0:
        return {}
    attributes = _old_attributes_at(segments, position - 1)
    return {key: value for key, value in attributes.items() if key in _INHERITED_MARKS and value is not None}
