"""Who is in a Docs room, read from Hocuspocus awareness states (pure).

Where it sits: under ``DocsSession.people()``; the connection (``connection.DocsConnection``)
applies the room's awareness updates and hands their states here. What the Docs frontend puts in
its state (BlockNote 0.51.4 ``YCursorPlugin``, y-prosemirror ``cursor-plugin.js``, Docs'
``DocsThreadStore``): ``user: {name, color}``, ``cursor: {anchor, head}`` (Yjs relative positions as
JSON, present while the editor has the focus) and ``commentsPing: {at, docId, threadId}``.
A cursor names a Yjs item; ``_yjs_items.ItemIndex`` finds the block holding it, and
``cursor_after`` is where our own cursor goes after a write (the last character we wrote).

``CursorPlaces`` keeps that index for one document: the whole state is decoded on the first look
only; each later look decodes just what changed since the one before (``doc.get_update(state
vector)``), so ``people()`` on a 10,000-block document costs what its cursors cost, not the
document (``benchmarks/docs_people.py``). It reads the document, never writes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pycrdt import Doc

from elynav_nb.docs.live._yjs_items import ItemIndex

__all__ = ["CursorPlaces", "Person", "cursor_after", "people_from_states"]


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
        self._doc = doc
        self._index: ItemIndex | None = None
        self._state_vector = b""

    def index(self) -> ItemIndex:
        """The index of the document as it is now (what changed since the last look added)."""
        if self._index is None:
            self._index = ItemIndex(self._doc.get_update())
        else:
            self._index.add(self._doc.get_update(self._state_vector))
        self._state_vector = self._doc.get_state()
        return self._index
