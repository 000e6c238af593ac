"""One live connection to a Jupyter collaboration room: handshake, acknowledged writes, awareness, resets.

Where it sits: the WebSocket I/O layer of ``elynav_nb.notebook``. ``live.py`` hands it a ``pycrdt.Doc``
(the notebook's) and a way to get the room's URL (asked again before every reconnection: the REST
session and the file's existence are checked each time). All bytes go through ``wire.py``.

How data flows::

    open(): url = await room_url() -> websockets.connect -> our SyncStep1 with an EMPTY state vector
            <- its SyncStep2: the room's whole state; its state vector (``get_state``) or the server's
               SyncStep1, whichever comes first, says whether the room was reset (``wire.lost_clients``):
               then on_reset() gives a fresh Doc, the state goes there and on_reset_synced() replays
            <- server SyncStep1 -> our SyncStep2 (all it lacks), a probe, our awareness state
               (jupyter-collaboration sends it first; jupyter-server-documents after its SyncStep2,
               and again for each of our probes: a handshake each time, answered, never re-probed)
            <- SyncStep2 -> applied under REMOTE (never sent back); it answers the oldest probe: every
               update sent before that probe is acknowledged
            <- Update -> applied under REMOTE
            <- Awareness -> awareness.apply_awareness_update (who is there)
    local transaction -> its update leaves at once (a binary frame written without a task);
    acknowledge(version): a probe after the updates, then wait until a SyncStep2 answers it
    a write that moves our cursor -> our awareness state once the writes pause (one per burst)
    every 15 s: our awareness state again (peers drop a state after 30 s without renewal)
    socket dropped, 1003 unknown_session, server restarted -> reconnect (backoff, ``reconnect_timeout``)
    close(): our awareness removal, then the socket closed

After a reconnection without a reset, the room may still have undone some of our writes (a server
restarted with its update store loads it, finds the file on disk older, and overwrites the room from
the file): ``on_resync(apply)`` is called around the first SyncStep2 of the new socket, so the owner
can see which of its writes that answer undid, and write them again.

Versions: every local transaction gets the next ``version``; a probe covers the version current when
it left. ``acked_version`` is the highest covered by an answered probe. After a reset the fresh Doc
starts empty and ``on_reset`` replays what must be replayed; a probe sent before that replay covers
the old versions only, and the replayed writes get new versions.

Failures are typed: ``AUTH_REQUIRED`` (403 at the handshake), ``NOTEBOOK_NOT_FOUND`` (from
``room_url``: renamed, deleted), ``PROTOCOL_ERROR``, ``SYNC_TIMEOUT`` (no handshake or ack in time),
``SERVICE_ERROR`` (the server cannot be reached within ``reconnect_timeout``; ``ROOM_RESET`` when writes
were still waiting for their acknowledgement then). The URL carries the
token: it is never logged nor put in an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Final

import websockets
from pycrdt import Awareness, Doc, Subscription, TransactionEvent, get_state
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
from websockets.protocol import State

from elynav_nb._websockets import quick_acknowledger, send_binary_now
from elynav_nb.errors import AuthRequired, ElynavError, ProtocolError, RoomReset, ServiceError, SyncTimeout
from elynav_nb.notebook import wire

__all__ = ["REMOTE", "RoomConnection"]

logger = logging.getLogger("elynav_nb.notebook.connection")

REMOTE: Final = "elynav-remote"
AWARENESS_RENEWAL_SECONDS: Final = 15.0
AWARENESS_SETTLE_SECONDS: Final = 0.25  # a cursor moved by writes is sent once they pause this long
AWARENESS_SETTLE_BOUND_SECONDS: Final = 1.0  # ... or this long after the first of them, at the latest
_MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
_EMPTY_UPDATE: Final = b"\x00\x00"
_EMPTY_STATE_VECTOR: Final = b"\x00"
_ACK: Final = "ack"  # a probe whose answer acknowledges the versions it covers
_CONNECT: Final = "connect"  # the first probe of a socket, empty state vector: its answer is the whole room
_STALE: Final = "stale"  # sent before a reset: its answer is applied, it acknowledges nothing

RoomUrl = Callable[[], Awaitable[str]]
ResetHandler = Callable[[], Doc[Any]]


class RoomConnection:
    """A peer of one room (see the module docstring). ``doc`` may be replaced after a reset."""

    def __init__(
        self,
        doc: Doc[Any],
        room_url: RoomUrl,
        *,
        awareness_state: Callable[[], dict[str, Any] | None] = lambda: None,
        on_reset: ResetHandler | None = None,
        on_reset_synced: Callable[[], None] | None = None,
        on_acked: Callable[[int], None] | None = None,
        on_resync: Callable[[Callable[[], None]], object] | None = None,
        on_remote: Callable[[dict[int, int]], None] | None = None,
        on_awareness: Callable[[], None] | None = None,
        open_timeout: float = 10.0,
        reconnect_timeout: float = 30.0,
        name: str = "room",
    ) -> None:
        self.doc = doc
        self.awareness = Awareness(doc)
        self._room_url = room_url
        self._awareness_state = awareness_state
        self._on_reset = on_reset
        self._on_reset_synced = on_reset_synced
        self._on_acked = on_acked
        self._on_resync = on_resync
        self._on_remote = on_remote
        self._on_awareness = on_awareness
        self.open_timeout = open_timeout
        self.reconnect_timeout = reconnect_timeout
        self.name = name
        self.version = 0
        self.acked_version = 0
        self.resets = 0
        self.reconnections = 0
        self._probes: deque[tuple[int, str]] = deque()
        self._remote_changed = False  # whether the update being applied changed the document
        self._socket: ClientConnection | None = None
        self._subscription: Subscription | None = None
        self._synced = asyncio.Event()
        self._changed = asyncio.Event()
        self._failure: ElynavError | None = None
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._awareness_due: asyncio.TimerHandle | None = None
        self._awareness_first = 0.0
        self._seen_from_server: dict[int, int] = {}
        self._own_acked_clock = 0
        self._reset_pending = False
        self._resync_pending = False
        self._checked_on_socket = False
        self._step1_on_socket = 0
        self._sockets = 0
        self._room_loaded = False
        self._watch_doc(doc)

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"RoomConnection({self.name!r}, {state}, version={self.version}, acked={self.acked_version})"

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a RoomConnection holds a live socket and cannot be pickled")

    @property
    def is_open(self) -> bool:
        return self._task is not None and not self._task.done() and self._failure is None

    @property
    def failure(self) -> ElynavError | None:
        return self._failure

    # --- lifecycle ---------------------------------------------------------------------------

    async def open(self) -> None:
        """Connect and finish the handshake (our state sent and acknowledged, the room's applied)."""
        self._task = asyncio.get_running_loop().create_task(self._supervise(), name=f"elynav-{self.name}")
        try:
            await self._wait(
                lambda: self._synced.is_set() and self._room_loaded and self.acked_version >= self.version,
                self.open_timeout,
                "join the room",
            )
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        """Our awareness removal, then the socket closed once the room has handled all we sent."""
        socket = self._socket
        if self._awareness_due is not None:
            self._awareness_due.cancel()
            self._awareness_due = None
        if socket is not None and socket.protocol.state is State.OPEN and self._synced.is_set():
            with contextlib.suppress(Exception):
                self.awareness.set_local_state(None)
                self._send(
                    wire.awareness_message(self.awareness.encode_awareness_update([self.doc.client_id]))
                )
                await self._settle(2.0)
        self._closing = True
        if socket is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(socket.close(), 2.0)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                self.doc.unobserve(self._subscription)
            self._subscription = None
        self._wake()

    async def _settle(self, timeout: float) -> None:
        """A last probe answered (and the handshake it starts on jupyter-server-documents finished):
        nothing of ours is left in the room's queue. jupyter-server-documents 0.3.3 kills a room whose
        client closes with a message still queued (``UnboundLocalError`` in its message task)."""
        step1_before = self._step1_on_socket
        self._send_probe()
        per_probe_handshake = step1_before > 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answered = not any(kind in (_ACK, _CONNECT) for _, kind in self._probes)
            if answered and (not per_probe_handshake or self._step1_on_socket > step1_before):
                return
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), max(deadline - time.monotonic(), 0.01))

    async def acknowledge(self, version: Callable[[], int] | int, timeout: float) -> None:
        """Wait until every local change up to ``version`` is held by the server (``SYNC_TIMEOUT``).

        ``version`` may be a callable read at each wake-up (a write replayed after a reset gets a
        newer version).
        """
        current = version if callable(version) else (lambda: version)
        if self._socket is not None and self._synced.is_set() and self._probes_cover() < current():
            self._send_probe()
        await self._wait(lambda: self.acked_version >= current(), timeout, "have this write acknowledged")

    async def renew_awareness(self) -> None:
        """Send our awareness state now (after a change of name, cursor...)."""
        self._send_awareness()

    def renew_awareness_after_writes(self) -> None:
        """Send our awareness state once the writes pause (``AWARENESS_SETTLE_SECONDS``; at the latest
        ``AWARENESS_SETTLE_BOUND_SECONDS`` after the first): one cursor move for a burst of writes.

        Not at once: the server (tornado, Nagle on) relays each of our messages to every peer, and a
        second small message right behind a write's update makes the next update wait for that peer's
        delayed TCP ACK (measured with a pycrdt peer: every other write seen ~40 ms late instead of ~2 ms).
        """
        loop = asyncio.get_running_loop()
        if self._awareness_due is None:
            self._awareness_first = loop.time()
        else:
            self._awareness_due.cancel()
        at = min(
            loop.time() + AWARENESS_SETTLE_SECONDS, self._awareness_first + AWARENESS_SETTLE_BOUND_SECONDS
        )
        self._awareness_due = loop.call_at(at, self._send_due_awareness)

    def _send_due_awareness(self) -> None:
        self._awareness_due = None
        if self._synced.is_set():
            self._send_awareness()

    # --- waiting ---------------------------------------------------------------------------------

    def _wake(self) -> None:
        self._changed.set()

    async def _wait(self, done: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if self._failure is not None:
                raise type(self._failure)(self._failure.message, details=self._failure.details)
            if self._closing:
                raise ServiceError("the live notebook is closed")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SyncTimeout(
                    f"the collaboration room did not answer in {timeout:g} s (trying to {what})"
                )
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    # --- the socket's life ------------------------------------------------------------------------

    async def _supervise(self) -> None:
        down_since: float | None = None
        attempts = 0
        while not self._closing:
            try:
                socket = await self._connect()
            except (AuthRequired, ProtocolError) as error:
                self._fail(error)
                return
            except ElynavError as error:
                if error.code in ("NOTEBOOK_NOT_FOUND", "INVALID_INPUT"):
                    self._fail(error)
                    return
                socket = None
            if socket is not None:
                attempts = 0
                down_since = None
                try:
                    await self._serve(socket)
                except ElynavError as error:
                    self._fail(error)
                    return
                if self._closing:
                    return
                self.reconnections += 1
            down_since = down_since or time.monotonic()
            if time.monotonic() - down_since > self.reconnect_timeout:
                unacknowledged = self.version - self.acked_version
                if unacknowledged > 0:
                    self._fail(
                        RoomReset(
                            f"the collaboration room stayed unreachable for {self.reconnect_timeout:g} s:"
                            f" {unacknowledged} write(s) not acknowledged (open the notebook again; they"
                            " were not applied twice)",
                            details={"unacknowledged_writes": unacknowledged},
                        )
                    )
                else:
                    self._fail(
                        ServiceError(
                            f"the collaboration room stayed unreachable for {self.reconnect_timeout:g} s"
                        )
                    )
                return
            attempts += 1
            await asyncio.sleep(min(0.1 * 2**attempts, 2.0))

    def _fail(self, error: ElynavError) -> None:
        if self._failure is None:
            self._failure = error
        self._wake()

    async def _connect(self) -> ClientConnection | None:
        url = await self._room_url()
        try:
            return await asyncio.wait_for(
                websockets.connect(
                    url, max_size=_MAX_MESSAGE_BYTES, open_timeout=self.open_timeout, ping_interval=None
                ),
                self.open_timeout,
            )
        except InvalidStatus as error:
            if error.response.status_code in (401, 403):
                raise AuthRequired("the collaboration room refused the token (HTTP 403)") from None
            return None
        except (OSError, InvalidHandshake, TimeoutError, InvalidURI):
            return None

    async def _serve(self, socket: ClientConnection) -> None:
        self._socket = socket
        self._synced.clear()
        self._probes.clear()
        self._checked_on_socket = False
        self._step1_on_socket = 0
        self._resync_pending = self._sockets > 0
        self._sockets += 1
        renewal: asyncio.Task[None] | None = None
        try:
            # A SyncStep1 with an empty state vector: its answer is the room's whole state, from which
            # its state vector is read (a reset?) before anything is applied. jupyter-server-documents
            # waits for it to start the handshake; jupyter-collaboration sends its own SyncStep1 first.
            if self._send(wire.probe_message(_EMPTY_STATE_VECTOR)):
                self._probes.append((self.acked_version, _CONNECT))
            renewal = asyncio.get_running_loop().create_task(self._renew_awareness_loop())
            quick_ack = quick_acknowledger(socket)
            async for message in socket:
                quick_ack()
                if isinstance(message, str):
                    continue  # jupyter-collaboration's raw JSON replies (save): not ours
                self._handle(wire.decode_message(message))
        except ConnectionClosed:
            pass
        finally:
            self._socket = None
            self._synced.clear()
            if renewal is not None:
                renewal.cancel()
            self._wake()

    async def _renew_awareness_loop(self) -> None:
        while True:
            await asyncio.sleep(AWARENESS_RENEWAL_SECONDS)
            if self._synced.is_set():
                self._send_awareness()

    # --- messages ---------------------------------------------------------------------------------

    def _handle(self, message: wire.RoomMessage) -> None:
        if message.kind == "step1":
            self._answer_step1(message.payload)
        elif message.kind == "update":
            self._apply_remote(message.payload)
        elif message.kind == "step2":
            self._answer_of_probe(message.payload)
        elif message.kind == "awareness":
            with contextlib.suppress(Exception):  # a peer's bad awareness must not end our session
                self.awareness.apply_awareness_update(message.payload, REMOTE)
            if self._on_awareness is not None:
                self._on_awareness()
        elif message.kind == "query_awareness":
            self._send_awareness()

    def _answer_of_probe(self, update: bytes) -> None:
        covered, kind = self._probes.popleft() if self._probes else (0, _STALE)
        if kind != _CONNECT:
            self._apply_remote(update)
            if kind == _ACK and not self._reset_pending:
                self.acked_version = max(self.acked_version, covered)
                self._own_acked_clock = self._own_clock()
                if self._on_acked is not None:
                    self._on_acked(self.acked_version)
            self._wake()
            return
        # the room's whole state
        self._room_loaded = True
        if not self._checked_on_socket:
            self._check_reset(wire.decode_state_vector(get_state(update)))
        if self._reset_pending:
            self._apply_remote(update)
            self._reset_pending = False
            if self._on_reset_synced is not None:
                self._on_reset_synced()  # our writes again, into the fresh document
        elif self._resync_pending and self._on_resync is not None:
            self._on_resync(lambda: self._apply_remote(update))
        else:
            self._apply_remote(update)
        self._resync_pending = False
        if self._synced.is_set():
            self._send_probe()
        self._wake()

    def _check_reset(self, server_now: dict[int, int]) -> None:
        """Before anything of this socket is applied: does the room lack what we had seen of it?"""
        self._checked_on_socket = True
        lost = wire.lost_clients(self._seen_from_server, server_now)
        if server_now.get(self.doc.client_id, 0) < self._own_acked_clock:
            lost.append(self.doc.client_id)
        if not lost or self._on_reset is None:
            return
        self.resets += 1
        logger.info("room %s was reset (clients %s lost): starting from the room's state", self.name, lost)
        self._reset_pending = True
        self._resync_pending = False
        self._replace_doc(self._on_reset())
        # answers already on their way were computed for the old document: applied, never acks
        self._probes = deque((covered, _STALE if kind == _ACK else kind) for covered, kind in self._probes)

    def _answer_step1(self, state_vector: bytes) -> None:
        self._step1_on_socket += 1
        if not self._checked_on_socket:
            self._check_reset(wire.decode_state_vector(state_vector))
        self._send(wire.step2_message(self.doc.get_update(state_vector)))
        if self._step1_on_socket > 1:
            return  # jupyter-server-documents answers each probe with a handshake of its own
        self._synced.set()
        self._send_probe()
        self._send_awareness()
        self._wake()

    def _replace_doc(self, doc: Doc[Any]) -> None:
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                self.doc.unobserve(self._subscription)
        self.doc = doc
        self.awareness = Awareness(doc)
        self._seen_from_server = {}
        self._own_acked_clock = 0
        self._watch_doc(doc)

    def _apply_remote(self, update: bytes) -> None:
        before = wire.decode_state_vector(self.doc.get_state())
        self._remote_changed = False
        try:
            with self.doc.transaction(origin=REMOTE):
                self.doc.apply_update(update)
        except Exception:
            raise ProtocolError("the collaboration room sent an update that is not Yjs") from None
        after = wire.decode_state_vector(self.doc.get_state())
        own = self.doc.client_id
        self._seen_from_server = {client: clock for client, clock in after.items() if client != own}
        changed = {
            client: clock
            for client, clock in after.items()
            if before.get(client, 0) != clock and client != own
        }
        # a deletion moves no state vector; the room's echo of our own write changes nothing (pycrdt
        # calls no document observer then), and is not reported
        if self._on_remote is not None and (changed or self._remote_changed):
            self._on_remote(changed)

    def _own_clock(self) -> int:
        return wire.decode_state_vector(self.doc.get_state()).get(self.doc.client_id, 0)

    # --- sending ----------------------------------------------------------------------------------

    def _watch_doc(self, doc: Doc[Any]) -> None:
        self._subscription = doc.observe(self._on_transaction)

    def _on_transaction(self, event: TransactionEvent) -> None:
        transaction = event.transaction  # type: ignore[attr-defined]  # present at runtime, not in the stubs
        if transaction.origin() == hash(REMOTE):
            self._remote_changed = True
            return  # came from the server: never sent back
        update = bytes(event.update)
        if update == _EMPTY_UPDATE:
            return
        self.version += 1
        if self._synced.is_set():
            self._send(wire.update_message(update))
        # else: the SyncStep2 that answers the server's SyncStep1 carries it

    def _probes_cover(self) -> int:
        return max((covered for covered, kind in self._probes if kind == _ACK), default=self.acked_version)

    def _send_probe(self) -> None:
        if self._send(wire.probe_message(self.doc.get_state())):
            self._probes.append((self.version, _ACK))

    def _send_awareness(self) -> None:
        state = self._awareness_state()
        if state is None:
            return
        self.awareness.set_local_state(state)
        self._send(wire.awareness_message(self.awareness.encode_awareness_update([self.doc.client_id])))

    def _send(self, message: bytes) -> bool:
        socket = self._socket
        return socket is not None and send_binary_now(socket, message)
