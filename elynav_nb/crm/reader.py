"""Read-only CRM tables as DataFrames, straight from SQLite (``mode=ro``) for heavy reads.

Where it sits: the I/O under ``Crm.accounts()`` and friends. It opens a read-only connection
per read (``store.connect_read_only`` checks the schema version), runs one fixed query per table
with ``pandas.read_sql_query`` and hands the frame to ``columns.apply_crm_dtypes``. It can never
write: SQLite itself refuses writes on a ``mode=ro`` connection. WAL lets it read while the MCP
server writes.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pandas as pd

from elynav_nb.crm.columns import apply_crm_dtypes
from elynav_nb.crm.schema import TABLES
from elynav_nb.crm.store import connect_read_only
from elynav_nb.errors import InvalidInput

__all__ = ["read_table", "read_table_counts"]


def read_table(database_path: str | Path, table: str) -> pd.DataFrame:
    """Every row of one CRM table, ordered by id, with CRM dtypes."""
    if table not in TABLES:
        raise InvalidInput(f"unknown CRM table {table!r}; use one of: {', '.join(TABLES)}")
    with closing(connect_read_only(database_path)) as connection:
        frame = pd.read_sql_query(
            f"SELECT * FROM {table} ORDER BY id", connection
        )  # table from the fixed list
    return apply_crm_dtypes(frame)


def read_table_counts(database_path: str | Path) -> dict[str, int]:
    """Rows per CRM table."""
    counts: dict[str, int] = {}
    with closing(connect_read_only(database_path)) as connection:
        for table in TABLES:
            counts[table] = int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    return counts
