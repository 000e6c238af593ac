"""The y-websocket messages of a Jupyter collaboration room, as values: decode, encode, state vectors.

Where it sits: the pure codec of ``elynav_nb.notebook`` (no I/O). ``connection.py`` hands every
binary message it receives to ``decode_message`` and sends only what the ``*_message`` functions here
build. The byte layout is y-protocols' (the same as Hocuspocus without the document name): a varuint
message type (0 sync, 1 awareness, 2 auth, 3 query awareness, 4 raw: jupyter-collaboration's
``save``), then for sync a varuint step (0 SyncStep1 + state vector, 1 SyncStep2 + update,
2 Update + update) and a varuint-length payload. pycrdt's own encoders build them.

How we know the server holds a write (y-websocket has no acknowledgement): after the update we send
a SyncStep1 (``probe``). Both servers handle one client's messages in the order they came (the
handler's queue, the room's queue), and answer every SyncStep1 with exactly one SyncStep2, so the
n-th SyncStep2 answers the n-th SyncStep1 and proves every update sent before it was applied.

A reset (the server restarted, or dropped the room and loaded it again from disk) is seen by the
state vectors: the new room lacks what we had seen of it (``lost_clients``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pycrdt import (
    Decoder,
    YMessageType,
    YSyncMessageType,
    create_awareness_message,
    create_update_message,
    write_message,
)

from elynav_nb.errors import ProtocolError

__all__ = [
    "RoomMessage",
    "awareness_message",
    "decode_message",
    "decode_state_vector",
    "lost_clients",
    "probe_message",
    "step2_message",
    "update_message",
]

RAW: Final = 4
QUERY_AWARENESS: Final = 3
AUTH: Final = 2


@dataclass(frozen=True)
class RoomMessage:
    """One message from the room: ``kind`` is ``step1``, ``step2``, ``update``, ``awareness``,
    ``query_awareness``, ``auth``, ``raw``; ``payload`` is its body (a state vector, an update, an
    awareness update, a raw string's bytes)."""

    kind: str
    payload: bytes


_SYNC_KINDS: Final = {
    YSyncMessageType.SYNC_STEP1: "step1",
    YSyncMessageType.SYNC_STEP2: "step2",
    YSyncMessageType.SYNC_UPDATE: "update",
}


def decode_message(message: bytes) -> RoomMessage:
    """The message as a value; bytes that are not a y-websocket message are a ``ProtocolError``."""
    if not isinstance(message, bytes | bytearray) or not message:
        raise ProtocolError("an empty or non-binary message came from the collaboration room")
    try:
        decoder = Decoder(bytes(message))
        message_type = decoder.read_var_uint()
        if message_type == YMessageType.SYNC:
            step = decoder.read_var_uint()
            payload = decoder.read_message()
            kind = _SYNC_KINDS.get(YSyncMessageType(step)) if step in (0, 1, 2) else None
            if kind is None or payload is None:
                raise ValueError(f"sync step {step}")
            return RoomMessage(kind, payload)
        if message_type == YMessageType.AWARENESS:
            payload = decoder.read_message()
            if payload is None:
                raise ValueError("no awareness payload")
            return RoomMessage("awareness", payload)
        if message_type == QUERY_AWARENESS:
            return RoomMessage("query_awareness", b"")
        if message_type == AUTH:
            return RoomMessage("auth", bytes(message[1:]))
        if message_type == RAW:
            return RoomMessage("raw", decoder.read_var_string().encode("utf-8"))
    except (ValueError, IndexError, UnicodeDecodeError) as error:
        raise ProtocolError(f"the collaboration room sent a malformed message ({error})") from None
    raise ProtocolError(f"the collaboration room sent an unknown message type {message[0]}")


def probe_message(state_vector: bytes) -> bytes:
    """A SyncStep1 with our state vector: its SyncStep2 answer acknowledges every earlier update."""
    return bytes((YMessageType.SYNC, YSyncMessageType.SYNC_STEP1)) + write_message(state_vector)


def step2_message(update: bytes) -> bytes:
    return bytes((YMessageType.SYNC, YSyncMessageType.SYNC_STEP2)) + write_message(update)


def update_message(update: bytes) -> bytes:
    return create_update_message(update)


def awareness_message(awareness_update: bytes) -> bytes:
    return create_awareness_message(awareness_update)


def decode_state_vector(state_vector: bytes) -> dict[int, int]:
    """``{client id: clock}`` of a Yjs state vector (``ProtocolError`` when it is not one)."""
    try:
        decoder = Decoder(state_vector)
        count = decoder.read_var_uint()
        clocks: dict[int, int] = {}
        for _ in range(count):
            client = decoder.read_var_uint()
            clocks[client] = decoder.read_var_uint()
        return clocks
    except (ValueError, IndexError) as error:
        raise ProtocolError(f"a state vector from the room is malformed ({error})") from None


def lost_clients(seen_from_server: dict[int, int], server_now: dict[int, int]) -> list[int]:
    """The clients whose changes we had from the server and that it no longer has: a reset room."""
    return [client for client, clock in seen_from_server.items() if server_now.get(client, 0) < clock]
