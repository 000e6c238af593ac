"""JSON-RPC 2.0 over newline-delimited JSON for the ACP stand-in: one reader, one writer, request routing.

Where it sits: ``acp_standin`` builds one ``Connection`` over the process's stdin and stdout and hands it
an ``IncomingHandler`` (the ``Agent``); ``acp_turns`` and ``acp_tools`` call ``notify`` and ``request``
on it. Nothing here knows ACP methods; it knows JSON-RPC only.

How data flows: a daemon thread reads stdin lines into an asyncio queue (``None`` at EOF);
``Connection.run`` parses each line: a bad line is answered -32700 (id null) or -32600; a request goes to
``IncomingHandler.begin_request`` *synchronously* (so a ``session/cancel`` read just after a
``session/prompt`` always finds the turn registered) and the returned awaitable runs in its own task,
whose result or ``RpcError`` becomes the response; a notification goes to ``on_notification``; a
response is routed by id to the future of the stand-in's own request (ids are integers counted from 1).
Every outgoing message is written as one whole line and flushed by the single ``write`` method.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "SERVER_ERROR",
    "ClientError",
    "Connection",
    "IncomingHandler",
    "Reply",
    "RpcError",
    "encode_line",
    "start_stdin_reader",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000
RESOURCE_NOT_FOUND = -32002


class RpcError(Exception):
    """Raised by a request handler: answered as the JSON-RPC error ``{code, message, data?}``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ClientError(Exception):
    """The client answered one of the stand-in's own requests with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True)
class Reply:
    """A handler's result plus a callback run just after the response line is written."""

    result: Any
    after: Callable[[], None] | None = None


class IncomingHandler(Protocol):
    def begin_request(self, method: str, params: Any) -> Awaitable[Any]:
        """Validate and register synchronously (may raise ``RpcError``); the awaitable yields the result."""
        ...

    def on_notification(self, method: str, params: Any) -> None: ...


def encode_line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def start_stdin_reader(loop: asyncio.AbstractEventLoop) -> asyncio.Queue[bytes | None]:
    """A daemon thread puts each stdin line on the returned queue, then ``None`` at EOF."""
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()

    def read() -> None:
        try:
            for line in sys.stdin.buffer:
                loop.call_soon_threadsafe(lines.put_nowait, line)
        except (OSError, ValueError):
            pass
        try:
            loop.call_soon_threadsafe(lines.put_nowait, None)
        except RuntimeError:
            pass  # the loop is closed: the process is exiting anyway

    threading.Thread(target=read, name="acp-stdin", daemon=True).start()
    return lines


class Connection:
    """The agent's end of the JSON-RPC connection."""

    def __init__(self, output: BinaryIO) -> None:
        self.output = output
        self.handler: IncomingHandler | None = None
        self._next_id = 1
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.request_tasks: set[asyncio.Task[None]] = set()
        self.closed = False

    # -- writing ------------------------------------------------------------------------------------
    def write(self, message: dict[str, Any]) -> None:
        self.write_raw(encode_line(message))

    def write_raw(self, data: bytes) -> None:
        """The one writer: a whole line, flushed. A vanished client is not an error of ours."""
        if self.closed:
            return
        try:
            self.output.write(data)
            self.output.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.closed = True

    def notify(self, method: str, params: Any) -> None:
        self.write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        """Send a request to the client and await its answer (``ClientError`` for an error answer)."""
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            self.write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            return await future
        finally:
            self._pending.pop(request_id, None)

    def _respond(self, request_id: Any, result: Any) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _respond_error(self, request_id: Any, error: RpcError) -> None:
        self.write({"jsonrpc": "2.0", "id": request_id, "error": error.to_json()})

    # -- reading ------------------------------------------------------------------------------------
    async def run(self, lines: asyncio.Queue[bytes | None]) -> None:
        """Handle lines until EOF."""
        while True:
            line = await lines.get()
            if line is None:
                return
            if line.strip():
                self.handle_line(line)

    def handle_line(self, line: bytes) -> None:
        try:
            message: Any = json.loads(line)
        except ValueError:
            self._respond_error(None, RpcError(PARSE_ERROR, "Parse error"))
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._respond_error(_usable_id(message), RpcError(INVALID_REQUEST, "Invalid Request"))
            return
        method = message.get("method")
        if method is not None:
            if not isinstance(method, str):
                self._respond_error(_usable_id(message), RpcError(INVALID_REQUEST, "Invalid Request"))
            elif "id" in message:
                self._begin(message["id"], method, message.get("params"))
            else:
                self._notification(method, message.get("params"))
            return
        if "id" in message and ("result" in message or "error" in message):
            self._route_response(message)
            return
        self._respond_error(_usable_id(message), RpcError(INVALID_REQUEST, "Invalid Request"))

    def _notification(self, method: str, params: Any) -> None:
        assert self.handler is not None
        try:
            self.handler.on_notification(method, params)
        except Exception:  # noqa: BLE001 - a notification has nobody to answer; log and go on
            traceback.print_exc(file=sys.stderr)

    def _begin(self, request_id: Any, method: str, params: Any) -> None:
        assert self.handler is not None
        try:
            awaitable = self.handler.begin_request(method, params)
        except RpcError as error:
            self._respond_error(request_id, error)
            return
        task = asyncio.create_task(self._serve(request_id, awaitable), name=f"acp-request-{method}")
        self.request_tasks.add(task)
        task.add_done_callback(self.request_tasks.discard)

    async def _serve(self, request_id: Any, awaitable: Awaitable[Any]) -> None:
        try:
            value = await awaitable
        except RpcError as error:
            self._respond_error(request_id, error)
            return
        except Exception as error:  # noqa: BLE001 - any handler failure is an internal error answer
            traceback.print_exc(file=sys.stderr)
            self._respond_error(request_id, RpcError(INTERNAL_ERROR, f"Internal error: {error}"))
            return
        if isinstance(value, Reply):
            self._respond(request_id, value.result)
            if value.after is not None:
                value.after()
        else:
            self._respond(request_id, value)

    def _route_response(self, message: dict[str, Any]) -> None:
        future = self._pending.get(message["id"]) if isinstance(message["id"], int) else None
        if future is None or future.done():
            print(
                f"elynav-acp-standin: ignored an answer to unknown request {message['id']!r}", file=sys.stderr
            )
            return
        error = message.get("error")
        if error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            text = error.get("message") if isinstance(error, dict) else None
            future.set_exception(
                ClientError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    text if isinstance(text, str) else str(error),
                    error.get("data") if isinstance(error, dict) else None,
                )
            )
        else:
            future.set_result(message.get("result"))


def _usable_id(message: Any) -> Any:
    """The id of an invalid message when it is a usable JSON-RPC id, else ``None``."""
    if isinstance(message, dict):
        request_id = message.get("id")
        if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
            return request_id
    return None
