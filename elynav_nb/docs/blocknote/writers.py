"""The three block writers: ``insert_block``, ``update_block_text``, ``delete_block``.

Where it sits: the write side of the pure document model (``elynav_nb.docs.blocknote``, which
re-exports these names). The session calls them inside its acknowledged writes; no I/O here.

How data flows: validate first (type, level, text size and Unicode), then edit inside **one**
pycrdt transaction, so the edit leaves as one Yjs update, writing only node, attribute and mark
names BlockNote 0.51.4 knows (anything else is deleted by the first browser that reads it).
``insert_block`` goes where ``_location.insertion_point`` says (the root ``blockGroup`` is created
only in an empty fragment); ``update_block_text`` changes the text by a minimal character diff
(``_text_diff``), so the characters a person types in the same block at the same time survive;
blocks read as ``opaque`` (Docs-only blocks, text holding inline nodes) are never rewritten.

pycrdt traps handled here: ``XmlText`` offsets are UTF-8 **byte** offsets (not characters), formatted
inserts need an attached node (attach, then populate), inserts never inherit marks (every run is
inserted with its explicit mark dict), and JS numbers read back as ``float``.
"""

from __future__ import annotations

from typing import Any, Final

from pycrdt import Doc, XmlElement

from elynav_nb.docs.blocknote._ids import new_block_id
from elynav_nb.docs.blocknote._inline_writer import insert_new_nodes, mark_attributes, split_lines
from elynav_nb.docs.blocknote._location import (
    content_element,
    insertion_point,
    is_element,
    locate_block,
    root_group,
)
from elynav_nb.docs.blocknote._text_diff import (
    content_segments,
    delete_range,
    diff_opcodes,
    inherited_marks,
    insert_at,
    restyle_equal_range,
    slice_runs,
)
from elynav_nb.docs.blocknote._yxml_writer import writer_for
from elynav_nb.docs.blocknote.schema import DEFAULT_PROPS, TEXT_PROPS, WRITABLE_BLOCK_TYPES
from elynav_nb.docs.markdown.inline import InlineRun, parse_inline
from elynav_nb.errors import BlockNotFound, InvalidInput, UnsupportedBlockType

__all__ = ["MAX_BLOCK_TEXT_BYTES", "delete_block", "insert_block", "mark_attributes", "update_block_text"]

MAX_BLOCK_TEXT_BYTES: Final = 1_000_000
"""Largest block text accepted for writing (UTF-8 bytes). Bigger texts are refused, never truncated."""

_WRITABLE_HEADING_LEVELS: Final = (1, 2, 3)


# =============================================================================================
# Validation and the runs of a new text
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


def _new_runs(block_type: str, text: str) -> list[InlineRun]:
    if block_type == "codeBlock":
        return [InlineRun(text)]
    return parse_inline(text)


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
        group, index = insertion_point(doc, writer, after)
        container = writer.element(group, index, "blockContainer", {"id": block_id})
        content = writer.element(container, 0, block_type, props)
        lines = [list(runs)] if block_type == "codeBlock" else split_lines(runs)
        insert_new_nodes(writer, content, 0, lines, {})  # attached first, then populated (§5.1)
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
                if is_element(child, "blockGroup"):
                    del parent.children[index]
                    return
        # the last block of the document: BlockNote always shows one (empty) paragraph
        del group.children[location.position]
        group.children.insert(
            0,
            XmlElement("blockContainer", {"id": new_block_id()}, [XmlElement("paragraph", dict(TEXT_PROPS))]),
        )


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
        content = content_element(location.container)
        writer = writer_for(transaction)
        block_type = content.tag or ""
        if block_type not in WRITABLE_BLOCK_TYPES:
            raise UnsupportedBlockType(
                f"blocks of type {block_type!r} are kept as they are and never rewritten",
                details={"type": block_type, "block_id": block_id},
            )
        segments = content_segments(content, block_type)
        old_text = "".join(segment.text for segment in segments)
        new_runs = _new_runs(block_type, checked_text)
        new_text = "".join(run.text for run in new_runs)
        opcodes = diff_opcodes(old_text, new_text)

        if block_type != "codeBlock":
            for tag, old_start, old_end, new_start, _new_end in opcodes:
                if tag == "equal":
                    restyle_equal_range(segments, new_runs, old_start, new_start, old_end - old_start)
            segments = content_segments(content, block_type)

        for tag, old_start, old_end, new_start, new_end in reversed(opcodes):
            if tag == "equal":
                continue
            if old_end > old_start:
                delete_range(content, segments, old_start, old_end)
                segments = content_segments(content, block_type)
            if new_end > new_start:
                inserted = slice_runs(new_runs, new_start, new_end)
                inherited = inherited_marks(segments, old_start)
                lines = [inserted] if block_type == "codeBlock" else split_lines(inserted)
                insert_at(writer, content, segments, old_start, lines, inherited)
                segments = content_segments(content, block_type)
