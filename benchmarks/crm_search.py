"""CRM benchmark: search latency through MCP over stdio vs a direct SQLite query, and the cost of
loading every activity into a DataFrame.

Run: ``python benchmarks/crm_search.py`` (100,000 accounts, about 1,000,000 activities; a few
minutes). ``--accounts 5000`` for a quick look. It prints one table; the figures to read are
the ratios: MCP over stdio against the direct SQLite query (same FTS5 query, same page size),
and ``Crm.activities()`` (with CRM dtypes) against a bare ``pandas.read_sql_query``.

Peak memory of the frame load is measured in a fresh child process (``ru_maxrss``), so the data
generation of this process does not count; the server's resident memory is read with psutil.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from mcp import Client, StdioServerParameters, stdio_client

from elynav_nb.crm.demo_data import generate_demo_batches
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


def build_database(path: Path, accounts: int, activities_per_account: int) -> tuple[dict[str, int], float]:
    started = time.perf_counter()
    with CrmStore.open(path) as store:
        counts = store.insert_batches(
            generate_demo_batches(accounts, seed=1, activities_per_account=activities_per_account)
        )
    return counts, time.perf_counter() - started


def direct_latencies(path: Path, rounds: int) -> list[float]:
    """The server's search SQL, run straight on sqlite3 (no MCP, no validation)."""
    connection = sqlite3.connect(path)
    sql = (
        "SELECT a.id, a.name, a.domain, a.industry, a.size, a.country, a.status, a.owner, a.created_at, "
        "a.updated_at FROM accounts_search JOIN accounts AS a ON a.id = accounts_search.rowid "
        "WHERE accounts_search MATCH ? ORDER BY accounts_search.rank, a.id LIMIT ? OFFSET 0"
    )
    latencies: list[float] = []
    for _ in range(rounds):
        for query in QUERIES:
            expression = search_expression(query)
            started = time.perf_counter()
            connection.execute(sql, (expression, PAGE_SIZE + 1)).fetchall()
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


async def mcp_latencies(path: Path, rounds: int) -> tuple[list[float], float, float, int]:
    """Latencies through a real stdio server; also connect time, first-call time, server RSS."""
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "elynav_nb.crm.server", "--db", str(path)]
    )
    latencies: list[float] = []
    with tempfile.TemporaryFile("w+") as server_log:
        started = time.perf_counter()
        async with Client(stdio_client(parameters, errlog=server_log)) as client:
            connect_seconds = time.perf_counter() - started
            started = time.perf_counter()
            await client.call_tool("search_accounts", {"query": "warm up", "limit": PAGE_SIZE})
            first_call_seconds = time.perf_counter() - started
            for _ in range(rounds):
                for query in QUERIES:
                    started = time.perf_counter()
                    result = await client.call_tool("search_accounts", {"query": query, "limit": PAGE_SIZE})
                    latencies.append(time.perf_counter() - started)
                    if result.is_error:
                        raise RuntimeError(f"search failed: {result.content}")
            server_rss = 0
            for child in psutil.Process().children(recursive=True):
                server_rss = max(server_rss, child.memory_info().rss)
    return latencies, connect_seconds, first_call_seconds, server_rss


def load_in_child(path: Path, mode: str) -> tuple[float, int, int]:
    """(seconds, rows, peak RSS bytes) of loading all activities in a fresh Python process."""
    output = subprocess.run(
        [sys.executable, __file__, "--load-only", str(path), "--mode", mode],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(output[0]), int(output[1]), int(output[2])


def load_only(path: Path, mode: str) -> None:
    import pandas as pd

    from elynav_nb.crm.reader import read_table

    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    if mode == "crm":
        frame = read_table(path, "activities")
    else:
        with sqlite3.connect(path) as connection:
            frame = pd.read_sql_query("SELECT * FROM activities ORDER BY id", connection)
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(seconds, len(frame), (peak_kib - baseline_kib) * 1024)


def milliseconds(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:8.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=100_000)
    parser.add_argument("--activities-per-account", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=50, help="passes over the query list")
    parser.add_argument("--load-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="crm", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.load_only is not None:
        load_only(arguments.load_only, arguments.mode)
        return

    with tempfile.TemporaryDirectory(prefix="elynav-crm-bench-") as folder:
        path = Path(folder) / "bench.sqlite"
        counts, build_seconds = build_database(path, arguments.accounts, arguments.activities_per_account)
        database_megabytes = path.stat().st_size / 1e6
        direct = direct_latencies(path, arguments.rounds)
        through_store = store_latencies(path, arguments.rounds)
        through_mcp, connect_seconds, first_call_seconds, server_rss = asyncio.run(
            mcp_latencies(path, arguments.rounds)
        )
        crm_seconds, crm_rows, crm_peak = load_in_child(path, "crm")
        bare_seconds, _bare_rows, bare_peak = load_in_child(path, "bare")

    direct_median = statistics.median(direct)
    print(
        f"CRM benchmark: {counts['accounts']:,} accounts, {counts['contacts']:,} contacts, "
        f"{counts['activities']:,} activities, {counts['opportunities']:,} opportunities "
        f"({database_megabytes:,.0f} MB on disk)"
    )
    print(
        f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, {psutil.cpu_count()} CPUs; "
        f"{len(direct):,} searches per path over {len(QUERIES)} queries, page size {PAGE_SIZE}"
    )
    print()
    print(f"{'measure':<58}{'value':>14}{'ratio':>12}")
    print("-" * 84)
    rows = [
        ("build: generate + insert in one transaction", f"{build_seconds:10.1f} s", ""),
        ("search_accounts, direct SQLite FTS5 query (median)", milliseconds(direct), "1.0x"),
        (
            "search_accounts, CrmStore method (median)",
            milliseconds(through_store),
            f"{statistics.median(through_store) / direct_median:.1f}x",
        ),
        (
            "search_accounts, MCP over stdio (median)",
            milliseconds(through_mcp),
            f"{statistics.median(through_mcp) / direct_median:.1f}x",
        ),
        (
            "search_accounts, MCP over stdio (p95)",
            f"{sorted(through_mcp)[int(len(through_mcp) * 0.95)] * 1000:8.3f} ms",
            "",
        ),
        ("MCP stdio: start + handshake", f"{connect_seconds:10.2f} s", ""),
        ("MCP stdio: first tool call", f"{first_call_seconds:10.2f} s", ""),
        ("MCP server resident memory", f"{server_rss / 1e6:9.0f} MB", ""),
        (f"load {crm_rows:,} activities: pandas.read_sql_query", f"{bare_seconds:10.2f} s", "1.0x"),
        (
            f"load {crm_rows:,} activities: Crm.activities() (dtypes)",
            f"{crm_seconds:10.2f} s",
            f"{crm_seconds / bare_seconds:.1f}x",
        ),
        ("peak memory added by the load: read_sql_query", f"{bare_peak / 1e6:9.0f} MB", "1.0x"),
        (
            "peak memory added by the load: Crm.activities()",
            f"{crm_peak / 1e6:9.0f} MB",
            f"{crm_peak / bare_peak:.1f}x" if bare_peak else "",
        ),
        (
            "peak memory of this process (ru_maxrss)",
            f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3:9.0f} MB",
            "",
        ),
    ]
    for label, value, ratio in rows:
        print(f"{label:<58}{value:>14}{ratio:>12}")


if __name__ == "__main__":
    main()
