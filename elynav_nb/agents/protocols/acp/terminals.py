"""The ACP client's terminal methods: commands an agent runs through us, bounded and ended with the turn.

Where it sits: the ``AcpLauncher`` (``protocols/launcher.py``) gives one ``WorkspaceTerminals`` to each ACP
wire, which serves ``terminal/*`` requests with it and calls ``end_all`` when a turn ends or the
process goes. I/O only (subprocesses); no parsing of the protocol.

Rules:
- the working folder is the workspace, or a folder inside it (``PATH_OUTSIDE_WORKSPACE`` otherwise);
- ``command`` with ``args`` is run as given; ``command`` alone is a command line, run by ``/bin/sh -c``
  (agents send either);
- each command leads its own process group, so a kill reaches what it started; it is killed after
  ``timeout`` seconds (its exit status then says ``SIGKILL``) and when its turn ends;
- its output (stdout and stderr, merged) keeps at most ``outputByteLimit`` bytes (ours by default),
  cut from the start at a character boundary, as ACP asks; ``truncated`` says so;
- at most ``max_terminals`` live at once (``INVALID_INPUT`` past that); ``terminal/release`` kills
  a command still running and forgets it.

How data flows::

    terminal/create {command, args?, env?, cwd?, outputByteLimit?} -> spawn -> {"terminalId"}
    terminal/output {terminalId}        -> {"output", "truncated", "exitStatus"?}
    terminal/wait_for_exit {terminalId} -> {"exitCode", "signal"} (bounded by the command's timeout)
    terminal/kill | terminal/release    -> {}
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elynav_nb.agents.protocols.acp.files import confined_path
from elynav_nb.errors import InvalidInput, NotFound

__all__ = ["DEFAULT_OUTPUT_BYTES", "WorkspaceTerminals"]

DEFAULT_OUTPUT_BYTES = 1024 * 1024
DEFAULT_TIMEOUT_SECONDS = 600.0
_READ_CHUNK = 65536
_KILL_GRACE_SECONDS = 1.0


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    killed_for_time: bool = False
    reader: asyncio.Task[None] | None = None
    timer: asyncio.TimerHandle | None = None

    def keep(self, chunk: bytes) -> None:
        self.output += chunk
        if len(self.output) > self.limit:
            cut = len(self.output) - self.limit
            while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                cut += 1  # never start inside a UTF-8 character
            del self.output[:cut]
            self.truncated = True

    def exit_status(self) -> dict[str, Any] | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": code, "signal": None}


class WorkspaceTerminals:
    """The terminal methods of one ACP agent (see the module docstring)."""

    def __init__(
        self,
        workspace: Path,
        environment: Mapping[str, str],
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        max_output_bytes: int = DEFAULT_OUTPUT_BYTES,
        max_terminals: int = 16,
    ) -> None:
        self.workspace = workspace
        self.environment = dict(environment)
        self.timeout = timeout
        self.max_output_bytes = max_output_bytes
        self.max_terminals = max_terminals
        self._terminals: dict[str, _Terminal] = {}

    @property
    def live(self) -> int:
        """How many commands still run."""
        return sum(1 for terminal in self._terminals.values() if terminal.process.returncode is None)

    def pids(self) -> list[int]:
        """The process ids of the commands still running (tests check the process tree)."""
        return [t.process.pid for t in self._terminals.values() if t.process.returncode is None]

    async def create(self, params: dict[str, Any]) -> dict[str, Any]:
        command = params.get("command")
        if not isinstance(command, str) or not command.strip():
            raise InvalidInput("terminal/create needs a command")
        if len(self._terminals) >= self.max_terminals:
            raise InvalidInput(
                f"the agent has {len(self._terminals)} terminals open: release one first (at most "
                f"{self.max_terminals})"
            )
        arguments = [str(argument) for argument in params.get("args") or []]
        cwd = (
            confined_path(self.workspace, params["cwd"], what="cwd")
            if params.get("cwd")
            else self.workspace.resolve()
        )
        environment = dict(self.environment)
        for variable in params.get("env") or []:
            if isinstance(variable, dict) and isinstance(variable.get("name"), str):
                environment[variable["name"]] = str(variable.get("value", ""))
        argv = [command, *arguments] if arguments else ["/bin/sh", "-c", command]
        requested = params.get("outputByteLimit")
        limit = (
            min(requested, self.max_output_bytes)
            if isinstance(requested, int) and requested >= 0
            else self.max_output_bytes
        )
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                env=environment,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            raise NotFound(
                f"cannot run {argv[0]!r}: {error.strerror}", details={"command": argv[0]}
            ) from error
        terminal = _Terminal(process=process, limit=limit)
        terminal.reader = asyncio.get_running_loop().create_task(self._read(terminal))
        terminal.timer = asyncio.get_running_loop().call_later(self.timeout, self._time_out, terminal)
        terminal_id = f"term_{uuid.uuid4().hex[:12]}"
        self._terminals[terminal_id] = terminal
        return {"terminalId": terminal_id}

    @staticmethod
    async def _read(terminal: _Terminal) -> None:
        stream = terminal.process.stdout
        assert stream is not None
        while chunk := await stream.read(_READ_CHUNK):
            terminal.keep(chunk)
        await terminal.process.wait()
        if terminal.timer is not None:
            terminal.timer.cancel()

    def _time_out(self, terminal: _Terminal) -> None:
        if terminal.process.returncode is None:
            terminal.killed_for_time = True
            _kill_group(terminal.process, signal.SIGKILL)

    def _terminal(self, params: Mapping[str, Any]) -> _Terminal:
        terminal_id = params.get("terminalId")
        terminal = self._terminals.get(terminal_id) if isinstance(terminal_id, str) else None
        if terminal is None:
            raise NotFound(
                f"no terminal {str(terminal_id)[:80]!r}", details={"terminal_id": str(terminal_id)[:80]}
            )
        return terminal

    async def output(self, params: dict[str, Any]) -> dict[str, Any]:
        terminal = self._terminal(params)
        answer: dict[str, Any] = {
            "output": terminal.output.decode("utf-8", errors="replace"),
            "truncated": terminal.truncated,
        }
        status = terminal.exit_status()
        if status is not None and terminal.reader is not None and terminal.reader.done():
            answer["exitStatus"] = status
        return answer

    async def wait_for_exit(self, params: dict[str, Any]) -> dict[str, Any]:
        terminal = self._terminal(params)
        if terminal.reader is not None:
            await asyncio.shield(terminal.reader)
        status = terminal.exit_status()
        assert status is not None
        return status

    async def kill(self, params: dict[str, Any]) -> dict[str, Any]:
        await self._end(self._terminal(params))
        return {}

    async def release(self, params: dict[str, Any]) -> dict[str, Any]:
        terminal = self._terminal(params)
        await self._end(terminal)
        for terminal_id, known in list(self._terminals.items()):
            if known is terminal:
                del self._terminals[terminal_id]
        return {}

    async def end_all(self) -> int:
        """Kill every command still running and forget every terminal (a turn ended); how many were killed."""
        running = [terminal for terminal in self._terminals.values() if terminal.process.returncode is None]
        await asyncio.gather(*(self._end(terminal) for terminal in running))
        for terminal in self._terminals.values():
            if terminal.reader is not None and not terminal.reader.done():
                terminal.reader.cancel()
        self._terminals.clear()
        return len(running)

    @staticmethod
    async def _end(terminal: _Terminal) -> None:
        """SIGTERM to the command's group, SIGKILL after a short grace."""
        process = terminal.process
        if process.returncode is not None:
            return
        _kill_group(process, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), timeout=_KILL_GRACE_SECONDS)
            return
        _kill_group(process, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), timeout=_KILL_GRACE_SECONDS)
        if terminal.timer is not None:
            terminal.timer.cancel()


def _kill_group(process: asyncio.subprocess.Process, signal_number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal_number)
