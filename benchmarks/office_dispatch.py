"""Dispatch overhead of the office: ``await office.ask(agent, text)`` against ``await runner.send(text)``.

Where it sits: a plain benchmark script (not a test). There is no public peer with an office, so the
peer is our own ``AgentRunner`` with the same agent definition, driving the same embedded stand-in
CLI (``executable="standin"``). The stand-in answers ``hello <n>`` with its echo reply in ~1 ms,
so what is left between the two is the office's own cost per ask: the checks of ``submit``, the
``Ask`` and its future, three history records (one ``os.open`` + ``write`` each), the deadline
timer, the listener calls, the dispatch task, the ``Reply``.

Part 1, in-process: N sequential asks on one office and N sequential turns on one runner, both
warmed first (CLI spawned, ``--warmup`` unmeasured asks each), measured in blocks of ``--block``
that alternate office, runner, office, runner... (ABAB: the shared machine is noisy). Per ask:
wall latency from the call to the reply in the caller's hands (median, mean, p99), CPU time of
this process (``time.process_time``, all threads, per block / block size: the CLI's own CPU is in
its process and not counted) and CPU time of the event loop's thread alone (``time.thread_time``):
the runner walks ``/proc`` in a worker thread at the start of every turn (psutil, to know the CLI's
descendants), which is most of the process CPU per turn and varies a lot between runs; the loop
thread's figure leaves it out. Then office minus runner, in µs and as a ratio.

Part 2, from a subprocess: ``elynav ask w-a hello --socket <office.socket_path>`` spawned
``--spawns`` times (the way an agent's Bash tool runs it; the caller identified over the socket is
the user), round-robin with ``python -c pass`` (the same interpreter's bare start-up), with
``python -c 'import elynav_nb.cli, elynav_nb.office.ask_command, elynav_nb.office.wire'`` (start-up
plus the command's imports) and with an in-process ``office.ask``: what the command costs, and how
much of it is Python start-up. Wall time from the spawn to the exit, output read through pipes.

Run:  python benchmarks/office_dispatch.py [--asks 500] [--block 50] [--warmup 50] [--spawns 30]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
from office_common import (
    BenchmarkFailed,
    isolated_standin_home,
    percentile,
    processes_left,
    report_processes_left,
    run_script,
    worker,
)

if TYPE_CHECKING:
    from elynav_nb.agents.runner import AgentRunner
    from elynav_nb.office import Office

AGENT = "w-a"
SUBPROCESS_TIMEOUT_S = 60.0


@dataclass
class Series:
    """Latencies (ms) and CPU seconds of one client."""

    name: str
    latencies_ms: list[float] = field(default_factory=list)
    cpu_seconds: float = 0.0
    loop_cpu_seconds: float = 0.0

    @property
    def median(self) -> float:
        return statistics.median(self.latencies_ms)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.latencies_ms)

    @property
    def cpu_us_per_ask(self) -> float:
        return self.cpu_seconds / len(self.latencies_ms) * 1e6

    @property
    def loop_cpu_us_per_ask(self) -> float:
        return self.loop_cpu_seconds / len(self.latencies_ms) * 1e6


def elynav_script() -> str:
    beside_python = Path(sys.executable).parent / "elynav"
    if not beside_python.is_file():
        raise BenchmarkFailed(
            f"no elynav console script next to {sys.executable}; run `pip install -e . --no-deps`"
        )
    return str(beside_python)


# -- part 1: office.ask against runner.send, in process ----------------------------------------------


async def office_call(office: Office, number: int) -> None:
    reply = await office.ask(AGENT, f"hello {number}")
    if not reply.ok or not reply.text.endswith(f"You said: hello {number}"):
        raise BenchmarkFailed(
            f"office ask {number} ended {reply.outcome}: {reply.text[-80:]!r} {reply.error}"
        )


async def runner_call(runner: AgentRunner, number: int) -> None:
    result = await runner.send(f"hello {number}")
    if result.outcome != "completed" or not result.text.endswith(f"You said: hello {number}"):
        raise BenchmarkFailed(
            f"runner turn {number} ended {result.outcome}: {result.text[-80:]!r} {result.error}"
        )


async def measure_block(series: Series, call: Callable[[int], Awaitable[None]], numbers: range) -> None:
    cpu_started, loop_cpu_started = time.process_time(), time.thread_time()
    for number in numbers:
        started = time.perf_counter()
        await call(number)
        series.latencies_ms.append((time.perf_counter() - started) * 1000)
    series.cpu_seconds += time.process_time() - cpu_started
    series.loop_cpu_seconds += (
        time.thread_time() - loop_cpu_started
    )  # this coroutine runs on the loop's thread


async def in_process(office: Office, runner: AgentRunner, args: argparse.Namespace) -> tuple[Series, Series]:
    office_series, runner_series = Series("office.ask"), Series("runner.send")
    for number in range(args.warmup):
        await office_call(office, -1 - number)
        await runner_call(runner, -1 - number)
    for block_start in range(0, args.asks, args.block):
        numbers = range(block_start, min(block_start + args.block, args.asks))
        await measure_block(office_series, lambda number: office_call(office, number), numbers)
        await measure_block(runner_series, lambda number: runner_call(runner, number), numbers)
    return office_series, runner_series


# -- part 2: elynav ask from a subprocess ------------------------------------------------------------


async def run_subprocess(argv: list[str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=SUBPROCESS_TIMEOUT_S)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise BenchmarkFailed(f"{argv[:3]} did not end within {SUBPROCESS_TIMEOUT_S:g} s") from None
    return process.returncode or 0, stdout.decode(), stderr.decode()


COMMAND_IMPORTS = "import elynav_nb.cli, elynav_nb.office.ask_command, elynav_nb.office.wire"


async def timed_subprocess(
    series: Series, argv: list[str], measured: bool, expected_stdout_end: str = ""
) -> None:
    started = time.perf_counter()
    code, stdout, stderr = await run_subprocess(argv)
    elapsed = (time.perf_counter() - started) * 1000
    if code != 0 or not stdout.strip().endswith(expected_stdout_end):
        raise BenchmarkFailed(f"{series.name} exited {code}: {stdout[-80:]!r} {stderr[-300:]!r}")
    if measured:
        series.latencies_ms.append(elapsed)


async def from_subprocess(office: Office, args: argparse.Namespace) -> list[Series]:
    """Round-robin: elynav ask, python -c pass, python -c '<its imports>', office.ask in process."""
    command = elynav_script()
    ask_series = Series(f"elynav ask {AGENT} hello --socket ... (spawn to exit)")
    start_series = Series("python -c pass (interpreter start-up)")
    import_series = Series("python -c 'import <what elynav ask imports>'")
    office_series = Series("await office.ask(...) in process")
    socket_path = str(office.socket_path)
    for number in range(args.spawns + 2):  # the first two of each are warm-up (page cache, pyc files)
        measured = number >= 2
        await timed_subprocess(
            ask_series,
            [command, "ask", AGENT, f"hello {number}", "--socket", socket_path],
            measured,
            f"You said: hello {number}",
        )
        await timed_subprocess(start_series, [sys.executable, "-c", "pass"], measured)
        await timed_subprocess(import_series, [sys.executable, "-c", COMMAND_IMPORTS], measured)
        started = time.perf_counter()
        await office_call(office, 10_000 + number)
        if measured:
            office_series.latencies_ms.append((time.perf_counter() - started) * 1000)
    return [ask_series, start_series, import_series, office_series]


# -- report -------------------------------------------------------------------------------------------


def print_in_process(office_series: Series, runner_series: Series) -> None:
    print()
    header = f"{'client':<12} {'n':>5} {'median ms':>9} {'mean ms':>8} {'p99 ms':>7} {'CPU µs/ask':>10} {'loop thread':>11}"
    print(header)
    print("-" * len(header))
    for series in (office_series, runner_series):
        print(
            f"{series.name:<12} {len(series.latencies_ms):>5} {series.median:>9.3f} {series.mean:>8.3f} "
            f"{percentile(series.latencies_ms, 0.99):>7.3f} {series.cpu_us_per_ask:>10.0f} "
            f"{series.loop_cpu_us_per_ask:>11.0f}"
        )
    median_extra = (office_series.median - runner_series.median) * 1000
    mean_extra = (office_series.mean - runner_series.mean) * 1000
    cpu_extra = office_series.cpu_us_per_ask - runner_series.cpu_us_per_ask
    loop_extra = office_series.loop_cpu_us_per_ask - runner_series.loop_cpu_us_per_ask
    print()
    print("Office overhead per ask (office minus runner; ratio office / runner)")
    print(f"  median latency  {median_extra:+8.0f} µs   {office_series.median / runner_series.median:.2f}x")
    print(f"  mean latency    {mean_extra:+8.0f} µs   {office_series.mean / runner_series.mean:.2f}x")
    print(
        f"  CPU time        {cpu_extra:+8.0f} µs   {office_series.cpu_us_per_ask / runner_series.cpu_us_per_ask:.2f}x"
    )
    print(
        f"  loop-thread CPU {loop_extra:+8.0f} µs   "
        f"{office_series.loop_cpu_us_per_ask / runner_series.loop_cpu_us_per_ask:.2f}x"
    )
    print(
        "  (CPU time: every thread of this process; loop thread: the event loop's thread alone, without\n"
        "   worker threads such as the runner's /proc scans while a tool runs)"
    )


def print_subprocess(
    ask_series: Series, start_series: Series, import_series: Series, office_series: Series
) -> None:
    print()
    header = f"{'how':<52} {'n':>3} {'median ms':>9} {'mean ms':>8} {'p99 ms':>7}"
    print(header)
    print("-" * len(header))
    for series in (ask_series, start_series, import_series, office_series):
        print(
            f"{series.name:<52} {len(series.latencies_ms):>3} {series.median:>9.1f} {series.mean:>8.1f} "
            f"{percentile(series.latencies_ms, 0.99):>7.1f}"
        )
    command_cost = ask_series.median - office_series.median
    imports = import_series.median - start_series.median
    rest = ask_series.median - import_series.median - office_series.median
    print()
    print(
        f"elynav ask = {ask_series.median / office_series.median:.0f}x office.ask, {command_cost:.1f} ms more (medians): "
        f"interpreter start-up {start_series.median:.1f} ms ({start_series.median / command_cost * 100:.0f} %), "
        f"its imports {imports:.1f} ms ({imports / command_cost * 100:.0f} %), "
        f"the rest (argument parsing, connect, caller identified from the process tree, reply over the socket, exit) "
        f"{rest:.1f} ms ({rest / command_cost * 100:.0f} %)"
    )


async def run_all(args: argparse.Namespace, folder: Path) -> int:
    from elynav_nb.agents.runner import AgentRunner
    from elynav_nb.office import Office

    office = Office(folder / "office", [worker(AGENT)], executable="standin")
    runner_folder = folder / "runner"
    runner_folder.mkdir()
    runner = AgentRunner(worker(AGENT), runner_folder, executable="standin")
    cli_pids: list[int] = []
    try:
        await office.start()
        await runner.start()
        office_series, runner_series = await in_process(office, runner, args)
        cli_pids = [pid for pid in (office.employee(AGENT).runner.pid, runner.pid) if pid is not None]
        print(
            f"part 1: {len(office_series.latencies_ms)} office asks, {len(runner_series.latencies_ms)} runner turns",
            flush=True,
        )
        subprocess_series = await from_subprocess(office, args) if args.spawns > 0 else None
    finally:
        await office.stop()
        await runner.stop()
    print_in_process(office_series, runner_series)
    if subprocess_series is not None:
        print_subprocess(*subprocess_series)
    left = processes_left()
    left += [
        pid
        for pid in cli_pids
        if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    ]
    report_processes_left(left)
    return 1 if left else 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--asks", type=int, default=500, help="measured asks per client (default 500)")
    parser.add_argument(
        "--block", type=int, default=50, help="asks per block; blocks alternate office/runner (default 50)"
    )
    parser.add_argument(
        "--warmup", type=int, default=50, help="unmeasured asks per client first (default 50)"
    )
    parser.add_argument(
        "--spawns", type=int, default=30, help="elynav ask subprocesses (0: skip part 2; default 30)"
    )
    args = parser.parse_args()
    with isolated_standin_home("elynav-office-dispatch-") as folder:
        return asyncio.run(run_all(args, folder))


if __name__ == "__main__":
    run_script(main)
