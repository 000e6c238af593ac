"""Who is in a Docs room, read from Hocuspocus awareness states (pure).

Where it sits: under ``DocsSession.people()``; the connection (``connection.DocsConnection``)
applies the room's awareness updates and hands their states here. What the Docs frontend puts in
its state (BlockNote 0.51.4 ``YCursorPlugin``, y-prosemirror ``cursor-plugin.js``, Docs'
``DocsThreadStore``): ``user: {name, color}``, ``cursor: {anchor, head}`` (Yjs relative positions as
JSON, present while the editor has the focus) and ``commentsPing: {at, docId, threadId}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Person", "people_from_states"]


@dataclass(frozen=True)
class Person:
    """One other client in the room: its name and colour as shown, and its cursor if it has one."""

    client_id: int
    name: str | None
    color: str | None
    cursor: dict[str, Any] | None = None

    @property
    def is_typing_here(self) -> bool:
        """True when the client's editor has the focus in this document (it shows a cursor)."""
        return self.cursor is not None


def people_from_states(states: Mapping[int, Mapping[str, Any]]) -> list[Person]:
    """The people of awareness ``states`` (by client id), sorted by name; states without a user
    (a bare provider) are left out."""
    people = []
    for client_id, state in states.items():
        user = state.get("user")
        if not isinstance(user, Mapping):
            continue
        name = user.get("name")
        color = user.get("color")
        cursor = state.get("cursor")
        people.append(
            Person(
                client_id=client_id,
                name=name if isinstance(name, str) else None,
                color=color if isinstance(color, str) else None,
                cursor=dict(cursor) if isinstance(cursor, Mapping) else None,
            )
        )
    return sorted(people, key=lambda person: (person.name or "", person.client_id))
