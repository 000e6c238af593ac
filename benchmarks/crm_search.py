"""CRM benchmark: ``search_accounts`` latency through MCP over stdio, against the same FTS5 query run
straight on SQLite and against a trivial tool on the same server (the MCP SDK's per-call floor).

Run: ``python benchmarks/crm_search.py [--rounds 50]`` (100,000 accounts and about 1,000,000
activities, built once and kept in the temp folder: ``crm_common.py``; ``--accounts 5000`` for a quick
look). Loading frames is measured by ``crm_frames.py``.

What runs: the server is the CRM server of ``elynav_nb.crm.server`` started over stdio by this script
(``--serve``) with one extra tool, ``ping`` (no argument, returns ``{"ok": true}``), and the same
start-up as ``serve_stdio`` (startup objects frozen out of the garbage collector unless
``--no-gc-freeze``). Each round calls, for every query of ``QUERIES``, ``ping`` then
``search_accounts`` (page size 20), so the floor and the search share the same moments of a noisy
machine. Rows: the direct SQLite query and ``CrmStore.search_accounts`` in this process, then the MCP
calls (median, p95, max), the search per query, and the garbage collections seen on both sides.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

import psutil
from crm_common import benchmark_database
from mcp import Client, StdioServerParameters, stdio_client

from elynav_nb.crm.domain import search_expression
from elynav_nb.crm.store import CrmStore

QUERIES = (
    "groupe durand",
    "logistique",
    "atelier fontaine",
    "lyon",
    "picard & fils",
    "mercier-roux",
    "ener",
    "zz",
)
PAGE_SIZE = 20
DIRECT_SQL = (
    "SELECT a.id, a.name, a.domain, a.industry, a.size, a.country, a.status, a.owner, a.created_at, a.updated_at "
    "FROM (SELECT rowid AS hit_id, rank AS hit_rank FROM accounts_search WHERE accounts_search MATCH ? "
    "ORDER BY hit_rank, hit_id LIMIT ? OFFSET 0) AS hit JOIN accounts AS a ON a.id = hit.hit_id "
    "ORDER BY hit.hit_rank, hit.hit_id"
)


class GcPauses:
    """Garbage collections of this process while recording: generation and duration of each."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append((int(info["generation"]), time.perf_counter() - self._started))

    def __enter__(self) -> Self:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._callback)

    def summary(self) -> str:
        if not self.pauses:
            return "none"
        parts = []
        for generation in sorted({generation for generation, _ in self.pauses}):
            durations = [duration for found, duration in self.pauses if found == generation]
            parts.append(f"gen{generation} x{len(durations)} max {max(durations) * 1000:.1f} ms")
        return ", ".join(parts)


def serve(path: Path, freeze: bool) -> None:
    """The benchmark's server: the CRM server plus ``ping``; reports its GC pauses on stderr at exit."""
    from elynav_nb.crm.server import build_crm_server

    with CrmStore.open(path) as store:
        server = build_crm_server(store)

        @server.tool()
        def ping() -> dict[str, bool]:
            """The floor: a tool that does nothing."""
            return {"ok": True}

        if freeze:  # as serve_stdio does
            gc.collect()
            gc.freeze()
        with GcPauses() as pauses:
            server.run()
        print(f"server GC during the run: {pauses.summary()}", file=sys.stderr)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def direct_latencies(path: Path, rounds: int) -> list[float]:
    """The server's search SQL, run straight on sqlite3 (no MCP, no validation)."""
    connection = sqlite3.connect(path)
    latencies: list[float] = []
    for _ in range(rounds):
        for query in QUERIES:
            expression = search_expression(query)
            started = time.perf_counter()
            connection.execute(DIRECT_SQL, (expression, PAGE_SIZE + 1)).fetchall()
            latencies.append(time.perf_counter() - started)
    connection.close()
    return latencies


def store_latencies(path: Path, rounds: int) -> list[float]:
    """``CrmStore.search_accounts``: the same query plus validation and records (what each tool call runs)."""
    latencies: list[float] = []
    with CrmStore.open(path) as store:
        for _ in range(rounds):
            for query in QUERIES:
                started = time.perf_counter()
                store.search_accounts(query, limit=PAGE_SIZE)
                latencies.append(time.perf_counter() - started)
    return latencies


async def timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    result = await call()
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"tool call failed: {result.content}")
    return elapsed


async def mcp_latencies(path: Path, rounds: int, freeze: bool) -> dict[str, Any]:
    """Search and ping latencies through a real stdio server, with connect time, first call, RSS, GC."""
    arguments = [__file__, "--serve", str(path)] + ([] if freeze else ["--no-gc-freeze"])
    parameters = StdioServerParameters(command=sys.executable, args=arguments)
    search: dict[str, list[float]] = {query: [] for query in QUERIES}
    ping: list[float] = []
    with tempfile.TemporaryFile("w+") as server_log:
        started = time.perf_counter()
        async with Client(stdio_client(parameters, errlog=server_log)) as client:
            connect_seconds = time.perf_counter() - started
            started = time.perf_counter()
            await client.call_tool("search_accounts", {"query": "warm up", "limit": PAGE_SIZE})
            first_call_seconds = time.perf_counter() - started
            await client.call_tool("ping", {})
            with GcPauses() as client_pauses:
                for _ in range(rounds):
                    for query in QUERIES:
                        ping.append(await timed(lambda: client.call_tool("ping", {})))
                        search_arguments = {"query": query, "limit": PAGE_SIZE}
                        search[query].append(
                            await timed(
                                lambda given=search_arguments: client.call_tool("search_accounts", given)
                            )
                        )
            server_rss = 0
            for child in psutil.Process().children(recursive=True):
                server_rss = max(server_rss, child.memory_info().rss)
        server_log.seek(0)
        server_gc = [line for line in server_log.read().splitlines() if line.startswith("server GC")]
    return {
        "search": search,
        "ping": ping,
        "connect_seconds": connect_seconds,
        "first_call_seconds": first_call_seconds,
        "server_rss": server_rss,
        "client_gc": client_pauses.summary(),
        "server_gc": server_gc[-1].removeprefix("server GC during the run: ") if server_gc else "unknown",
    }


def milliseconds(value: float) -> str:
    return f"{value * 1000:8.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=100_000)
    parser.add_argument("--activities-per-account", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=50, help="passes over the query list")
    parser.add_argument("--rebuild", action="store_true", help="build the demo database anew")
    parser.add_argument("--no-gc-freeze", action="store_true", help="serve without freezing startup objects")
    parser.add_argument("--json", type=Path, help="also write the raw latencies there")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve is not None:
        serve(arguments.serve, freeze=not arguments.no_gc_freeze)
        return

    path, build_seconds = benchmark_database(
        arguments.accounts, arguments.activities_per_account, rebuild=arguments.rebuild
    )
    with sqlite3.connect(path) as connection:
        counts = {
            table: connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("accounts", "activities")
        }
    connection.close()
    direct = direct_latencies(path, arguments.rounds)
    through_store = store_latencies(path, arguments.rounds)
    measured = asyncio.run(mcp_latencies(path, arguments.rounds, freeze=not arguments.no_gc_freeze))
    search: dict[str, list[float]] = measured["search"]
    all_searches = [latency for latencies in search.values() for latency in latencies]
    ping: list[float] = measured["ping"]
    if arguments.json is not None:
        arguments.json.write_text(json.dumps({"direct": direct, "store": through_store, **measured}))

    built = f"built in {build_seconds:.0f} s" if build_seconds is not None else "kept from an earlier run"
    print(
        f"CRM search benchmark: {counts['accounts']:,} accounts, {counts['activities']:,} activities "
        f"({path.stat().st_size / 1e6:,.0f} MB on disk, {built})"
    )
    print(
        f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, {psutil.cpu_count()} CPUs, "
        f"load average {' '.join(f'{value:.1f}' for value in psutil.getloadavg())}; {arguments.rounds} rounds "
        f"x {len(QUERIES)} queries, page size {PAGE_SIZE}; server GC freeze "
        f"{'off' if arguments.no_gc_freeze else 'on'}"
    )
    print()
    print(f"{'measure':<52}{'median':>12}{'p95':>12}{'max':>12}")
    print("-" * 88)
    rows: list[tuple[str, list[float]]] = [
        ("search, direct SQLite FTS5 query", direct),
        ("search, CrmStore.search_accounts", through_store),
        ("ping (trivial tool) over MCP stdio: the floor", ping),
        ("search_accounts over MCP stdio", all_searches),
    ]
    for query in QUERIES:
        rows.append((f"  search_accounts {query!r}", search[query]))
    for label, values in rows:
        print(
            f"{label:<52}{milliseconds(statistics.median(values)):>12}"
            f"{milliseconds(percentile(values, 0.95)):>12}{milliseconds(max(values)):>12}"
        )
    print()
    overhead = statistics.median(all_searches) - statistics.median(through_store)
    print(
        f"MCP overhead over the store call (medians): {overhead * 1000:.2f} ms; floor: {milliseconds(statistics.median(ping)).strip()}"
    )
    print(
        f"MCP stdio: start + handshake {measured['connect_seconds']:.2f} s, first tool call {measured['first_call_seconds']:.2f} s"
    )
    print(f"MCP server resident memory: {measured['server_rss'] / 1e6:.0f} MB")
    print(f"GC pauses while measuring: client {measured['client_gc']}; server {measured['server_gc']}")


if __name__ == "__main__":
    main()
