"""Supervisor of one agent CLI subprocess: pipes, line framing, stderr tail, bounded stop, no orphans.

Where it sits: the I/O layer under the runner. It knows nothing of the protocol: it cuts stdout
into lines (of any length up to a cap) and hands them to a callback, keeps the last bytes of
stderr, writes bytes to stdin under one lock, and stops the process in bounded steps.

How data flows: ``spawn()`` starts the CLI in a new session (so a kernel interrupt does not reach
it) -> a reader task reads stdout in chunks and calls ``on_line(bytes)`` for each line, or
``on_oversized(size)`` once for a line over ``max_line_bytes`` (skipped to its newline); it never
waits for a consumer -> a drain task keeps stderr in a ring buffer -> a watcher task sets
``exited`` once the process is gone and stdout is fully read, then calls ``on_exit(code)``.

Stopping: tool processes of the claude CLI run in sessions of their own and survive a kill of
the CLI's process group, re-parented to PID 1. So the supervisor records the CLI's descendants
(pid + start time, so a reused pid is never signalled) while the CLI lives, and each forced step
signals the CLI's group and each recorded descendant's group. A tool's background child whose
shell has exited (``cmd &``, ``setsid cmd &``) is no descendant any more: the CLI is started with
a mark in its environment (``process_tree.py``), which every process it starts inherits, so
``stop()`` ends every marked process left once the CLI is gone, and ``end_leftovers()`` (at the end
of each turn of a CLI that stays up) those no longer under the CLI. ``kill_now()`` does the forced
steps synchronously, for the atexit/finalizer reaper.

Logging (``elynav_nb.agents.process``, the README's name): spawn and exit at INFO, the stop steps at DEBUG (a forced
SIGTERM or SIGKILL at INFO); the command line and the environment given to the CLI at DEBUG, the
values of its secret variables redacted (``process.redactor``, which the drivers use for each line).
"""

from __future__ import annotations

import asyncio
import fcntl
import functools
import logging
import os
import shlex
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from elynav_nb._logging import Redactor
from elynav_nb.agents.drivers.process_tree import (
    MARK_VARIABLE,
    ProcessIdentity,
    end_processes,
    identities_of,
    marked_processes,
    new_mark,
    still_alive,
)
from elynav_nb.errors import CliExited, CliNotFound, redact_secrets

__all__ = ["CliProcess", "StderrTail", "StopBounds"]

logger = logging.getLogger("elynav_nb.agents.process")  # the README's name, wherever this module lives

READ_CHUNK_BYTES = 256 * 1024
STREAM_BUFFER_LIMIT = 4 * 1024 * 1024
STDOUT_PIPE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class StopBounds:
    """Seconds each stop step may wait (design note §4.3). The total is their sum."""

    close_stdin: float = 5.0
    sigint: float = 3.0
    sigterm: float = 3.0
    sigkill: float = 2.0
    orphans: float = 1.0


LEFTOVER_SCAN_DELAY = 0.05  # seconds between a turn's end and the scan for what its tools left running


class StderrTail:
    """The last ``max_bytes`` of a stream, for error messages (secrets redacted on read)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.total_bytes = 0
        self._buffer = bytearray()

    def append(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        self._buffer += chunk
        overflow = len(self._buffer) - self.max_bytes
        if overflow > 0:
            del self._buffer[:overflow]

    def text(self, max_chars: int | None = None) -> str:
        text = self._buffer.decode("utf-8", errors="replace")
        if max_chars is not None and len(text) > max_chars:
            text = "…" + text[-max_chars:]
        return redact_secrets(text)


class CliProcess:
    """One CLI subprocess. Create, ``await spawn()``, ``await write(...)``, ``await stop()``."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        environment: dict[str, str],
        on_line: Callable[[bytes], None],
        on_oversized: Callable[[int], None],
        on_exit: Callable[[int], None] | None = None,
        max_line_bytes: int = 64 * 1024 * 1024,
        stderr_tail_bytes: int = 64 * 1024,
        stdin_devnull: bool = False,
    ) -> None:
        self.argv = list(argv)
        self.stdin_devnull = stdin_devnull  # codex exec waits for EOF on an open stdin pipe
        self.cwd = cwd
        self.environment = environment
        self.max_line_bytes = max_line_bytes
        self.stderr = StderrTail(stderr_tail_bytes)
        self.exited = asyncio.Event()
        self.returncode: int | None = None
        self._on_line = on_line
        self._on_oversized = on_oversized
        self._on_exit = on_exit
        self._process: asyncio.subprocess.Process | None = None
        self._write_lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self._descendants: dict[int, ProcessIdentity] = {}
        self.mark = new_mark()  # in the CLI's environment: every process it starts carries it
        self._started_at = time.time()
        self._stop_lock = asyncio.Lock()

    # -- life cycle ---------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    @functools.cached_property
    def redactor(self) -> Redactor:
        """Redacts this process's secret variable values (and secret-looking text) from log lines."""
        return Redactor.for_environment(self.environment)

    @property
    def label(self) -> str:
        """``name[pid]`` for log lines."""
        return f"{Path(self.argv[0]).name if self.argv else 'cli'}[{self.pid}]"

    async def spawn(self) -> None:
        """Start the process in its own session. ``CliNotFound`` when the binary is missing."""
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "starting %s in %s; environment beyond the parent's: %s",
                self.redactor.line(shlex.join(self.argv)),
                self.cwd,
                self.redactor.environment(self.environment, base=os.environ),
            )
        self._started_at = time.time()
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.DEVNULL if self.stdin_devnull else asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(self.cwd),
                env={**self.environment, MARK_VARIABLE: self.mark},
                start_new_session=True,
                limit=STREAM_BUFFER_LIMIT,
            )
        except FileNotFoundError as error:
            raise CliNotFound(
                f"cannot start {self.argv[0]!r}: no such executable", details={"argv0": self.argv[0]}
            ) from error
        except PermissionError as error:
            raise CliNotFound(
                f"cannot start {self.argv[0]!r}: not executable", details={"argv0": self.argv[0]}
            ) from error
        logger.info("started %s in %s", self.label, self.cwd)
        self._enlarge_stdout_pipe()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._read_stdout(), name=f"elynav-cli-{self.pid}-stdout"),
            loop.create_task(self._drain_stderr(), name=f"elynav-cli-{self.pid}-stderr"),
        ]
        self._tasks.append(loop.create_task(self._watch_exit(), name=f"elynav-cli-{self.pid}-exit"))

    def _enlarge_stdout_pipe(self) -> None:
        """Let the CLI write up to 1 MiB ahead while we decode (Linux; 64 KiB is the default).

        With the default pipe the CLI blocks as soon as we are busy with a chunk, so reading and
        writing take turns instead of overlapping.
        """
        set_pipe_size = getattr(fcntl, "F_SETPIPE_SZ", None)
        if set_pipe_size is None or self._process is None or self._process.stdout is None:
            return
        transport = self._process._transport  # type: ignore[attr-defined]
        pipe_transport = transport.get_pipe_transport(1) if transport is not None else None
        pipe = pipe_transport.get_extra_info("pipe") if pipe_transport is not None else None
        if pipe is None:
            return
        try:
            fcntl.fcntl(pipe.fileno(), set_pipe_size, STDOUT_PIPE_BYTES)
        except (OSError, ValueError):
            pass  # over /proc/sys/fs/pipe-max-size, or a CLI so quick its pipe is closed already

    async def write(self, data: bytes) -> None:
        """Write bytes to stdin (one writer at a time). ``CliExited`` if the process is gone."""
        process = self._process
        if process is None or process.stdin is None or process.returncode is not None:
            raise CliExited("the agent CLI is not running", details=self.exit_details())
        async with self._write_lock:
            try:
                process.stdin.write(data)
                await process.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as error:
                raise CliExited("the agent CLI closed its input", details=self.exit_details()) from error

    def exit_details(self) -> dict[str, object]:
        """Exit code and stderr tail, for typed errors and synthetic results."""
        return {"exit_code": self.returncode, "stderr_tail": self.stderr.text(max_chars=4000)}

    # -- reading --------------------------------------------------------------------------------

    async def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        pending: list[bytes] = []
        pending_size = 0
        skipping = False
        while True:
            chunk = await stdout.read(READ_CHUNK_BYTES)
            if not chunk:
                break
            start = 0
            while True:
                newline_at = chunk.find(b"\n", start)
                if newline_at < 0:
                    rest = chunk[start:]
                    if not skipping and rest:
                        pending.append(rest)
                        pending_size += len(rest)
                        if pending_size > self.max_line_bytes:
                            pending.clear()
                            skipping = True
                            self._on_oversized(pending_size)
                    break
                piece = chunk[start:newline_at]
                start = newline_at + 1
                if skipping:
                    skipping = False
                    pending_size = 0
                    continue
                if pending:
                    if pending_size + len(piece) > self.max_line_bytes:
                        self._on_oversized(pending_size + len(piece))
                        pending.clear()
                        pending_size = 0
                        continue
                    pending.append(piece)
                    line = b"".join(pending)
                    pending.clear()
                    pending_size = 0
                else:
                    line = piece
                if line.strip():
                    self._on_line(line)
        if pending and not skipping:
            self._on_line(b"".join(pending))

    async def _drain_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        while chunk := await self._process.stderr.read(65536):
            self.stderr.append(chunk)

    async def _watch_exit(self) -> None:
        assert self._process is not None
        returncode = await self._process.wait()
        for task in self._tasks[:2]:
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=5.0)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
            except Exception:  # a reader failure must not hide the exit
                pass
        self.returncode = returncode
        logger.info("%s exited with code %d", self.label, returncode)
        self.exited.set()
        if self._on_exit is not None:
            self._on_exit(returncode)

    # -- descendants --------------------------------------------------------------------------------

    def record_descendants(self, *, marked: bool = False) -> None:
        """Remember the CLI's current descendants (they outlive a kill of its process group).

        ``marked``: every process carrying the CLI's mark too (a scan of this user's processes).
        """
        self._descendants.update(self._snapshot_descendants(marked=marked))

    async def record_descendants_in_thread(self) -> None:
        """``record_descendants`` without blocking the loop (walking /proc takes milliseconds)."""
        self._descendants.update(await asyncio.to_thread(self._snapshot_descendants))

    def _snapshot_descendants(self, *, marked: bool = False) -> dict[int, ProcessIdentity]:
        snapshot = identities_of(self._children())
        if marked and self._process is not None:
            snapshot.update(identities_of(marked_processes(self.mark, self._started_at)))
            snapshot.pop(self._process.pid, None)  # the CLI carries the mark too: not its own descendant
        return snapshot

    def _children(self) -> list[psutil.Process]:
        process = self._process
        if process is None or process.returncode is not None:
            return []
        try:
            return list(psutil.Process(process.pid).children(recursive=True))
        except psutil.Error:
            return []

    def live_descendants(self) -> list[psutil.Process]:
        """Recorded descendants still alive (same pid and same start time)."""
        return still_alive(self._descendants)

    async def end_leftovers(self, grace: float = 1.0) -> int:
        """End what the CLI's tools left running outside its tree (a background ``cmd &`` whose shell
        exited: re-parented away, still carrying the mark), with their own descendants; how many.

        For a CLI that stays up between turns: called when a turn ends. The CLI's own children (its
        MCP servers, a background shell it keeps) are left to it. The scan starts ``LEFTOVER_SCAN_DELAY``
        after the call, so that the turn's result reaches its caller first (the scan, in a worker thread,
        holds the GIL for a few ms).
        """
        if self._process is None:
            return 0
        await asyncio.sleep(LEFTOVER_SCAN_DELAY)
        if self._process is None:
            return 0

        cli_pid = self.pid

        def still_under_cli(found: psutil.Process) -> bool:
            # asked of each process when it is found, not of a snapshot taken before the scan: the next
            # turn's tool started meanwhile is the CLI's child, not a leftover (the CLI carries the mark too)
            if found.pid == cli_pid:
                return True
            try:
                return any(parent.pid == cli_pid for parent in found.parents())
            except psutil.Error:
                return False

        def scan() -> dict[int, ProcessIdentity]:
            left = [
                found for found in marked_processes(self.mark, self._started_at) if not still_under_cli(found)
            ]
            for found in list(left):
                try:
                    left.extend(found.children(recursive=True))
                except psutil.Error:
                    continue
            return identities_of(left)

        leftovers = await asyncio.to_thread(scan)
        if leftovers:
            logger.info("%s: ending %d processes its tools left running", self.label, len(leftovers))
        return await end_processes(leftovers, grace)

    def _signal_tree(self, signal_number: int, *, include_cli_group: bool = True) -> None:
        own_group = os.getpgrp()
        groups: set[int] = set()
        if include_cli_group and self.is_running and self._process is not None:
            groups.add(self._process.pid)  # start_new_session: the CLI leads its own group
        for descendant in self.live_descendants():
            try:
                groups.add(os.getpgid(descendant.pid))
            except (ProcessLookupError, PermissionError):
                continue
        groups.discard(own_group)
        groups.discard(0)
        for group in groups:
            try:
                os.killpg(group, signal_number)
            except (ProcessLookupError, PermissionError):
                pass

    async def write_and_close(self, data: bytes) -> None:
        """Write ``data`` to stdin, then close it (a CLI that reads its input until EOF)."""
        await self.write(data)
        process = self._process
        if process is not None and process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()

    def signal_group(self, signal_number: int) -> None:
        """Send a signal to the CLI's process group and to the group of each recorded descendant."""
        self._signal_tree(signal_number)

    def signal_cli(self, signal_number: int) -> None:
        """Send a signal to the CLI process only."""
        if self.is_running and self._process is not None:
            try:
                self._process.send_signal(signal_number)
            except ProcessLookupError:
                pass

    async def end_tool_sessions(self, timeout: float = 1.0) -> int:
        """Kill recorded descendants living in sessions other than the CLI's (tool processes).

        Used after a clean interrupt: the CLI should have ended its tools itself; whatever is
        still running in another session is ended here. Returns how many groups were signalled.
        """
        if self._process is None:
            return 0
        cli_session = self._process.pid
        groups: set[int] = set()
        for descendant in self.live_descendants():
            try:
                if os.getsid(descendant.pid) != cli_session:
                    groups.add(os.getpgid(descendant.pid))
            except (ProcessLookupError, PermissionError):
                continue
        groups.discard(os.getpgrp())
        for group in groups:
            try:
                os.killpg(group, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        if groups:
            await self._wait_descendants_gone(timeout)
            for descendant in self.live_descendants():
                try:
                    if os.getsid(descendant.pid) != cli_session:
                        os.killpg(os.getpgid(descendant.pid), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    continue
        return len(groups)

    async def _wait_descendants_gone(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.live_descendants():
                return True
            await asyncio.sleep(0.02)
        return not self.live_descendants()

    # -- stopping -----------------------------------------------------------------------------------

    async def _wait_exit(self, timeout: float) -> bool:
        if self._process is None:
            return True
        try:
            await asyncio.wait_for(asyncio.shield(self._process.wait()), timeout=timeout)
        except TimeoutError:
            return False
        return True

    async def stop(self, bounds: StopBounds = StopBounds()) -> int | None:
        """Stop in bounded steps: close stdin, SIGINT, SIGTERM (tree), SIGKILL (tree), then orphans.

        Idempotent; survives being cancelled (the steps run to their end in a shielded task).
        Returns the exit code.
        """
        if self._process is None:
            return None
        async with self._stop_lock:
            stop_task = asyncio.ensure_future(self._stop_steps(bounds))
            try:
                await asyncio.shield(stop_task)
            except asyncio.CancelledError:
                await stop_task
                raise
        return self.returncode

    async def _stop_steps(self, bounds: StopBounds) -> None:
        assert self._process is not None
        process = self._process
        self.record_descendants(marked=True)
        if process.returncode is None and process.stdin is not None and not process.stdin.is_closing():
            logger.debug("stopping %s: closing its stdin (%g s)", self.label, bounds.close_stdin)
            process.stdin.close()
            await self._wait_exit(bounds.close_stdin)
        if process.returncode is None:
            logger.debug("stopping %s: SIGINT (%g s)", self.label, bounds.sigint)
            self.record_descendants()
            self.signal_cli(signal.SIGINT)
            await self._wait_exit(bounds.sigint)
        if process.returncode is None:
            logger.info("stopping %s: SIGTERM to its process tree (%g s)", self.label, bounds.sigterm)
            self.record_descendants()
            self._signal_tree(signal.SIGTERM)
            await self._wait_exit(bounds.sigterm)
        if process.returncode is None:
            logger.info("stopping %s: SIGKILL to its process tree", self.label)
            self.record_descendants()
            self._signal_tree(signal.SIGKILL)
            await self._wait_exit(bounds.sigkill)
        await process.wait()
        await self._end_orphans(bounds.orphans)
        if not self.exited.is_set() and any(not task.done() for task in self._tasks):
            try:  # stdout read to its end, then on_exit (unless those tasks were cancelled: a loop ending)
                await asyncio.wait_for(self.exited.wait(), timeout=5.0)
            except TimeoutError:
                pass
        for task in self._tasks:
            if not task.done():
                task.cancel()

    async def _end_orphans(self, timeout: float) -> None:
        """After the CLI is gone: end whatever it left behind (re-parented to PID 1, or carrying its mark)."""
        self.record_descendants(marked=True)
        leftovers = self.live_descendants()
        if not leftovers:
            return
        logger.info("%s left %d processes behind: ending them", self.label, len(leftovers))
        self._signal_tree(signal.SIGTERM, include_cli_group=False)
        if not await self._wait_descendants_gone(timeout):
            self._signal_tree(signal.SIGKILL, include_cli_group=False)
            await self._wait_descendants_gone(timeout)

    def kill_now(self) -> None:
        """Synchronous forced stop for the reaper (atexit, finalizers): SIGTERM then SIGKILL the tree."""
        if self._process is None:
            return
        if self._cli_alive() or self.live_descendants():
            logger.info("reaper: ending %s and its process tree", self.label)
        self.record_descendants(marked=True)
        self._signal_tree(signal.SIGTERM)
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline and (self._cli_alive() or self.live_descendants()):
            time.sleep(0.02)
        if self._cli_alive() or self.live_descendants():
            self._signal_tree(signal.SIGKILL)

    def _cli_alive(self) -> bool:
        if self._process is None:
            return False
        try:
            return psutil.Process(self._process.pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False
