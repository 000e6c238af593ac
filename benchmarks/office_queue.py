"""A burst of asks to one employee: 1,000 ``office.submit`` at once, then every reply; against a bare runner.

Where it sits: a plain benchmark script (not a test). There is no public peer with an office, so the
peer is our own ``AgentRunner`` with the same agent definition, driving the same embedded stand-in
CLI (``executable="standin"``) through the same 1,000 prompts, one ``await runner.send(text)``
after the other: the stand-in's own work plus the bare runner's. The office can go no faster than
that (one employee serves one ask at a time), so office minus runner is the cost of queueing.

How it measures, per repetition (a fresh office and a fresh runner each time, both warmed with one
ask so no CLI spawn is counted; office and runner alternate):

  timed burst   ``office.submit("w-a", f"question {i}")`` x N in one go (each call timed), then
                ``asyncio.gather`` of the N asks: total time from the first submit to the last reply;
                every reply checked (done, its own text), the order checked: a listener on
                ``started`` must see the asks in exact submission order; RSS of this process
                (``psutil``) before, after the N submits and after the last reply
  history       ``office.history()`` right after: the N + 1 row DataFrame (the warm-up ask is a row)
  runner        N sequential ``await runner.send(f"question {i}")`` on a fresh warmed runner
  traced burst  the same burst on another fresh office under ``tracemalloc``: memory held per queued
                ask (after the N submits), the peak during the burst, and what stays allocated once
                the caller dropped its ``Ask`` handles (the office keeps finished asks, the runner its
                ``TurnResult`` history); the runner's N turns traced the same way for comparison.
                Traced runs are slower, so their times are not reported.

Run:  python benchmarks/office_queue.py [--asks 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
from office_common import (
    BenchmarkFailed,
    isolated_standin_home,
    processes_left,
    report_processes_left,
    run_script,
    worker,
)

if TYPE_CHECKING:
    from elynav_nb.agents.runner import AgentRunner
    from elynav_nb.office import Ask, Office

AGENT = "w-a"
BURST_TIMEOUT_S = 600.0


@dataclass
class BurstTimes:
    """One timed office burst."""

    total_s: float
    submit_all_s: float
    submit_median_us: float
    submit_max_us: float
    submit_max_index: int
    rss_queued_bytes: int
    rss_after_bytes: int
    history_s: float
    history_rows: int


@dataclass
class TracedMemory:
    """One traced burst (office) or run (runner), in bytes."""

    queued: int
    peak: int
    retained: int


@dataclass
class Results:
    bursts: list[BurstTimes] = field(default_factory=list)
    runner_totals_s: list[float] = field(default_factory=list)
    office_memory: list[TracedMemory] = field(default_factory=list)
    runner_memory: list[TracedMemory] = field(default_factory=list)


def rss_bytes() -> int:
    return int(psutil.Process().memory_info().rss)


async def started_office(folder: Path) -> Office:
    from elynav_nb.office import Office

    office = Office(folder, [worker(AGENT)], executable="standin")
    await office.start()
    reply = await office.ask(AGENT, "warm up")  # the CLI is spawned here, not in the burst
    if not reply.ok:
        await office.stop()
        raise BenchmarkFailed(f"the warm-up ask failed: {reply}")
    office.history()  # pandas is imported here, not in the measured call
    return office


async def started_runner(folder: Path) -> AgentRunner:
    from elynav_nb.agents.runner import AgentRunner

    folder.mkdir()
    runner = AgentRunner(worker(AGENT), folder, executable="standin")
    await runner.start()
    await runner.send("warm up")
    return runner


def check_replies(asks: list[Ask], started_order: list[str]) -> None:
    if started_order != [ask.id for ask in asks]:
        first_wrong = next(
            (
                index
                for index, (seen, ask) in enumerate(zip(started_order, asks, strict=False))
                if seen != ask.id
            ),
            min(len(started_order), len(asks)),
        )
        raise BenchmarkFailed(
            f"asks were not served in submission order: {len(started_order)} started, first difference at #{first_wrong}"
        )
    for number, ask in enumerate(asks):
        reply = ask.reply
        if reply is None or not reply.ok or not reply.text.endswith(f"You said: question {number}"):
            raise BenchmarkFailed(f"ask #{number} ended wrongly: {reply!r}")


async def submit_burst(office: Office, count: int, submit_us: list[float] | None = None) -> list[Ask]:
    asks: list[Ask] = []
    for number in range(count):
        started = time.perf_counter()
        asks.append(office.submit(AGENT, f"question {number}"))
        if submit_us is not None:
            submit_us.append((time.perf_counter() - started) * 1e6)
    return asks


async def timed_burst(folder: Path, count: int) -> BurstTimes:
    office = await started_office(folder)
    try:
        started_order: list[str] = []

        def on_event(event: str, ask: Ask | None) -> None:
            if event == "started" and ask is not None:
                started_order.append(ask.id)

        office.add_listener(on_event)
        gc.collect()
        rss_before = rss_bytes()
        submit_us: list[float] = []
        started = time.perf_counter()
        asks = await submit_burst(office, count, submit_us)
        submitted = time.perf_counter()
        rss_queued = rss_bytes()
        async with asyncio.timeout(BURST_TIMEOUT_S):
            await asyncio.gather(*asks)
        ended = time.perf_counter()
        rss_after = rss_bytes()
        check_replies(asks, started_order)
        history_started = time.perf_counter()
        history = office.history()
        history_s = time.perf_counter() - history_started
        if len(history) != count + 1 or not (history["outcome"] == "done").all():
            raise BenchmarkFailed(f"the history has {len(history)} rows, not {count + 1} done asks")
    finally:
        await office.stop()
    return BurstTimes(
        total_s=ended - started,
        submit_all_s=submitted - started,
        submit_median_us=statistics.median(submit_us),
        submit_max_us=max(submit_us),
        submit_max_index=submit_us.index(max(submit_us)),
        rss_queued_bytes=rss_queued - rss_before,
        rss_after_bytes=rss_after - rss_before,
        history_s=history_s,
        history_rows=len(history),
    )


async def timed_runner(folder: Path, count: int) -> float:
    runner = await started_runner(folder)
    try:
        started = time.perf_counter()
        for number in range(count):
            result = await runner.send(f"question {number}")
            if result.outcome != "completed" or not result.text.endswith(f"You said: question {number}"):
                raise BenchmarkFailed(f"runner turn #{number} ended {result.outcome}: {result.text[-80:]!r}")
        return time.perf_counter() - started
    finally:
        await runner.stop()


async def traced_burst(folder: Path, count: int) -> TracedMemory:
    office = await started_office(folder)
    try:
        gc.collect()
        tracemalloc.start()
        baseline = tracemalloc.get_traced_memory()[0]
        asks = await submit_burst(office, count)
        queued = tracemalloc.get_traced_memory()[0] - baseline
        async with asyncio.timeout(BURST_TIMEOUT_S):
            await asyncio.gather(*asks)
        peak = tracemalloc.get_traced_memory()[1] - baseline
        del asks  # the caller lets go of its handles; what stays is the office's (and its runner's)
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
        await office.stop()
    return TracedMemory(queued, peak, retained)


async def traced_runner(folder: Path, count: int) -> TracedMemory:
    runner = await started_runner(folder)
    try:
        gc.collect()
        tracemalloc.start()
        baseline = tracemalloc.get_traced_memory()[0]
        for number in range(count):
            await runner.send(f"question {number}")
        peak = tracemalloc.get_traced_memory()[1] - baseline
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
        await runner.stop()
    return TracedMemory(0, peak, retained)


# -- report -------------------------------------------------------------------------------------------


def print_report(results: Results, count: int) -> None:
    bursts = results.bursts
    office_total = statistics.median(burst.total_s for burst in bursts)
    runner_total = statistics.median(results.runner_totals_s)
    print()
    header = f"{'what':<58} {'median':>10}   per run"
    print(header)
    print("-" * len(header))
    rows = [
        (
            f"office: {count:,} submits then every reply, total s",
            office_total,
            [b.total_s for b in bursts],
            "{:.2f}",
        ),
        (f"runner: {count:,} sequential send, total s", runner_total, results.runner_totals_s, "{:.2f}"),
        (
            "office: ms per ask (total / N)",
            office_total / count * 1000,
            [b.total_s / count * 1000 for b in bursts],
            "{:.3f}",
        ),
        (
            "runner: ms per turn (total / N)",
            runner_total / count * 1000,
            [t / count * 1000 for t in results.runner_totals_s],
            "{:.3f}",
        ),
        (
            f"office: all {count:,} submit calls, ms",
            statistics.median(b.submit_all_s * 1000 for b in bursts),
            [b.submit_all_s * 1000 for b in bursts],
            "{:.1f}",
        ),
        (
            "office: one submit call, median µs",
            statistics.median(b.submit_median_us for b in bursts),
            [b.submit_median_us for b in bursts],
            "{:.0f}",
        ),
        (
            "office: one submit call, max µs (which call: "
            + ", ".join(f"#{b.submit_max_index}" for b in bursts)
            + ")",
            statistics.median(b.submit_max_us for b in bursts),
            [b.submit_max_us for b in bursts],
            "{:.0f}",
        ),
        (
            f"office.history(): {bursts[0].history_rows:,} rows, ms",
            statistics.median(b.history_s * 1000 for b in bursts),
            [b.history_s * 1000 for b in bursts],
            "{:.1f}",
        ),
    ]
    for label, median, values, number_format in rows:
        per_run = " / ".join(number_format.format(value) for value in values)
        print(f"{label:<58} {number_format.format(median):>10}   {per_run}")
    extra_ms = (office_total - runner_total) / count * 1000
    print()
    print(
        f"Queueing cost: office / runner total {office_total / runner_total:.2f}x; "
        f"{extra_ms * 1000:+.0f} µs per ask beyond the runner's turn (stand-in work included in both)"
    )
    print(
        f"Order: every burst served in exact submission order ({len(bursts)}/{len(bursts)} checked, {count:,} asks each)"
    )
    print()
    print("Memory per ask (bytes; tracemalloc on separate traced runs, RSS on the timed ones)")
    office_memory, runner_memory = results.office_memory, results.runner_memory
    memory_rows = [
        ("office: held per queued ask (after the N submits)", [m.queued / count for m in office_memory]),
        ("office: peak during the burst, per ask", [m.peak / count for m in office_memory]),
        ("office: still allocated after the burst, per ask", [m.retained / count for m in office_memory]),
        ("runner: peak during N turns, per turn", [m.peak / count for m in runner_memory]),
        ("runner: still allocated after N turns, per turn", [m.retained / count for m in runner_memory]),
        ("RSS growth after the N submits, per ask", [b.rss_queued_bytes / count for b in bursts]),
        ("RSS growth after the last reply, per ask", [b.rss_after_bytes / count for b in bursts]),
    ]
    for label, values in memory_rows:
        per_run = " / ".join(f"{value:,.0f}" for value in values)
        print(f"  {label:<56} {statistics.median(values):>10,.0f}   {per_run}")
    print("  (RSS: the first run grows the heap; later runs reuse what the earlier offices freed)")


async def run_all(args: argparse.Namespace, folder: Path) -> Results:
    results = Results()
    for repetition in range(args.repeat):
        results.bursts.append(await timed_burst(folder / f"office-{repetition}", args.asks))
        results.runner_totals_s.append(await timed_runner(folder / f"runner-{repetition}", args.asks))
        results.office_memory.append(await traced_burst(folder / f"traced-office-{repetition}", args.asks))
        results.runner_memory.append(await traced_runner(folder / f"traced-runner-{repetition}", args.asks))
        print(
            f"run {repetition + 1}: office {results.bursts[-1].total_s:.2f} s, runner {results.runner_totals_s[-1]:.2f} s",
            flush=True,
        )
    return results


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--asks", type=int, default=1000, help="asks in the burst (default 1000)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="repetitions, each on a fresh office and runner (default 3)"
    )
    args = parser.parse_args()
    with isolated_standin_home("elynav-office-queue-") as folder:
        results = asyncio.run(run_all(args, folder))
    print_report(results, args.asks)
    left = processes_left()
    report_processes_left(left)
    return 1 if left else 0


if __name__ == "__main__":
    run_script(main)
