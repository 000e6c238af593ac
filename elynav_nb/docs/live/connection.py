"""One live Hocuspocus connection to one Docs room: handshake, acks, echoes, presence and recovery.

Where it sits: the WebSocket I/O layer of ``elynav_nb.docs`` (design note §1, §5.5, §7). The session
hydrates a ``pycrdt.Doc`` from REST, then hands it to ``DocsConnection``; from then on every local
transaction on that document leaves as one ``Sync/Update`` frame, and every remote change is applied
to it. It parses nothing itself: frames go through the pure codec ``frames``, awareness and cursors
through ``presence``; the socket (connecting, whole messages, close codes, echoes) is ``_socket``.

How data flows::

    open(): connect(url?room=<id>, Origin, Cookie, max_size)        (``_socket.connect``)
            -> Auth("") -> SyncStep1(state vector)            (Auth first, always: §0 rule 1)
            <- Authenticated(scope) / PermissionDenied -> typed error, socket closed
            <- server SyncStep1 -> SyncStep2(our diff)           (counted by _start_handshake)
            <- server SyncStep2 / Update -> applied under REMOTE_ORIGIN (never sent back);
               the echo of our own update is recognised by its bytes and skipped
            <- SyncStatus 1/0 -> ack counter                    ready = scope + server step 2 (+ acks if rw)
    local transaction -> observer -> outbox -> Sync/Update frame, unsynced += 1
    await_flush(timeout): unsynced == 0, or DOC_READONLY on a ``00``, or SYNC_TIMEOUT
    every 15 s: an awareness update with the bot's name (Hocuspocus 4 closes silent clients)
    after a write: our cursor, after the last character written (``presence.cursor_for_update``)
    Close "Reset Connection" (socket left open) -> re-Auth + SyncStep1 on the same socket
    socket dropped -> reconnect with exponential backoff -> re-Auth, resync, new scope

Each whole server message (``<-`` above) is handled inside the socket's ``data_received``
callback, not by a reader task (one event-loop turn less per ack). Handling never raises into
websockets; a fatal message records its typed error and wakes the socket's task, which closes the
socket and fails the waiters. No edit is lost across a reset or a reconnect: the counter goes back
to 1 and the SyncStep2 answering the server's new SyncStep1 carries every change it lacks.

Failures are typed: ``NotAllowed``/``AuthRequired`` (gate close 4001, ``PermissionDenied``),
``ProtocolError`` (garbage frames, updates that are not Yjs), ``SyncTimeout`` (no handshake or ack
in time), ``ResponseTooLarge`` (a message over ``max_message_bytes``: websockets' ``max_size``; see
``_limits``), ``ServiceError`` (server unreachable, reconnect attempts exhausted). The cookie is a
secret: never part of a repr, a log line or an error message; the object cannot be pickled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Final

from pycrdt import Doc, Subscription, TransactionEvent
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from elynav_nb.docs._limits import DEFAULT_MAX_MESSAGE_BYTES
from elynav_nb.docs.live._socket import ConnectionFailed, DispatchingSocket, SentUpdates, close_error, connect
from elynav_nb.docs.live._wakeups import Wakeups
from elynav_nb.docs.live.frames import (
    SCOPE_READ_ONLY,
    Authenticated,
    AuthToken,
    AwarenessUpdate,
    Close,
    Message,
    PermissionDenied,
    Ping,
    Pong,
    SyncStatus,
    SyncStep1,
    SyncStep2,
    SyncUpdate,
    TokenRequest,
    decode_message,
    encode_message,
)
from elynav_nb.docs.live.presence import RoomPresence, cursor_for_update
from elynav_nb.errors import (
    DocReadonly,
    ElynavError,
    InvalidInput,
    NotAllowed,
    ProtocolError,
    ServiceError,
    SyncTimeout,
)

__all__ = ["REMOTE_ORIGIN", "DocsConnection"]

REMOTE_ORIGIN: Final = "elynav-remote"
"""Transaction origin of every change received from the server: the observer never sends those back."""

_EMPTY_UPDATE: Final = b"\x00\x00"
_CURSOR_DELAY: Final = 0.1
"""Seconds between a write and the awareness update that shows our cursor (one per burst)."""
_CURSOR_UPDATE_BYTES: Final = 256 * 1024
"""Updates larger than this (a whole imported document) do not move the cursor: not worth decoding."""

logger = logging.getLogger(__name__)

RemoteListener = Callable[[], None]


def _call_each(listeners: list[RemoteListener]) -> None:
    for listener in list(listeners):
        try:
            listener()
        except Exception:  # a view's bug must not cut the document off its server
            logger.exception("docs connection: a remote-change listener failed")


def _copy_error(error: ElynavError) -> ElynavError:
    """A fresh instance of a stored failure, so each caller gets its own traceback."""
    return type(error)(error.message, details=error.details)


class DocsConnection:
    """A Hocuspocus client for one document, bound to one ``pycrdt.Doc``.

    ``url`` is the WebSocket endpoint without the query (``wss://host/collaboration/ws/``); the room
    is ``document_name``. ``cookie`` is the whole ``Cookie`` header value (a secret). Use
    ``await connection.open()``, write to ``doc`` in transactions, ``await connection.await_flush()``,
    and ``await connection.close()``. The connection's tasks are plain asyncio tasks, so one
    connection may be opened in one notebook cell and used or closed in later ones.
    """

    def __init__(
        self,
        doc: Doc[Any],
        *,
        url: str,
        document_name: str,
        origin: str,
        cookie: str,
        user_name: str = "Elynav bot",
        user_color: str = "#0b7285",
        awareness_interval: float = 15.0,
        open_timeout: float = 10.0,
        max_reconnect_attempts: int = 8,
        backoff_initial: float = 0.1,
        backoff_max: float = 5.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        show_cursor: bool = True,
    ) -> None:
        if not url.startswith(("ws://", "wss://")):
            raise InvalidInput("the collaboration URL must start with ws:// or wss://")
        self.doc = doc
        self.url = url
        self.document_name = document_name
        self.origin = origin
        self._cookie = cookie
        self._user = {"name": user_name, "color": user_color}
        self.awareness_interval = awareness_interval
        self.open_timeout = open_timeout
        self.max_reconnect_attempts = max_reconnect_attempts
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.max_message_bytes = max_message_bytes

        self.scope: str | None = None
        self.reconnect_count = 0
        self.reset_count = 0
        self._unsynced = 0
        self._rejected = False
        self._server_step2_received = False
        self._failure: ElynavError | None = None
        self._ready_seen_on_socket = False
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakeups = Wakeups()
        self._ready = asyncio.Event()
        self._websocket: DispatchingSocket | None = None
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue()
        self._supervisor: asyncio.Task[None] | None = None
        self._presence = RoomPresence(doc, self._user)
        self._presence_listeners: list[RemoteListener] = []
        self.show_cursor = show_cursor
        self._cursor_update: bytes | None = None  # the last local update, for the cursor
        self._remote_listeners: list[RemoteListener] = []
        self._before_remote_listeners: list[RemoteListener] = []
        self._remote_change_seen = False
        self._subscription: Subscription | None = None
        self._sent = SentUpdates()
        self._socket_error: ElynavError | None = None
        self._applied_frame = encode_message(SyncStatus(document_name, True))
        self._socket_failed = asyncio.Event()

    # --- public surface ------------------------------------------------------------------------

    def __repr__(self) -> str:
        state = "failed" if self._failure else ("open" if self.is_open else "closed")
        return (
            f"<DocsConnection room={self.document_name!r} state={state} scope={self.scope!r} "
            f"unsynced={self._unsynced} reconnects={self.reconnect_count}>"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a live Docs connection cannot be pickled (it holds a socket and credentials)")

    @property
    def is_open(self) -> bool:
        return self._supervisor is not None and not self._supervisor.done() and self._failure is None

    @property
    def read_only(self) -> bool:
        return self.scope == SCOPE_READ_ONLY

    @property
    def unsynced(self) -> int:
        """Changes sent (or to send) and not yet acknowledged by a SyncStatus."""
        return self._unsynced

    @property
    def failure(self) -> ElynavError | None:
        return self._failure

    def add_remote_listener(self, listener: RemoteListener, *, before: bool = False) -> None:
        """Call ``listener()`` after each server message that changed the document (insertions,
        deletions, formatting); with ``before=True``, before each server update is applied (to
        take a snapshot of the document as it was)."""
        (self._before_remote_listeners if before else self._remote_listeners).append(listener)

    def remove_remote_listener(self, listener: RemoteListener) -> None:
        for listeners in (self._remote_listeners, self._before_remote_listeners):
            with contextlib.suppress(ValueError):
                listeners.remove(listener)

    # --- presence (Hocuspocus awareness) ----------------------------------------------------------

    def set_presence(self, field: str, value: Any) -> None:
        """Show ``field`` in this client's awareness state (``user`` is the name and colour; the
        Docs frontend reads ``cursor`` and ``commentsPing`` too), sent to the room at once."""
        self._presence.set(field, value)
        self._send_presence()

    def peers(self) -> dict[int, dict[str, Any]]:
        """The awareness states of the other clients in the room, by client id."""
        return self._presence.peers()

    def add_presence_listener(self, listener: RemoteListener) -> None:
        """Call ``listener()`` after each awareness update received from the room."""
        self._presence_listeners.append(listener)

    def _show_cursor(self) -> None:
        """Put our cursor after the last character we wrote, as a browser's cursor shows where a
        person types (coalesced: one awareness update per ``_CURSOR_DELAY`` at most)."""
        update, self._cursor_update = self._cursor_update, None
        if update is None or self._closing:
            return
        cursor = cursor_for_update(update, self.doc.client_id)
        if cursor is not None:
            self.set_presence("cursor", cursor)

    def remove_presence_listener(self, listener: RemoteListener) -> None:
        with contextlib.suppress(ValueError):
            self._presence_listeners.remove(listener)

    def _send_presence(self) -> None:
        update = self._presence.update()
        if self.scope is None or self._websocket is None:
            return  # the next handshake's awareness loop sends it
        self._outbox.put_nowait(encode_message(AwarenessUpdate(self.document_name, update)))

    async def open(self) -> None:
        """Connect and finish the handshake, within ``open_timeout`` seconds, or raise a typed error."""
        if self._supervisor is not None:
            raise InvalidInput("this connection was already opened")
        self._loop = asyncio.get_running_loop()
        self._subscription = self.doc.observe(self._on_transaction)
        self._supervisor = self._loop.create_task(self._supervise(), name="elynav-docs-connection")
        try:
            await self._wait_ready(self.open_timeout, "finish the handshake")
        except BaseException:
            await self.close()
            raise

    async def await_flush(self, timeout: float = 5.0) -> None:
        """Return when the server acknowledged every change; ``DOC_READONLY`` / ``SYNC_TIMEOUT`` otherwise."""
        loop = self._loop or asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if not self._outbox.empty():
            await self._send_queued_now()
        while True:
            if self._failure is not None:
                raise _copy_error(self._failure)
            if self._rejected:
                raise DocReadonly("the collaboration server did not apply the change (read-only access)")
            if self._ready.is_set() and self.read_only and self._unsynced > 0:
                raise DocReadonly(
                    "this document is read-only for these credentials: the change was not applied"
                )
            if self._ready.is_set() and self._unsynced == 0:
                return
            if self._supervisor is None or self._supervisor.done():
                raise ServiceError("the connection is closed")
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise SyncTimeout(
                    f"{self._unsynced} change(s) not acknowledged by the collaboration server within {timeout:g} s",
                    details={"unsynced": self._unsynced},
                )
            await self._wakeups.wait(loop, deadline)

    async def wait_ready(self, timeout: float = 10.0) -> None:
        """Wait for the current (re)handshake to finish."""
        await self._wait_ready(timeout, "finish the handshake")

    async def close(self) -> None:
        """Close the socket and stop the tasks. Flush first if the last edits matter."""
        self._closing = True
        if self._subscription is not None:
            with contextlib.suppress(ValueError, RuntimeError):
                self.doc.unobserve(self._subscription)
            self._subscription = None
        websocket = self._websocket
        if websocket is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(websocket.close(), 2.0)
        supervisor = self._supervisor
        if supervisor is not None and not supervisor.done():
            supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await supervisor
        self._notify()

    # --- state helpers -------------------------------------------------------------------------

    async def _send_queued_now(self) -> None:
        """Write queued updates from the caller's task instead of waking the writer task.

        One event-loop turn less per acknowledged write. Only on a socket whose handshake is done,
        so Auth and SyncStep1 always go through the writer, in order. ``websocket.send`` writes
        before it first yields, so frames leave in queue order whichever task sends them; a frame
        lost with a closing socket is carried by the next handshake's SyncStep2, as with the writer.
        """
        while not self._outbox.empty():
            websocket = self._websocket
            if websocket is None or not self._ready.is_set():
                return
            frame = self._outbox.get_nowait()
            try:
                await websocket.send(frame)
            except ConnectionClosed:
                return

    def _notify(self) -> None:
        """Wake every task waiting for the connection's state to change."""
        self._wakeups.notify()

    def _fail(self, error: ElynavError) -> None:
        if self._failure is None:
            self._failure = error
            logger.debug("docs connection to room %s failed: %s", self.document_name, error.code)
        self._notify()

    async def _wait_ready(self, timeout: float, step: str) -> None:
        loop = self._loop or asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self._ready.is_set():
            if self._failure is not None:
                raise _copy_error(self._failure)
            if self._supervisor is None or self._supervisor.done():
                raise ServiceError("the connection is closed")
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise SyncTimeout(f"the collaboration server did not {step} within {timeout:g} s")
            await self._wakeups.wait(loop, deadline)
        if self._failure is not None:
            raise _copy_error(self._failure)

    def _check_ready(self) -> None:
        if self._ready.is_set() or self.scope is None or not self._server_step2_received:
            return
        if self.read_only or self._unsynced == 0:
            self._ready.set()
            self._notify()

    # --- local changes -------------------------------------------------------------------------

    def _on_transaction(self, event: TransactionEvent) -> None:
        transaction = event.transaction  # type: ignore[attr-defined]  # present at runtime, missing in the stubs
        if transaction.origin() == hash(REMOTE_ORIGIN):
            # came from the server: never sent back. It changed the document if its own update is
            # not empty (deletions change no state vector, so that is the only reliable sign).
            self._remote_change_seen = self._remote_change_seen or bytes(event.update) != _EMPTY_UPDATE
            return
        update = bytes(event.update)
        if update == _EMPTY_UPDATE:
            return
        if self.show_cursor and len(update) <= _CURSOR_UPDATE_BYTES:
            if self._cursor_update is None and self._loop is not None:
                self._loop.call_later(_CURSOR_DELAY, self._show_cursor)
            self._cursor_update = update
        self._unsynced += 1
        frame = encode_message(SyncUpdate(self.document_name, update))
        self._sent.remember(frame)
        websocket = self._websocket
        sent = (
            websocket is not None
            and self._ready.is_set()
            and self._outbox.empty()  # nothing queued before it: frames keep their order
            and websocket.send_now(frame)
        )
        if not sent:
            self._outbox.put_nowait(frame)
        self._notify()

    def _start_handshake(self) -> None:
        """Auth first, then SyncStep1; the counter goes back to 1 for the SyncStep2 we will send."""
        self.scope = None
        self._server_step2_received = False
        self._ready.clear()
        self._unsynced = 1
        self._rejected = False
        while not self._outbox.empty():  # the SyncStep2 answering the server's SyncStep1 covers these
            self._outbox.get_nowait()
        self._outbox.put_nowait(encode_message(AuthToken(self.document_name, "")))
        self._outbox.put_nowait(encode_message(SyncStep1(self.document_name, self.doc.get_state())))
        self._notify()

    # --- the socket's life ---------------------------------------------------------------------

    async def _supervise(self) -> None:
        try:
            await self._supervise_socket()
        except asyncio.CancelledError:
            raise
        except Exception as unexpected:  # a bug must not leave callers waiting: fail them all, typed
            logger.exception("docs connection supervisor crashed")
            self._fail(
                ServiceError(f"the Docs connection stopped unexpectedly ({type(unexpected).__name__})")
            )

    async def _supervise_socket(self) -> None:
        attempts = 0
        was_ready = False
        while not self._closing:
            try:
                websocket = await connect(
                    self.url,
                    room=self.document_name,
                    origin=self.origin,
                    cookie=self._cookie,
                    max_message_bytes=self.max_message_bytes,
                    open_timeout=self.open_timeout,
                )
            except ConnectionFailed as failed:
                if not failed.retryable or not was_ready:
                    self._fail(failed.error)
                    return
                attempts += 1
                if not await self._back_off(attempts):
                    return
                continue
            if was_ready:
                self.reconnect_count += 1
            self._websocket = websocket
            try:
                await self._serve(websocket)
            except ElynavError as error:
                self._fail(error)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(websocket.close(), 2.0)
                return
            finally:
                self._websocket = None
                self._ready.clear()
                self._notify()
            if self._ready_seen_on_socket:
                was_ready = True
                attempts = 0
            elif not was_ready:
                self._fail(
                    ServiceError("the collaboration server closed the connection during the handshake")
                )
                return
            else:
                attempts += 1
                if not await self._back_off(attempts):
                    return

    async def _back_off(self, attempts: int) -> bool:
        """Wait before reconnect attempt number ``attempts`` (exponential); False, and the connection
        failed, once there were too many."""
        if attempts > self.max_reconnect_attempts:
            self._fail(ServiceError(f"could not reconnect after {self.max_reconnect_attempts} attempts"))
            return False
        await asyncio.sleep(min(self.backoff_max, self.backoff_initial * 2 ** (attempts - 1)))
        return True

    async def _serve(self, websocket: DispatchingSocket) -> None:
        """Run one socket until it closes; typed errors for fatal conditions.

        Incoming messages are handled synchronously as they arrive (``_receive``); a fatal one
        records its error and wakes this task, which raises it.
        """
        self._ready_seen_on_socket = False
        self._socket_error = None
        self._socket_failed = asyncio.Event()
        self._start_handshake()
        loop = asyncio.get_running_loop()
        tasks = [
            loop.create_task(self._write_loop(websocket)),
            loop.create_task(self._awareness_loop(websocket)),
        ]
        websocket.hand_messages_to(self._receive)
        ended = [loop.create_task(websocket.wait_closed()), loop.create_task(self._socket_failed.wait())]
        try:
            await asyncio.wait(ended, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks + ended:
                task.cancel()
            for task in tasks + ended:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._socket_error is not None:
            raise self._socket_error
        closed_by = close_error(websocket, self.max_message_bytes)
        if closed_by is not None:
            raise closed_by

    def _receive(self, message: bytes | str) -> None:
        """Handle one whole message from the server; a fatal one ends the socket with its error."""
        if self._socket_error is not None:
            return  # the socket is being closed for an earlier message
        try:
            if isinstance(message, str):
                raise ProtocolError(
                    "the collaboration server sent a text frame; Hocuspocus frames are binary"
                )
            if message == self._applied_frame:  # the commonest message, known by its bytes
                self._acknowledge(applied=True)
            elif not self._sent.is_echo(message):  # our own update, broadcast back to us (§0 rule 8)
                self._handle(decode_message(message))
        except ElynavError as error:
            self._socket_error = error
        except Exception as unexpected:  # a bug (or a listener's) must not leave callers waiting
            logger.exception("docs connection: handling a server message failed")
            self._socket_error = ServiceError(
                f"the Docs connection stopped unexpectedly ({type(unexpected).__name__})"
            )
        if self._socket_error is not None:
            self._socket_failed.set()
        elif self._ready.is_set():
            self._ready_seen_on_socket = True

    async def _write_loop(self, websocket: ClientConnection) -> None:
        while True:
            frame = await self._outbox.get()
            await websocket.send(frame)

    async def _awareness_loop(self, websocket: ClientConnection) -> None:
        while True:
            if self.scope is not None:
                update = self._presence.update()
                await websocket.send(encode_message(AwarenessUpdate(self.document_name, update)))
                await asyncio.sleep(self.awareness_interval)
            else:
                await asyncio.sleep(0.05)

    def _handle(self, message: Message) -> None:
        if isinstance(message, Ping):
            self._outbox.put_nowait(encode_message(Pong()))
            return
        if isinstance(message, Pong) or getattr(message, "document_name", None) != self.document_name:
            return
        if isinstance(message, Authenticated):
            self.scope = message.scope
            self._check_ready()
        elif isinstance(message, PermissionDenied):
            raise NotAllowed(
                "the collaboration server refused this document for these credentials (it also "
                "refuses when Docs throttled its check of them: 80 requests a minute per user)",
                details={"reason": message.reason},
            )
        elif isinstance(message, TokenRequest):
            self._outbox.put_nowait(encode_message(AuthToken(self.document_name, "")))
        elif isinstance(message, SyncStep1):
            reply = self.doc.get_update(message.state_vector)
            self._outbox.put_nowait(encode_message(SyncStep2(self.document_name, reply)))
        elif isinstance(message, (SyncStep2, SyncUpdate)):
            self._apply_remote(message.update)
            if isinstance(message, SyncStep2):
                self._server_step2_received = True
                self._check_ready()
        elif isinstance(message, SyncStatus):
            self._acknowledge(applied=message.applied)
        elif isinstance(message, AwarenessUpdate):
            self._apply_presence(message.update)
        elif isinstance(message, Close):
            self.reset_count += 1
            logger.debug("docs room %s reset by the server: re-authenticating", self.document_name)
            self._start_handshake()

    def _apply_presence(self, update: bytes) -> None:
        if not self._presence.apply(update):  # a peer's malformed presence must not end the connection
            logger.debug("docs room %s: an awareness update could not be read", self.document_name)
            return
        _call_each(self._presence_listeners)

    def _acknowledge(self, *, applied: bool) -> None:
        if self.scope is None:
            # Between a reset and the new Authenticated, a SyncStatus answers a message of the old
            # handshake (the server handles a socket's messages in order): the SyncStep2 of the new
            # one carries that change again, and only its own ack may end the new handshake.
            return
        if applied:
            self._unsynced = max(0, self._unsynced - 1)
        else:
            self._rejected = True
        self._check_ready()
        self._notify()

    def _apply_remote(self, update: bytes) -> None:
        if update == _EMPTY_UPDATE:
            return
        _call_each(self._before_remote_listeners)
        self._remote_change_seen = False
        try:
            with self.doc.transaction(origin=REMOTE_ORIGIN):
                self.doc.apply_update(update)
        except Exception:  # pycrdt says ValueError; whatever it says, the server broke Yjs
            raise ProtocolError("the collaboration server sent an update that is not valid Yjs") from None
        if self._remote_change_seen:
            _call_each(self._remote_listeners)
        self._notify()
