"""The ACP client's terminal methods: commands an agent runs through us, bounded, and nothing left after the turn.

Where it sits: the ``AcpLauncher`` (``protocols/launcher.py``) gives one ``WorkspaceTerminals`` to each ACP
wire, which serves ``terminal/*`` requests with it and calls ``end_all`` when a turn ends or the
process goes (the driver waits for it at ``runner.stop()``). I/O only (subprocesses); no parsing of
the protocol.

Rules:
- the working folder is the workspace, or a folder inside it (``PATH_OUTSIDE_WORKSPACE`` otherwise);
- ``command`` with ``args`` (a list of strings) is run as given; ``command`` alone is a command line,
  run by ``/bin/sh -c`` (agents send either); text that is not valid Unicode, an ``args`` that is not
  a list of strings or an ``env`` entry that is not ``{name, value}`` strings is ``INVALID_INPUT``;
- each command leads its own process group and carries a mark of its own in its environment
  (``process_tree.py``), inherited by everything it starts, so what it started is found again by pid
  even once re-parented (``cmd &`` after its shell exited, ``setsid cmd &``, a double fork);
- a command has *exited* when its leader has exited and its output is drained: read to its end, or
  ``DRAIN_SECONDS`` after the exit when a background child still holds the pipe (``sleep 3000 &
  echo started`` exits at once: ``wait_for_exit`` answers then, not when the sleep ends);
- it is killed, with its group and every process carrying its mark, after ``timeout`` seconds (its
  exit status then says ``SIGKILL``), on ``terminal/kill``, and on ``terminal/release`` while it runs;
  a released command that has exited keeps its background processes until the turn ends;
- when the turn ends and at ``runner.stop()`` (``end_all``), and at interpreter exit, every process
  any terminal of the turn started is ended (SIGTERM, then SIGKILL after a second): none survives;
- its output (stdout and stderr, merged) keeps at most ``outputByteLimit`` bytes (ours by default),
  cut from the start at a character boundary, as ACP asks; ``truncated`` says so;
- at most ``max_terminals`` at once (``INVALID_INPUT`` past that).

How data flows::

    terminal/create {command, args?, env?, cwd?, outputByteLimit?} -> spawn (marked) -> {"terminalId"}
    terminal/output {terminalId}        -> {"output", "truncated", "exitStatus"?}
    terminal/wait_for_exit {terminalId} -> {"exitCode", "signal"} (bounded by the command's timeout)
    terminal/kill | terminal/release    -> {}
    end_all()                           -> every marked process of the turn ended, by pid
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import signal
import time
import uuid
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from elynav_nb.agents.drivers.process_tree import (
    MARK_VARIABLE,
    ProcessIdentity,
    end_processes,
    end_processes_now,
    identities_of,
    marked_processes,
    new_mark,
)
from elynav_nb.agents.protocols.acp.files import confined_path
from elynav_nb.errors import InvalidInput, NotFound

__all__ = ["DEFAULT_OUTPUT_BYTES", "DRAIN_SECONDS", "WorkspaceTerminals"]

DEFAULT_OUTPUT_BYTES = 1024 * 1024
DEFAULT_TIMEOUT_SECONDS = 600.0
DRAIN_SECONDS = 1.0
"""After its leader exits, how long a command's output may take to reach its end."""
_READ_CHUNK = 65536
_KILL_GRACE_SECONDS = 1.0
_EXIT_POLL_SECONDS = 0.05


@dataclass
class _Tree:
    """What one command started: its leader and every process carrying its mark."""

    mark: str
    started_at: float
    leader: asyncio.subprocess.Process | None = None

    def identities(self) -> dict[int, ProcessIdentity]:
        """The live processes of the tree, by pid and start time (walks /proc: milliseconds)."""
        found = marked_processes(self.mark, self.started_at)
        if self.leader is not None and self.leader.returncode is None:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(self.leader.pid)
                found += [root, *root.children(recursive=True)]
        return identities_of(found)


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    tree: _Tree
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None
    watcher: asyncio.Task[None] | None = None
    timer: asyncio.TimerHandle | None = None
    ending: asyncio.Task[None] | None = None

    def keep(self, chunk: bytes) -> None:
        self.output += chunk
        if len(self.output) > self.limit:
            cut = len(self.output) - self.limit
            while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                cut += 1  # never start inside a UTF-8 character
            del self.output[:cut]
            self.truncated = True

    @property
    def exited(self) -> bool:
        """The leader has exited and the output is drained (or its drain bound passed)."""
        return self.watcher is not None and self.watcher.done()

    def exit_status(self) -> dict[str, Any] | None:
        code = self.process.returncode
        if code is None:
            return None
        if code < 0:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": code, "signal": None}

    def stop_tasks(self) -> None:
        for task in (self.reader, self.watcher):
            if task is not None and not task.done():
                task.cancel()
        if self.timer is not None:
            self.timer.cancel()


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
        self._trees: list[_Tree] = []  # every command since the last end_all, released ones included
        _every_terminal_set.add(self)

    @property
    def live(self) -> int:
        """How many commands of the turn may still have processes running (``end_all`` ends them)."""
        return len(self._trees)

    def pids(self) -> list[int]:
        """The process ids of the commands still running (tests check the process tree)."""
        return [t.process.pid for t in self._terminals.values() if t.process.returncode is None]

    async def create(self, params: dict[str, Any]) -> dict[str, Any]:
        command = _text(params.get("command"), "command")
        if not command.strip():
            raise InvalidInput("terminal/create needs a command")
        if len(self._terminals) >= self.max_terminals:
            raise InvalidInput(
                f"the agent has {len(self._terminals)} terminals open: release one first (at most "
                f"{self.max_terminals})"
            )
        arguments = _arguments(params.get("args"))
        cwd = (
            confined_path(self.workspace, params["cwd"], what="cwd")
            if params.get("cwd")
            else self.workspace.resolve()
        )
        tree = _Tree(new_mark(), time.time())
        environment = {**self.environment, **_variables(params.get("env")), MARK_VARIABLE: tree.mark}
        argv = [command, *arguments] if arguments else ["/bin/sh", "-c", command]
        requested = params.get("outputByteLimit")
        limit = (
            min(requested, self.max_output_bytes)
            if isinstance(requested, int) and not isinstance(requested, bool) and requested >= 0
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
        tree.leader = process
        self._trees.append(tree)
        terminal = _Terminal(process=process, tree=tree, limit=limit)
        loop = asyncio.get_running_loop()
        terminal.reader = loop.create_task(self._read(terminal))
        terminal.watcher = loop.create_task(self._watch(terminal))
        terminal.timer = loop.call_later(self.timeout, self._time_out, terminal)
        terminal_id = f"term_{uuid.uuid4().hex[:12]}"
        self._terminals[terminal_id] = terminal
        return {"terminalId": terminal_id}

    @staticmethod
    async def _read(terminal: _Terminal) -> None:
        stream = terminal.process.stdout
        assert stream is not None
        while chunk := await stream.read(_READ_CHUNK):
            terminal.keep(chunk)

    @staticmethod
    async def _watch(terminal: _Terminal) -> None:
        """Until the leader has exited and its output is drained (or ``DRAIN_SECONDS`` have passed)."""
        await _exited(terminal.process)
        assert terminal.reader is not None
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(terminal.reader), timeout=DRAIN_SECONDS)
        if terminal.timer is not None:
            terminal.timer.cancel()

    def _time_out(self, terminal: _Terminal) -> None:
        if not terminal.exited and terminal.ending is None:
            terminal.ending = asyncio.get_running_loop().create_task(
                _end_tree(terminal.tree, first_signal=signal.SIGKILL)  # its status then says SIGKILL
            )

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
        if status is not None and terminal.exited:
            answer["exitStatus"] = status
        return answer

    async def wait_for_exit(self, params: dict[str, Any]) -> dict[str, Any]:
        terminal = self._terminal(params)
        assert terminal.watcher is not None
        await asyncio.shield(terminal.watcher)
        status = terminal.exit_status()
        assert status is not None
        return status

    async def kill(self, params: dict[str, Any]) -> dict[str, Any]:
        terminal = self._terminal(params)
        await _end_tree(terminal.tree)
        assert terminal.watcher is not None
        with contextlib.suppress(TimeoutError):  # its exit status is there for the next output
            await asyncio.wait_for(
                asyncio.shield(terminal.watcher), timeout=_KILL_GRACE_SECONDS + DRAIN_SECONDS
            )
        return {}

    async def release(self, params: dict[str, Any]) -> dict[str, Any]:
        terminal = self._terminal(params)
        if terminal.process.returncode is None:  # still running: killed with all it started
            await _end_tree(terminal.tree)
            await _reaped(terminal.process)
        terminal.stop_tasks()  # an exited command's background processes wait for the turn's end
        for terminal_id, known in list(self._terminals.items()):
            if known is terminal:
                del self._terminals[terminal_id]
        return {}

    async def end_all(self) -> int:
        """End every process any command of the turn started and forget every terminal; how many
        commands still had one."""
        trees, self._trees = self._trees, []
        terminals = list(self._terminals.values())
        self._terminals.clear()
        found = await asyncio.to_thread(lambda: [tree.identities() for tree in trees])
        counts = await asyncio.gather(*(end_processes(ids, _KILL_GRACE_SECONDS) for ids in found))
        for terminal in terminals:
            terminal.stop_tasks()
            await _reaped(terminal.process)
        return sum(1 for count in counts if count)

    def end_all_now(self) -> None:
        """``end_all`` without an event loop (interpreter exit)."""
        trees, self._trees = self._trees, []
        for tree in trees:
            end_processes_now(tree.identities())


async def _end_tree(tree: _Tree, *, first_signal: signal.Signals = signal.SIGTERM) -> None:
    identities = await asyncio.to_thread(tree.identities)
    await end_processes(identities, _KILL_GRACE_SECONDS, first_signal=first_signal)


async def _exited(process: asyncio.subprocess.Process) -> None:
    """Until the process has exited. Not ``process.wait()``: asyncio answers that only once every
    pipe is closed, and a background child holds the output pipe for as long as it lives."""
    while process.returncode is None:
        await asyncio.sleep(_EXIT_POLL_SECONDS)


async def _reaped(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(_exited(process), timeout=_KILL_GRACE_SECONDS)


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or "\x00" in value:
        raise InvalidInput(f"terminal/create: the {what} must be a string without NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            f"terminal/create: the {what} is not valid Unicode (a lone surrogate)",
            details={what: ascii(value)[:200]},
        ) from None
    return value


def _arguments(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInput(f"terminal/create: args must be a list of strings, not {type(value).__name__}")
    return [_text(argument, "args") for argument in value]


def _variables(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, list):
        raise InvalidInput(
            f"terminal/create: env must be a list of {{name, value}}, not {type(value).__name__}"
        )
    variables = {}
    for entry in value:
        if not isinstance(entry, dict):
            raise InvalidInput("terminal/create: each env entry is {name, value}")
        name = _text(entry.get("name"), "env name")
        if not name or "=" in name:
            raise InvalidInput(f"terminal/create: {name[:80]!r} is not a variable name")
        variables[name] = _text(entry.get("value", ""), "env value")
    return variables


_every_terminal_set: weakref.WeakSet[WorkspaceTerminals] = weakref.WeakSet()


@atexit.register
def _end_every_terminal() -> None:
    for terminals in list(_every_terminal_set):
        with contextlib.suppress(Exception):
            terminals.end_all_now()
