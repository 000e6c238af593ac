"""Frame tools benchmark: the ``<name>_query`` kernel tool of ``df_tools`` against ``DataFrame.query``.

Run: ``python benchmarks/frame_tools.py [--rows 1000000] [--repeat 5] [--backend both|numpy|pyarrow]``

A seeded random activities-like frame (``account_id`` int, ``kind`` category of 5, ``amount`` float,
``date`` timestamp over two years) is built once per backend: NumPy dtypes, and the same frame with
``dtype_backend="pyarrow"`` (Arrow-backed columns; ``kind`` stays a category). For each expression
the ways run one after the other per repetition, after one warm-up each; the table gives the median
time and what each way hands back:

- ``frame.query``: ``frame.query(expression)`` (pandas' own engine; numexpr is used when installed),
  the peer (1.0x); "bytes" is the matching frame's memory (``memory_usage(deep=True)``), not JSON;
- ``+ first 50 as JSON``: the same, then ``.head(50).to_json(orient="records")``: what a hand-written
  tool would send a model;
- ``tool``: ``await tools.call("activities_query", {"expression": ...})`` with the default bounds
  (50 rows, 64 KiB): argument checks, the ``ast`` rules, the mask evaluated column by column, the
  first 50 matching rows made JSON, on the tool's worker thread; "bytes" is the content sent.

Ratios are printed for reading, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy
import pandas

from elynav_nb.agents.tools import KernelToolSet, df_tools

EXPRESSIONS = [
    "amount > 900 and kind == 'call'",
    "kind in ['email', 'meeting'] and date >= '2024-06-01'",
    "account_id == 4242",
    "amount.between(10, 20) | (kind == 'demo') & (amount > 990)",
]
KINDS = ["call", "email", "meeting", "note", "demo"]


def activities(rows: int, seed: int = 20261201) -> pandas.DataFrame:
    generator = numpy.random.default_rng(seed)
    start = numpy.datetime64("2023-01-01T00:00:00", "s")
    seconds = generator.integers(0, 2 * 365 * 24 * 3600, rows)
    return pandas.DataFrame(
        {
            "account_id": generator.integers(1, 100_001, rows),
            "kind": pandas.Categorical.from_codes(
                generator.integers(0, len(KINDS), rows), categories=pandas.Index(KINDS)
            ),
            "amount": numpy.round(generator.uniform(0, 1000, rows), 2),
            "date": pandas.Series(start + seconds.astype("timedelta64[s]")).astype("datetime64[us]"),
        }
    )


def median_seconds(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    function()  # warm-up
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


async def tool_seconds(tools: KernelToolSet, expression: str, repeat: int) -> tuple[float, Any]:
    await tools.call("activities_query", {"expression": expression})  # warm-up
    times: list[float] = []
    outcome: Any = None
    for _ in range(repeat):
        started = time.perf_counter()
        outcome = await tools.call("activities_query", {"expression": expression})
        times.append(time.perf_counter() - started)
    return statistics.median(times), outcome


def measure(frame: pandas.DataFrame, backend: str, repeat: int) -> list[list[str]]:
    dtypes = ", ".join(f"{column} {dtype}" for column, dtype in frame.dtypes.items())
    print(f"{backend}: {dtypes}")
    tools = df_tools(frame, name="activities")
    table: list[list[str]] = []
    for expression in EXPRESSIONS:
        try:
            peer_seconds, matching = median_seconds(lambda: frame.query(expression), repeat)
            peer_cell = f"{peer_seconds * 1000:.1f}"
            peer_rows, peer_bytes = f"{len(matching):,}", f"{int(matching.memory_usage(deep=True).sum()):,}"
            json_seconds, text = median_seconds(
                lambda: frame.query(expression).head(50).to_json(orient="records", date_format="iso"), repeat
            )
        except Exception as error:  # the peer cannot run this expression on this backend
            peer_seconds, json_seconds = float("nan"), float("nan")
            peer_cell, peer_rows, peer_bytes, text = f"fails: {type(error).__name__}", "-", "-", ""
        ours_seconds, outcome = asyncio.run(tool_seconds(tools, expression, repeat))
        if outcome.is_error:
            raise SystemExit(f"BENCHMARK FAILED: the tool refused {expression!r}: {outcome.content}")
        result = outcome.structured
        table.append([backend, expression, "frame.query [peer]", peer_cell, peer_rows, peer_bytes, "1.00x"])
        json_ratio = f"{json_seconds / peer_seconds:.2f}x" if peer_seconds == peer_seconds else "-"
        json_cell = f"{json_seconds * 1000:.1f}" if json_seconds == json_seconds else "-"
        table.append(
            [
                backend,
                "",
                "+ first 50 as JSON",
                json_cell,
                "50" if text else "-",
                f"{len(text.encode()):,}" if text else "-",
                json_ratio,
            ]
        )
        ratio = f"{ours_seconds / peer_seconds:.2f}x" if peer_seconds == peer_seconds else "-"
        rows_cell = f"{result['returned_rows']} of {result['total_rows']:,}"
        table.append(
            [
                backend,
                "",
                "tool activities_query",
                f"{ours_seconds * 1000:.1f}",
                rows_cell,
                f"{len(outcome.content.encode()):,}",
                ratio,
            ]
        )
    return table


def print_table(rows: list[list[str]]) -> None:
    header = ["backend", "expression", "way", "median ms", "rows returned", "bytes returned", "time ratio"]
    widths = [max(len(str(row[column])) for row in [header, *rows]) for column in range(len(header))]
    print(" | ".join(title.ljust(width) for title, width in zip(header, widths, strict=True)))
    print("-|-".join("-" * width for width in widths))
    for row in rows:
        print(" | ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--backend", choices=["both", "numpy", "pyarrow"], default="both")
    options = parser.parse_args()
    started = time.perf_counter()
    frame = activities(options.rows)
    print(
        f"{options.rows:,} rows built in {time.perf_counter() - started:.2f} s; pandas {pandas.__version__}"
    )
    rows: list[list[str]] = []
    if options.backend in ("both", "numpy"):
        rows += measure(frame, "numpy", options.repeat)
    if options.backend in ("both", "pyarrow"):
        rows += measure(frame.convert_dtypes(dtype_backend="pyarrow"), "pyarrow", options.repeat)
    print_table(rows)


if __name__ == "__main__":
    main()
