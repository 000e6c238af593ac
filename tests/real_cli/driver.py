"""A small test-side driver: spawn one turn's ``TurnCommand``, feed its stdout lines to a codec.

This is the seam the runner will use in phase 2 (process per turn): write the plan's config
files, spawn in a new session with stdin on /dev/null, decode each stdout line as it arrives,
wait for the exit (bounded: SIGINT to the group, then SIGKILL), ask the codec for the verdict.
Each line is kept with its arrival time, so a test can check that events streamed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from elynav_nb.agents.events import AgentEvent
from elynav_nb.agents.protocols.codec import TurnVerdict
from elynav_nb.agents.protocols.launch import ConfigFile, TurnCommand

STOP_GRACE_SECONDS = 5.0


class PerTurnDecoder(Protocol):
    def decode_line(self, line: bytes | str) -> list[AgentEvent]: ...

    def verdict(self, exit_code: int | None, *, cancel_requested: bool = False) -> TurnVerdict: ...


@dataclass
class TurnRun:
    """What one turn's process did."""

    argv: tuple[str, ...]
    lines: list[bytes] = field(default_factory=list)
    line_times: list[float] = field(default_factory=list)
    events: list[AgentEvent] = field(default_factory=list)
    exit_code: int | None = None
    stderr: str = ""
    spawned_at: float = 0.0
    exited_at: float = 0.0
    timed_out: bool = False
    verdict: TurnVerdict | None = None

    def of_type(self, kind: type[Any]) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]

    @property
    def text(self) -> str:
        from elynav_nb.agents.results import main_text

        return main_text(self.events)


def write_config_files(files: Sequence[ConfigFile]) -> None:
    for config_file in files:
        config_file.path.parent.mkdir(parents=True, exist_ok=True)
        config_file.path.write_text(config_file.text, encoding="utf-8")


async def run_turn(
    command: TurnCommand,
    decoder: PerTurnDecoder,
    *,
    timeout: float = 120.0,
    on_event: Callable[[AgentEvent, TurnRun], None] | None = None,
) -> TurnRun:
    """Run one turn to its end (or to ``timeout``, then stop the process group)."""
    run = TurnRun(argv=command.argv)
    run.spawned_at = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *command.argv,
        cwd=str(command.cwd),
        env=dict(command.environment),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=command.new_session,
        limit=64 * 1024 * 1024,
    )
    assert process.stdout is not None and process.stderr is not None
    stderr_task = asyncio.create_task(process.stderr.read())

    async def read_lines() -> None:
        assert process.stdout is not None
        while line := await process.stdout.readline():
            stripped = line.rstrip(b"\r\n")
            if not stripped.strip():
                continue
            run.lines.append(stripped)
            run.line_times.append(time.monotonic())
            for event in decoder.decode_line(stripped):
                run.events.append(event)
                if on_event is not None:
                    on_event(event, run)

    try:
        await asyncio.wait_for(read_lines(), timeout)
        run.exit_code = await asyncio.wait_for(process.wait(), STOP_GRACE_SECONDS * 2)
    except TimeoutError:
        run.timed_out = True
        run.exit_code = await stop_group(process)
    run.exited_at = time.monotonic()
    run.stderr = (await stderr_task).decode("utf-8", errors="replace")
    run.verdict = decoder.verdict(run.exit_code, cancel_requested=run.timed_out)
    return run


async def stop_group(process: asyncio.subprocess.Process) -> int:
    """SIGINT to the process group, then SIGKILL after a grace period."""
    for signal_number in (signal.SIGINT, signal.SIGKILL):
        try:
            os.killpg(process.pid, signal_number)
        except ProcessLookupError:
            break
        try:
            return await asyncio.wait_for(process.wait(), STOP_GRACE_SECONDS)
        except TimeoutError:
            continue
    return await process.wait()
