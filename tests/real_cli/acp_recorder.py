"""A raw ACP client that records every JSON-RPC line: asyncio subprocess, newline-delimited JSON.

No elynav runner code: this is the reference the codec is checked against. ``AcpRecorder`` spawns
one agent process (its own process group), answers the client methods it offered
(``fs/read_text_file``, ``fs/write_text_file`` inside the workspace, ``terminal/*`` run with a
subprocess, ``session/request_permission`` per ``permission``) and keeps each line as
``{"dir": "in" | "out", "msg": ...}`` (in: agent -> client, out: client -> agent). ``save`` writes
them as JSON lines with the scratch paths replaced by placeholders (``$WORKSPACE``, ``$HOME``,
``$TMP``). Several processes may share one ``log`` (``session/load`` after a kill).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

CLIENT_CAPABILITIES: dict[str, Any] = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
STREAM_LIMIT = 64 * 1024 * 1024

Message = dict[str, Any]
PermissionPolicy = Callable[[Message], Message]


def choose_option(kinds: Sequence[str]) -> PermissionPolicy:
    """A permission policy picking the first offered option whose kind is in ``kinds`` (in that order)."""

    def policy(params: Message) -> Message:
        options = params.get("options") or []
        for kind in kinds:
            for option in options:
                if option.get("kind") == kind:
                    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        return {"outcome": {"outcome": "cancelled"}}

    return policy


ALLOW = choose_option(("allow_once", "allow_always"))
REJECT = choose_option(("reject_once", "reject_always"))


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    limit: int | None = None
    reader: asyncio.Task[None] | None = None


@dataclass
class Recording:
    """The lines of one or more agent processes, with the paths to hide when saved."""

    lines: list[Message] = field(default_factory=list)
    replacements: dict[str, str] = field(default_factory=dict)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        ordered = sorted(self.replacements.items(), key=lambda item: -len(item[0]))
        with path.open("w") as handle:
            for line in self.lines:
                text = json.dumps(line, ensure_ascii=False)
                for real, placeholder in ordered:
                    text = text.replace(real, placeholder)
                handle.write(text + "\n")

    def incoming(self, method: str | None = None) -> list[Message]:
        return [
            line["msg"]
            for line in self.lines
            if line["dir"] == "in" and (method is None or line["msg"].get("method") == method)
        ]

    def updates(self) -> list[Message]:
        return [message["params"]["update"] for message in self.incoming("session/update")]


class AcpRecorder:
    """One agent process spoken to over stdio; every line in and out lands in ``recording``."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        environment: Mapping[str, str],
        workspace: Path,
        recording: Recording,
        stderr_path: Path,
        permission: PermissionPolicy = REJECT,
    ) -> None:
        self.argv = tuple(argv)
        self.environment = {**os.environ, **environment}
        self.workspace = workspace
        self.recording = recording
        self.stderr_path = stderr_path
        self.permission = permission
        self.process: asyncio.subprocess.Process | None = None
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Message]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._terminals: dict[str, _Terminal] = {}
        self._stderr_file: Any = None
        self.client_requests: list[str] = []
        self.closed = asyncio.Event()

    async def start(self) -> None:
        self.stderr_path.parent.mkdir(parents=True, exist_ok=True)
        self._stderr_file = self.stderr_path.open("ab")
        self.process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr_file,
            cwd=self.workspace,
            env=self.environment,
            start_new_session=True,
            limit=STREAM_LIMIT,
        )
        self._reader = asyncio.create_task(self._read_loop())

    # -- sending ------------------------------------------------------------------------------

    async def _send(self, message: Message) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.recording.lines.append({"dir": "out", "msg": message})
        self.process.stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode())
        await self.process.stdin.drain()

    def send_request(self, method: str, params: Message) -> asyncio.Future[Message]:
        """Send a request now; the future resolves with the whole response message."""
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        asyncio.get_running_loop().create_task(
            self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        )
        return future

    async def request(self, method: str, params: Message, timeout: float = 60.0) -> Message:
        """Send a request and wait (bounded) for its response; a timeout returns ``{"timeout": ...}``."""
        future = self.send_request(method, params)
        return await self.wait(future, timeout)

    async def wait(self, future: asyncio.Future[Message], timeout: float) -> Message:
        closed: asyncio.Future[Any] = asyncio.ensure_future(self.closed.wait())
        watched: set[asyncio.Future[Any]] = {future, closed}
        try:
            done, _ = await asyncio.wait(watched, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
        if future in done:
            return future.result()
        if self.closed.is_set():
            return {"closed": "the agent's stdout closed before the response"}
        return {"timeout": timeout}

    async def notify(self, method: str, params: Message) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    # -- receiving ------------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        try:
            while True:
                raw = await self.process.stdout.readline()
                if not raw:
                    break
                text = raw.decode(errors="replace").strip()
                if not text:
                    continue
                try:
                    message = json.loads(text)
                except json.JSONDecodeError:
                    self.recording.lines.append({"dir": "in", "msg": {"unparsed": text}})
                    continue
                self.recording.lines.append({"dir": "in", "msg": message})
                await self._dispatch(message)
        finally:
            self.closed.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_result({"closed": "the agent's stdout closed before the response"})

    async def _dispatch(self, message: Message) -> None:
        if "method" in message and "id" in message:
            asyncio.get_running_loop().create_task(self._answer(message))
        elif "id" in message and "method" not in message:
            future = self._pending.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result(message)

    async def _answer(self, message: Message) -> None:
        method = str(message["method"])
        params = message.get("params") or {}
        self.client_requests.append(method)
        try:
            result = await self._handle(method, params)
            reply: Message = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        except FileNotFoundError as error:  # ACP's resource-not-found error code
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32002, "message": f"Resource not found: {error.filename}"},
            }
        except Exception as error:  # noqa: BLE001 - any failure becomes the JSON-RPC error answer
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": str(error)}}
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self._send(reply)

    def _inside(self, path: str) -> Path:
        resolved = Path(path).resolve()
        if not resolved.is_relative_to(self.workspace.resolve()):
            raise PermissionError(f"{path} is outside the workspace")
        return resolved

    async def _handle(self, method: str, params: Message) -> Any:
        if method == "session/request_permission":
            return self.permission(params)
        if method == "fs/read_text_file":
            lines = self._inside(params["path"]).read_text().splitlines(keepends=True)
            start = max(int(params.get("line") or 1) - 1, 0)
            limit = params.get("limit")
            chosen = lines[start : start + int(limit)] if limit else lines[start:]
            return {"content": "".join(chosen)}
        if method == "fs/write_text_file":
            target = self._inside(params["path"])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(params["content"])
            return None
        if method == "terminal/create":
            return await self._terminal_create(params)
        if method.startswith("terminal/"):
            return await self._terminal_call(method, params)
        raise NotImplementedError(f"method not found: {method}")

    async def _terminal_create(self, params: Message) -> Message:
        environment = dict(self.environment)
        for variable in params.get("env") or []:
            environment[variable["name"]] = variable["value"]
        process = await asyncio.create_subprocess_exec(
            params["command"],
            *(params.get("args") or []),
            cwd=params.get("cwd") or self.workspace,
            env=environment,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal = _Terminal(process, limit=params.get("outputByteLimit"))
        terminal.reader = asyncio.create_task(self._pump(terminal))
        terminal_id = f"term-{len(self._terminals) + 1}"
        self._terminals[terminal_id] = terminal
        return {"terminalId": terminal_id}

    @staticmethod
    async def _pump(terminal: _Terminal) -> None:
        assert terminal.process.stdout is not None
        while chunk := await terminal.process.stdout.read(65536):
            terminal.output.extend(chunk)
            if terminal.limit is not None and len(terminal.output) > terminal.limit:
                del terminal.output[: len(terminal.output) - terminal.limit]

    @staticmethod
    def _exit_status(process: asyncio.subprocess.Process) -> Message | None:
        code = process.returncode
        if code is None:
            return None
        return {
            "exitCode": code if code >= 0 else None,
            "signal": signal.Signals(-code).name if code < 0 else None,
        }

    async def _terminal_call(self, method: str, params: Message) -> Any:
        terminal = self._terminals[params["terminalId"]]
        if method == "terminal/output":
            answer: Message = {"output": terminal.output.decode(errors="replace"), "truncated": False}
            status = self._exit_status(terminal.process)
            if status is not None:
                answer["exitStatus"] = status
            return answer
        if method == "terminal/wait_for_exit":
            await asyncio.wait_for(terminal.process.wait(), timeout=120)
            if terminal.reader is not None:
                await terminal.reader
            return self._exit_status(terminal.process)
        if method in ("terminal/kill", "terminal/release"):
            if terminal.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(terminal.process.pid, signal.SIGKILL)
                await terminal.process.wait()
            if method == "terminal/release":
                self._terminals.pop(params["terminalId"], None)
            return None
        raise NotImplementedError(f"method not found: {method}")

    # -- ending ---------------------------------------------------------------------------------

    async def kill(self, sig: signal.Signals = signal.SIGKILL) -> None:
        """Signal the agent's whole process group (and any terminal still running), then reap."""
        for terminal in self._terminals.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(terminal.process.pid, signal.SIGKILL)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(terminal.process.wait(), 5)
        if self.process is not None:
            try:
                descendants = psutil.Process(self.process.pid).children(recursive=True)
            except psutil.Error:
                descendants = []
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            for child in descendants:  # those that left the group (setsid) too
                with contextlib.suppress(psutil.Error):
                    child.send_signal(sig)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.process.wait(), 10)
        if self._reader is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._reader, 5)
        if self._stderr_file is not None:
            self._stderr_file.close()
            self._stderr_file = None
