"""The Hocuspocus frame codec: bytes of one WebSocket message <-> one typed message dataclass.

Where it sits: the pure layer under the Docs WebSocket connection (design note §1). The connection
reads a binary frame, calls ``decode_message`` and acts on the dataclass; to send, it builds a
dataclass and calls ``encode_message``. No I/O here, no pycrdt: updates and state vectors stay
opaque bytes that the document layer applies.

Wire format (lib0 primitives)::

    frame   := varString(documentName) · varUint(messageType) · payload
    varUint := unsigned LEB128        varString := varUint(len(utf8)) · utf8   (length in BYTES)

Message types 0-8 are those of Hocuspocus v2/v3/v4 (``packages/server/src/types.ts``), 9 and 10 the
v4 Ping/Pong. A v4 Ping is the single byte ``09`` with no document name; it is the only frame that
does not start with a name.

Bytes that break the format (truncated, an over-long varUint, invalid UTF-8, trailing bytes, an
unknown type) raise ``ProtocolError`` (code ``PROTOCOL_ERROR``), never ``IndexError``.
``pycrdt.Encoder.write_var_string`` is not used on purpose: it writes the character count, not the
byte count, and breaks every non-ASCII string (design note §5.4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from elynav_nb.errors import ProtocolError

__all__ = [
    "AUTH_AUTHENTICATED",
    "AUTH_PERMISSION_DENIED",
    "AUTH_TOKEN",
    "MESSAGE_AUTH",
    "MESSAGE_AWARENESS",
    "MESSAGE_BROADCAST_STATELESS",
    "MESSAGE_CLOSE",
    "MESSAGE_PING",
    "MESSAGE_PONG",
    "MESSAGE_QUERY_AWARENESS",
    "MESSAGE_STATELESS",
    "MESSAGE_SYNC",
    "MESSAGE_SYNC_REPLY",
    "MESSAGE_SYNC_STATUS",
    "SCOPE_READ_ONLY",
    "SCOPE_READ_WRITE",
    "SYNC_STEP_1",
    "SYNC_STEP_2",
    "SYNC_UPDATE",
    "AuthToken",
    "Authenticated",
    "AwarenessUpdate",
    "BroadcastStateless",
    "ByteReader",
    "Close",
    "Message",
    "PermissionDenied",
    "Ping",
    "Pong",
    "QueryAwareness",
    "Stateless",
    "SyncStatus",
    "SyncStep1",
    "SyncStep2",
    "SyncUpdate",
    "TokenRequest",
    "decode_message",
    "encode_message",
    "encode_var_bytes",
    "encode_var_string",
    "encode_var_uint",
]

MESSAGE_SYNC: Final = 0
MESSAGE_AWARENESS: Final = 1
MESSAGE_AUTH: Final = 2
MESSAGE_QUERY_AWARENESS: Final = 3
MESSAGE_SYNC_REPLY: Final = 4
MESSAGE_STATELESS: Final = 5
MESSAGE_BROADCAST_STATELESS: Final = 6
MESSAGE_CLOSE: Final = 7
MESSAGE_SYNC_STATUS: Final = 8
MESSAGE_PING: Final = 9
MESSAGE_PONG: Final = 10

SYNC_STEP_1: Final = 0
SYNC_STEP_2: Final = 1
SYNC_UPDATE: Final = 2

AUTH_TOKEN: Final = 0
AUTH_PERMISSION_DENIED: Final = 1
AUTH_AUTHENTICATED: Final = 2

SCOPE_READ_WRITE: Final = "read-write"
SCOPE_READ_ONLY: Final = "readonly"

# lib0 numbers are JS numbers: anything above 2**53 cannot come from a real peer.
_MAX_SAFE_INTEGER: Final = 2**53 - 1
_MAX_VAR_UINT_BYTES: Final = 8


# --- lib0 primitives ---------------------------------------------------------------------------


def encode_var_uint(value: int) -> bytes:
    """Unsigned LEB128: 7 bits per byte, lowest group first; ``300`` -> ``ac 02``."""
    if value < 0 or value > _MAX_SAFE_INTEGER:
        raise ValueError(f"varUint out of range: {value}")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_var_bytes(data: bytes) -> bytes:
    """lib0 ``varUint8Array``: the length, then the bytes."""
    return encode_var_uint(len(data)) + data


def encode_var_string(text: str) -> bytes:
    """lib0 ``varString``: the UTF-8 **byte** length, then the UTF-8 bytes."""
    return encode_var_bytes(text.encode("utf-8"))


class ByteReader:
    """Reads lib0 primitives from one frame; every overrun raises ``ProtocolError``."""

    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)
        self.position = 0

    @property
    def remaining(self) -> int:
        return len(self.data) - self.position

    def read_var_uint(self) -> int:
        value = 0
        shift = 0
        for _ in range(_MAX_VAR_UINT_BYTES):
            if self.position >= len(self.data):
                raise ProtocolError("frame ends inside a number")
            byte = self.data[self.position]
            self.position += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                if value > _MAX_SAFE_INTEGER:
                    raise ProtocolError("number in frame is larger than 2**53")
                return value
            shift += 7
        raise ProtocolError("number in frame is longer than 8 bytes")

    def read_bytes(self, length: int) -> bytes:
        if length > self.remaining:
            raise ProtocolError(f"frame announces {length} bytes but only {self.remaining} remain")
        chunk = self.data[self.position : self.position + length]
        self.position += length
        return chunk

    def read_var_bytes(self) -> bytes:
        return self.read_bytes(self.read_var_uint())

    def read_var_string(self) -> str:
        raw = self.read_var_bytes()
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("string in frame is not valid UTF-8") from None

    def expect_end(self, what: str) -> None:
        if self.remaining:
            raise ProtocolError(f"{self.remaining} unexpected trailing byte(s) after {what}")


# --- messages ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SyncStep1:
    """Sync/SyncStep1: "here is my state vector, send me what I miss". ``reply`` = sent as type 4."""

    document_name: str
    state_vector: bytes
    reply: bool = False


@dataclass(frozen=True)
class SyncStep2:
    """Sync/SyncStep2: the update that answers a SyncStep1 (``00 00`` = nothing missing)."""

    document_name: str
    update: bytes
    reply: bool = False


@dataclass(frozen=True)
class SyncUpdate:
    """Sync/Update: one incremental Yjs v1 update."""

    document_name: str
    update: bytes
    reply: bool = False


@dataclass(frozen=True)
class AwarenessUpdate:
    """Awareness (1): a y-protocols awareness update, kept as opaque bytes."""

    document_name: str
    update: bytes


@dataclass(frozen=True)
class AuthToken:
    """Auth/Token, client to server: ``02 00 varString(token)`` (+ a v4 provider version)."""

    document_name: str
    token: str
    provider_version: str | None = None


@dataclass(frozen=True)
class TokenRequest:
    """Auth/Token with no string, server to client: "send your token again"."""

    document_name: str


@dataclass(frozen=True)
class PermissionDenied:
    """Auth/PermissionDenied: the server refused this document; the socket stays open."""

    document_name: str
    reason: str


@dataclass(frozen=True)
class Authenticated:
    """Auth/Authenticated with the scope, ``"read-write"`` or ``"readonly"``."""

    document_name: str
    scope: str

    @property
    def read_only(self) -> bool:
        return self.scope == SCOPE_READ_ONLY


@dataclass(frozen=True)
class QueryAwareness:
    """QueryAwareness (3): "send me every awareness state" (no payload)."""

    document_name: str


@dataclass(frozen=True)
class Stateless:
    """Stateless (5): an application string, not stored in the document."""

    document_name: str
    payload: str


@dataclass(frozen=True)
class BroadcastStateless:
    """BroadcastStateless (6), client to server: relayed as Stateless to every connection."""

    document_name: str
    payload: str


@dataclass(frozen=True)
class Close:
    """CLOSE (7). Server to client carries a reason ("Reset Connection"); client to server has none."""

    document_name: str
    reason: str | None = None


@dataclass(frozen=True)
class SyncStatus:
    """SyncStatus (8): ``applied`` True = the server applied our change (``01``), False = refused (``00``)."""

    document_name: str
    applied: bool


@dataclass(frozen=True)
class Ping:
    """Hocuspocus v4 application ping: the single byte ``09``, no document name."""


@dataclass(frozen=True)
class Pong:
    """Hocuspocus v4 application pong: the single byte ``0a``, no document name."""


Message = (
    SyncStep1
    | SyncStep2
    | SyncUpdate
    | AwarenessUpdate
    | AuthToken
    | TokenRequest
    | PermissionDenied
    | Authenticated
    | QueryAwareness
    | Stateless
    | BroadcastStateless
    | Close
    | SyncStatus
    | Ping
    | Pong
)


# --- encoding ----------------------------------------------------------------------------------


def _sync_frame(document_name: str, reply: bool, sync_type: int, data: bytes) -> bytes:
    message_type = MESSAGE_SYNC_REPLY if reply else MESSAGE_SYNC
    return (
        encode_var_string(document_name)
        + encode_var_uint(message_type)
        + encode_var_uint(sync_type)
        + encode_var_bytes(data)
    )


def _auth_frame(document_name: str, auth_type: int, tail: bytes) -> bytes:
    return (
        encode_var_string(document_name) + encode_var_uint(MESSAGE_AUTH) + encode_var_uint(auth_type) + tail
    )


def encode_message(message: Message) -> bytes:
    """The exact bytes Hocuspocus peers send for ``message`` (design note §1.3)."""
    if isinstance(message, Ping):
        return bytes([MESSAGE_PING])
    if isinstance(message, Pong):
        return bytes([MESSAGE_PONG])
    name = message.document_name
    if isinstance(message, SyncStep1):
        return _sync_frame(name, message.reply, SYNC_STEP_1, message.state_vector)
    if isinstance(message, SyncStep2):
        return _sync_frame(name, message.reply, SYNC_STEP_2, message.update)
    if isinstance(message, SyncUpdate):
        return _sync_frame(name, message.reply, SYNC_UPDATE, message.update)
    if isinstance(message, AwarenessUpdate):
        return encode_var_string(name) + encode_var_uint(MESSAGE_AWARENESS) + encode_var_bytes(message.update)
    if isinstance(message, AuthToken):
        tail = encode_var_string(message.token)
        if message.provider_version is not None:
            tail += encode_var_string(message.provider_version)
        return _auth_frame(name, AUTH_TOKEN, tail)
    if isinstance(message, TokenRequest):
        return _auth_frame(name, AUTH_TOKEN, b"")
    if isinstance(message, PermissionDenied):
        return _auth_frame(name, AUTH_PERMISSION_DENIED, encode_var_string(message.reason))
    if isinstance(message, Authenticated):
        return _auth_frame(name, AUTH_AUTHENTICATED, encode_var_string(message.scope))
    if isinstance(message, QueryAwareness):
        return encode_var_string(name) + encode_var_uint(MESSAGE_QUERY_AWARENESS)
    if isinstance(message, Stateless):
        return (
            encode_var_string(name) + encode_var_uint(MESSAGE_STATELESS) + encode_var_string(message.payload)
        )
    if isinstance(message, BroadcastStateless):
        payload = encode_var_string(message.payload)
        return encode_var_string(name) + encode_var_uint(MESSAGE_BROADCAST_STATELESS) + payload
    if isinstance(message, Close):
        reason = b"" if message.reason is None else encode_var_string(message.reason)
        return encode_var_string(name) + encode_var_uint(MESSAGE_CLOSE) + reason
    if isinstance(message, SyncStatus):
        return (
            encode_var_string(name)
            + encode_var_uint(MESSAGE_SYNC_STATUS)
            + encode_var_uint(int(message.applied))
        )
    raise TypeError(f"not a Hocuspocus message: {type(message).__name__}")


# --- decoding ----------------------------------------------------------------------------------


def _decode_sync(reader: ByteReader, name: str, reply: bool) -> Message:
    sync_type = reader.read_var_uint()
    data = reader.read_var_bytes()
    reader.expect_end("a sync message")
    if sync_type == SYNC_STEP_1:
        return SyncStep1(name, data, reply)
    if sync_type == SYNC_STEP_2:
        return SyncStep2(name, data, reply)
    if sync_type == SYNC_UPDATE:
        return SyncUpdate(name, data, reply)
    raise ProtocolError(f"unknown sync message type {sync_type}", details={"sync_type": sync_type})


def _decode_auth(reader: ByteReader, name: str) -> Message:
    auth_type = reader.read_var_uint()
    if auth_type == AUTH_TOKEN:
        if not reader.remaining:
            return TokenRequest(name)
        token = reader.read_var_string()
        provider_version = reader.read_var_string() if reader.remaining else None
        reader.expect_end("an auth token")
        return AuthToken(name, token, provider_version)
    if auth_type == AUTH_PERMISSION_DENIED:
        reason = reader.read_var_string()
        reader.expect_end("a permission denial")
        return PermissionDenied(name, reason)
    if auth_type == AUTH_AUTHENTICATED:
        scope = reader.read_var_string()
        reader.expect_end("an authenticated message")
        return Authenticated(name, scope)
    raise ProtocolError(f"unknown auth message type {auth_type}", details={"auth_type": auth_type})


def decode_message(frame: bytes) -> Message:
    """Decode one binary WebSocket frame; malformed bytes raise ``ProtocolError``."""
    if not isinstance(frame, (bytes, bytearray, memoryview)):
        raise ProtocolError("a Hocuspocus frame must be binary")
    data = bytes(frame)
    if data == bytes([MESSAGE_PING]):
        return Ping()
    if data == bytes([MESSAGE_PONG]):
        return Pong()
    if not data:
        raise ProtocolError("empty frame")
    reader = ByteReader(data)
    name = reader.read_var_string()
    message_type = reader.read_var_uint()
    if message_type in (MESSAGE_SYNC, MESSAGE_SYNC_REPLY):
        return _decode_sync(reader, name, reply=message_type == MESSAGE_SYNC_REPLY)
    if message_type == MESSAGE_AWARENESS:
        update = reader.read_var_bytes()
        reader.expect_end("an awareness message")
        return AwarenessUpdate(name, update)
    if message_type == MESSAGE_AUTH:
        return _decode_auth(reader, name)
    if message_type == MESSAGE_QUERY_AWARENESS:
        reader.expect_end("a query-awareness message")
        return QueryAwareness(name)
    if message_type == MESSAGE_STATELESS:
        payload = reader.read_var_string()
        reader.expect_end("a stateless message")
        return Stateless(name, payload)
    if message_type == MESSAGE_BROADCAST_STATELESS:
        payload = reader.read_var_string()
        reader.expect_end("a broadcast-stateless message")
        return BroadcastStateless(name, payload)
    if message_type == MESSAGE_CLOSE:
        reason = reader.read_var_string() if reader.remaining else None
        reader.expect_end("a close message")
        return Close(name, reason)
    if message_type == MESSAGE_SYNC_STATUS:
        status = reader.read_var_uint()
        reader.expect_end("a sync-status message")
        return SyncStatus(name, applied=status == 1)
    raise ProtocolError(f"unknown message type {message_type}", details={"message_type": message_type})
