"""One MCP client session kept open across notebook cells (the owner-task pattern).

Where it sits: under ``Crm.call``. Cells are different asyncio tasks, and an MCP ``Client`` is an
anyio scope that must be entered and exited in one task; so one background *owner task* holds
``async with Client(...)`` for the session's life and serves requests from a queue, and callers
only await futures. Data flows: ``call_tool`` puts ``(name, arguments, future)`` on the queue ->
the owner calls the server -> the future gets the ``CallToolResult``. ``aclose`` (from any cell)
queues a stop; the owner exits the client, which stops the server process. Every wait is bounded.

The server's stderr goes to a temporary file (a real file descriptor, needed under nbval where
``sys.stderr`` has none); its tail explains a server that failed to start.
"""

from __future__ import annotations

import asyncio
import tempfile
from typing import Any, TextIO

from mcp import Client, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from elynav_nb.errors import (
    ElynavError,
    OperationTimeout,
    RunnerClosed,
    ServiceError,
    error_for_code,
    redact_secrets,
)

__all__ = ["McpStdioSession"]

_Request = tuple[str, dict[str, Any], "asyncio.Future[CallToolResult]"]


class McpStdioSession:
    """An MCP server started over stdio, reachable from any task of the loop that started it."""

    def __init__(
        self,
        parameters: StdioServerParameters,
        *,
        start_timeout_seconds: float = 60.0,
        call_timeout_seconds: float = 60.0,
    ) -> None:
        self._parameters = parameters
        self._start_timeout_seconds = start_timeout_seconds
        self._call_timeout_seconds = call_timeout_seconds
        self._requests: asyncio.Queue[_Request | None] | None = None
        self._owner: asyncio.Task[None] | None = None
        self._server_log: TextIO | None = None

    @property
    def running(self) -> bool:
        return self._owner is not None and not self._owner.done()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<McpStdioSession {self._parameters.command!r} {state}>"

    def _server_error(self, fallback: str) -> ElynavError:
        """The server's own ``CODE: message`` from its stderr tail, or ``ServiceError(fallback)``."""
        lines: list[str] = []
        if self._server_log is not None and not self._server_log.closed:
            self._server_log.flush()
            self._server_log.seek(0)
            lines = [line.strip() for line in self._server_log.read().splitlines() if line.strip()]
        if lines:
            last_line = redact_secrets(lines[-1])
            code, separator, message = last_line.partition(": ")
            error_class = error_for_code(code) if separator else ElynavError
            if error_class is not ElynavError:
                return error_class(message)
            return ServiceError(f"{fallback}; server said: {last_line[-300:]}")
        return ServiceError(fallback)

    async def start(self) -> McpStdioSession:
        """Start the server and connect; a failure surfaces here, as a typed error."""
        if self.running:
            return self
        loop = asyncio.get_running_loop()
        if self._server_log is None or self._server_log.closed:
            # kept open for the server's life, closed by aclose()
            self._server_log = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
        self._requests = asyncio.Queue()
        ready: asyncio.Future[None] = loop.create_future()
        self._owner = loop.create_task(
            self._own(ready, self._requests, self._server_log), name="elynav-crm-mcp-session"
        )
        try:
            async with asyncio.timeout(self._start_timeout_seconds):
                await ready
        except TimeoutError:
            await self.aclose()
            raise OperationTimeout(
                f"the MCP server did not finish its handshake within {self._start_timeout_seconds:g} s"
            ) from None
        except ElynavError:
            raise
        except Exception as error:  # noqa: BLE001 - forwarded to the waiting caller, typed there
            raise self._server_error(f"the MCP server could not start ({type(error).__name__})") from None
        return self

    async def _own(
        self, ready: asyncio.Future[None], requests: asyncio.Queue[_Request | None], server_log: TextIO
    ) -> None:
        try:
            transport = stdio_client(self._parameters, errlog=server_log)
            async with Client(transport) as client:
                ready.set_result(None)
                while True:
                    request = await requests.get()
                    if request is None:
                        break
                    name, arguments, reply = request
                    try:
                        result = await client.call_tool(name, arguments)
                    except Exception as error:  # noqa: BLE001 - forwarded to the waiting caller, typed there
                        if not reply.done():  # the waiting cell may have been interrupted
                            reply.set_exception(error)
                    else:
                        if not reply.done():
                            reply.set_result(result)
        except Exception as error:  # noqa: BLE001 - forwarded to the waiting caller, typed there
            if not ready.done():
                ready.set_exception(error)
        finally:
            while not requests.empty():  # fail what is still queued: no cell waits forever
                pending = requests.get_nowait()
                if pending is not None and not pending[2].done():
                    pending[2].set_exception(RunnerClosed("the MCP session closed before this call ran"))

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call one tool; starts the session on first use."""
        if not self.running:
            await self.start()
        requests = self._requests
        if requests is None or not self.running:
            raise self._server_error("the MCP session stopped")
        reply: asyncio.Future[CallToolResult] = asyncio.get_running_loop().create_future()
        await requests.put((name, arguments, reply))
        try:
            async with asyncio.timeout(self._call_timeout_seconds):
                return await asyncio.shield(reply)
        except TimeoutError:
            reply.cancel()
            raise OperationTimeout(
                f"the MCP tool {name} did not answer within {self._call_timeout_seconds:g} s"
            ) from None

    async def aclose(self) -> None:
        """Stop the server and wait for the owner task (bounded); safe to call twice."""
        owner = self._owner
        if owner is None:
            return
        if not owner.done() and self._requests is not None:
            await self._requests.put(None)
        try:
            async with asyncio.timeout(10):
                await asyncio.shield(owner)
        except TimeoutError:
            owner.cancel()
        self._owner = None
        if self._server_log is not None:
            self._server_log.close()
            self._server_log = None
