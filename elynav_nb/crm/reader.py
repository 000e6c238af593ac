"""Read-only CRM tables as DataFrames, straight from SQLite (``mode=ro``) through Arrow.

Where it sits: the I/O under ``Crm.accounts()`` and friends. ``store.connect_read_only`` first
checks the file and its schema version (typed errors: ``NotFound``, ``StoreCorrupt``); then the
ADBC SQLite driver (``adbc-driver-sqlite``) runs one fixed query per table and hands back Arrow
record batches, which ``columns.arrow_to_frame`` turns into a frame with CRM dtypes (Arrow-backed
by default, without a copy). No Python object is made per row: 1M activities load in about a
second, in about a fifth of the memory of ``pandas.read_sql_query`` (``benchmarks/crm_frames.py``).

It can never write: SQLite itself refuses writes on a ``mode=ro`` connection. WAL lets it read
while the MCP server writes.

The driver guesses each column's type from the first batch of rows (SQLite columns have no fixed
type). A text column whose first batch is all NULL is guessed as ``int64``, and the first text
value after it fails the read; the read is then done again as one batch, so the guess sees every
row (``columns`` turns an all-NULL column into the right type).
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import adbc_driver_sqlite.dbapi
import pandas as pd
import pyarrow as pa

from elynav_nb.crm.columns import DtypeBackend, arrow_to_frame, validate_dtype_backend
from elynav_nb.crm.database import connect_read_only
from elynav_nb.crm.schema import TABLES
from elynav_nb.errors import DatabaseBusy, InvalidInput, StoreCorrupt

__all__ = ["BATCH_ROWS", "read_arrow_table", "read_table", "read_table_counts"]

BATCH_ROWS = 65_536
"""Rows per Arrow batch (and per chunk of each column). Against the driver's 1,024 on 1M activities:
229 MB added instead of 264 MB, 16 chunks instead of 974 (a filter on the frame 1.5x faster, a sort
1.26x), load time the same within the noise (benchmarks/README.md, CRM)."""

_LARGEST_BATCH_ROWS = 2**30


def _fetch(uri: str, sql: str, batch_rows: int) -> pa.Table:
    with (
        adbc_driver_sqlite.dbapi.connect(uri, autocommit=True) as connection,
        connection.cursor() as cursor,
    ):
        cursor.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": str(batch_rows)})
        cursor.execute(sql)
        return cursor.fetch_arrow_table()


def _row_count(database_path: Path, table: str) -> int:
    with closing(connect_read_only(database_path)) as connection:
        return int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def read_arrow_table(database_path: str | Path, table: str) -> pa.Table:
    """Every row of one CRM table, ordered by id, as SQLite gives it (text dates, no CRM types yet)."""
    if table not in TABLES:
        raise InvalidInput(f"unknown CRM table {table!r}; use one of: {', '.join(TABLES)}")
    path = Path(database_path).expanduser().resolve()
    connect_read_only(path).close()  # NotFound, or StoreCorrupt for a file that is not this CRM
    uri = path.as_uri() + "?mode=ro"
    sql = f"SELECT * FROM {table} ORDER BY id"  # table from the fixed list
    try:
        return _fetch(uri, sql, BATCH_ROWS)
    except (OSError, adbc_driver_sqlite.dbapi.Error):
        pass  # most often a type guessed from a first batch of NULLs; read again as one batch
    batch_rows = min(_row_count(path, table) + BATCH_ROWS, _LARGEST_BATCH_ROWS)
    try:
        return _fetch(uri, sql, batch_rows)
    except (OSError, adbc_driver_sqlite.dbapi.Error) as error:
        text = str(error).lower()
        if "locked" in text or "busy" in text:
            raise DatabaseBusy(f"the CRM table {table} is locked by another process; retry shortly") from None
        raise StoreCorrupt(
            f"the CRM table {table} of {path.name} could not be read: {str(error)[:200]}"
        ) from None


def read_table(
    database_path: str | Path, table: str, *, dtype_backend: DtypeBackend = "pyarrow"
) -> pd.DataFrame:
    """Every row of one CRM table, ordered by id, with CRM dtypes (``columns`` says which)."""
    backend = validate_dtype_backend(dtype_backend)
    arrow_table = read_arrow_table(database_path, table)
    try:
        return arrow_to_frame(arrow_table, backend)
    except InvalidInput as error:
        raise StoreCorrupt(
            f"the CRM table {table} holds a value of the wrong kind: {error.message}"
        ) from None


def read_table_counts(database_path: str | Path) -> dict[str, int]:
    """Rows per CRM table."""
    counts: dict[str, int] = {}
    with closing(connect_read_only(database_path)) as connection:
        for table in TABLES:
            counts[table] = int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    return counts
