"""Who is in a notebook's room and who edited each cell last: names from the room's awareness states.

Where it sits: the pure presence layer of ``elynav_nb.notebook`` (no I/O). ``live.py`` builds our own
awareness ``user`` with ``user_state``, gives a ``Presence`` each awareness change (``learn``), the
writers of each remote transaction (``edited``) and each write of ours (``wrote``), and asks it for names.

Why a cell's last editor is kept as client ids and named when read: a server does not send a client
that joins the states of the peers already there (pycrdt-websocket relays a peer's state when that
peer renews it, every 15 s in JupyterLab), so a person's first edits can come before their name. A name
once learnt is kept after its peer leaves (JupyterLab removes its state when its tab closes).

How data flows::

    awareness states -> learn: client id -> display name (or name)
    remote transaction's client ids -> edited(cell ids, client ids) -> last_editors(): names when read
    ours -> wrote(cell id) -> our own name
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = ["UNNAMED", "Presence", "user_state"]

UNNAMED: Final = "a peer without a name"


def user_state(display_name: str, username: str, color: str) -> dict[str, Any]:
    """Our awareness ``user``, as JupyterLab's own (its Collaboration panel and cursors read these)."""
    initials = "".join(word[0] for word in display_name.split()[:2]).upper() or "A"
    return {
        "name": username,
        "display_name": display_name,
        "username": username,
        "initials": initials,
        "color": color,
    }


def _name_in(state: Any) -> str | None:
    """The name a peer's awareness state gives, if any (a state is whatever JSON the peer sent)."""
    user = state.get("user") if isinstance(state, Mapping) else None
    if not isinstance(user, Mapping):
        return None
    name = user.get("display_name") or user.get("name")
    return str(name) if name else None


class Presence:
    """The names learnt from the room, and who edited each cell last."""

    def __init__(self, own_name: str) -> None:
        self.own_name = own_name
        self._names: dict[int, str] = {}
        self._editors: dict[str, tuple[int, ...] | None] = {}  # None: ours

    def learn(self, states: Mapping[int, Mapping[str, Any]]) -> None:
        for client_id, state in states.items():
            name = _name_in(state)
            if name is not None:
                self._names[client_id] = name

    def names_of(self, client_ids: Iterable[int]) -> list[str]:
        names: list[str] = []
        for client_id in client_ids:
            name = self._names.get(client_id, UNNAMED)
            if name not in names:
                names.append(name)
        return names

    def others(self, states: Mapping[int, Mapping[str, Any]], own_client_id: int) -> list[str]:
        """The names of the others in the room now (``states``: the awareness states there)."""
        return [
            _name_in(state) or f"client {client_id}"
            for client_id, state in states.items()
            if client_id != own_client_id and state
        ]

    def edited(self, cell_ids: Iterable[str], client_ids: Iterable[int]) -> None:
        writers = tuple(client_ids)
        for cell_id in cell_ids:
            self._editors[cell_id] = writers

    def wrote(self, cell_id: str) -> None:
        self._editors[cell_id] = None

    def last_editors(self) -> dict[str, str]:
        """Cell id -> who edited it last, named now."""
        return {
            cell_id: self.own_name if writers is None else ", ".join(self.names_of(writers))
            for cell_id, writers in self._editors.items()
        }
