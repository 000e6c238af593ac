"""Comment anchors in the BlockNote document: the ``comment`` mark on the text a thread is about.

Where it sits: pure, beside ``writers`` (no I/O). Docs keeps a comment thread's text and replies
over REST (``rest.threads``) and its anchor in the Y document, as BlockNote marks it: a ``comment``
mark ``{"orphan": false, "threadId": "<thread uuid>"}`` on the commented characters (BlockNote
0.51.4 ``comments/mark.ts``; Docs' ``DocsThreadStore.addThreadToDocument`` sets it with tiptap's
``setMark("comment", {orphan: false, threadId})``). The mark may overlap itself (``excludes: ""``),
so y-prosemirror stores it under a hashed key, ``comment--`` + 8 characters: base64 of a 6-byte fold
of sha256(lib0 ``encodeAny`` of the mark's JSON ``{type, attrs}``) (y-prosemirror 1.3.7
``utils.hashOfJSON``, ``sync-plugin.js`` ``marksToAttributes``). Readers strip any
``--XXXXXXXX`` suffix; we write the very key a browser writes, so its next edit of the block
changes nothing there. ``orphan: true`` is how BlockNote hides the mark of a resolved thread.

How data flows::

    mark_comment(doc, block_id, thread_id, quote=None)  one transaction: XmlText.format over the
        block's text (or the first occurrence of ``quote``), every text node of it -> the text
    comment_anchors(doc) -> {thread id: Anchor(block_id, text, orphan)} from every text node's marks
"""

from __future__ import annotations

import base64
import hashlib
import struct
from dataclasses import dataclass
from typing import Any, Final

from pycrdt import Doc, XmlElement, XmlText

from elynav_nb.docs.blocknote._location import content_element, locate_block, root_group
from elynav_nb.docs.blocknote._text_diff import content_segments
from elynav_nb.docs.blocknote.schema import base_mark_name
from elynav_nb.errors import BlockNotFound, InvalidInput

__all__ = ["COMMENT_MARK", "Anchor", "comment_anchors", "comment_mark_key", "encode_any", "mark_comment"]

COMMENT_MARK: Final = "comment"


def _var_uint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _var_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return _var_uint(len(data)) + data


def _var_int(value: int) -> bytes:
    magnitude = abs(value)
    first = (magnitude & 0x3F) | (0x40 if value < 0 else 0)
    magnitude >>= 6
    out = bytearray([first | (0x80 if magnitude else 0)])
    while magnitude:
        byte = magnitude & 0x7F
        magnitude >>= 7
        out.append(byte | (0x80 if magnitude else 0))
    return bytes(out)


def encode_any(value: object) -> bytes:
    """lib0's ``encoding.writeAny`` for JSON values (strings, booleans, None, ints, floats, lists, dicts)."""
    if isinstance(value, bool):
        return bytes([120 if value else 121])
    if value is None:
        return bytes([126])
    if isinstance(value, str):
        return bytes([119]) + _var_string(value)
    if isinstance(value, int) and abs(value) <= 0x7FFFFFFF:
        return bytes([125]) + _var_int(value)
    if isinstance(value, (int, float)):
        as_float = float(value)
        if struct.unpack(">f", struct.pack(">f", as_float))[0] == as_float:
            return bytes([124]) + struct.pack(">f", as_float)
        return bytes([123]) + struct.pack(">d", as_float)
    if isinstance(value, list):
        return bytes([117]) + _var_uint(len(value)) + b"".join(encode_any(item) for item in value)
    if isinstance(value, dict):
        parts = [bytes([118]), _var_uint(len(value))]
        for key, item in value.items():
            parts.append(_var_string(str(key)) + encode_any(item))
        return b"".join(parts)
    raise InvalidInput(f"cannot encode a {type(value).__name__} as a lib0 value")


def comment_mark_key(thread_id: str, *, orphan: bool = False) -> str:
    """The attribute key y-prosemirror gives this comment mark: ``comment--`` + its 8-character hash."""
    digest = bytearray(
        hashlib.sha256(encode_any({"type": COMMENT_MARK, "attrs": _attrs(thread_id, orphan)})).digest()
    )
    for index in range(6, len(digest)):
        digest[index % 6] ^= digest[index]
    return f"{COMMENT_MARK}--{base64.b64encode(bytes(digest[:6])).decode('ascii')}"


def _attrs(thread_id: str, orphan: bool) -> dict[str, Any]:
    return {"orphan": orphan, "threadId": thread_id}  # BlockNote's attribute order


@dataclass(frozen=True)
class Anchor:
    """Where a thread is anchored: its block, the marked text, and ``orphan`` (hidden while resolved)."""

    block_id: str
    text: str
    orphan: bool = False


def mark_comment(
    doc: Doc[Any], block_id: str, thread_id: str, *, quote: str | None = None, origin: object | None = None
) -> str:
    """Mark the block's text (or the first ``quote`` in it) as commented by ``thread_id``; one
    transaction. Returns the marked text. ``BLOCK_NOT_FOUND`` for an unknown block,
    ``INVALID_INPUT`` for an empty block or a quote that is not in it."""
    if not isinstance(thread_id, str) or not thread_id:
        raise InvalidInput("a comment mark needs its thread id")
    if quote is not None and (not isinstance(quote, str) or not quote):
        raise InvalidInput("the quoted text is empty")
    key = comment_mark_key(thread_id)
    value = _attrs(thread_id, False)
    with doc.transaction(origin=origin):
        root = root_group(doc)
        if root is None:
            raise BlockNotFound(
                f"no block with id {block_id!r} in this document", details={"block_id": block_id}
            )
        content = content_element(locate_block(root, block_id).container)
        segments = content_segments(content, content.tag or "")
        text = "".join(segment.text for segment in segments)
        if not text.strip():
            raise InvalidInput("this block has no text to comment on", details={"block_id": block_id})
        start = 0 if quote is None else text.find(quote)
        if start < 0:
            raise InvalidInput("the quoted text is not in this block", details={"block_id": block_id})
        end = len(text) if quote is None else start + len(quote)
        for segment in segments:
            if segment.node is None or segment.end <= start or segment.start >= end:
                continue
            low = max(start, segment.start) - segment.start
            high = min(end, segment.end) - segment.start
            byte_low = len(segment.text[:low].encode("utf-8"))
            byte_high = byte_low + len(segment.text[low:high].encode("utf-8"))
            segment.node.format(byte_low, byte_high, {key: dict(value)})
        return text[start:end]


def comment_anchors(doc: Doc[Any]) -> dict[str, Anchor]:
    """Every thread anchored in the document: its block and the text its comment marks cover."""
    found: dict[str, tuple[str, list[str], bool]] = {}
    root = root_group(doc)
    if root is None:
        return {}
    pending: list[XmlElement] = [root]
    while pending:
        node = pending.pop()
        for child in node.children:
            if not isinstance(child, XmlElement):
                continue
            if child.tag == "blockContainer":
                block_id = str(child.attributes.get("id") or "")
                for part in child.children:
                    if isinstance(part, XmlElement) and part.tag == "blockGroup":
                        pending.append(part)
                    elif isinstance(part, XmlElement):
                        _collect(part, block_id, found)
            else:
                pending.append(child)
    return {thread: Anchor(block, "".join(texts), orphan) for thread, (block, texts, orphan) in found.items()}


def _collect(content: XmlElement, block_id: str, found: dict[str, tuple[str, list[str], bool]]) -> None:
    for child in content.children:
        if not isinstance(child, XmlText):
            continue
        for chunk, attributes in child.diff():
            if not isinstance(chunk, str) or not attributes:
                continue
            for key, value in attributes.items():
                if base_mark_name(key) != COMMENT_MARK or not isinstance(value, dict):
                    continue
                thread_id = value.get("threadId")
                if not isinstance(thread_id, str) or not thread_id:
                    continue
                found.setdefault(thread_id, (block_id, [], value.get("orphan") is True))[1].append(chunk)
