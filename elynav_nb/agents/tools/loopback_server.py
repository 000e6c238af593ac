"""``LoopbackMcpServer``: a runner's kernel tools as an MCP streamable HTTP server on 127.0.0.1, in the kernel.

Where it sits: started by the runner's driver for codex (app-server and exec) and gemini, whose
CLIs reach MCP servers over stdio or HTTP only (claude gets the same tools on its stream-json pipe:
``kernel_tool_server.py``). It runs as asyncio tasks on the runner's loop (the kernel's), so a tool
runs in the kernel, on that loop, while the turn streams, and sees the objects as they are now.
This module does the I/O only: sockets (``asyncio.start_server``) and HTTP/1.1 framing (``h11``);
who may call and what a request answers is ``loopback_http.McpHttpRules``, the MCP itself
``McpToolEndpoint``. No uvicorn: it installs signal handlers in the main thread, which would take
Jupyter's interrupt away from the kernel.

How a call flows::

    CLI -> POST http://127.0.0.1:PORT/mcp (Authorization: Bearer <secret>) -> a connection task
      -> h11 events -> HttpRequest (headers bounded, body bounded: 413) -> McpHttpRules.answer
      -> McpToolEndpoint.handle -> the tool (an async one on this loop, a plain one on its thread)
      -> HttpAnswer -> h11 -> the socket; the connection stays open for the next request (keep-alive)

Bounds: a request's head is at most ``max_header_bytes`` (431), its body ``max_body_bytes`` (413).
Every port on 127.0.0.1 is open to every local user, so a connection is *pending* until a request
head carrying the secret arrives: it must send that whole head within ``header_timeout`` (1 s) of
being accepted (408, then closed), at most ``max_pending_connections`` wait at once (one more closes
the oldest, which a client that sends its head at once never is), and a pending connection's request
that was refused is answered and closed. A connection whose head carried the secret is
*authenticated* and moves to a room of its own (``max_connections``; 503 past that): each request
must arrive whole within ``read_timeout`` of its first byte, and an idle keep-alive connection is
closed after ``idle_timeout``. So idle sockets without the secret can neither hold a slot long nor
take one from the CLI.
``start()`` binds a free port (``port=0``) and returns the URL; ``stop()`` closes the listening
socket and every connection, a tool call in flight included (its task is cancelled): no socket
is left. The secret (``secrets.token_urlsafe(32)`` unless given) is never logged: the log says
method, path and status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import Any

import h11

from elynav_nb.agents.tools.loopback_http import MCP_PATH, HttpAnswer, HttpRequest, McpHttpRules
from elynav_nb.agents.tools.mcp_endpoint import McpToolEndpoint
from elynav_nb.errors import InvalidInput

__all__ = ["LoopbackMcpServer"]

logger = logging.getLogger(__name__)

_READ_CHUNK = 64 * 1024
_LINGER_SECONDS = 1.0
_LINGER_BYTES = 16 * 1024 * 1024
_SERVER_HEADER = ("server", "elynav-kernel-tools")


class _RequestRefused(Exception):
    """A request that cannot be read to its end (too large, too slow, malformed): answered, then closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class LoopbackMcpServer:
    """One ``McpToolEndpoint`` served over MCP streamable HTTP on 127.0.0.1 (see the module docstring)."""

    def __init__(
        self,
        endpoint: McpToolEndpoint,
        *,
        secret: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        max_body_bytes: int = 4 * 1024 * 1024,
        max_header_bytes: int = 32 * 1024,
        read_timeout: float = 30.0,
        idle_timeout: float = 300.0,
        max_connections: int = 64,
        header_timeout: float = 1.0,
        max_pending_connections: int = 64,
    ) -> None:
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise InvalidInput(f"the kernel tool server listens on loopback only, not {host!r}")
        self.endpoint = endpoint
        self.secret = secret or secrets.token_urlsafe(32)
        self.host = host
        self.requested_port = port
        self.max_body_bytes = max_body_bytes
        self.max_header_bytes = max_header_bytes
        self.read_timeout = read_timeout
        self.idle_timeout = idle_timeout
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.max_pending_connections = max_pending_connections
        self.rules = McpHttpRules(endpoint, self.secret)
        self.requests_served = 0
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}  # all of them
        self._pending: dict[asyncio.Task[None], asyncio.StreamWriter] = {}  # no secret seen yet, oldest first

    # -- state ----------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self.rules.port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/mcp`` once started ("" before)."""
        if self._server is None:
            return ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{MCP_PATH}"

    @property
    def is_serving(self) -> bool:
        return self._server is not None

    @property
    def open_connections(self) -> int:
        return len(self._connections)

    @property
    def pending_connections(self) -> int:
        """Connections that have not yet sent a request head with the secret."""
        return len(self._pending)

    def __repr__(self) -> str:
        where = self.url or "not started"
        return (
            f"<LoopbackMcpServer {self.endpoint.server_name!r} {where} connections={self.open_connections}>"
        )

    # -- lifetime -------------------------------------------------------------------------------

    async def start(self) -> str:
        """Listen on the loopback port (a free one for ``port=0``) and return the URL. Idempotent."""
        if self._server is not None:
            return self.url
        server = await asyncio.start_server(
            self._on_connection, host=self.host, port=self.requested_port, limit=_READ_CHUNK
        )
        sockets = server.sockets
        self.rules.port = int(sockets[0].getsockname()[1]) if sockets else 0
        self._server = server
        logger.debug("kernel tool server %r listening on %s", self.endpoint.server_name, self.url)
        return self.url

    async def stop(self) -> None:
        """Close the listening socket and every connection (calls in flight are cancelled). Idempotent."""
        server = self._server
        self._server = None
        if server is not None:
            server.close()
        tasks = list(self._connections)
        for task, writer in list(self._connections.items()):
            _close_quietly(writer)
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._connections.clear()
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), timeout=5.0)
            logger.debug("kernel tool server %r stopped", self.endpoint.server_name)

    async def __aenter__(self) -> LoopbackMcpServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- one connection -------------------------------------------------------------------------

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        if self._server is None:
            _close_quietly(writer)
            return
        while len(self._pending) >= self.max_pending_connections:
            oldest, oldest_writer = next(iter(self._pending.items()))
            del self._pending[oldest]
            _close_quietly(oldest_writer)  # its task reads the end of the stream and ends
        self._connections[task] = writer
        self._pending[task] = writer
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        except asyncio.CancelledError:
            if self._server is not None:
                raise  # not our stop: let the cancel go on
        except Exception:  # a bug here must not take the kernel's loop down
            logger.exception("kernel tool server: a connection failed")
        finally:
            self._connections.pop(task, None)
            self._pending.pop(task, None)
            _close_quietly(writer)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        connection = h11.Connection(h11.SERVER, max_incomplete_event_size=self.max_header_bytes)
        pending_until: float | None = asyncio.get_running_loop().time() + self.header_timeout
        while True:
            try:
                request = await self._read_request(connection, reader, pending_until)
            except _RequestRefused as refused:
                self._pending.pop(task, None)  # answered and closed: its slot is free now
                await self._write_refusal(connection, writer, refused)
                await _linger(reader, writer)
                return
            if request is None:
                return  # the client closed, or stayed idle too long
            authenticated = task not in self._pending
            answer = await self.rules.answer(request)
            self.requests_served += 1
            logger.debug(
                "kernel tool server %s %s -> %d", request.method, request.target[:100], answer.status
            )
            if not authenticated:
                answer = HttpAnswer(answer.status, answer.headers, answer.body, close=True)
            await self._write_answer(connection, writer, answer)
            if answer.close or connection.our_state is not h11.DONE or connection.their_state is not h11.DONE:
                return
            pending_until = None
            connection.start_next_cycle()

    def _authenticate(self, head: h11.Request) -> bool:
        """Move the current connection to the authenticated room if ``head`` carries the secret.

        False: it stays pending (no secret: the rules answer 401 and the connection closes).
        ``_RequestRefused`` (503) when the room is full.
        """
        task = asyncio.current_task()
        if task not in self._pending:  # closed as the oldest waiting one: its socket is gone
            raise _RequestRefused(503, "too many connections waited for their first request")
        authorization = _header_map(head.headers).get("authorization", "")
        if not self.rules.authorized(authorization):
            return False
        if len(self._connections) - len(self._pending) >= self.max_connections:
            raise _RequestRefused(503, f"{self.max_connections} authenticated connections are open already")
        assert task is not None
        del self._pending[task]
        return True

    async def _read_request(
        self, connection: h11.Connection, reader: asyncio.StreamReader, pending_until: float | None
    ) -> HttpRequest | None:
        """The next whole request on the connection (None: closed or idle), its head and body bounded.

        ``pending_until``: the connection has not shown the secret yet, and its request must arrive
        by then (a loop time); None: an authenticated connection (``read_timeout`` from the request's
        first byte, ``idle_timeout`` before it).
        """
        loop = asyncio.get_running_loop()
        deadline: float | None = pending_until  # else set at the request's first byte
        head: h11.Request | None = None
        body = bytearray()
        while True:
            try:
                event = connection.next_event()
            except h11.RemoteProtocolError as error:
                raise _RequestRefused(error.error_status_hint, "malformed HTTP request") from None
            if event is h11.NEED_DATA:
                if deadline is None:
                    timeout = self.idle_timeout
                else:
                    timeout = deadline - loop.time()
                    if timeout <= 0:
                        raise _RequestRefused(408, "the request did not arrive in time")
                try:
                    data = await asyncio.wait_for(reader.read(_READ_CHUNK), timeout)
                except TimeoutError:
                    if deadline is None:
                        return None  # idle keep-alive connection
                    raise _RequestRefused(408, "the request did not arrive in time") from None
                if deadline is None and data:
                    deadline = loop.time() + self.read_timeout
                connection.receive_data(data)  # b"" is the end of the stream
                continue
            if isinstance(event, h11.Request):
                head = event
                head_size = len(event.target) + sum(
                    len(name) + len(value) + 4 for name, value in event.headers
                )
                if head_size > self.max_header_bytes:
                    raise _RequestRefused(
                        431, f"the request head is larger than {self.max_header_bytes} bytes"
                    )
                if pending_until is not None and self._authenticate(event):
                    deadline = loop.time() + self.read_timeout  # the body's room is the CLI's own
                length = _content_length(event.headers)
                if length is not None and length > self.max_body_bytes:
                    raise _RequestRefused(413, f"the body is larger than {self.max_body_bytes} bytes")
                continue
            if isinstance(event, h11.Data):
                body += event.data
                if len(body) > self.max_body_bytes:
                    raise _RequestRefused(413, f"the body is larger than {self.max_body_bytes} bytes")
                continue
            if isinstance(event, h11.EndOfMessage):
                assert head is not None
                return HttpRequest(
                    method=head.method.decode("ascii", "replace").upper(),
                    target=head.target.decode("ascii", "replace"),
                    headers=_header_map(head.headers),
                    body=bytes(body),
                )
            if isinstance(event, h11.ConnectionClosed):
                return None
            if event is h11.PAUSED:
                return None

    async def _write_answer(
        self, connection: h11.Connection, writer: asyncio.StreamWriter, answer: HttpAnswer
    ) -> None:
        headers: list[tuple[str, str]] = [_SERVER_HEADER, ("cache-control", "no-store"), *answer.headers]
        if answer.status not in (204, 304) and answer.status >= 200:
            headers.append(("content-length", str(len(answer.body))))
        if answer.close:
            headers.append(("connection", "close"))
        data = connection.send(h11.Response(status_code=answer.status, headers=headers)) or b""
        if answer.body:
            data += connection.send(h11.Data(data=answer.body)) or b""
        data += connection.send(h11.EndOfMessage()) or b""
        writer.write(data)
        await writer.drain()

    async def _write_refusal(
        self, connection: h11.Connection, writer: asyncio.StreamWriter, refused: _RequestRefused
    ) -> None:
        if connection.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        answer = HttpAnswer.refusal(refused.status, str(refused))
        answer = HttpAnswer(answer.status, answer.headers, answer.body, close=True)
        logger.debug("kernel tool server refused a request: %d %s", refused.status, refused)
        with contextlib.suppress(h11.LocalProtocolError, ConnectionError):
            await self._write_answer(connection, writer, answer)


def _header_map(headers: Any) -> dict[str, str]:
    mapped: dict[str, str] = {}
    for name, value in headers:
        key = bytes(name).decode("ascii", "replace").lower()
        text = bytes(value).decode("latin-1")
        mapped[key] = f"{mapped[key]}, {text}" if key in mapped else text
    return mapped


def _content_length(headers: Any) -> int | None:
    for name, value in headers:
        if bytes(name).lower() == b"content-length":
            try:
                return int(bytes(value))
            except ValueError:
                return None
    return None


async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """After a refusal: stop writing, read (and drop) what the client still sends, briefly.

    Closing a socket with unread bytes makes the kernel send a reset, and the client then loses
    the refusal it was about to read (a 413 while it still uploads the body).
    """
    with contextlib.suppress(Exception):
        if writer.can_write_eof():
            writer.write_eof()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _LINGER_SECONDS
    dropped = 0
    with contextlib.suppress(Exception):
        while dropped < _LINGER_BYTES:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            data = await asyncio.wait_for(reader.read(_READ_CHUNK), remaining)
            if not data:
                break
            dropped += len(data)


def _close_quietly(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        writer.close()
