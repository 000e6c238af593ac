"""The Docs sandbox's collaboration layer: a Hocuspocus 3.4.4 stand-in behind the y-provider checks.

Where it sits: ``DocsSandbox`` hands every accepted WebSocket to ``CollaborationHub.attach`` and
feeds it the binary frames it receives; the hub answers through the socket's ``send``/``close``.
It decodes and encodes with the pure codec ``elynav_nb.docs.live.frames``; rooms are ``pycrdt.Doc`` s.

What it reproduces (design note §1, §2.3, §9.4-§9.6):

* Auth-gated queueing: every non-Auth message of a document name waits for its Auth; without
  Auth nothing is ever sent and the socket is never closed.
* On Auth (token ignored): the name must equal ``?room=``, be a UUID v4, and the document must
  grant ``retrieve`` to the forwarded cookie; otherwise ``PermissionDenied "permission-denied"``,
  socket left open, and later Auths for that name are never answered. Scope
  ``readonly`` when ``update`` is not granted.
* Sync: a client SyncStep1 gets the server's SyncStep1, then the SyncStep2 answer. Read-write
  SyncStep2/Update are applied, broadcast to every connection of the room **sender included**
  (echo before the ack, as 3.4.4), then acked ``SyncStatus 1``. Read-only: nothing applied; an
  Update gets ``SyncStatus 0``, a SyncStep2 ``1`` only when it brings nothing new.
* Awareness is relayed, sent whole to a joining connection, dropped on disconnect.
  BroadcastStateless is relayed as Stateless. QueryAwareness is ignored.
* An undecodable frame closes the socket 4401; an update that cannot be applied sends
  ``Close "Reset Connection"`` and closes 4205.
* ``reset(room)`` sends ``Close "Reset Connection"``, forgets the document connections, leaves the
  sockets open, and accepts a new Auth on them.
* The layer persists nothing: a room starts empty and is discarded with its last connection.

One test hook that Hocuspocus does not have, for a timing the sandbox cannot otherwise produce
(it handles each frame to the end before the next): ``hold_acks(room)`` keeps the room's
``SyncStatus`` frames back, as if the server were still busy with the messages they answer.
``reset(room)`` then sends each socket's held acks *after* its ``Close "Reset Connection"``: the
stale ack a real server sends when a reset lands while it handles a message (design note §1.5).
Holding goes on after the reset until ``release_acks(room)`` sends what is held and stops.

``hocuspocus_version=4`` imitates what Hocuspocus 4.7.0 does differently (design note §1.9, §6.1,
checked against its ``ClientConnection.ts``):

* Idle close: every ``timeout`` seconds the socket is checked; one that sent no frame for more
  than ``timeout`` (before any Auth: since it opened, whatever it sent) gets ``Close "Connection
  Timeout"`` on each established document, then WS close 4408. WebSocket pings do not count.
* The echo of a client's own update comes after its ``SyncStatus`` ack.
* A denied document name is forgotten, so a later Auth for it is answered again.
* The pre-Auth queue is bounded (5 MiB / 1000 messages per name, 100 pending names); past a
  bound the socket is closed 4205.
* Ping ``09`` / Pong ``0a``: 4.7.0 defines the types but neither sends nor handles them (a bare
  ``09`` or ``0a`` from a client gets WS close 4401 there, verified). The sandbox answers a client
  Ping with Pong and, with ``send_pings``, pings clients (design note §9.6; not seen in 4.7.0) so
  a client's Pong path can be tested; a Pong counts as a received frame.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from pycrdt import Doc, Subscription, TransactionEvent

from elynav_nb.docs.addressing import is_uuid_v4
from elynav_nb.docs.live.frames import (
    Authenticated,
    AuthToken,
    AwarenessUpdate,
    BroadcastStateless,
    ByteReader,
    Close,
    Message,
    PermissionDenied,
    Ping,
    Pong,
    Stateless,
    SyncStatus,
    SyncStep1,
    SyncStep2,
    SyncUpdate,
    decode_message,
    encode_message,
    encode_var_string,
    encode_var_uint,
)
from elynav_nb.errors import ProtocolError

__all__ = ["Authorizer", "CollaborationHub", "CollaborationSocket", "Room", "SocketSession"]

RESET_REASON: Final = "Reset Connection"
TIMEOUT_REASON: Final = "Connection Timeout"
V4_MAX_QUEUED_BYTES: Final = 5 * 1024 * 1024
V4_MAX_QUEUED_MESSAGES: Final = 1000
V4_MAX_PENDING_DOCUMENTS: Final = 100
_EMPTY_UPDATE: Final = b"\x00\x00"

Authorizer = Callable[[str, str], Awaitable[tuple[bool, bool] | None]]
"""``(document_name, cookie) -> (retrieve, update)``, or ``None`` when the backend refuses."""


class CollaborationSocket(Protocol):
    """What the hub needs from a WebSocket: queue a binary frame, close with a code."""

    def send(self, frame: bytes) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


@dataclass
class DocumentConnection:
    """One document name on one socket."""

    socket_session: SocketSession
    name: str
    state: str = "pending"  # pending -> established | denied
    read_only: bool = False
    queued: list[Message] = field(default_factory=list)
    queued_bytes: int = 0
    awareness_clocks: dict[int, int] = field(default_factory=dict)


class Room:
    """The live state of one document: a pycrdt Doc that exists only while someone is connected."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.doc: Doc[Any] = Doc()
        self.connections: list[DocumentConnection] = []
        self.awareness_states: dict[int, tuple[int, str]] = {}
        self.echo_held_for: DocumentConnection | None = None  # v4: the sender gets its echo after the ack
        self.held_echoes: list[bytes] = []
        self._subscription: Subscription = self.doc.observe(self._broadcast_update)

    def _broadcast_update(self, event: TransactionEvent) -> None:
        update = bytes(event.update)
        if update == _EMPTY_UPDATE:
            return
        frame = encode_message(SyncUpdate(self.name, update))
        for connection in self.connections:
            if connection is self.echo_held_for:
                self.held_echoes.append(frame)
            else:
                connection.socket_session.socket.send(frame)

    def send_to_all(self, frame: bytes) -> None:
        for connection in self.connections:
            connection.socket_session.socket.send(frame)

    def adds_something(self, update: bytes) -> bool:
        """Would ``update`` change the room? (Y.snapshotContainsUpdate, read-only SyncStep2.)"""
        probe: Doc[Any] = Doc()
        probe.apply_update(self.doc.get_update())
        state_before = probe.get_state()
        update_before = probe.get_update()
        probe.apply_update(update)
        return probe.get_state() != state_before or probe.get_update() != update_before


def _decode_awareness(update: bytes) -> list[tuple[int, int, str]]:
    reader = ByteReader(update)
    entries: list[tuple[int, int, str]] = []
    for _ in range(reader.read_var_uint()):
        client_id = reader.read_var_uint()
        clock = reader.read_var_uint()
        entries.append((client_id, clock, reader.read_var_string()))
    return entries


def _encode_awareness(entries: list[tuple[int, int, str]]) -> bytes:
    payload = encode_var_uint(len(entries))
    for client_id, clock, state in entries:
        payload += encode_var_uint(client_id) + encode_var_uint(clock) + encode_var_string(state)
    return payload


class SocketSession:
    """One accepted WebSocket: its document connections and the cookie it came with."""

    def __init__(
        self, hub: CollaborationHub, socket: CollaborationSocket, room_parameter: str, cookie: str
    ) -> None:
        self.hub = hub
        self.socket = socket
        self.room_parameter = room_parameter
        self.cookie = cookie
        self.session_key = _session_key(cookie)
        self.documents: dict[str, DocumentConnection] = {}
        self.closed = False
        self.opened_at = time.monotonic()
        self.last_frame_at = self.opened_at
        self.has_authenticated = False

    @property
    def is_v4(self) -> bool:
        return self.hub.hocuspocus_version >= 4

    def idle_expired(self, now: float) -> bool:
        """v4: has this socket sent nothing for longer than the hub's ``timeout``?"""
        timeout = self.hub.timeout
        if timeout is None or self.closed:
            return False
        reference = self.last_frame_at if self.has_authenticated else self.opened_at
        return now - reference > timeout

    def time_out(self) -> None:
        """v4 idle close: ``Close "Connection Timeout"`` per established document, then 4408."""
        self.terminate(4408, TIMEOUT_REASON)

    def terminate(self, code: int, reason: str) -> None:
        for connection in self.documents.values():
            if connection.state == "established":
                self.socket.send(encode_message(Close(connection.name, reason)))
        self.socket.close(code, reason)
        self.disconnect()

    async def receive(self, frame: bytes) -> None:
        """Handle one binary frame from the client."""
        if self.closed:
            return
        self.last_frame_at = time.monotonic()
        try:
            message = decode_message(frame)
        except ProtocolError:
            self.socket.close(4401, "Unauthorized")
            self.disconnect()
            return
        if isinstance(message, Ping):
            self.socket.send(encode_message(Pong()))
            return
        if isinstance(message, Pong):
            return
        name = message.document_name
        connection = self.documents.get(name)
        if connection is None:
            if self.is_v4 and self._pending_count() >= V4_MAX_PENDING_DOCUMENTS:
                self.terminate(4205, RESET_REASON)
                return
            connection = DocumentConnection(self, name)
            self.documents[name] = connection
        if connection.state == "denied":
            return  # v3: the name stays marked; nothing is ever answered again
        if connection.state == "pending":
            if isinstance(message, AuthToken):
                await self._authenticate(connection)
            else:
                self._queue(connection, message, len(frame))
            return
        self._handle_established(connection, message)

    def _pending_count(self) -> int:
        return sum(1 for connection in self.documents.values() if connection.state == "pending")

    def _queue(self, connection: DocumentConnection, message: Message, size: int) -> None:
        if self.is_v4:
            queued_bytes = sum(other.queued_bytes for other in self.documents.values())
            too_big = queued_bytes + size > V4_MAX_QUEUED_BYTES
            too_many = len(connection.queued) + 1 > V4_MAX_QUEUED_MESSAGES
            if too_big or too_many:
                self.terminate(4205, RESET_REASON)
                return
        connection.queued.append(message)
        connection.queued_bytes += size

    async def _authenticate(self, connection: DocumentConnection) -> None:
        name = connection.name
        allowed: tuple[bool, bool] | None = None
        if name == self.room_parameter and is_uuid_v4(name):
            allowed = await self.hub.authorize(name, self.cookie)
        if allowed is None or not allowed[0]:
            connection.state = "denied"
            connection.queued.clear()
            connection.queued_bytes = 0
            if self.is_v4:
                del self.documents[name]  # v4 clears the state: a later Auth is answered again
            self.socket.send(encode_message(PermissionDenied(name, "permission-denied")))
            return
        connection.read_only = not allowed[1]
        connection.state = "established"
        self.has_authenticated = True
        room = self.hub.join(connection)
        scope = "readonly" if connection.read_only else "read-write"
        self.socket.send(encode_message(Authenticated(name, scope)))
        if room.awareness_states:
            entries = [(client, clock, state) for client, (clock, state) in room.awareness_states.items()]
            self.socket.send(encode_message(AwarenessUpdate(name, _encode_awareness(entries))))
        queued, connection.queued = connection.queued, []
        connection.queued_bytes = 0
        for message in queued:
            self._handle_established(connection, message)

    def _handle_established(self, connection: DocumentConnection, message: Message) -> None:
        room = self.hub.rooms.get(connection.name)
        if room is None:
            return
        name = connection.name
        if isinstance(message, SyncStep1):
            self.socket.send(encode_message(SyncStep1(name, room.doc.get_state())))
            self.socket.send(encode_message(SyncStep2(name, room.doc.get_update(message.state_vector))))
        elif isinstance(message, (SyncStep2, SyncUpdate)):
            self._apply(connection, room, message)
        elif isinstance(message, AwarenessUpdate):
            self._relay_awareness(connection, room, message)
        elif isinstance(message, BroadcastStateless):
            room.send_to_all(encode_message(Stateless(name, message.payload)))
        elif isinstance(message, Close):
            self.hub.leave(connection)
            del self.documents[name]

    def _apply(self, connection: DocumentConnection, room: Room, message: SyncStep2 | SyncUpdate) -> None:
        name = connection.name
        if connection.read_only:
            if isinstance(message, SyncStep2):
                try:
                    applied = message.update == _EMPTY_UPDATE or not room.adds_something(message.update)
                except ValueError:
                    applied = False
            else:
                applied = False
            self.hub.send_ack(self, name, encode_message(SyncStatus(name, applied)))
            return
        if self.is_v4:
            room.echo_held_for = connection
        try:
            if message.update != _EMPTY_UPDATE:
                room.doc.apply_update(message.update)  # the room observer broadcasts, echo included
        except ValueError:
            self.socket.send(encode_message(Close(name, RESET_REASON)))
            self.socket.close(4205, RESET_REASON)
            self.disconnect()
            return
        finally:
            held, room.held_echoes, room.echo_held_for = room.held_echoes, [], None
        self.hub.send_ack(self, name, encode_message(SyncStatus(name, True)))
        for frame in held:  # v4 only: the sender's echo after its ack
            self.socket.send(frame)

    def _relay_awareness(self, connection: DocumentConnection, room: Room, message: AwarenessUpdate) -> None:
        try:
            entries = _decode_awareness(message.update)
        except ProtocolError:
            return
        for client_id, clock, state in entries:
            connection.awareness_clocks[client_id] = clock
            if state == "null":
                room.awareness_states.pop(client_id, None)
            else:
                room.awareness_states[client_id] = (clock, state)
        room.send_to_all(encode_message(message))

    def disconnect(self) -> None:
        """The socket is gone: leave every room, drop this socket's awareness states."""
        if self.closed:
            return
        self.closed = True
        for connection in list(self.documents.values()):
            if connection.state == "established":
                self.hub.leave(connection)
        self.documents.clear()


def _session_key(cookie: str) -> str | None:
    for part in cookie.split(";"):
        name, _, value = part.strip().partition("=")
        if name == "docs_sessionid" and value:
            return value
    return None


class CollaborationHub:
    """Every room of one sandbox, and the sockets attached to them."""

    def __init__(
        self, authorize: Authorizer, *, hocuspocus_version: int = 3, timeout: float | None = None
    ) -> None:
        """``timeout`` (seconds, v4 only) is the idle close delay; ``None`` disables it."""
        self.authorize = authorize
        self.hocuspocus_version = hocuspocus_version
        self.timeout = timeout if hocuspocus_version >= 4 else None
        self.rooms: dict[str, Room] = {}
        self._held_acks: dict[str, list[tuple[SocketSession, bytes]]] = {}  # room -> held SyncStatus frames

    def attach(self, socket: CollaborationSocket, room_parameter: str, cookie: str) -> SocketSession:
        return SocketSession(self, socket, room_parameter, cookie)

    def join(self, connection: DocumentConnection) -> Room:
        room = self.rooms.get(connection.name)
        if room is None:
            room = Room(connection.name)  # starts empty: never pre-loaded from stored content
            self.rooms[connection.name] = room
        room.connections.append(connection)
        return room

    def leave(self, connection: DocumentConnection) -> None:
        room = self.rooms.get(connection.name)
        if room is None or connection not in room.connections:
            return
        room.connections.remove(connection)
        gone = [(client, clock + 1, "null") for client, clock in connection.awareness_clocks.items()]
        for client, _clock, _state in gone:
            room.awareness_states.pop(client, None)
        if gone and room.connections:
            room.send_to_all(encode_message(AwarenessUpdate(room.name, _encode_awareness(gone))))
        if not room.connections:
            del self.rooms[connection.name]  # the last one left: the room's state is discarded

    def reset(self, room_name: str | None = None) -> int:
        """Send ``Close "Reset Connection"`` and forget the document connections; sockets stay open."""
        count = 0
        for name in list(self.rooms) if room_name is None else [room_name]:
            room = self.rooms.get(name)
            if room is None:
                continue
            for connection in list(room.connections):
                connection.socket_session.socket.send(encode_message(Close(name, RESET_REASON)))
                self._send_held_acks(name, connection.socket_session)  # stale: after the Close
                self.leave(connection)
                connection.socket_session.documents.pop(name, None)
                count += 1
        return count

    # --- test hook: acks held back (see the module docstring) ---------------------------------

    def send_ack(self, session: SocketSession, room_name: str, frame: bytes) -> None:
        """Send a ``SyncStatus`` frame now, or keep it back while the room's acks are held."""
        held = self._held_acks.get(room_name)
        if held is None:
            session.socket.send(frame)
        else:
            held.append((session, frame))

    def hold_acks(self, room_name: str) -> None:
        """Keep this room's ``SyncStatus`` acks back until ``release_acks`` (a reset sends them late)."""
        self._held_acks.setdefault(room_name, [])

    def held_ack_count(self, room_name: str) -> int:
        return len(self._held_acks.get(room_name, []))

    def release_acks(self, room_name: str) -> int:
        """Send the held acks of this room, in order, and stop holding; returns how many were sent."""
        held = self._held_acks.pop(room_name, [])
        sent = 0
        for session, frame in held:
            if not session.closed:
                session.socket.send(frame)
                sent += 1
        return sent

    def _send_held_acks(self, room_name: str, session: SocketSession) -> None:
        held = self._held_acks.get(room_name)
        if not held:
            return
        for held_session, frame in held:
            if held_session is session:
                session.socket.send(frame)
        held[:] = [(other, frame) for other, frame in held if other is not session]

    def connection_counts(self, room_name: str, session_key: str | None) -> dict[str, Any] | None:
        """``{count, exists}`` for ``get-connections``; ``None`` when the room is not loaded."""
        room = self.rooms.get(room_name)
        if room is None:
            return None
        writers = [connection for connection in room.connections if not connection.read_only]
        exists = any(connection.socket_session.session_key == session_key for connection in writers)
        return {"count": len(writers), "exists": bool(session_key) and exists}

    def session_has_writer(self, room_name: str, session_key: str | None) -> bool | None:
        counts = self.connection_counts(room_name, session_key)
        if counts is None or counts["count"] == 0:
            return None
        return bool(counts["exists"])


def awareness_users(room: Room) -> list[dict[str, Any]]:
    """The ``user`` fields of the awareness states in a room (for tests and the notebook view)."""
    users: list[dict[str, Any]] = []
    for _clock, state in room.awareness_states.values():
        try:
            parsed = json.loads(state)
        except ValueError:
            continue
        if isinstance(parsed, dict) and isinstance(parsed.get("user"), dict):
            users.append(parsed["user"])
    return users
