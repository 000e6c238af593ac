"""Benchmark the claude stand-in: start-up-to-result latency against the real bundled ``claude`` binary, and
delta throughput of ``@standin flood`` against a naive one-``json.dumps``-per-line writer.

Run: ``python benchmarks/sandbox_standin.py``. Prints a table; the peer for latency is the real CLI's
no-login turn (found in the claude-agent-sdk wheel, skipped when absent), the peer for throughput is the
same lines built with ``json.dumps`` and written one flush at a time.
"""

from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPOSITORY_ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["-p", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]


def user_line(text: str) -> bytes:
    return (
        json.dumps(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
                "session_id": "default",
            }
        )
        + "\n"
    ).encode()


def environment(home: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=home,
        ELYNAV_STANDIN_HOME=home,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    env["PYTHONPATH"] = str(REPOSITORY_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("ANTHROPIC_API_KEY", None)
    return env


def time_turn(command: list[str], stdin: bytes, repeats: int) -> float:
    samples: list[float] = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as home:
            started = time.perf_counter()
            subprocess.run(
                command,
                input=stdin,
                capture_output=True,
                env=environment(home),
                cwd=home,
                timeout=120,
                check=False,
            )
            samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def real_claude() -> str | None:
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    return str(path) if path.exists() else None


def naive_writer_seconds(count: int) -> float:
    sink = io.BytesIO()
    session_id = str(uuid.uuid4())
    started = time.perf_counter()
    for number in range(count):
        line = {
            "type": "stream_event",
            "event": {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": f"t{number} "},
            },
            "session_id": session_id,
            "parent_tool_use_id": None,
            "uuid": str(uuid.uuid4()),
            "api_message_id": "msg_x",
        }
        sink.write((json.dumps(line, separators=(",", ":")) + "\n").encode())
        sink.flush()
    return time.perf_counter() - started


def main() -> None:
    standin = [sys.executable, "-m", "elynav_nb.sandbox.claude.claude_standin"]
    rows: list[tuple[str, str, str, str]] = []
    ours = time_turn([*standin, *FLAGS, "--include-partial-messages"], user_line("@standin no-login"), 5)
    claude = real_claude()
    if claude is not None:
        theirs = time_turn([claude, *FLAGS], user_line("hello"), 3)
        rows.append(
            (
                "spawn + no-login turn + exit",
                f"{ours * 1000:.0f} ms",
                f"{theirs * 1000:.0f} ms (claude 2.1.332)",
                f"{theirs / ours:.1f}x faster",
            )
        )
    else:
        rows.append(("spawn + no-login turn + exit", f"{ours * 1000:.0f} ms", "claude not found", "-"))
    count = 100_000
    flood = time_turn(
        [*standin, *FLAGS, "--include-partial-messages"], user_line(f"@standin flood {count}"), 3
    )
    baseline = time_turn([*standin, *FLAGS, "--include-partial-messages"], user_line("@standin no-login"), 3)
    writing = max(flood - baseline, 1e-6)
    naive = naive_writer_seconds(count)
    rows.append(
        (
            f"{count:,} text deltas (process total)",
            f"{flood * 1000:.0f} ms",
            "-",
            f"{count / writing:,.0f} lines/s",
        )
    )
    rows.append(
        (
            f"{count:,} deltas, writer only",
            f"{writing * 1000:.0f} ms",
            f"{naive * 1000:.0f} ms (json.dumps + flush per line, in memory)",
            f"{naive / writing:.1f}x",
        )
    )
    widths = [
        max(len(row[column]) for row in [("measure", "stand-in", "peer", "ratio"), *rows])
        for column in range(4)
    ]
    for row in [("measure", "stand-in", "peer", "ratio"), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))


if __name__ == "__main__":
    main()
