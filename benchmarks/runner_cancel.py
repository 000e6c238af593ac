"""Cancel latency of a running turn: elynav_nb's ``turn.cancel()`` against ``ClaudeSDKClient.interrupt()``.

Where it sits: a plain benchmark script (not a test). Both clients drive the same embedded stand-in
CLI (``elynav-claude-standin``) in two situations:

  slow  ``@standin slow <s>``: a slowly streamed reply; cancelled once the first text delta arrived
  tool  ``@standin sleep-tool <s>``: a Bash ``sleep`` tool running in its own session; cancelled once
        the tool process exists

How it measures, per repetition (one long-lived CLI per client and mode, so every repetition after
the first also checks that the CLI is usable after an interrupt):

  result ms     from ``turn.cancel()`` (ours) / ``client.interrupt()`` (SDK) to the turn's result
                reaching the caller (``await turn`` / the ``ResultMessage``)
  tool gone ms  from the same instant to the moment every tool process the CLI started in another
                session is gone (dead or a zombie), polled in ``/proc`` by a thread every 0.5 ms
  survived      the CLI process that ran the turn is still alive after the result (a clean interrupt
                keeps it; the next repetition runs on it)

Run:  python benchmarks/runner_cancel.py [--repeat 10] [--clients ours,sdk] [--modes slow,tool]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

STANDIN_SCRIPT = "elynav-claude-standin"
TRIGGER_TIMEOUT_S = 30.0
RESULT_TIMEOUT_S = 30.0
TOOL_GONE_TIMEOUT_S = 5.0
POLL_INTERVAL_S = 0.0005


class BenchmarkFailed(RuntimeError):
    """The stand-in did not behave as the scenario needs (no delta, no tool process, no result)."""


@dataclass
class CancelSample:
    """One cancelled turn."""

    result_ms: float
    tool_gone_ms: float | None
    survived: bool
    outcome: str


@dataclass
class ScenarioResult:
    client: str
    mode: str
    samples: list[CancelSample] = field(default_factory=list)
    note: str = ""


# -- process helpers ----------------------------------------------------------------------------------


def find_standin() -> str:
    """The stand-in's console script, preferring the one next to this Python (no pyenv shim)."""
    beside_python = Path(sys.executable).parent / STANDIN_SCRIPT
    if beside_python.is_file() and os.access(beside_python, os.X_OK):
        return str(beside_python)
    found = shutil.which(STANDIN_SCRIPT)
    if found is None:
        raise BenchmarkFailed(f"{STANDIN_SCRIPT} is not installed; run `pip install -e . --no-deps`")
    return found


def process_is_gone(pid: int) -> bool:
    """True when ``/proc/<pid>`` is absent or the process is a zombie (it no longer runs)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            stat = stat_file.read()
    except (FileNotFoundError, ProcessLookupError):
        return True
    # The state letter follows the command name, which is in parentheses and may hold spaces.
    state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
    return state in (b"Z", b"X")


def process_is_alive(pid: int | None) -> bool:
    return pid is not None and not process_is_gone(pid)


def tool_processes(cli_pid: int) -> list[int]:
    """Descendants of the CLI that run in a session other than the CLI's (its tool processes)."""
    try:
        cli_session = os.getsid(cli_pid)
        children = psutil.Process(cli_pid).children(recursive=True)
    except (psutil.Error, ProcessLookupError):
        return []
    found = []
    for child in children:
        try:
            if os.getsid(child.pid) != cli_session and not process_is_gone(child.pid):
                found.append(child.pid)
        except (ProcessLookupError, PermissionError):
            continue
    return found


async def wait_for_tool_processes(cli_pid: int) -> list[int]:
    deadline = time.monotonic() + TRIGGER_TIMEOUT_S
    while time.monotonic() < deadline:
        pids = tool_processes(cli_pid)
        if pids:
            return pids
        await asyncio.sleep(0.005)
    raise BenchmarkFailed(
        f"no tool process appeared under the CLI (pid {cli_pid}) within {TRIGGER_TIMEOUT_S:g} s"
    )


class ToolWatcher:
    """A thread that records when every watched pid is gone, independent of the event loop."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = list(pids)
        self.gone_at: float | None = None
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._started_at = 0.0

    def start(self) -> None:
        self._started_at = time.perf_counter()
        self._thread.start()

    def _poll(self) -> None:
        deadline = self._started_at + TOOL_GONE_TIMEOUT_S
        remaining = list(self.pids)
        while remaining and time.perf_counter() < deadline:
            remaining = [pid for pid in remaining if not process_is_gone(pid)]
            if not remaining:
                self.gone_at = time.perf_counter()
                return
            time.sleep(POLL_INTERVAL_S)

    def join(self) -> None:
        self._thread.join(TOOL_GONE_TIMEOUT_S + 1.0)


def end_leftovers(pids: list[int]) -> None:
    """Kill tool processes a client left running (after the measurement), so nothing outlives the run."""
    for pid in pids:
        if process_is_gone(pid):
            continue
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def prompt_for(mode: str, seconds: float) -> str:
    if mode == "slow":
        return f"@standin slow {seconds:g}"
    return f"@standin sleep-tool {seconds:g}"


# -- our runner ----------------------------------------------------------------------------------------


async def run_ours(
    standin: str, mode: str, repeat: int, seconds: float, workspace: Path, permission_mode: str | None
) -> ScenarioResult:
    from elynav_nb.agents.events import TextDelta, ToolUse
    from elynav_nb.agents.runner import AgentRunner

    scenario = ScenarioResult("ours", mode)
    runner = AgentRunner(None, workspace, executable=standin, permission_mode=permission_mode)
    try:
        await runner.start()
        for _ in range(repeat):
            turn = runner.send(prompt_for(mode, seconds))
            cli_pid = runner.pid
            assert cli_pid is not None
            triggered = False
            async with asyncio.timeout(TRIGGER_TIMEOUT_S):
                async for event in turn:
                    if mode == "slow" and isinstance(event, TextDelta):
                        triggered = True
                        break
                    if mode == "tool" and isinstance(event, ToolUse):
                        triggered = True
                        break
            if not triggered:
                raise BenchmarkFailed(f"ours/{mode}: the turn ended before the trigger ({turn.status})")
            watcher = None
            if mode == "tool":
                watcher = ToolWatcher(await wait_for_tool_processes(cli_pid))
            else:
                await asyncio.sleep(0.2)  # well inside the streamed reply
            started = time.perf_counter()
            if watcher is not None:
                watcher.start()
            turn.cancel()
            async with asyncio.timeout(RESULT_TIMEOUT_S):
                result = await turn
            result_at = time.perf_counter()
            tool_gone_ms = None
            if watcher is not None:
                await asyncio.to_thread(watcher.join)  # never block the loop: the runner ends tools there
                tool_gone_ms = (
                    (watcher.gone_at - started) * 1000 if watcher.gone_at is not None else float("inf")
                )
                end_leftovers(watcher.pids)
            survived = process_is_alive(cli_pid) and runner.pid == cli_pid
            outcome = f"{result.outcome}/{result.terminal_reason or '-'}"
            scenario.samples.append(
                CancelSample((result_at - started) * 1000, tool_gone_ms, survived, outcome)
            )
    finally:
        await runner.stop()
    return scenario


# -- claude-agent-sdk ------------------------------------------------------------------------------------


def sdk_cli_pid(before: set[int]) -> int:
    """The CLI process the SDK client spawned: the one new child of this process."""
    new_children = [
        child.pid for child in psutil.Process().children(recursive=False) if child.pid not in before
    ]
    if len(new_children) != 1:
        raise BenchmarkFailed(f"expected one CLI process spawned by the SDK client, found {new_children}")
    return int(new_children[0])


async def run_sdk(
    standin: str, mode: str, repeat: int, seconds: float, workspace: Path, permission_mode: str | None
) -> ScenarioResult:
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
    from claude_agent_sdk.types import AssistantMessage, ResultMessage, StreamEvent, ToolUseBlock

    scenario = ScenarioResult("sdk", mode)
    stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
    options = ClaudeAgentOptions(
        cli_path=standin,
        include_partial_messages=True,
        cwd=str(workspace),
        stderr=stderr_tail.append,
        permission_mode=permission_mode,  # type: ignore[arg-type]
    )
    children_before = {child.pid for child in psutil.Process().children(recursive=False)}
    client = ClaudeSDKClient(options=options)
    await client.connect()
    try:
        cli_pid = sdk_cli_pid(children_before)
        for _ in range(repeat):
            if not process_is_alive(cli_pid):
                scenario.note = "the CLI died; later repetitions skipped"
                break
            await client.query(prompt_for(mode, seconds))
            started = 0.0
            result_at = 0.0
            outcome = "no result"
            watcher = None
            async with asyncio.timeout(TRIGGER_TIMEOUT_S + RESULT_TIMEOUT_S):
                async for message in client.receive_response():
                    if started == 0.0:
                        is_trigger = False
                        if mode == "slow" and isinstance(message, StreamEvent):
                            delta = message.event.get("delta", {})
                            is_trigger = (
                                message.event.get("type") == "content_block_delta"
                                and delta.get("type") == "text_delta"
                            )
                        if mode == "tool" and isinstance(message, AssistantMessage):
                            is_trigger = any(isinstance(block, ToolUseBlock) for block in message.content)
                        if is_trigger:
                            if mode == "tool":
                                watcher = ToolWatcher(await wait_for_tool_processes(cli_pid))
                            else:
                                await asyncio.sleep(0.2)
                            started = time.perf_counter()
                            if watcher is not None:
                                watcher.start()
                            await client.interrupt()
                    if isinstance(message, ResultMessage):
                        result_at = time.perf_counter()
                        outcome = f"{message.subtype}/{getattr(message, 'terminal_reason', None) or '-'}"
            if started == 0.0:
                raise BenchmarkFailed(
                    f"sdk/{mode}: the turn ended before the trigger ({outcome}; {list(stderr_tail)})"
                )
            tool_gone_ms = None
            if watcher is not None:
                await asyncio.to_thread(watcher.join)  # never block the loop: the runner ends tools there
                tool_gone_ms = (
                    (watcher.gone_at - started) * 1000 if watcher.gone_at is not None else float("inf")
                )
                end_leftovers(watcher.pids)
            survived = process_is_alive(cli_pid)
            scenario.samples.append(
                CancelSample((result_at - started) * 1000, tool_gone_ms, survived, outcome)
            )
    finally:
        await client.disconnect()
    return scenario


# -- report ------------------------------------------------------------------------------------------------


def median_and_max(values: list[float]) -> tuple[float, float]:
    return statistics.median(values), max(values)


def format_ms(values: list[float]) -> tuple[str, str]:
    """Median and max as text; ``never`` stands for "still running after the watch bound"."""
    if not values:
        return "-", "-"
    median, maximum = median_and_max(values)
    median_text = "never" if median == float("inf") else f"{median:.1f}"
    maximum_text = "never" if maximum == float("inf") else f"{maximum:.1f}"
    return median_text, maximum_text


def print_table(scenarios: list[ScenarioResult]) -> None:
    print()
    header = (
        f"{'client':<6} {'mode':<5} {'n':>3} {'result ms med':>13} {'max':>7} "
        f"{'tool gone ms med':>16} {'max':>7} {'CLI survived':>12}  outcomes"
    )
    print(header)
    print("-" * len(header))
    for scenario in scenarios:
        result_median, result_max = format_ms([sample.result_ms for sample in scenario.samples])
        tool_median, tool_max = format_ms(
            [sample.tool_gone_ms for sample in scenario.samples if sample.tool_gone_ms is not None]
        )
        survived = sum(1 for sample in scenario.samples if sample.survived)
        survived_text = f"{survived}/{len(scenario.samples)}"
        outcomes = collections.Counter(sample.outcome for sample in scenario.samples)
        outcome_text = ", ".join(f"{name} x{count}" for name, count in outcomes.items())
        print(
            f"{scenario.client:<6} {scenario.mode:<5} {len(scenario.samples):>3} {result_median:>13} {result_max:>7} "
            f"{tool_median:>16} {tool_max:>7} {survived_text:>12}  {outcome_text} {scenario.note}"
        )
    print(
        f"(never = a tool process was still running {TOOL_GONE_TIMEOUT_S:g} s after the cancel; the script then killed it)"
    )
    by_key = {(scenario.client, scenario.mode): scenario for scenario in scenarios}
    lines = []
    for mode in ("slow", "tool"):
        ours = by_key.get(("ours", mode))
        sdk = by_key.get(("sdk", mode))
        if ours is None or sdk is None or not ours.samples or not sdk.samples:
            continue
        ours_median = statistics.median(sample.result_ms for sample in ours.samples)
        sdk_median = statistics.median(sample.result_ms for sample in sdk.samples)
        lines.append(f"  {mode}: result latency ours / SDK = {ours_median / sdk_median:.2f}x (median)")
    if lines:
        print()
        print("Ratios (lower is better)")
        print("\n".join(lines))


async def run_all(args: argparse.Namespace) -> list[ScenarioResult]:
    standin = find_standin()
    runners: dict[str, Callable[..., Any]] = {"ours": run_ours, "sdk": run_sdk}
    scenarios = []
    for mode in args.modes.split(","):
        for client in args.clients.split(","):
            with tempfile.TemporaryDirectory(prefix=f"elynav-cancel-{client}-") as workspace:
                scenario = await runners[client](
                    standin, mode, args.repeat, args.seconds, Path(workspace), args.permission_mode
                )
            scenarios.append(scenario)
            print(f"{client}/{mode}: {len(scenario.samples)} samples", flush=True)
    gc.collect()  # let the SDK's subprocess transports close while the loop still runs
    return scenarios


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repeat", type=int, default=10, help="cancelled turns per client and mode (default 10)"
    )
    parser.add_argument("--clients", default="ours,sdk", help="comma-separated: ours, sdk")
    parser.add_argument("--modes", default="slow,tool", help="comma-separated: slow, tool")
    parser.add_argument(
        "--seconds", type=float, default=30.0, help="length of the slow reply / the sleep tool"
    )
    parser.add_argument("--permission-mode", default=None, help="permission mode given to both clients")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="elynav-cancel-home-") as home:
        os.environ["HOME"] = home  # sessions of the stand-in land in a throw-away home
        os.environ.pop("CLAUDECODE", None)
        scenarios = asyncio.run(run_all(args))
    print_table(scenarios)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchmarkFailed as failure:
        print(f"BENCHMARK FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
