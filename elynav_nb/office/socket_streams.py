"""The office socket's long connections: a streamed ask, and the board watched by another process.

Where it sits: ``office/socket_server.py`` hands a connection here once its request is decoded and
its caller identified: ``stream_ask`` for ``{"op": "ask", "stream": true}`` (``elynav acp``, the chat
personas, an attached kernel), ``watch_board`` for ``{"op": "watch"}`` (an attached kernel's board).
The lines are encoded by ``office/stream_wire.py``; nothing is parsed here. The office is a
``served_office.ServedOffice`` (this module does not import ``office.py``).

How a streamed ask flows::

    accepted (socket_server) -> office listener: while queued, its place at each change ("position")
      -> "started" -> the turn's events, read as one more reader of the Turn ("event" lines)
      -> the reply (cost, usage) -> the connection closes
    meanwhile the caller's lines: a permission answer -> that prompt of its ask's turn, allowed or
      denied; "cancel" -> office.cancel(ask, by=caller); a hang-up -> the same cancel (nobody waits)

Writes go through one queue and one writer task, in order; a caller that stops reading is cut off
after the socket's drain bound, and its ask cancelled as for a hang-up.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from elynav_nb.agents.events import TurnEnded
from elynav_nb.agents.results import data_as_json
from elynav_nb.errors import ElynavError, ProtocolError
from elynav_nb.office.peers import Caller
from elynav_nb.office.stream_wire import (
    CancelThisAsk,
    decode_followup,
    encode_board,
    encode_event,
    encode_event_line,
    encode_position,
    encode_started,
)
from elynav_nb.office.wire import MAX_REQUEST_BYTES, encode_error, encode_reply

if TYPE_CHECKING:
    from elynav_nb.office.asks import Ask
    from elynav_nb.office.served_office import ServedOffice

__all__ = ["WATCH_INTERVAL", "board_lines", "reply_line", "stream_ask", "watch_board"]

_DRAIN_BOUND = 10.0
WATCH_INTERVAL = (
    0.1  # seconds between two board snapshots to a watcher (the board redraws at most every 0.25 s)
)


def reply_line(ask: Ask) -> bytes:
    """The ``reply`` line of an ended ask (with its cost and the usage its CLI reported)."""
    reply = ask.reply
    assert reply is not None
    usage: dict[str, Any] = {}
    for event in reversed(reply.events):
        if isinstance(event, TurnEnded):
            usage = dict(event.usage)
            break
    return encode_reply(
        reply.ask_id,
        reply.outcome,
        reply.text,
        error_code=reply.error_code,
        error=reply.error,
        cancelled_by=reply.cancelled_by,
        data=data_as_json(reply.data),
        has_data=reply.output_schema is not None and reply.ok,
        cost_usd=reply.cost_usd,
        usage=usage,
    )


class _Lines:
    """One writer task for a connection: lines written in order; ``broken`` once the caller stops reading."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.broken = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self._write())

    def send(self, data: bytes) -> None:
        if not self.broken.is_set():
            self.queue.put_nowait(data)

    async def _write(self) -> None:
        try:
            finished = False
            while not finished:
                data = await self.queue.get()
                batch: list[bytes] = []
                while data is not None:  # what came meanwhile goes out in the same write
                    batch.append(data)
                    if self.queue.empty():
                        break
                    data = self.queue.get_nowait()
                finished = data is None
                if batch:
                    self.writer.write(b"".join(batch))
                    await asyncio.wait_for(self.writer.drain(), timeout=_DRAIN_BOUND)
        except (ConnectionError, RuntimeError, TimeoutError):
            self.broken.set()

    async def close(self) -> None:
        self.queue.put_nowait(None)
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self.task), timeout=_DRAIN_BOUND + 1)


async def stream_ask(
    office: ServedOffice, ask: Ask, caller: Caller, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Stream ``ask`` to its caller until its reply (see the module docstring)."""
    lines = _Lines(writer)
    forwarding: list[asyncio.Task[None]] = []
    last_position = -1

    def say_position() -> None:
        nonlocal last_position
        if ask.status != "queued":
            return
        position = office.queue_position(ask)
        if position != last_position:
            last_position = position
            lines.send(encode_position(ask.id, position, office.employee(ask.agent).caller))

    def on_event(event: str, changed: Ask | None) -> None:
        if changed is ask and event == "started":
            lines.send(encode_started(ask.id, office.employee(ask.agent).session_id))
        elif changed is ask and event == "turn" and ask.turn is not None and not forwarding:
            forwarding.append(asyncio.get_running_loop().create_task(_forward(ask, lines)))
        elif changed is not None and changed.agent == ask.agent and event in ("started", "ended"):
            say_position()  # an ask ahead left the queue (a later one queued changes nothing ahead)

    office.add_listener(on_event)
    say_position()
    if ask.status == "running":  # an idle employee took it at once, before this connection listened
        on_event("started", ask)
    if ask.turn is not None:
        on_event("turn", ask)
    waits: list[asyncio.Future[Any]] = [
        asyncio.ensure_future(_read_followups(office, ask, caller, reader, lines)),
        asyncio.ensure_future(asyncio.shield(ask.settled())),
        asyncio.ensure_future(lines.broken.wait()),
    ]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if ask.reply is None:  # the caller hung up or stopped reading: nobody waits for this reply
            office.cancel(ask.id, by=caller.name, reason="the asking process went away")
            return
        if forwarding:  # the turn ended: its last events are read before the reply
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(forwarding[0]), timeout=5.0)
        lines.send(reply_line(ask))
    finally:
        office.remove_listener(on_event)
        for wait in waits:
            wait.cancel()
        for task in forwarding:
            task.cancel()
        await lines.close()


async def _forward(ask: Ask, lines: _Lines) -> None:
    assert ask.turn is not None
    async for event in ask.turn:
        for encoded in encode_event(event):
            lines.send(encode_event_line(ask.id, encoded))


async def _read_followups(
    office: ServedOffice, ask: Ask, caller: Caller, reader: asyncio.StreamReader, lines: _Lines
) -> None:
    """The caller's lines until it hangs up (returns then); a bad line is answered and ends the stream."""
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        except asyncio.LimitOverrunError:
            lines.send(encode_error(ProtocolError(f"a line is limited to {MAX_REQUEST_BYTES} bytes")))
            return
        try:
            followup = decode_followup(line)
            if isinstance(followup, CancelThisAsk):
                office.cancel(ask.id, by=caller.name)
                continue
            employee = office.employee(ask.agent)
            waiting = {request.request_id: request for request in employee.pending_permissions}
            request = waiting.get(followup.request_id) if employee.current is ask else None
            if request is None:
                continue  # answered already, withdrawn, or of another turn: nothing to do
            if followup.allow:
                request.allow(always=followup.always)
            else:
                request.deny(followup.message or "Denied by the user.")
        except ElynavError as error:
            lines.send(encode_error(error))
            if isinstance(error, ProtocolError):
                return


def board_lines(office: ServedOffice) -> bytes:
    """The board as one ``board`` line: each employee's row and each ask in flight."""
    asks = []
    for ask in office.asks:
        row = ask.to_row()
        row["status"] = "cancelling" if ask.cancelling else ask.status
        row["position"] = office.queue_position(ask)
        asks.append(row)
    employees = [employee.to_row() for employee in office.employees.values()]
    return encode_board(office.status, employees, asks)


async def watch_board(
    office: ServedOffice, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """Send the board now and after every change (coalesced: at most one snapshot per ``WATCH_INTERVAL``,
    the last state always sent) until a hang-up or the office stops."""
    lines = _Lines(writer)
    pending = False
    stopped = asyncio.Event()

    def send_snapshot() -> None:
        nonlocal pending
        pending = False
        lines.send(board_lines(office))

    def on_event(event: str, ask: Ask | None) -> None:
        nonlocal pending
        if event == "stopped":
            send_snapshot()
            stopped.set()
        elif not pending:
            pending = True
            asyncio.get_running_loop().call_later(WATCH_INTERVAL, send_snapshot)

    office.add_listener(on_event)
    send_snapshot()
    waits = [
        asyncio.ensure_future(_until_eof(reader)),
        asyncio.ensure_future(lines.broken.wait()),
        asyncio.ensure_future(stopped.wait()),
    ]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
        office.remove_listener(on_event)
        await lines.close()


async def _until_eof(reader: asyncio.StreamReader) -> None:
    with contextlib.suppress(ConnectionError):
        while await reader.read(65536):
            pass
