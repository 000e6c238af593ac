"""Who is in a Docs room, from Hocuspocus awareness states, and where their cursors are.

Where it sits: the live layer, under ``DocsSession.people()`` and the connection. The connection
(``connection.DocsConnection``) keeps its awareness in a ``RoomPresence`` (our fields, sent with a
new clock; the others' states, applied as they come) and shows our cursor with
``cursor_for_update`` after each write (after the last character we wrote). What the Docs
frontend puts in its state (BlockNote 0.51.4 ``YCursorPlugin``, y-prosemirror ``cursor-plugin.js``,
Docs' ``DocsThreadStore``): ``user: {name, color}``, ``cursor: {anchor, head}`` (Yjs relative
positions as JSON, present while the editor has the focus) and ``commentsPing: {at, docId, threadId}``.

How data flows: awareness states -> ``people_from_states`` -> ``Person`` records, each cursor
placed in its block by an ``_yjs_items.ItemIndex``. ``CursorPlaces`` keeps that index for one
document: the whole state is decoded on the first look only; each later look decodes just what
changed since the one before (``doc.get_update(state vector)``), so ``people()`` on a 10,000-block
document costs what changed, not the document (``benchmarks/docs_people.py``). Nothing here does
I/O or writes a document.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pycrdt import Awareness, Doc

from elynav_nb.docs.live._yjs_items import ItemIndex, last_text_character
from elynav_nb.errors import ProtocolError

__all__ = [
    "CursorPlaces",
    "Person",
    "RoomPresence",
    "cursor_after",
    "cursor_for_update",
    "people_from_states",
]


@dataclass(frozen=True)
class Person:
    """One other client in the room: its name and colour as shown, and its cursor if it has one."""

    client_id: int
    name: str | None
    color: str | None
    cursor: dict[str, Any] | None = None
    block_id: str | None = None
    """The block their cursor is in (``None`` without a cursor, or when it cannot be placed)."""

    @property
    def is_typing_here(self) -> bool:
        """True when the client's editor has the focus in this document (it shows a cursor)."""
        return self.cursor is not None


def cursor_after(character: tuple[int, int]) -> dict[str, Any]:
    """The awareness ``cursor`` right after a character (``{client, clock}``), as y-prosemirror
    writes a collapsed selection: anchor = head, a Yjs relative position associated to its left."""
    position = {
        "type": None,
        "tname": None,
        "item": {"client": character[0], "clock": character[1]},
        "assoc": -1,
    }
    return {"anchor": position, "head": dict(position)}


def cursor_for_update(update: bytes, client: int) -> dict[str, Any] | None:
    """Our cursor after a local transaction: after the last character ``client`` wrote in its
    ``update`` (``None`` when it wrote no text)."""
    try:
        character = last_text_character(update, client)
    except ProtocolError:  # our own update: pycrdt wrote it; never expected
        return None
    return cursor_after(character) if character is not None else None


def _cursor_item(cursor: Mapping[str, Any]) -> tuple[int, int] | None:
    """The item a cursor's head names: its ``item``, else its ``type`` (the end of that type)."""
    head = cursor.get("head")
    if not isinstance(head, Mapping):
        return None
    for key in ("item", "type"):
        named = head.get(key)
        if isinstance(named, Mapping):
            client, clock = named.get("client"), named.get("clock")
            if isinstance(client, int) and isinstance(clock, int):
                return client, clock
    return None


def people_from_states(
    states: Mapping[int, Mapping[str, Any]], index: ItemIndex | None = None
) -> list[Person]:
    """The people of awareness ``states`` (by client id), sorted by name; states without a user
    (a bare provider) are left out. With ``index`` (the document's items), each cursor is placed in
    its block."""
    people = []
    for client_id, state in states.items():
        user = state.get("user")
        if not isinstance(user, Mapping):
            continue
        name = user.get("name")
        color = user.get("color")
        cursor = state.get("cursor")
        block_id = None
        if isinstance(cursor, Mapping) and index is not None:
            item = _cursor_item(cursor)
            block_id = index.block_of(*item) if item is not None else None
        people.append(
            Person(
                client_id=client_id,
                name=name if isinstance(name, str) else None,
                color=color if isinstance(color, str) else None,
                cursor=dict(cursor) if isinstance(cursor, Mapping) else None,
                block_id=block_id,
            )
        )
    return sorted(people, key=lambda person: (person.name or "", person.client_id))


class CursorPlaces:
    """The item index of one document, for placing cursors, brought up to date at each look."""

    def __init__(self, doc: Doc[Any]) -> None:
        self._document = doc
        self._index: ItemIndex | None = None
        self._state_vector = b""

    def index(self) -> ItemIndex:
        """The index of the document as it is now (what changed since the last look added)."""
        if self._index is None:
            self._index = ItemIndex(self._document.get_update())
        else:
            self._index.add(self._document.get_update(self._state_vector))
        self._state_vector = self._document.get_state()
        return self._index


class RoomPresence:
    """Our awareness state in one room (``user``, ``cursor``, ``commentsPing``...) and the others'."""

    def __init__(self, doc: Doc[Any], user: Mapping[str, Any]) -> None:
        self._awareness = Awareness(doc)
        self._fields: dict[str, Any] = {"user": dict(user)}
        self._awareness.set_local_state(dict(self._fields))

    def set(self, field: str, value: Any) -> None:
        """Show ``field`` (``None``: stop showing it); ``update()`` gives what to send."""
        if value is None:
            self._fields.pop(field, None)
        else:
            self._fields[field] = value

    def update(self) -> bytes:
        """Our state with a new clock (peers refresh it), as an awareness update to send."""
        self._awareness.set_local_state(dict(self._fields))
        return self._awareness.encode_awareness_update([self._awareness.client_id])

    def peers(self) -> dict[int, dict[str, Any]]:
        """The states of the other clients in the room, by client id."""
        own = self._awareness.client_id
        return {
            client: dict(state) for client, state in self._awareness.states.items() if client != own and state
        }

    def apply(self, update: bytes) -> bool:
        """Apply a peer's awareness update; False when it cannot be read."""
        try:
            self._awareness.apply_awareness_update(update, "remote")
        except Exception:  # whatever pycrdt raises: the update is not usable
            return False
        return True
