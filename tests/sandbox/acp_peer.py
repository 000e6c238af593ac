"""Test helper: a tiny raw JSON-RPC ACP client that spawns the ACP stand-in and talks to it line by line.

Where it sits: tests/sandbox only (no elynav client code on purpose). ``AcpPeer.start`` runs
``python -m elynav_nb.sandbox.acp.acp_standin`` with an isolated ``ELYNAV_ACP_STANDIN_HOME``; a reader
task keeps every stdout line (``raw_lines``, ``messages``), routes answers to ``request`` by id and
answers the agent's own requests with ``handlers`` (method -> async function of params; raise
``PeerError`` for an error answer; unhandled methods get -32601). ``wait_for`` waits, with a bound, for
a message matching a predicate; the bounds are safety nets, never assertions about timing.

Data flow: test -> ``request`` / ``notify`` -> stdin; stdout -> reader -> futures, ``messages``,
handlers -> stdin.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 20.0
Handler = Callable[[dict[str, Any]], Awaitable[Any]]
Predicate = Callable[[dict[str, Any]], bool]


class PeerError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def standin_environment(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("ELYNAV_ACP_STANDIN")
    }
    environment["ELYNAV_ACP_STANDIN_HOME"] = str(home)
    environment["PYTHONPATH"] = str(REPOSITORY_ROOT) + os.pathsep + environment.get("PYTHONPATH", "")
    if extra:
        environment.update(extra)
    return environment


def is_update(kind: str) -> Predicate:
    def matches(message: dict[str, Any]) -> bool:
        return (
            message.get("method") == "session/update"
            and message.get("params", {}).get("update", {}).get("sessionUpdate") == kind
        )

    return matches


class AcpPeer:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.raw_lines: list[bytes] = []
        self.messages: list[dict[str, Any]] = []
        self.agent_requests: list[dict[str, Any]] = []
        self.handlers: dict[str, Handler] = {}
        self.stderr = bytearray()
        self._next_id = 1
        self._answers: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._changed = asyncio.Event()
        self._tasks = [asyncio.create_task(self._read()), asyncio.create_task(self._read_stderr())]

    @classmethod
    async def start(cls, home: Path, extra_env: dict[str, str] | None = None) -> AcpPeer:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "elynav_nb.sandbox.acp.acp_standin",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=standin_environment(home, extra_env),
            limit=1 << 24,
        )
        return cls(process)

    # -- sending ------------------------------------------------------------------------------------
    async def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else (json.dumps(message) + "\n").encode()
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def request(self, method: str, params: Any, *, wait: bool = True) -> dict[str, Any]:
        """The whole answer message (``result`` or ``error``)."""
        future = await self.send_request(method, params)
        if not wait:
            return {}
        return await asyncio.wait_for(future, WAIT_SECONDS)

    async def send_request(self, method: str, params: Any) -> asyncio.Future[dict[str, Any]]:
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[request_id] = future
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return future

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    # -- conveniences -------------------------------------------------------------------------------
    async def initialize(self, *, fs: bool = False, terminal: bool = False) -> dict[str, Any]:
        capabilities = {"fs": {"readTextFile": fs, "writeTextFile": fs}, "terminal": terminal}
        answer = await self.request(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": capabilities,
                "clientInfo": {"name": "tests", "version": "0"},
            },
        )
        return dict(answer["result"])

    async def new_session(self, cwd: Path, mcp_servers: list[dict[str, Any]] | None = None) -> str:
        answer = await self.request("session/new", {"cwd": str(cwd), "mcpServers": mcp_servers or []})
        return str(answer["result"]["sessionId"])

    async def prompt(self, session_id: str, text: str) -> dict[str, Any]:
        return await self.request(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        )

    def updates(self, session_id: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
        found = []
        for message in self.messages:
            if message.get("method") != "session/update":
                continue
            params = message["params"]
            if session_id is not None and params.get("sessionId") != session_id:
                continue
            if kind is not None and params["update"].get("sessionUpdate") != kind:
                continue
            found.append(params["update"])
        return found

    def said(self, session_id: str | None = None, kind: str = "agent_message_chunk") -> str:
        return "".join(update["content"]["text"] for update in self.updates(session_id, kind))

    async def wait_for(self, predicate: Predicate) -> dict[str, Any]:
        async def scan() -> dict[str, Any]:
            seen = 0
            while True:
                for message in self.messages[seen:]:
                    if predicate(message):
                        return message
                seen = len(self.messages)
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(scan(), WAIT_SECONDS)

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    async def wait_exit(self) -> int:
        return await asyncio.wait_for(self.process.wait(), WAIT_SECONDS)

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- reading ------------------------------------------------------------------------------------
    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(1 << 16):
            self.stderr.extend(chunk)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            self.raw_lines.append(line)
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            self.messages.append(message)
            self._changed.set()
            if "method" in message and "id" in message:
                self.agent_requests.append(message)
                asyncio.create_task(self._answer(message))
            elif "method" not in message and message.get("id") in self._answers:
                future = self._answers.pop(message["id"])
                if not future.done():
                    future.set_result(message)
        self._changed.set()

    async def _answer(self, request: dict[str, Any]) -> None:
        handler = self.handlers.get(request["method"])
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if handler is None:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        else:
            try:
                reply["result"] = await handler(request.get("params") or {})
            except PeerError as error:
                reply["error"] = {"code": error.code, "message": error.message}
        try:
            await self.send(reply)
        except (BrokenPipeError, ConnectionResetError):
            pass


async def settle(future: asyncio.Future[dict[str, Any]]) -> dict[str, Any]:
    """The answer to a request sent with ``send_request`` (bounded: a safety net, not a timing check)."""
    return await asyncio.wait_for(future, WAIT_SECONDS)


def choose(option_id: str) -> Handler:
    """A permission handler that always selects ``option_id`` (``cancelled`` for the cancelled outcome)."""

    async def answer(params: dict[str, Any]) -> Any:
        if option_id == "cancelled":
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": option_id}}

    return answer


StartPeer = Callable[..., Awaitable[AcpPeer]]


@pytest.fixture
async def start_peer(tmp_path: Path) -> AsyncIterator[StartPeer]:
    started: list[AcpPeer] = []

    async def start(extra_env: dict[str, str] | None = None, home: Path | None = None) -> AcpPeer:
        peer = await AcpPeer.start(home or tmp_path / "standin-home", extra_env)
        started.append(peer)
        return peer

    yield start
    for peer in started:
        await peer.kill()


async def ready(start_peer: StartPeer, cwd: Path, **capabilities: bool) -> tuple[AcpPeer, str]:
    peer = await start_peer()
    await peer.initialize(**capabilities)
    return peer, await peer.new_session(cwd)
