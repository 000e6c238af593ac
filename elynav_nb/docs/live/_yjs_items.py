"""The items of a Yjs v1 update, decoded (pure): what a cursor's relative position points into.

Where it sits: internal to ``live``, under ``presence``. pycrdt does not expose Yjs item ids, and
cursors (y-prosemirror's awareness ``cursor``) are Yjs relative positions, which name an item by
``{client, clock}``. This module reads the structs of an update (Yjs ``updates.js``,
``encoding.js``, lib0 ``decoding.js``; v1 format) far enough to answer two questions:

- ``last_text_character(update, client)``: the id of the last character a transaction of ours
  inserted (its own update), where our cursor goes after a write;
- ``ItemIndex(state).block_of(client, clock)``: the block (``blockContainer`` ``id``) that holds an
  item, from the whole document state, to say where another person's cursor is.

An update that does not decode is ``ProtocolError``; nothing here touches a document.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass
from typing import Any, Final

from elynav_nb.errors import ProtocolError

__all__ = ["Item", "ItemIndex", "decode_items", "last_text_character"]

_STRING: Final = 4
_TYPE: Final = 7
_ANY: Final = 8
_XML_ELEMENT: Final = 3
_XML_HOOK: Final = 5
_MAX_DEPTH: Final = 64


@dataclass
class Item:
    client: int
    clock: int
    length: int
    content: int
    origin: tuple[int, int] | None
    right_origin: tuple[int, int] | None
    parent: tuple[int, int] | str | None  # an item id, a root type's name, or None (from origin)
    parent_sub: str | None
    type_name: str | None = None  # an XmlElement's tag
    values: list[Any] | None = None  # ContentAny values


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    def byte(self) -> int:
        if self.position >= len(self.data):
            raise ProtocolError("a Yjs update ended early")
        value = self.data[self.position]
        self.position += 1
        return value

    def var_uint(self) -> int:
        value, shift = 0, 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 63:
                raise ProtocolError("a Yjs number is too long")

    def var_int(self) -> int:
        byte = self.byte()
        value = byte & 0x3F
        negative = bool(byte & 0x40)
        shift = 6
        while byte & 0x80:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            shift += 7
        return -value if negative else value

    def raw(self, length: int) -> bytes:
        end = self.position + length
        if end > len(self.data):
            raise ProtocolError("a Yjs update ended early")
        chunk = self.data[self.position : end]
        self.position = end
        return chunk

    def string(self) -> str:
        return self.raw(self.var_uint()).decode("utf-8", errors="replace")

    def any(self, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise ProtocolError("a Yjs value is nested too deeply")
        kind = self.byte()
        if kind in (126, 127):
            return None
        if kind == 125:
            return self.var_int()
        if kind == 124:
            return struct.unpack(">f", self.raw(4))[0]
        if kind == 123:
            return struct.unpack(">d", self.raw(8))[0]
        if kind == 122:
            return struct.unpack(">q", self.raw(8))[0]
        if kind in (120, 121):
            return kind == 120
        if kind == 119:
            return self.string()
        if kind == 118:
            return {self.string(): self.any(depth + 1) for _ in range(self.var_uint())}
        if kind == 117:
            return [self.any(depth + 1) for _ in range(self.var_uint())]
        if kind == 116:
            return self.raw(self.var_uint())
        raise ProtocolError(f"unknown Yjs value type {kind}")


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def decode_items(update: bytes) -> list[Item]:
    """Every item of a v1 update (GC and skip ranges left out), in the order written."""
    reader = _Reader(update)
    items: list[Item] = []
    for _ in range(reader.var_uint()):
        count = reader.var_uint()
        client = reader.var_uint()
        clock = reader.var_uint()
        for _ in range(count):
            info = reader.byte()
            kind = info & 0x1F
            if kind in (0, 10):  # GC, Skip
                clock += reader.var_uint()
                continue
            origin = (reader.var_uint(), reader.var_uint()) if info & 0x80 else None
            right_origin = (reader.var_uint(), reader.var_uint()) if info & 0x40 else None
            parent: tuple[int, int] | str | None = None
            parent_sub = None
            if not info & 0xC0:
                parent = reader.string() if reader.var_uint() == 1 else (reader.var_uint(), reader.var_uint())
                if info & 0x20:
                    parent_sub = reader.string()
            item = Item(client, clock, 1, kind, origin, right_origin, parent, parent_sub)
            _read_content(reader, item)
            items.append(item)
            clock += item.length
    return items


def _read_content(reader: _Reader, item: Item) -> None:
    kind = item.content
    if kind == 1:  # Deleted
        item.length = reader.var_uint()
    elif kind == 2:  # JSON
        item.length = reader.var_uint()
        for _ in range(item.length):
            reader.string()
    elif kind == 3:  # Binary
        reader.raw(reader.var_uint())
    elif kind == _STRING:
        item.length = _utf16_length(reader.string())
    elif kind == 5:  # Embed
        reader.string()
    elif kind == 6:  # Format
        reader.string()
        reader.string()
    elif kind == _TYPE:
        type_ref = reader.var_uint()
        if type_ref in (_XML_ELEMENT, _XML_HOOK):
            item.type_name = reader.string()
    elif kind == _ANY:
        item.length = reader.var_uint()
        item.values = [reader.any() for _ in range(item.length)]
    elif kind == 9:  # Doc
        reader.string()
        reader.any()
    else:
        raise ProtocolError(f"unknown Yjs content type {kind}")


def last_text_character(update: bytes, client: int) -> tuple[int, int] | None:
    """The id of the last character ``client`` inserted in this update (``None`` if no text)."""
    last: Item | None = None
    for item in decode_items(update):
        if item.client == client and item.content == _STRING and (last is None or item.clock > last.clock):
            last = item
    return None if last is None else (last.client, last.clock + last.length - 1)


class ItemIndex:
    """The items of a whole document state, found by id, with their parents resolved."""

    def __init__(self, state: bytes) -> None:
        self._by_client: dict[int, list[Item]] = {}
        for item in decode_items(state):
            self._by_client.setdefault(item.client, []).append(item)
        self._clocks = {client: [item.clock for item in items] for client, items in self._by_client.items()}
        self._attributes: dict[tuple[tuple[int, int], str], Item] = {}
        for items in self._by_client.values():
            for item in items:
                if item.parent_sub is not None and isinstance(item.parent, tuple):
                    self._attributes[(item.parent, item.parent_sub)] = item

    def find(self, client: int, clock: int) -> Item | None:
        items = self._by_client.get(client)
        if not items:
            return None
        index = bisect.bisect_right(self._clocks[client], clock) - 1
        if index < 0:
            return None
        item = items[index]
        return item if clock < item.clock + item.length else None

    def parent_of(self, item: Item) -> tuple[int, int] | str | None:
        """The id of the type holding ``item`` (found through its origins when not written)."""
        seen = 0
        current: Item | None = item
        while current is not None and seen < 100_000:
            if current.parent is not None:
                return current.parent
            neighbour = current.origin or current.right_origin
            current = self.find(*neighbour) if neighbour is not None else None
            seen += 1
        return None

    def block_of(self, client: int, clock: int) -> str | None:
        """The ``id`` of the ``blockContainer`` holding the item ``(client, clock)``, if any."""
        item = self.find(client, clock)
        for _ in range(_MAX_DEPTH):
            if item is None:
                return None
            parent = self.parent_of(item)
            if not isinstance(parent, tuple):
                return None
            container = self.find(*parent)
            if container is None:
                return None
            if container.type_name == "blockContainer":
                attribute = self._attributes.get(((container.client, container.clock), "id"))
                value = attribute.values[0] if attribute is not None and attribute.values else None
                return value if isinstance(value, str) else None
            item = container
        return None
