"""The office's Unix socket: how ``elynav ask`` / ``elynav cancel`` run by agents reach the office.

Where it sits: started by ``Office.start`` on the office's event loop; its path goes into the
environment of every agent CLI the office starts (``ELYNAV_OFFICE_SOCKET``). The socket lives in
a private directory (mode 0700), so only this Unix account can connect.

How data flows, one request per connection::

    accept -> SO_PEERCRED pid and uid (another uid refused)
      -> one request line (bounded size and time) -> wire.decode_request
      -> office.identify(who holds the caller's end, the user token it gave) (``office/peers.py``:
         the office's process, ancestry, an agent's token in its environment, the user token; else
         ``CALLER_UNKNOWN``: never the caller's word, never the user by default)
      -> ask:    office.submit(...) -> "accepted" -> wait for the reply OR the caller's hang-up
                 -> "reply" | (hang-up) office.cancel(ask, by=caller): a dead `elynav ask` cancels its ask
      -> cancel: office.cancel(ask_id, by=caller) -> "cancelled"
      -> anything refused -> {"type": "error", "code", "message"} and the connection closes; a
         well-formed ask or cancel refused (DEADLOCK, AGENT_NOT_FOUND, NOT_ALLOWED...) also gets a
         ``refused`` row in the office history (``history.refusal_record``), so it leaves a trace

Streamed asks and the watched board: ``office/socket_streams.py``. A bad request costs its own
connection only; the office keeps serving. A line that cannot be
decoded into a request (too long, too slow, not UTF-8, not JSON, nested too deeply, not an object,
a field of the wrong type) is answered ``PROTOCOL_ERROR`` and logged as one WARNING line naming the
caller and the reason, without a traceback; a hang-up mid-line is neither answered nor logged.
The office is seen through ``office/served_office.ServedOffice`` (what the socket uses of it), so
this module does not import ``office.py``. No parsing here: ``office/wire.py`` encodes and decodes.
Each request line in and answer out is logged at DEBUG (``elynav_nb.office.trace``, redacted), each
refusal at INFO.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import tempfile
import time
import uuid
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elynav_nb.errors import ElynavError, NotAllowed, ProtocolError
from elynav_nb.office.history import refusal_record
from elynav_nb.office.peers import Caller, caller_processes, peer_credentials, socket_holders
from elynav_nb.office.socket_streams import reply_line, stream_ask, watch_board
from elynav_nb.office.trace import office_redactor, trace_logger
from elynav_nb.office.wire import (
    MAX_REQUEST_BYTES,
    AskRequest,
    CancelRequest,
    WatchRequest,
    decode_request,
    encode_accepted,
    encode_cancelled,
    encode_error,
)
from elynav_nb.office.workspace import SOCKET_FOLDER_PREFIX, write_user_token

if TYPE_CHECKING:
    from elynav_nb.office.asks import Ask
    from elynav_nb.office.served_office import ServedOffice

__all__ = ["OfficeSocketServer"]

REQUEST_TIMEOUT = 10.0

logger = logging.getLogger(__name__)


class OfficeSocketServer:
    """Serves one office over a Unix socket in a private temporary directory."""

    def __init__(self, office: ServedOffice) -> None:
        self.office = office
        self.directory: Path | None = None
        self.path: Path | None = None
        self.connections_served = 0
        self._server: asyncio.AbstractServer | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def start(self) -> Path:
        self.directory = Path(tempfile.mkdtemp(prefix=SOCKET_FOLDER_PREFIX))  # created with mode 0700
        weakref.finalize(self, shutil.rmtree, self.directory, True)  # removed at exit, even without close()
        self.path = self.directory / "office.sock"
        self._server = await asyncio.start_unix_server(
            self._handle_connection, path=str(self.path), limit=MAX_REQUEST_BYTES + 1
        )
        os.chmod(self.path, 0o600)
        write_user_token(self.directory, self.office.user_token)
        return self.path

    async def close(self) -> None:
        """Stop accepting, end open connections, remove the directory. Idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        if self._handlers:  # the asks have ended: their replies go out first (bounded)
            await asyncio.wait(list(self._handlers), timeout=1.0)
        for handler in list(self._handlers):
            handler.cancel()
        if self._handlers:
            await asyncio.wait(list(self._handlers), timeout=2.0)
        if server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), timeout=2.0)
        self.remove_directory()

    def remove_directory(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)

    async def _handle_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self.connections_served += 1
        try:
            await self._serve(reader, writer)
        except ElynavError as error:
            await self._answer(writer, encode_error(error))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the caller hung up mid-request: nothing was queued
        except asyncio.CancelledError:
            pass  # the office is closing
        except Exception:  # one bad connection must never stop the office
            logger.exception("office socket: a request failed unexpectedly")
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), timeout=1.0)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection: socket.socket = writer.get_extra_info("socket")
        connected_at = time.time()
        pid, uid = peer_credentials(connection)
        if uid != os.getuid():
            raise NotAllowed("only processes of the office's own user may use its socket")
        try:
            line = await _read_request_line(reader)
            request = _decode(line)
        except ProtocolError as error:
            logger.warning("office socket: refused a request from pid %s: %s", pid, error.message)
            raise
        holders = caller_processes(pid, connected_at)  # the process that connected, while it lives
        if not holders:  # it has gone (it forked and left): who holds its end of the socket now
            holders = await asyncio.to_thread(socket_holders, connection)
        try:
            caller = self.office.identify(holders, request.token)
        except ElynavError as error:
            logger.warning("office socket: refused a request from pid %s: %s", pid, error.message)
            raise
        if trace_logger.isEnabledFor(logging.DEBUG):  # the request as read, named by its identified caller
            trace_logger.debug("office socket: %s < %s", caller.name, office_redactor(self.office).line(line))
        if isinstance(request, WatchRequest):
            await watch_board(self.office, reader, writer)
            return
        if isinstance(request, AskRequest):
            try:
                ask = self.office.submit_for(
                    caller, request.agent, request.text, timeout=request.timeout, output_schema=request.schema
                )
            except ElynavError as error:
                self._record_refused_ask(caller, request, error)
                raise
            await self._answer(writer, encode_accepted(ask.id, ask.agent, self.office.queue_position(ask)))
            if request.stream:
                await stream_ask(self.office, ask, caller, reader, writer)
            else:
                await self._wait_reply_or_hang_up(ask, caller, reader, writer)
            return
        try:
            cancelled = self.office.cancel(request.ask_id, by=caller.name)
        except ElynavError as error:
            self._record_refused_cancel(caller, request, error)
            raise
        await self._answer(
            writer, encode_cancelled(cancelled.id, "cancelling" if cancelled.cancelling else cancelled.status)
        )

    def _record_refused_ask(self, caller: Caller, request: AskRequest, error: ElynavError) -> None:
        """A ``refused`` history row for an ask the office did not queue (who, to whom, why)."""
        office = self.office
        employee = office.employees.get(request.agent) or office.employees.get(f"elynav-{request.agent}")
        running = office.employees[caller.name].current if caller.name in office.employees else None
        self._append_refusal(
            refusal_record(
                ask_id=uuid.uuid4().hex[:12],
                request="ask",
                sender=caller.name,
                agent=employee.name if employee is not None else request.agent,
                prompt=request.text,
                parent_id=running.id if running is not None else None,
                error_code=error.code,
                error=error.message,
            )
        )

    def _record_refused_cancel(self, caller: Caller, request: CancelRequest, error: ElynavError) -> None:
        """A ``refused`` history row for a cancel the office refused (``NOT_ALLOWED``, ``ASK_NOT_FOUND``...)."""
        try:
            target: Ask | None = self.office.get_ask(request.ask_id)
        except ElynavError:
            target = None
        self._append_refusal(
            refusal_record(
                ask_id=uuid.uuid4().hex[:12],
                request="cancel",
                sender=caller.name,
                agent=target.agent if target is not None else "",
                prompt=f"cancel {request.ask_id}",
                target_id=request.ask_id,
                error_code=error.code,
                error=error.message,
            )
        )

    def _append_refusal(self, record: dict[str, Any]) -> None:
        trace_logger.info(
            "office socket: refused %s from %s to %s: %s: %s",
            record["request"],
            record["sender"],
            record["agent"] or record["target_id"],
            record["error_code"],
            office_redactor(self.office).line(record["error"], 500),
        )
        try:
            self.office.history_log.append(record)
        except OSError as error:  # the refusal still reaches the caller; only its trace is lost
            logger.warning("office socket: could not record a refused %s: %s", record["request"], error)

    async def _answer(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        if trace_logger.isEnabledFor(logging.DEBUG):
            trace_logger.debug("office socket: > %s", office_redactor(self.office).line(data))
        await _send(writer, data)

    async def _wait_reply_or_hang_up(
        self, ask: Ask, caller: Caller, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        hang_up: asyncio.Future[None] = asyncio.ensure_future(_wait_for_eof(reader))
        reply_ready: asyncio.Future[Any] = asyncio.ensure_future(asyncio.shield(ask.settled()))
        try:
            await asyncio.wait([hang_up, reply_ready], return_when=asyncio.FIRST_COMPLETED)
        finally:
            hang_up.cancel()
            reply_ready.cancel()
        if ask.reply is None:
            # The asking process is gone (killed, interrupted): nobody waits for this reply any more.
            self.office.cancel(ask.id, by=caller.name, reason="the asking process went away")
            return
        await self._answer(writer, reply_line(ask))


async def _read_request_line(reader: asyncio.StreamReader) -> bytes:
    """The request line, bounded in size and time (``PROTOCOL_ERROR`` past either bound)."""
    try:
        return await asyncio.wait_for(reader.readuntil(b"\n"), timeout=REQUEST_TIMEOUT)
    except asyncio.LimitOverrunError:
        raise ProtocolError(f"a request line is limited to {MAX_REQUEST_BYTES} bytes") from None
    except TimeoutError:
        raise ProtocolError(f"no complete request line within {REQUEST_TIMEOUT:g} s") from None


def _decode(line: bytes) -> AskRequest | CancelRequest | WatchRequest:
    """``wire.decode_request``, with anything it did not foresee answered as ``PROTOCOL_ERROR`` too."""
    try:
        return decode_request(line)
    except ElynavError:
        raise
    except Exception as error:  # noqa: BLE001 - an undecodable line is the caller's fault, never a crash
        raise ProtocolError(f"the request could not be decoded ({type(error).__name__})") from None


async def _wait_for_eof(reader: asyncio.StreamReader) -> None:
    with contextlib.suppress(ConnectionError):
        while await reader.read(65536):
            pass


async def _send(writer: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(ConnectionError, RuntimeError, TimeoutError):
        writer.write(data)
        await asyncio.wait_for(writer.drain(), timeout=5.0)
