"""The BlockNote document tree inside a ``pycrdt.Doc``: read it as blocks, edit it block by block.

Where it sits: the pure document model of ``elynav_nb.docs`` (design note §4 and §5). The session
hydrates a ``pycrdt.Doc`` from REST and the WebSocket, then calls these functions; every edit is one
pycrdt transaction, so it leaves as one Yjs update. No I/O here.

Layout (BlockNote 0.51.4, ``XmlFragment "document-store"``)::

    blockGroup                                   exactly one at the root
    └─ blockContainer {id}                       one per block, id = UUID v4
       ├─ <content element> {props}              paragraph, heading, quote, codeBlock, ...
       │  └─ XmlText runs with marks, hardBreak elements, inline nodes
       └─ blockGroup                             optional nested children

How data flows:

* ``read_blocks(doc)`` (from ``block_reader``) walks the first root ``blockGroup`` (the only one
  BlockNote shows) and returns ``Block(id, type, text, props, children)`` records (``block_schema``);
  ``text`` is inline markdown, marks found by key presence. Blocks this module does not model
  (callout, pdf, pageBreak, columns, tables, ...) or whose text holds inline nodes (doc links) come
  back with ``opaque=True``: they are shown, never rewritten. ``blocks_to_markdown`` (from
  ``block_markdown``) renders a whole document. Both are re-exported here, the module's public face.
* ``insert_block`` / ``update_block_text`` / ``delete_block`` validate first, then edit inside one
  transaction, writing only node, attribute and mark names BlockNote 0.51.4 knows (anything else is
  deleted by the first browser that reads it). The root ``blockGroup`` is created only when the
  fragment is empty. ``update_block_text`` changes the text by a minimal character diff, so the
  characters a person types in the same block at the same time survive.

pycrdt traps handled here: ``XmlText`` offsets are UTF-8 **byte** offsets (not characters), formatted
inserts need an attached node (attach, then populate), inserts never inherit marks (every run is
inserted with its explicit mark dict), and JS numbers read back as ``float``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from pycrdt import Doc, XmlElement, XmlFragment, XmlText

from elynav_nb.docs.block_ids import new_block_id
from elynav_nb.docs.block_markdown import blocks_to_markdown
from elynav_nb.docs.block_reader import read_blocks
from elynav_nb.docs.block_schema import (
    DEFAULT_PROPS,
    DOCUMENT_FRAGMENT,
    HARD_BREAK,
    TEXT_PROPS,
    WRITABLE_BLOCK_TYPES,
    Block,
    base_mark_name,
)
from elynav_nb.docs.inline_markdown import InlineRun, parse_inline
from elynav_nb.docs.yxml_writer import NodeWriter, writer_for
from elynav_nb.errors import BlockNotFound, InvalidInput, ProtocolError, UnsupportedBlockType

__all__ = [
    "DOCUMENT_FRAGMENT",
    "MAX_BLOCK_TEXT_BYTES",
    "WRITABLE_BLOCK_TYPES",
    "Block",
    "BlockLocation",
    "blocks_to_markdown",
    "delete_block",
    "document_fragment",
    "find_block",
    "insert_block",
    "locate_block",
    "mark_attributes",
    "read_blocks",
    "root_for_writing",
    "root_group",
    "update_block_text",
]

MAX_BLOCK_TEXT_BYTES: Final = 1_000_000
"""Largest block text accepted for writing (UTF-8 bytes). Bigger texts are refused, never truncated."""

_WRITABLE_HEADING_LEVELS: Final = (1, 2, 3)
_MARKDOWN_MARKS: Final = ("bold", "italic", "strike", "code", "link")
_INHERITED_MARKS: Final = ("underline", "textColor", "backgroundColor")
_DIFF_WINDOW: Final = 5_000
_MAX_DIFF_EDITS: Final = 50


# =============================================================================================
# Small helpers
# =============================================================================================


def _element_children(node: XmlElement | XmlFragment) -> list[XmlElement | XmlText | XmlFragment]:
    return list(node.children)


def _is_element(node: object, tag: str) -> bool:
    return isinstance(node, XmlElement) and node.tag == tag


def document_fragment(doc: Doc[Any]) -> XmlFragment:
    """The ``document-store`` fragment BlockNote binds to (created empty if missing)."""
    fragment: XmlFragment = doc.get(DOCUMENT_FRAGMENT, type=XmlFragment)
    return fragment


def _root_group(fragment: XmlFragment) -> XmlElement | None:
    for child in fragment.children:
        if _is_element(child, "blockGroup"):
            assert isinstance(child, XmlElement)
            return child
    return None


def _utf8_offset(text: str, character_offset: int) -> int:
    return len(text[:character_offset].encode("utf-8"))


def find_block(blocks: Sequence[Block], block_id: str) -> Block:
    """The block with this id among ``blocks`` and their descendants; ``BlockNotFound`` otherwise."""
    for top_block in blocks:
        for block in top_block.walk():
            if block.id == block_id:
                return block
    raise BlockNotFound(f"no block with id {block_id!r} in this document", details={"block_id": block_id})


# =============================================================================================
# Locating blocks for writing
# =============================================================================================


class BlockLocation(NamedTuple):
    """Where a block sits: its group, its position in that group, and its ``blockContainer``."""

    group: XmlElement
    position: int
    container: XmlElement


def root_group(doc: Doc[Any]) -> XmlElement | None:
    """The root ``blockGroup`` (the first one: the only one BlockNote shows), None if there is none."""
    return _root_group(document_fragment(doc))


def locate_block(root: XmlElement, block_id: str) -> BlockLocation:
    """The location of the block with this id under ``root`` (layout nodes included); ``BlockNotFound``."""
    pending: list[XmlElement] = [root]
    while pending:
        group = pending.pop()
        for index, child in enumerate(group.children):
            if not isinstance(child, XmlElement):
                continue
            if child.tag == "blockContainer":
                if child.attributes.get("id") == block_id:
                    return BlockLocation(group=group, position=index, container=child)
                for grandchild in child.children:
                    if _is_element(grandchild, "blockGroup"):
                        assert isinstance(grandchild, XmlElement)
                        pending.append(grandchild)
            else:  # layout nodes (columnList/column) may hold groups of blocks
                pending.append(child)
    raise BlockNotFound(f"no block with id {block_id!r} in this document", details={"block_id": block_id})


def _content_element(container: XmlElement) -> XmlElement:
    for child in container.children:
        if isinstance(child, XmlElement) and child.tag != "blockGroup":
            return child
    raise UnsupportedBlockType(
        "this block has no content element", details={"block_id": container.attributes.get("id")}
    )


def root_for_writing(doc: Doc[Any], writer: NodeWriter) -> Any:
    """The writer's handle on the root ``blockGroup``, created only in an empty fragment."""
    fragment_handle = writer.fragment(doc, DOCUMENT_FRAGMENT)
    first = writer.first_element(fragment_handle)
    if first is not None and first[0] == "blockGroup":  # the usual layout: checked without a scan
        return first[1]
    fragment = document_fragment(doc)
    root = _root_group(fragment)
    if root is not None:
        return writer.node(root)
    if len(fragment.children) > 0:
        raise ProtocolError("the document-store fragment has content but no root blockGroup")
    return writer.element(fragment_handle, 0, "blockGroup", {})


# =============================================================================================
# Validation
# =============================================================================================


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInput("the block text must be a string")
    if not text.strip():
        raise InvalidInput("the block text is empty")
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_BLOCK_TEXT_BYTES:
        raise InvalidInput(
            f"the block text is {size} bytes; the limit is {MAX_BLOCK_TEXT_BYTES}",
            details={"size": size, "limit": MAX_BLOCK_TEXT_BYTES},
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("the block text contains unpaired surrogates") from None
    return text


def _check_block_type(block_type: object, level: object) -> None:
    if block_type not in WRITABLE_BLOCK_TYPES:
        raise UnsupportedBlockType(
            f"cannot write blocks of type {block_type!r}; writable types: {', '.join(WRITABLE_BLOCK_TYPES)}",
            details={"type": str(block_type)},
        )
    if block_type == "heading":
        if isinstance(level, bool) or level not in _WRITABLE_HEADING_LEVELS:
            raise InvalidInput("a heading needs level 1, 2 or 3", details={"level": repr(level)})
    elif level is not None:
        raise InvalidInput("only headings take a level", details={"type": str(block_type)})


def _new_props(block_type: str, level: int | None, checked: bool, language: str | None) -> dict[str, Any]:
    props = dict(DEFAULT_PROPS[block_type])
    if block_type == "heading":
        props["level"] = int(level or 1)
    if block_type == "checkListItem":
        props["checked"] = bool(checked)
    if block_type == "codeBlock" and language:
        props["language"] = str(language)
    return props


# =============================================================================================
# Writing inline content
# =============================================================================================


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


def _new_runs(block_type: str, text: str) -> list[InlineRun]:
    if block_type == "codeBlock":
        return [InlineRun(text)]
    return parse_inline(text)


def _split_lines(runs: Sequence[InlineRun]) -> list[list[InlineRun]]:
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


def _insert_runs(
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


# =============================================================================================
# Public writers
# =============================================================================================


def insert_block(
    doc: Doc[Any],
    text: str,
    type: str = "paragraph",
    level: int | None = None,
    after: str | None = None,
    *,
    checked: bool = False,
    language: str | None = None,
    origin: object | None = None,
) -> str:
    """Insert one block and return its new id (UUID v4).

    ``after=None`` puts the block at the top of the document (as the reference ``insert_block``
    tool does); otherwise it goes right after the block with that id, at the same depth.
    """
    block_type = type
    _check_block_type(block_type, level)
    checked_text = _check_text(text)
    runs = _new_runs(block_type, checked_text)
    props = _new_props(block_type, level, checked, language)
    block_id = new_block_id()
    with doc.transaction(origin=origin) as transaction:
        writer = writer_for(transaction)
        if after is None:
            group = root_for_writing(doc, writer)
            index = 0
        else:
            root = root_group(doc)
            if root is None:
                raise BlockNotFound(
                    f"no block with id {after!r} in this document", details={"block_id": after}
                )
            location = locate_block(root, after)
            group = writer.node(location.group)
            index = location.position + 1
        container = writer.element(group, index, "blockContainer", {"id": block_id})
        content = writer.element(container, 0, block_type, props)
        lines = [list(runs)] if block_type == "codeBlock" else _split_lines(runs)
        _insert_new_nodes(writer, content, 0, lines, {})  # attached first, then populated (§5.1)
    return block_id


def delete_block(doc: Doc[Any], block_id: str, *, origin: object | None = None) -> None:
    """Delete a block (and its nested children). The document always keeps one block."""
    with doc.transaction(origin=origin):
        root = root_group(doc)
        if root is None:
            raise BlockNotFound(
                f"no block with id {block_id!r} in this document", details={"block_id": block_id}
            )
        location = locate_block(root, block_id)
        group = location.group
        if len(group.children) > 1:
            del group.children[location.position]
            return
        parent = group.parent
        if isinstance(parent, XmlElement) and parent.tag == "blockContainer":
            # the last nested child: remove the now-empty nested blockGroup with it
            for index, child in enumerate(parent.children):
                if _is_element(child, "blockGroup"):
                    del parent.children[index]
                    return
        # the last block of the document: BlockNote always shows one (empty) paragraph
        del group.children[location.position]
        group.children.insert(
            0,
            XmlElement("blockContainer", {"id": new_block_id()}, [XmlElement("paragraph", dict(TEXT_PROPS))]),
        )


# --- minimal-diff text update ------------------------------------------------------------------


@dataclass
class _Segment:
    """One child of a content element, seen as characters: an XmlText, or a hardBreak (one "\\n")."""

    child_index: int
    start: int
    text: str  # the characters (for a hardBreak: "\n")
    node: XmlText | None  # None for a hardBreak
    runs: list[tuple[str, dict[str, Any]]]  # (chunk, raw attributes) for an XmlText

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def _segments(content: XmlElement, block_type: str) -> list[_Segment]:
    segments: list[_Segment] = []
    position = 0
    for child_index, child in enumerate(content.children):
        if isinstance(child, XmlText):
            runs: list[tuple[str, dict[str, Any]]] = []
            for chunk, attributes in child.diff():
                if not isinstance(chunk, str):
                    raise UnsupportedBlockType("this block holds embedded objects and is kept as it is")
                runs.append((chunk, dict(attributes or {})))
            text = "".join(chunk for chunk, _ in runs)
            segments.append(_Segment(child_index, position, text, child, runs))
            position += len(text)
        elif _is_element(child, HARD_BREAK) and block_type != "codeBlock":
            segments.append(_Segment(child_index, position, "\n", None, []))
            position += 1
        else:
            raise UnsupportedBlockType(
                "this block holds inline nodes (such as doc links) and is kept as it is"
            )
    return segments


def _diff_opcodes(old: str, new: str) -> list[tuple[str, int, int, int, int]]:
    """Character edit script: common prefix and suffix kept, the middle diffed when small enough."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
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


def _old_attributes_at(segments: Sequence[_Segment], position: int) -> dict[str, Any]:
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


def _restyle_equal_range(
    segments: Sequence[_Segment], new_runs: Sequence[InlineRun], old_start: int, new_start: int, length: int
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


def _delete_range(content: XmlElement, segments: Sequence[_Segment], start: int, end: int) -> None:
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


def _tail_runs(segment: _Segment, offset: int) -> list[tuple[str, dict[str, Any]]]:
    tail: list[tuple[str, dict[str, Any]]] = []
    chunk_start = 0
    for chunk, attributes in segment.runs:
        chunk_end = chunk_start + len(chunk)
        if chunk_end > offset:
            tail.append((chunk[max(0, offset - chunk_start) :], attributes))
        chunk_start = chunk_end
    return tail


def _insert_at(
    writer: NodeWriter,
    content: XmlElement,
    segments: Sequence[_Segment],
    position: int,
    lines: Sequence[Sequence[InlineRun]],
    inherited: Mapping[str, Any],
) -> None:
    """Insert lines (hard breaks between them) at a character position of the content."""
    target: _Segment | None = None
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
        _insert_new_nodes(writer, writer.node(content), child_index, lines, inherited)
        return

    offset = position - target.start
    first_line, *other_lines = lines
    text_node = writer.node(target.node)
    if not other_lines:
        _insert_runs(writer, text_node, _utf8_offset(target.text, offset), first_line, inherited)
        return
    if offset == 0:
        # new lines go before the text node; the last line joins its start
        _insert_new_nodes(writer, writer.node(content), target.child_index, [*lines[:-1], []], inherited)
        _insert_runs(writer, text_node, 0, lines[-1], inherited)
        return
    tail = _tail_runs(target, offset)
    if tail:
        del target.node[_utf8_offset(target.text, offset) :]
    _insert_runs(writer, text_node, _utf8_offset(target.text, offset), first_line, inherited)
    last_line_index = target.child_index + 1
    _insert_new_nodes(writer, writer.node(content), last_line_index, [[], *other_lines], inherited, tail=tail)


def _insert_new_nodes(
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
            offset = _insert_runs(writer, text_node, 0, line, inherited)
            for chunk, attributes in line_tail:
                writer.insert_text(text_node, offset, chunk, attributes)
                offset += len(chunk.encode("utf-8"))
            index += 1


def update_block_text(doc: Doc[Any], block_id: str, text: str, *, origin: object | None = None) -> None:
    """Replace a block's text, keeping its type and props, by the smallest character edit.

    Characters that stay are not touched (only re-styled when the markdown styles them differently,
    and marks markdown cannot show are kept), so a person typing elsewhere in the block keeps their
    characters. Opaque blocks raise ``UnsupportedBlockType``; unknown ids ``BlockNotFound``.
    """
    checked_text = _check_text(text)
    with doc.transaction(origin=origin) as transaction:
        root = root_group(doc)
        if root is None:
            raise BlockNotFound(
                f"no block with id {block_id!r} in this document", details={"block_id": block_id}
            )
        location = locate_block(root, block_id)
        content = _content_element(location.container)
        writer = writer_for(transaction)
        block_type = content.tag or ""
        if block_type not in WRITABLE_BLOCK_TYPES:
            raise UnsupportedBlockType(
                f"blocks of type {block_type!r} are kept as they are and never rewritten",
                details={"type": block_type, "block_id": block_id},
            )
        segments = _segments(content, block_type)
        old_text = "".join(segment.text for segment in segments)
        new_runs = _new_runs(block_type, checked_text)
        new_text = "".join(run.text for run in new_runs)
        opcodes = _diff_opcodes(old_text, new_text)

        if block_type != "codeBlock":
            for tag, old_start, old_end, new_start, _new_end in opcodes:
                if tag == "equal":
                    _restyle_equal_range(segments, new_runs, old_start, new_start, old_end - old_start)
            segments = _segments(content, block_type)

        for tag, old_start, old_end, new_start, new_end in reversed(opcodes):
            if tag == "equal":
                continue
            if old_end > old_start:
                _delete_range(content, segments, old_start, old_end)
                segments = _segments(content, block_type)
            if new_end > new_start:
                inserted = _slice_runs(new_runs, new_start, new_end)
                inherited = _inherited_marks(segments, old_start)
                lines = [inserted] if block_type == "codeBlock" else _split_lines(inserted)
                _insert_at(writer, content, segments, old_start, lines, inherited)
                segments = _segments(content, block_type)


def _slice_runs(runs: Sequence[InlineRun], start: int, end: int) -> list[InlineRun]:
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


def _inherited_marks(segments: Sequence[_Segment], position: int) -> dict[str, Any]:
    """Underline and colours of the character before ``position`` carry over to typed text."""
    if position == 0:
        return {}
    attributes = _old_attributes_at(segments, position - 1)
    return {key: value for key, value in attributes.items() if key in _INHERITED_MARKS and value is not None}
