"""Streaming throughput of one agent turn: elynav_nb's ``AgentRunner`` against ``claude_agent_sdk.query()``.

Where it sits: a plain benchmark script (not a test). Both clients drive the same embedded stand-in
CLI (``elynav-claude-standin``), which answers the prompt ``@standin flood N`` with N text deltas
(``stream_event`` lines, ``--include-partial-messages``) as fast as it can write them.

How it measures: every measurement runs in a fresh child Python process (this same file with
``--child``), so peak RSS (``ru_maxrss``) and CPU time (user + sys, ``RUSAGE_SELF``) are the
driver's own, never the CLI's. Per repetition the order is: baseline, ours, SDK (alternating a/b).
The child prints one JSON line; the parent checks that every client delivered all N deltas (it
stops with an error otherwise) and prints the medians and the ours/SDK ratios.

Rows:
  baseline  the stand-in alone, its stdout read by a trivial reader (``os.read`` + newline count):
            the floor set by the CLI itself
  ours      ``AgentRunner(None, workspace, executable=<stand-in>)``, ``turn = runner.send(prompt)``,
            every ``AgentEvent`` from ``async for event in turn`` counted, then ``await turn``; the
            turn stores its deltas coalesced (one text event), or every delta with ``--keep-deltas``
  sdk       ``query(prompt, ClaudeAgentOptions(cli_path=<stand-in>, include_partial_messages=True))``,
            every message it yields counted (``StreamEvent`` included)

Wall time runs from the client's creation (so it includes spawning the CLI and its start-up) to the
end-of-turn result reaching the consumer; "total" adds the shutdown (``runner.stop()`` / the end of
``query()``). CPU time and RSS growth are measured from just after the imports.

Real binaries (``--real-clis``): after the stand-in table, the real claude, codex and gemini against the
fake model API (``real_cli_turns.py``): events per second each delivers alone (its own stdout, a trivial
reader: the floor) and through ``AgentRunner(..., cli=...)`` (our share of that floor), and the latency of
a short turn, ours against the CLI alone (spawn to first event, last event to ``TurnResult``).

Run:  python benchmarks/runner_throughput.py [--events 100000] [--repeat 3] [--keep-deltas]
                                             [--real-clis [--chunks 2000]]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CLIENTS = ("baseline", "ours", "sdk")
STANDIN_SCRIPT = "elynav-claude-standin"
CHILD_TIMEOUT_S = 900.0


# -- measurements inside the child process ----------------------------------------------------------


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def flood_prompt(count: int) -> str:
    return f"@standin flood {count}"


async def measure_ours(standin: str, count: int, workspace: Path, keep_deltas: bool) -> dict[str, Any]:
    from elynav_nb.agents.events import TextDelta, TurnEnded
    from elynav_nb.agents.runner import AgentRunner

    rss_after_imports = peak_rss_mib()
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    runner = AgentRunner(None, workspace, executable=standin, keep_deltas=keep_deltas)
    events_delivered = 0
    text_deltas = 0
    result_seen_at = 0.0
    turn = runner.send(flood_prompt(count))
    async for event in turn:
        events_delivered += 1
        if isinstance(event, TextDelta):
            text_deltas += 1
        elif isinstance(event, TurnEnded):
            result_seen_at = time.perf_counter()
    result = await turn
    if result_seen_at == 0.0:
        result_seen_at = time.perf_counter()
    outcome = result.outcome
    error = result.error
    await runner.stop()
    finished = time.perf_counter()
    return {
        "client": "ours",
        "events": events_delivered,
        "stored_events": len(result.events),
        "text_deltas": text_deltas,
        "wall_s": result_seen_at - started,
        "total_s": finished - started,
        "cpu_s": cpu_seconds() - cpu_before,
        "peak_rss_mib": peak_rss_mib(),
        "rss_after_imports_mib": rss_after_imports,
        "outcome": outcome,
        "error": error,
    }


async def measure_sdk(standin: str, count: int, workspace: Path) -> dict[str, Any]:
    from claude_agent_sdk import ClaudeAgentOptions, query
    from claude_agent_sdk.types import ResultMessage, StreamEvent

    rss_after_imports = peak_rss_mib()
    cpu_before = cpu_seconds()
    stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
    started = time.perf_counter()
    options = ClaudeAgentOptions(
        cli_path=standin,
        include_partial_messages=True,
        cwd=str(workspace),
        stderr=stderr_tail.append,  # pipe and drain stderr, as our runner does
    )
    events_delivered = 0
    text_deltas = 0
    result_seen_at = 0.0
    outcome = "no result"
    async for message in query(prompt=flood_prompt(count), options=options):
        events_delivered += 1
        if isinstance(message, StreamEvent):
            event = message.event
            if (
                event.get("type") == "content_block_delta"
                and event.get("delta", {}).get("type") == "text_delta"
            ):
                text_deltas += 1
        elif isinstance(message, ResultMessage):
            result_seen_at = time.perf_counter()
            outcome = "error" if message.is_error else "completed"
    finished = time.perf_counter()
    if result_seen_at == 0.0:
        result_seen_at = finished
    return {
        "client": "sdk",
        "events": events_delivered,
        "text_deltas": text_deltas,
        "wall_s": result_seen_at - started,
        "total_s": finished - started,
        "cpu_s": cpu_seconds() - cpu_before,
        "peak_rss_mib": peak_rss_mib(),
        "rss_after_imports_mib": rss_after_imports,
        "outcome": outcome,
        "error": " | ".join(stderr_tail) if outcome != "completed" else "",
    }


def measure_baseline(standin: str, count: int, workspace: Path) -> dict[str, Any]:
    """The stand-in alone: one user line in, stdout read in big chunks, lines counted, no parsing."""
    rss_after_imports = peak_rss_mib()
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    argv = [
        standin,
        "--print",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
    ]
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=workspace,
    )
    assert process.stdin is not None and process.stdout is not None
    user_line = {
        "type": "user",
        "session_id": "",
        "message": {"role": "user", "content": flood_prompt(count)},
        "parent_tool_use_id": None,
    }
    process.stdin.write((json.dumps(user_line) + "\n").encode())
    process.stdin.flush()
    stdout_fd = process.stdout.fileno()
    lines = 0
    text_deltas = 0
    result_markers = (b'"type":"result"', b'"type": "result"')  # compact or default json.dumps
    carry = b""
    result_seen_at = 0.0
    result_found = False
    while True:
        chunk = os.read(stdout_fd, 1 << 20)
        if not chunk:
            break
        lines += chunk.count(b"\n")
        window = carry + chunk
        text_deltas += window.count(b'"text_delta"') - carry.count(b'"text_delta"')
        if result_markers[0] in window or result_markers[1] in window:
            result_seen_at = time.perf_counter()
            result_found = True
            break
        carry = chunk[-32:]
    process.stdin.close()
    process.stdout.close()
    process.wait(timeout=30)
    finished = time.perf_counter()
    if result_seen_at == 0.0:
        result_seen_at = finished
    return {
        "client": "baseline",
        "events": lines,
        "text_deltas": text_deltas,
        "wall_s": result_seen_at - started,
        "total_s": finished - started,
        "cpu_s": cpu_seconds() - cpu_before,
        "peak_rss_mib": peak_rss_mib(),
        "rss_after_imports_mib": rss_after_imports,
        "outcome": "completed" if result_found else "no result line",
        "error": "",
    }


def run_child(
    client: str,
    standin: str,
    count: int,
    workspace: Path,
    profile_path: Path | None = None,
    keep_deltas: bool = False,
) -> None:
    """One measurement; with ``profile_path``, the measurement alone (not the imports) under cProfile."""
    import cProfile

    if client == "ours":
        import elynav_nb.agents.runner  # noqa: F401  (imported before profiling starts)
    elif client == "sdk":
        import claude_agent_sdk  # noqa: F401
    profiler = cProfile.Profile() if profile_path is not None else None
    if profiler is not None:
        profiler.enable()
    if client == "ours":
        measurement = asyncio.run(measure_ours(standin, count, workspace, keep_deltas))
    elif client == "sdk":
        measurement = asyncio.run(measure_sdk(standin, count, workspace))
    else:
        measurement = measure_baseline(standin, count, workspace)
    if profiler is not None and profile_path is not None:
        profiler.disable()
        profiler.dump_stats(str(profile_path))
    print(json.dumps(measurement))


# -- orchestration in the parent process ----------------------------------------------------------------


class BenchmarkFailed(RuntimeError):
    """A client did not deliver every event, or its child process failed."""


def find_standin() -> str:
    """The stand-in's console script, preferring the one next to this Python (no pyenv shim)."""
    beside_python = Path(sys.executable).parent / STANDIN_SCRIPT
    if beside_python.is_file() and os.access(beside_python, os.X_OK):
        return str(beside_python)
    found = shutil.which(STANDIN_SCRIPT)
    if found is None:
        raise BenchmarkFailed(
            f"{STANDIN_SCRIPT} is not installed; run `pip install -e . --no-deps` in the repository"
        )
    return found


def measure_in_child(
    client: str, standin: str, count: int, profile_path: Path | None = None, keep_deltas: bool = False
) -> dict[str, Any]:
    """Run one measurement in a fresh Python (under cProfile when ``profile_path`` is given)."""
    profile_words = ["--profile-out", str(profile_path)] if profile_path is not None else []
    if keep_deltas:
        profile_words.append("--keep-deltas")
    with tempfile.TemporaryDirectory(prefix=f"elynav-bench-{client}-") as scratch:
        workspace = Path(scratch) / "workspace"
        home = Path(scratch) / "home"
        workspace.mkdir()
        home.mkdir()
        environment = dict(os.environ)
        environment["HOME"] = str(home)  # sessions of the stand-in land in a throw-away home
        environment.pop("CLAUDECODE", None)
        completed = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                client,
                "--events",
                str(count),
                "--standin",
                standin,
                "--workspace",
                str(workspace),
                *profile_words,
            ],
            check=False,
            capture_output=True,
            text=True,
            env=environment,
            timeout=CHILD_TIMEOUT_S,
        )
    if completed.returncode != 0:
        raise BenchmarkFailed(
            f"the {client} child failed with exit code {completed.returncode}:\n{completed.stderr[-3000:]}"
        )
    last_line = completed.stdout.strip().splitlines()[-1]
    measurement: dict[str, Any] = json.loads(last_line)
    if measurement["text_deltas"] != count:
        raise BenchmarkFailed(
            f"{client} delivered {measurement['text_deltas']} text deltas instead of {count} "
            f"(events {measurement['events']}, outcome {measurement['outcome']!r}, error {measurement['error']!r})"
        )
    if client != "baseline" and measurement["outcome"] != "completed":
        raise BenchmarkFailed(
            f"{client} ended with outcome {measurement['outcome']!r}: {measurement['error']}"
        )
    return measurement


def median_of(measurements: list[dict[str, Any]], key: str) -> float:
    return statistics.median(float(measurement[key]) for measurement in measurements)


def summarise(client: str, measurements: list[dict[str, Any]]) -> dict[str, float | str]:
    wall = median_of(measurements, "wall_s")
    events = median_of(measurements, "events")
    events_per_second = statistics.median(
        float(measurement["events"]) / float(measurement["wall_s"]) for measurement in measurements
    )
    deltas_per_second = statistics.median(
        float(measurement["text_deltas"]) / float(measurement["wall_s"]) for measurement in measurements
    )
    return {
        "client": client,
        "events": events,
        "wall_s": wall,
        "total_s": median_of(measurements, "total_s"),
        "events_per_s": events_per_second,
        "deltas_per_s": deltas_per_second,
        "cpu_s": median_of(measurements, "cpu_s"),
        "cpu_us_per_delta": statistics.median(
            float(measurement["cpu_s"]) * 1e6 / float(measurement["text_deltas"])
            for measurement in measurements
        ),
        "peak_rss_mib": median_of(measurements, "peak_rss_mib"),
        "rss_growth_mib": statistics.median(
            float(measurement["peak_rss_mib"]) - float(measurement["rss_after_imports_mib"])
            for measurement in measurements
        ),
    }


def print_table(rows: list[dict[str, float | str]], count: int, repeat: int) -> None:
    print()
    print(
        f"One turn of {count:,} text deltas through the stand-in; medians of {repeat} runs, each in a fresh process."
    )
    print()
    header = (
        f"{'client':<9} {'events':>9} {'wall s':>8} {'total s':>8} {'events/s':>10} {'deltas/s':>10} "
        f"{'CPU s':>7} {'CPU us/delta':>12} {'peak RSS MiB':>13} {'RSS growth MiB':>15}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row['client']:<9} {row['events']:>9,.0f} {row['wall_s']:>8.2f} {row['total_s']:>8.2f} "
            f"{row['events_per_s']:>10,.0f} {row['deltas_per_s']:>10,.0f} {row['cpu_s']:>7.2f} "
            f"{row['cpu_us_per_delta']:>12.1f} "
            f"{row['peak_rss_mib']:>13.1f} {row['rss_growth_mib']:>15.1f}"
        )
    by_client = {str(row["client"]): row for row in rows}
    ours = by_client["ours"]
    sdk = by_client["sdk"]
    baseline = by_client["baseline"]
    print()
    print("Ratios ours / SDK (throughput: higher is better; time, CPU, memory: lower is better)")
    for label, key in (
        ("deltas/s", "deltas_per_s"),
        ("events/s (each counts its own events)", "events_per_s"),
        ("wall s", "wall_s"),
        ("CPU s (the least load-sensitive figure)", "cpu_s"),
        ("peak RSS", "peak_rss_mib"),
        ("RSS growth", "rss_growth_mib"),
    ):
        print(f"  {label:<40} {float(ours[key]) / float(sdk[key]):6.2f}x")
    print()
    print("Share of the floor (baseline wall / client wall: 1.00 = as fast as the stand-in alone)")
    for row in (ours, sdk):
        print(f"  {row['client']:<9} {float(baseline['wall_s']) / float(row['wall_s']):6.2f}")


def print_profile(client: str, standin: str, count: int, top: int) -> None:
    """Profile one run of ``client`` (cProfile, in its own child) and print the hot spots."""
    import pstats

    with tempfile.TemporaryDirectory(prefix="elynav-bench-profile-") as scratch:
        profile_path = Path(scratch) / f"{client}.prof"
        measurement = measure_in_child(client, standin, count, profile_path)
        statistics_table = pstats.Stats(str(profile_path))
    total = statistics_table.total_tt  # type: ignore[attr-defined]
    print()
    print(
        f"cProfile of {client} ({count:,} deltas; profiled wall {measurement['wall_s']:.2f} s, "
        f"profiled CPU {total:.2f} s; imports excluded). Own time (tottime) per function, share of the profiled CPU:"
    )
    rows = []
    for (filename, line, function), (_, calls, own, cumulative, _) in statistics_table.stats.items():  # type: ignore[attr-defined]
        rows.append((own, cumulative, calls, f"{shorten_path(filename)}:{line}:{function}"))
    rows.sort(reverse=True)
    print(f"  {'own s':>7} {'share':>6} {'cum s':>7} {'calls':>9}  function")
    for own, cumulative, calls, name in rows[:top]:
        print(f"  {own:>7.2f} {own / total:>6.1%} {cumulative:>7.2f} {calls:>9}  {name}")


def shorten_path(filename: str) -> str:
    for marker in ("site-packages/", "/work/main/", "lib/python3.11/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--events", type=int, default=100_000, help="text deltas the stand-in emits (default 100000)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="repetitions per client (default 3)")
    parser.add_argument(
        "--profile",
        choices=("ours", "sdk"),
        help="instead of the benchmark, profile one run of this client with cProfile and print its hot spots",
    )
    parser.add_argument("--top", type=int, default=30, help="functions shown by --profile (default 30)")
    parser.add_argument(
        "--keep-deltas",
        action="store_true",
        help="run ours with AgentRunner(keep_deltas=True): the turn stores every delta (the full stream)",
    )
    parser.add_argument(
        "--real-clis",
        action="store_true",
        help="then the real claude, codex and gemini against the fake model API (benchmarks/real_cli_turns.py)",
    )
    parser.add_argument(
        "--chunks", type=int, default=2000, help="text chunks of a real-CLI flood turn (default 2000)"
    )
    parser.add_argument("--child", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--standin", help=argparse.SUPPRESS)
    parser.add_argument("--workspace", help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child is not None:
        profile_out = Path(args.profile_out) if args.profile_out else None
        run_child(args.child, args.standin, args.events, Path(args.workspace), profile_out, args.keep_deltas)
        return 0

    standin = find_standin()
    if args.profile is not None:
        print_profile(args.profile, standin, args.events, args.top)
        return 0
    measurements: dict[str, list[dict[str, Any]]] = {client: [] for client in CLIENTS}
    for repetition in range(1, args.repeat + 1):
        for client in CLIENTS:
            measurement = measure_in_child(client, standin, args.events, keep_deltas=args.keep_deltas)
            measurements[client].append(measurement)
            stored = (
                f"  stored events {measurement['stored_events']}" if "stored_events" in measurement else ""
            )
            print(
                f"run {repetition}/{args.repeat} {client:<9} events {measurement['events']:>8} "
                f"wall {measurement['wall_s']:6.2f} s  CPU {measurement['cpu_s']:6.2f} s  "
                f"peak RSS {measurement['peak_rss_mib']:6.1f} MiB{stored}",
                flush=True,
            )
    rows = [summarise(client, measurements[client]) for client in CLIENTS]
    print_table(rows, args.events, args.repeat)
    if args.real_clis:
        sys.path.insert(0, str(Path(__file__).parent))
        import real_cli_turns

        real_cli_turns.run(args.chunks, args.repeat)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchmarkFailed as failure:
        print(f"BENCHMARK FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
