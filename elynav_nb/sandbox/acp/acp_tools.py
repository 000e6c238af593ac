"""The work behind the stand-in's tool calls: shell commands and text files, through the client or here.

Where it sits: ``acp_turns`` calls ``run_shell``, ``read_text`` and ``write_text`` once permission is
settled. Each uses the client's method when the client advertised it in ``initialize``
(``terminal`` -> ``terminal/create`` with ``sh -c <command>`` in the session cwd, ``wait_for_exit``,
``output``, ``release``; ``fs.readTextFile`` -> ``fs/read_text_file``; ``fs.writeTextFile`` ->
``fs/write_text_file``), else does the work itself: ``sh -c`` in its own process group with a bounded
output and a time limit, or the file on disk. Any failure is raised as ``ToolFailure`` with the message
the turn reports (a client's error answer keeps the client's message).

Cancelling: a local command's whole process group is killed (SIGKILL) and reaped before the
cancellation goes on; a client terminal gets ``terminal/kill`` and ``terminal/release`` (each awaited
at most ``CLEANUP_SECONDS``). ``Children`` holds the running local commands so that SIGTERM and crash
exits can kill them too.

Data flow: directive -> ``run_shell`` / ``read_text`` / ``write_text`` -> ``ShellOutcome`` / text ->
the tool_call_update.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elynav_nb.sandbox.acp.acp_wire import ClientError, Connection

__all__ = [
    "Children",
    "ClientCapabilities",
    "ShellOutcome",
    "ToolFailure",
    "read_text",
    "resolve_path",
    "run_shell",
    "write_text",
]

OUTPUT_LIMIT_BYTES = 1 << 20
CLEANUP_SECONDS = 2.0
SHELL_TIMEOUT_VARIABLE = "ELYNAV_ACP_STANDIN_SHELL_TIMEOUT"
DEFAULT_SHELL_TIMEOUT_SECONDS = 300.0


class ToolFailure(Exception):
    """A tool could not do its work; ``message`` is what the tool_call_update and the reply say."""

    def __init__(self, message: str, *, from_client: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.from_client = from_client


@dataclass(frozen=True)
class ClientCapabilities:
    read_text_file: bool = False
    write_text_file: bool = False
    terminal: bool = False

    @classmethod
    def from_initialize(cls, capabilities: Any) -> ClientCapabilities:
        if not isinstance(capabilities, dict):
            return cls()
        fs = capabilities.get("fs") if isinstance(capabilities.get("fs"), dict) else {}
        assert isinstance(fs, dict)
        return cls(
            read_text_file=fs.get("readTextFile") is True,
            write_text_file=fs.get("writeTextFile") is True,
            terminal=capabilities.get("terminal") is True,
        )


@dataclass(frozen=True)
class ShellOutcome:
    output: str
    exit_code: int | None
    signal: str | None
    truncated: bool
    terminal_id: str | None = None

    def raw_output(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"exitCode": self.exit_code, "signal": self.signal, "truncated": self.truncated}
        if self.terminal_id is not None:
            raw["terminalId"] = self.terminal_id
        return raw


class Children:
    """The local commands running now (each the leader of its own process group)."""

    def __init__(self) -> None:
        self.processes: set[asyncio.subprocess.Process] = set()

    def kill_all(self) -> None:
        for process in list(self.processes):
            _kill_group(process)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _kill_once_spawned(spawning: asyncio.Future[asyncio.subprocess.Process]) -> None:
    if not spawning.cancelled() and spawning.exception() is None:
        _kill_group(spawning.result())


def resolve_path(path: str, cwd: str) -> str:
    """ACP file paths are absolute: a relative directive path is taken from the session cwd."""
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(cwd, path))


def shell_timeout() -> float:
    try:
        return float(os.environ.get(SHELL_TIMEOUT_VARIABLE, DEFAULT_SHELL_TIMEOUT_SECONDS))
    except ValueError:
        return DEFAULT_SHELL_TIMEOUT_SECONDS


async def _read_bounded(stream: asyncio.StreamReader) -> tuple[bytes, bool]:
    kept = bytearray()
    truncated = False
    while chunk := await stream.read(1 << 16):
        room = OUTPUT_LIMIT_BYTES - len(kept)
        if len(chunk) > room:
            truncated = True
        kept.extend(chunk[: max(room, 0)])
    return bytes(kept), truncated


async def run_local_shell(command: str, cwd: str, children: Children) -> ShellOutcome:
    spawning = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            "sh",
            "-c",
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    )
    try:
        # shielded: a cancel inside asyncio's spawn would wait for the child to exit on its own
        process = await asyncio.shield(spawning)
    except asyncio.CancelledError:
        spawning.add_done_callback(_kill_once_spawned)
        raise
    children.processes.add(process)
    try:
        assert process.stdout is not None
        try:
            data, truncated = await asyncio.wait_for(_read_bounded(process.stdout), shell_timeout())
        except TimeoutError:
            _kill_group(process)
            await process.wait()
            raise ToolFailure(f"the command ran longer than {shell_timeout():g} s and was killed") from None
        code = await process.wait()
    except asyncio.CancelledError:
        _kill_group(process)
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(process.wait(), CLEANUP_SECONDS)
        raise
    finally:
        children.processes.discard(process)
    signal_name = signal.Signals(-code).name if code < 0 else None
    return ShellOutcome(
        data.decode("utf-8", errors="replace"), code if code >= 0 else None, signal_name, truncated
    )


async def _quietly(connection: Connection, method: str, params: dict[str, Any]) -> None:
    with contextlib.suppress(ClientError, TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(connection.request(method, params), CLEANUP_SECONDS)


async def run_client_terminal(
    connection: Connection, session_id: str, command: str, cwd: str
) -> ShellOutcome:
    try:
        created = await connection.request(
            "terminal/create",
            {
                "sessionId": session_id,
                "command": "sh",
                "args": ["-c", command],
                "env": [],
                "cwd": cwd,
                "outputByteLimit": OUTPUT_LIMIT_BYTES,
            },
        )
    except ClientError as error:
        raise ToolFailure(error.message, from_client=True) from None
    terminal_id = created.get("terminalId") if isinstance(created, dict) else None
    if not isinstance(terminal_id, str):
        raise ToolFailure(f"terminal/create answered without a terminalId: {created!r}", from_client=True)
    ids = {"sessionId": session_id, "terminalId": terminal_id}
    released = False
    try:
        exited = await connection.request("terminal/wait_for_exit", ids)
        shown = await connection.request("terminal/output", ids)
        await connection.request("terminal/release", ids)
        released = True
    except ClientError as error:
        raise ToolFailure(error.message, from_client=True) from None
    except asyncio.CancelledError:
        await _quietly(connection, "terminal/kill", ids)
        await _quietly(connection, "terminal/release", ids)
        released = True
        raise
    finally:
        if not released:
            await _quietly(connection, "terminal/release", ids)
    exited = exited if isinstance(exited, dict) else {}
    shown = shown if isinstance(shown, dict) else {}
    exit_code = exited.get("exitCode")
    signal_name = exited.get("signal")
    return ShellOutcome(
        str(shown.get("output", "")),
        exit_code if isinstance(exit_code, int) else None,
        signal_name if isinstance(signal_name, str) else None,
        shown.get("truncated") is True,
        terminal_id,
    )


async def run_shell(
    connection: Connection,
    capabilities: ClientCapabilities,
    children: Children,
    session_id: str,
    command: str,
    cwd: str,
) -> ShellOutcome:
    if capabilities.terminal:
        return await run_client_terminal(connection, session_id, command, cwd)
    try:
        return await run_local_shell(command, cwd, children)
    except OSError as error:
        raise ToolFailure(f"{type(error).__name__}: {error}") from None


async def read_text(
    connection: Connection, capabilities: ClientCapabilities, session_id: str, path: str
) -> str:
    if capabilities.read_text_file:
        try:
            answer = await connection.request("fs/read_text_file", {"sessionId": session_id, "path": path})
        except ClientError as error:
            raise ToolFailure(error.message, from_client=True) from None
        content = answer.get("content") if isinstance(answer, dict) else None
        if not isinstance(content, str):
            raise ToolFailure(f"fs/read_text_file answered without content: {answer!r}", from_client=True)
        return content
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ToolFailure(f"{type(error).__name__}: {error}") from None


async def write_text(
    connection: Connection, capabilities: ClientCapabilities, session_id: str, path: str, content: str
) -> None:
    if capabilities.write_text_file:
        try:
            await connection.request(
                "fs/write_text_file", {"sessionId": session_id, "path": path, "content": content}
            )
        except ClientError as error:
            raise ToolFailure(error.message, from_client=True) from None
        return
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content, encoding="utf-8")
    except OSError as error:
        raise ToolFailure(f"{type(error).__name__}: {error}") from None
