"""Read-only frames through Arrow (ADBC): CRM types, NULLs, the type-guess fallback, odd files."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from elynav_nb.crm import reader
from elynav_nb.crm.columns import COLUMN_TYPES, with_numpy_dtypes
from elynav_nb.crm.schema import TABLES
from elynav_nb.crm.store import CrmStore
from elynav_nb.errors import InvalidInput, StoreCorrupt

FIXED_NOW = datetime(2025, 7, 1, 9, 0, 0, tzinfo=UTC)


def _store_with_accounts(path: Path, owners: list[str | None]) -> None:
    with CrmStore.open(path, clock=lambda: FIXED_NOW) as store:
        for number, owner in enumerate(owners, start=1):
            store.create_account(f"Compte {number}", owner=owner)


def test_every_schema_column_has_a_crm_type(demo_database: Path) -> None:
    with sqlite3.connect(demo_database) as connection:
        for table in TABLES:
            columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
            assert columns and all(column in COLUMN_TYPES for column in columns), table
    connection.close()


def test_values_and_missing_values_match_sqlite(demo_database: Path) -> None:
    activities = reader.read_table(demo_database, "activities")
    contacts = reader.read_table(demo_database, "contacts")
    with sqlite3.connect(demo_database) as connection:
        rows = connection.execute(
            "SELECT id, contact_id, kind, occurred_at FROM activities ORDER BY id"
        ).fetchall()
        null_titles = connection.execute("SELECT count(*) FROM contacts WHERE title IS NULL").fetchone()[0]
    connection.close()
    assert activities["id"].to_list() == [row[0] for row in rows]
    assert int(activities["contact_id"].isna().sum()) == sum(1 for row in rows if row[1] is None) > 0
    assert activities["kind"].astype(str).to_list() == [row[2] for row in rows]
    first_time = pd.Timestamp(rows[0][3])
    assert activities.loc[0, "occurred_at"] == first_time and first_time.tzinfo is not None
    assert int(contacts["title"].isna().sum()) == null_titles


def test_a_text_column_that_starts_with_nulls_is_read_again_as_one_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "late owners.sqlite"
    _store_with_accounts(path, [None, None, None, "Yann", None, "Claire Martin"])
    monkeypatch.setattr(reader, "BATCH_ROWS", 2)  # the driver's guess sees two NULLs: int64
    accounts = reader.read_table(path, "accounts")
    assert accounts["owner"].dtype == pd.ArrowDtype(pa.string())
    assert accounts["owner"].isna().to_list() == [True, True, True, False, True, False]
    assert accounts["owner"].dropna().to_list() == ["Yann", "Claire Martin"]


def test_all_null_and_empty_columns_keep_their_types(tmp_path: Path) -> None:
    path = tmp_path / "crm.sqlite"
    _store_with_accounts(path, [None, None])
    accounts = reader.read_table(path, "accounts")
    assert accounts["owner"].dtype == pd.ArrowDtype(pa.string()) and accounts["owner"].isna().all()
    assert accounts["size"].isna().all() and isinstance(accounts["size"].dtype, pd.CategoricalDtype)
    activities = reader.read_table(path, "activities")
    assert activities.empty
    assert activities["occurred_at"].dtype == pd.ArrowDtype(pa.timestamp("us", tz="UTC"))
    assert activities["contact_id"].dtype == pd.ArrowDtype(pa.int64())


def test_other_iso_forms_are_read_as_utc_and_garbage_is_store_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "crm.sqlite"
    _store_with_accounts(path, ["Yann", "Yann", "Yann"])
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE accounts SET created_at = '2025-03-14 09:30:00' WHERE id = 2")
        connection.execute("UPDATE accounts SET created_at = '2025-03-14T11:30:00+02:00' WHERE id = 3")
    connection.close()
    created = reader.read_table(path, "accounts")["created_at"]
    assert created.to_list()[1:] == [pd.Timestamp("2025-03-14T09:30:00Z")] * 2
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE accounts SET created_at = 'yesterday' WHERE id = 1")
    connection.close()
    with pytest.raises(StoreCorrupt, match="created_at"):
        reader.read_table(path, "accounts")


def test_numpy_nullable_backend(demo_database: Path) -> None:
    arrow_backed = reader.read_table(demo_database, "opportunities")
    numpy_backed = reader.read_table(demo_database, "opportunities", dtype_backend="numpy_nullable")
    assert {column: str(dtype) for column, dtype in numpy_backed.dtypes.items()} == {
        "id": "Int64",
        "account_id": "Int64",
        "name": "string",
        "stage": "category",
        "amount": "Float64",
        "close_date": "datetime64[us]",
        "created_at": "datetime64[us, UTC]",
        "updated_at": "datetime64[us, UTC]",
    }
    assert numpy_backed["close_date"].isna().to_list() == arrow_backed["close_date"].isna().to_list()
    pd.testing.assert_frame_equal(with_numpy_dtypes(arrow_backed), numpy_backed)
    with pytest.raises(InvalidInput, match="dtype_backend"):
        reader.read_table(demo_database, "opportunities", dtype_backend="numpy")  # type: ignore[arg-type]


def test_unknown_table_is_refused_before_any_read(demo_database: Path) -> None:
    with pytest.raises(InvalidInput, match="unknown CRM table"):
        reader.read_table(demo_database, "sqlite_master")
