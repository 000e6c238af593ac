"""The WebSocket under ``DocsConnection``: connecting to a Docs room, and whole messages handed over at once.

Where it sits: internal to ``live``, the socket-level half of ``connection``. ``connect`` opens the
socket (Origin and Cookie headers, websockets' ``max_size``, a bounded handshake) as a
``DispatchingSocket`` and turns each way it can fail into a typed error (``ConnectionFailed`` says
whether backing off and trying again may help); ``close_error`` reads why the server closed it.
Nothing here decodes a Hocuspocus frame: the connection hands the bytes to ``frames``.

How data flows::

    connect(url, room, origin, cookie, ...) -> websockets.connect(url?room=..., headers)
        -> DispatchingSocket, or ConnectionFailed(InvalidInput | SyncTimeout | ServiceError)
    bytes from the server -> data_received -> process_event: fragments joined -> the whole message
        -> the handler given to hand_messages_to (kept, in order, until there is one)
    closed socket -> close_error: RESPONSE_TOO_LARGE (1009), AUTH_REQUIRED / NOT_ALLOWED (4001),
        PROTOCOL_ERROR (4401), or None
    our update frames -> SentUpdates.remember; a message equal to one of them is its echo (is_echo)

The cookie is a secret: websockets logs request headers at DEBUG, so its logger here
(``elynav_nb.docs.wire``) never goes below INFO.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from typing import Any, Final

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import InvalidHandshake, InvalidURI, PayloadTooBig
from websockets.frames import Frame, Opcode

from elynav_nb._websockets import send_binary_now
from elynav_nb.docs._limits import response_too_large
from elynav_nb.errors import (
    AuthRequired,
    ElynavError,
    InvalidInput,
    NotAllowed,
    ProtocolError,
    ServiceError,
    SyncTimeout,
)

__all__ = ["ConnectionFailed", "DispatchingSocket", "SentUpdates", "close_error", "connect"]

GATE_CLOSE_CODE: Final = 4001
UNDECODABLE_CLOSE_CODE: Final = 4401
READ_BUFFER_BYTES: Final = 256 * 1024
ECHO_MEMORY: Final = 256
"""How many of our last sent updates are remembered to recognise their echoes."""

# websockets logs the request headers (our Cookie) at DEBUG: its logger never goes below INFO.
_wire_logger = logging.getLogger("elynav_nb.docs.wire")
_wire_logger.setLevel(logging.INFO)

MessageHandler = Callable[[bytes | str], None]


class DispatchingSocket(ClientConnection, asyncio.BufferedProtocol):
    """A websockets client connection that hands each whole message to a callback at once.

    websockets queues incoming messages for ``recv()``, so a reader task wakes up one event-loop
    turn after the bytes arrived. Here each complete message is given to the handler from
    ``data_received`` itself (fragments are joined first; websockets has already checked sizes and
    UTF-8), which takes that turn off every acknowledgement. Messages that arrive before a handler
    is set are kept, in order, for it. Control frames (ping, pong, close) go the usual way.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_buffer = memoryview(bytearray(READ_BUFFER_BYTES))
        self._message_handler: MessageHandler | None = None
        self._early_messages: list[bytes | str] = []
        self._fragments: list[bytes] = []
        self._fragmented_opcode: Opcode | None = None

    def hand_messages_to(self, handler: MessageHandler) -> None:
        self._message_handler = handler
        early, self._early_messages = self._early_messages, []
        for message in early:
            handler(message)

    # asyncio.BufferedProtocol: the transport reads into one buffer kept for the socket's life.
    # A plain Protocol gets a fresh 256 KiB bytes object per read, which glibc serves with
    # mmap + mremap + munmap: three system calls on every acknowledgement.
    def get_buffer(self, sizehint: int) -> memoryview:
        return self._read_buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(bytes(self._read_buffer[:nbytes]))

    def send_now(self, message: bytes) -> bool:
        """Write one binary message to the socket at once, without a task; False if not open.

        Used for local updates once the handshake is done: the frame leaves when the transaction
        commits, as the Node provider's does, and no writer task has to wake up for it.
        """
        return send_binary_now(self, message)

    def process_event(self, event: Any) -> None:
        if self.response is None or not isinstance(event, Frame):
            super().process_event(event)  # the handshake response
            return
        if event.opcode is Opcode.CONT:
            self._fragments.append(bytes(event.data))
        elif event.opcode in (Opcode.TEXT, Opcode.BINARY):
            self._fragments = [bytes(event.data)]
            self._fragmented_opcode = event.opcode
        else:
            super().process_event(event)  # control frames
            return
        if not event.fin:
            return
        data = b"".join(self._fragments)
        self._fragments = []
        message: bytes | str = (
            data.decode(errors="replace") if self._fragmented_opcode is Opcode.TEXT else data
        )
        if self._message_handler is None:
            self._early_messages.append(message)
        else:
            self._message_handler(message)


class SentUpdates:
    """The last update frames we sent: the server echoes each one back to us, byte for byte."""

    def __init__(self) -> None:
        self._order: deque[bytes] = deque()
        self._frames: set[bytes] = set()

    def remember(self, frame: bytes) -> None:
        if len(self._order) == ECHO_MEMORY:
            self._frames.discard(self._order.popleft())
        self._order.append(frame)
        self._frames.add(frame)

    def is_echo(self, frame: bytes) -> bool:
        """True for an update frame we sent ourselves (already in our document: nothing to apply).

        Checked on the raw frame, before any decoding: the server relays our update unchanged.
        """
        if frame not in self._frames:
            return False
        self._frames.discard(frame)
        return True


class ConnectionFailed(Exception):
    """The socket cannot be (re)opened; ``retryable`` says whether backoff may help."""

    def __init__(self, error: ElynavError, *, retryable: bool) -> None:
        super().__init__(error.message)
        self.error = error
        self.retryable = retryable


async def connect(
    url: str, *, room: str, origin: str, cookie: str, max_message_bytes: int, open_timeout: float
) -> DispatchingSocket:
    """Open the room's socket, or ``ConnectionFailed`` with the typed reason."""
    target = f"{url}?room={room}"
    try:
        websocket = await websockets.connect(
            target,
            additional_headers={"Origin": origin, "Cookie": cookie},
            max_size=max_message_bytes,
            open_timeout=open_timeout,
            create_connection=DispatchingSocket,
            user_agent_header="elynav-nb",
            logger=_wire_logger,
        )
    except InvalidURI:
        raise ConnectionFailed(InvalidInput("the collaboration URL is not valid"), retryable=False) from None
    except TimeoutError:
        error: ElynavError = SyncTimeout(
            f"the collaboration server did not accept the connection within {open_timeout:g} s"
        )
        raise ConnectionFailed(error, retryable=True) from None
    except InvalidHandshake as handshake_error:
        error = ServiceError(
            f"the collaboration server refused the WebSocket upgrade ({type(handshake_error).__name__})"
        )
        raise ConnectionFailed(error, retryable=True) from None
    except OSError as os_error:
        error = ServiceError(f"cannot reach the collaboration server ({type(os_error).__name__})")
        raise ConnectionFailed(error, retryable=True) from None
    assert isinstance(websocket, DispatchingSocket)
    return websocket


def close_error(websocket: ClientConnection, max_message_bytes: int) -> ElynavError | None:
    """Why the server closed ``websocket``, typed, or ``None`` for an ordinary close."""
    if isinstance(websocket.protocol.parser_exc, PayloadTooBig):  # websockets closed it with 1009
        return response_too_large("receive a collaboration message", max_message_bytes, "max_message_bytes")
    received = websocket.protocol.close_rcvd
    code = received.code if received is not None else None
    reason = received.reason if received is not None else ""
    if code == GATE_CLOSE_CODE:
        if reason == "No cookies":
            return AuthRequired(
                "the collaboration server needs a cookie (docs_sessionid) to open the document"
            )
        return NotAllowed(
            "the collaboration server refused this Origin; use the instance's own origin",
            details={"close_code": code, "close_reason": reason},
        )
    if code == UNDECODABLE_CLOSE_CODE:
        return ProtocolError("the collaboration server could not decode a frame we sent (close 4401)")
    return None
