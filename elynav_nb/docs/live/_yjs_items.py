"""The items of a Yjs v1 update, decoded (pure): what a cursor's relative position points into.

Where it sits: internal to ``live``, under ``presence``. pycrdt does not expose Yjs item ids, and
cursors (y-prosemirror's awareness ``cursor``) are Yjs relative positions, which name an item by
``{client, clock}``. This module reads the structs of an update (Yjs ``updates.js``,
``encoding.js``, lib0 ``decoding.js``; v1 format) far enough to answer two questions:

- ``last_text_character(update, client)``: the id of the last character a transaction of ours
  inserted (its own update), where our cursor goes after a write;
- ``ItemIndex(state).block_of(client, clock)``: the block (``blockContainer`` ``id``) that holds an
  item, to say where another person's cursor is; built once from the whole document state, then
  kept current with ``add`` and only the updates made since (``presence.CursorPlaces``).

An update that does not decode is ``ProtocolError``; nothing here touches a document.
"""

from __future__ import annotations

import bisect
import struct
import sys
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


@dataclass(slots=True)
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
            item.type_name = sys.intern(reader.string())  # a few tag names, many elements
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
    """The items of a document, found by id, with their parents resolved.

    Built from a whole state (``doc.get_update()``), then kept current with ``add`` and the
    updates made since (``doc.get_update(state_vector)``): each struct is decoded once.
    """

    def __init__(self, state: bytes = b"") -> None:
        self._by_client: dict[int, list[Item]] = {}
        self._clocks: dict[int, list[int]] = {}
        self._block_ids: dict[tuple[int, int], Any] = {}
        """A ``blockContainer``'s ``id`` attribute, by the container's item id."""
        if state:
            self.add(state)

    def add(self, update: bytes) -> None:
        """Index the items of ``update`` (a whole state, or what changed since a state vector); items
        already indexed are skipped. Attributes (map entries) are never a cursor's item nor an
        origin: only the ``id`` of each element is kept, and no other attribute is stored. Each new
        item's parent is resolved once, here (through its origins when not written), and its
        origins are then dropped: the index keeps what ``block_of`` reads, no more."""
        added: list[Item] = []
        for item in decode_items(update):
            if item.parent_sub is not None:
                if item.parent_sub == "id" and isinstance(item.parent, tuple) and item.values:
                    self._block_ids[item.parent] = item.values[0]
                continue
            item.values = None
            items = self._by_client.setdefault(item.client, [])
            clocks = self._clocks.setdefault(item.client, [])
            if not items or item.clock >= items[-1].clock + items[-1].length:
                position = len(clocks)  # the usual case: a client's new items come after its others
            else:
                if self.find(item.client, item.clock) is not None:
                    continue
                position = bisect.bisect_left(clocks, item.clock)
            items.insert(position, item)
            clocks.insert(position, item.clock)
            added.append(item)
        for item in added:  # once every item of the update is in: an origin may come later in it
            if item.parent is None:
                self._resolve_parent(item)
        for item in added:
            item.origin = item.right_origin = None

    def _resolve_parent(self, item: Item) -> None:
        """Set the parent of ``item``, and of each item on its way there, from the first item along
        its origins whose parent is known (left as ``None`` when there is none)."""
        chain: list[Item] = []
        current: Item | None = item
        while current is not None and current.parent is None and len(chain) < 100_000:
            chain.append(current)
            neighbour = current.origin or current.right_origin
            current = self.find(*neighbour) if neighbour is not None else None
        parent = current.parent if current is not None else None
        for linked in chain:
            linked.parent = parent

    def find(self, client: int, clock: int) -> Item | None:
        items = self._by_client.get(client)
        if not items:
            return None
        index = bisect.bisect_right(self._clocks[client], clock) - 1
        if index < 0:
            return None
        item = items[index]
        return item if clock < item.clock + item.length else None

    def block_of(self, client: int, clock: int) -> str | None:
        """The ``id`` of the ``blockContainer`` holding the item ``(client, clock)``, if any."""
        item = self.find(client, clock)
        for _ in range(_MAX_DEPTH):
            if item is None:
                return None
            parent = item.parent
            if not isinstance(parent, tuple):
                return None
            container = self.find(*parent)
            if container is None:
                return None
            if container.type_name == "blockContainer":
                value = self._block_ids.get((container.client, container.clock))
                return value if isinstance(value, str) else None
            item = container
        return None
