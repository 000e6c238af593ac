"""CRM benchmark: loading every activity (about 1,000,000 rows) into a DataFrame, side by side with
``pandas.read_sql_query``.

Run: ``python benchmarks/crm_frames.py [--repeat 3]`` (the 100,000-account demo database is built
once, about a minute, and kept in the temp folder; ``--accounts 5000`` for a quick look).

Each load runs in a fresh child Python process that has already imported pandas, pyarrow, sqlite3
and the ADBC driver, so its time and its peak memory added (``ru_maxrss`` after the load minus
before it) belong to the load alone. Per repetition the ways run one after the other, in the table's
order; the table gives the median of the repetitions and the spread (min-max). The ways:

- ``pandas.read_sql_query`` on a ``sqlite3`` connection: the peer (1.0x), NumPy / ``str`` dtypes,
  dates left as text;
- the same with ``dtype_backend="pyarrow"``;
- ``sqlite3`` rows turned into Arrow arrays by hand (65,536 rows at a time), then the CRM types;
- ADBC with the driver's default 1,024-row batches, then the CRM types;
- ``Crm.activities()``: ADBC with 65,536-row batches, CRM types, ``ArrowDtype`` columns (ours);
- ``Crm.activities(dtype_backend="numpy_nullable")``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from crm_common import benchmark_database

WAYS: dict[str, str] = {
    "read_sql_query": "pandas.read_sql_query (sqlite3) [peer]",
    "read_sql_query_arrow": 'pandas.read_sql_query(dtype_backend="pyarrow")',
    "sqlite3_by_hand": "sqlite3 rows -> Arrow by hand, CRM types",
    "adbc_default_batches": "ADBC, 1,024-row batches, CRM types",
    "crm": "Crm.activities() (ADBC, 65,536-row batches)",
    "crm_numpy": 'Crm.activities(dtype_backend="numpy_nullable")',
}
SQL = "SELECT * FROM activities ORDER BY id"


def load(path: Path, way: str) -> tuple[float, int, int, str]:
    """(seconds, rows, peak RSS added in bytes, dtypes) of one way of loading, in this process."""
    import sqlite3

    import adbc_driver_sqlite.dbapi
    import pandas as pd
    import pyarrow as pa

    from elynav_nb.crm import Crm
    from elynav_nb.crm.columns import arrow_to_frame

    crm = Crm.open(path)
    baseline_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    if way == "read_sql_query":
        with sqlite3.connect(path) as connection:
            frame = pd.read_sql_query(SQL, connection)
        connection.close()
    elif way == "read_sql_query_arrow":
        with sqlite3.connect(path) as connection:
            frame = pd.read_sql_query(SQL, connection, dtype_backend="pyarrow")
        connection.close()
    elif way == "sqlite3_by_hand":
        with sqlite3.connect(path.as_uri() + "?mode=ro", uri=True) as connection:
            cursor = connection.execute(SQL)
            names = [description[0] for description in cursor.description]
            integer_columns = {"id", "account_id", "contact_id"}
            batches = []
            while rows := cursor.fetchmany(65_536):
                columns = list(zip(*rows, strict=True))
                arrays = [
                    pa.array(values, type=pa.int64() if name in integer_columns else pa.string())
                    for name, values in zip(names, columns, strict=True)
                ]
                batches.append(pa.record_batch(arrays, names=names))
        connection.close()
        frame = arrow_to_frame(pa.Table.from_batches(batches))
    elif way == "adbc_default_batches":
        with (
            adbc_driver_sqlite.dbapi.connect(path.as_uri() + "?mode=ro", autocommit=True) as connection,
            connection.cursor() as cursor,
        ):
            cursor.execute(SQL)
            frame = arrow_to_frame(cursor.fetch_arrow_table())
    elif way == "crm":
        frame = crm.activities()
    elif way == "crm_numpy":
        frame = crm.activities(dtype_backend="numpy_nullable")
    else:
        raise SystemExit(f"unknown way {way!r}")
    seconds = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    dtypes = ",".join(f"{column}={dtype}" for column, dtype in frame.dtypes.items()).replace(" ", "")
    return seconds, len(frame), (peak_kib - baseline_kib) * 1024, dtypes


def load_in_child(path: Path, way: str) -> tuple[float, int, int, str]:
    output = subprocess.run(
        [sys.executable, __file__, "--load-only", str(path), "--way", way],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(output[0]), int(output[1]), int(output[2]), output[3]


def spread(values: list[float], scale: float, digits: int) -> str:
    if len(values) == 1:
        return ""
    return f"{min(values) * scale:.{digits}f}-{max(values) * scale:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=100_000)
    parser.add_argument("--activities-per-account", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of every way")
    parser.add_argument("--rebuild", action="store_true", help="build the demo database anew")
    parser.add_argument("--show-dtypes", action="store_true")
    parser.add_argument("--load-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--way", default="crm", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.load_only is not None:
        print(*load(arguments.load_only, arguments.way))
        return

    path, build_seconds = benchmark_database(
        arguments.accounts, arguments.activities_per_account, rebuild=arguments.rebuild
    )
    seconds: dict[str, list[float]] = {way: [] for way in WAYS}
    peaks: dict[str, list[float]] = {way: [] for way in WAYS}
    dtypes: dict[str, str] = {}
    rows = 0
    for _ in range(arguments.repeat):
        for way in WAYS:
            way_seconds, rows, peak, way_dtypes = load_in_child(path, way)
            seconds[way].append(way_seconds)
            peaks[way].append(peak)
            dtypes[way] = way_dtypes

    import adbc_driver_sqlite
    import pandas as pd
    import psutil
    import pyarrow as pa

    built = f"built in {build_seconds:.0f} s" if build_seconds is not None else "kept from an earlier run"
    print(
        f"CRM frames benchmark: {rows:,} activities, 9 columns ({path.stat().st_size / 1e6:,.0f} MB database, {built})"
    )
    print(
        f"python {sys.version.split()[0]}, pandas {pd.__version__}, pyarrow {pa.__version__}, "
        f"adbc-driver-sqlite {adbc_driver_sqlite.__version__}, {psutil.cpu_count()} CPUs, load average "
        f"{' '.join(f'{value:.1f}' for value in psutil.getloadavg())}; "
        f"median of {arguments.repeat} fresh processes per way (spread min-max)"
    )
    print()
    peer_seconds = statistics.median(seconds["read_sql_query"])
    peer_peak = statistics.median(peaks["read_sql_query"])
    header = f"{'way':<50}{'time':>9}{'spread':>12}{'ratio':>8}{'peak added':>13}{'spread':>12}{'ratio':>8}"
    print(header)
    print("-" * len(header))
    for way, label in WAYS.items():
        way_seconds = statistics.median(seconds[way])
        way_peak = statistics.median(peaks[way])
        print(
            f"{label:<50}{way_seconds:8.2f}s{spread(seconds[way], 1, 2):>12}{way_seconds / peer_seconds:7.2f}x"
            f"{way_peak / 1e6:10.0f} MB{spread(peaks[way], 1e-6, 0):>12}{way_peak / peer_peak:7.2f}x"
        )
    if arguments.show_dtypes:
        print()
        for way, way_dtypes in dtypes.items():
            print(f"{way}: {way_dtypes}")


if __name__ == "__main__":
    main()
