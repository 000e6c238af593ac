"""Write the deterministic demo dataset into a fresh CRM database file.

Where it sits: between the pure generator (``demo_data.py``) and the store (``store.py``); used
by ``elynav crm demo``, the notebooks, the tests and the benchmarks. All rows go in through one
transaction: the file holds the whole dataset or no rows at all.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from elynav_nb.crm.demo_data import DEMO_END, generate_demo_batches
from elynav_nb.crm.store import CrmStore
from elynav_nb.errors import InvalidInput

__all__ = ["create_demo_database"]


def create_demo_database(
    path: str | Path,
    *,
    accounts: int = 200,
    seed: int = 0,
    activities_per_account: int = 8,
    end: datetime = DEMO_END,
    overwrite: bool = False,
) -> dict[str, int]:
    """Create ``path`` with the demo dataset; returns the rows per table.

    An existing file is refused unless ``overwrite`` (then it is deleted with its WAL files).
    """
    if accounts < 1:
        raise InvalidInput(f"accounts must be 1 or more, got {accounts}")
    if activities_per_account < 0:
        raise InvalidInput(f"activities_per_account must be 0 or more, got {activities_per_account}")
    database_path = Path(path).expanduser()
    if database_path.exists():
        if not overwrite:
            raise InvalidInput(
                f"{database_path.name} already exists; choose another path or overwrite it (--force)"
            )
        for leftover in (database_path, Path(f"{database_path}-wal"), Path(f"{database_path}-shm")):
            leftover.unlink(missing_ok=True)
    with CrmStore.open(database_path) as store:
        return store.insert_batches(
            generate_demo_batches(accounts, seed, activities_per_account=activities_per_account, end=end)
        )
