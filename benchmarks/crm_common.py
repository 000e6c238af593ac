"""Shared by the CRM benchmarks: the demo database they measure, built once and kept in the temp folder.

Building 100,000 accounts and about 1,000,000 activities takes 40 s to a few minutes, so
``crm_search.py`` and ``crm_frames.py`` reuse the file between runs (``--rebuild`` makes it anew).
The data is deterministic (seed 1), so a kept file is the same as a new one.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from elynav_nb.crm.demo_data import generate_demo_batches
from elynav_nb.crm.store import CrmStore

CACHE_FOLDER = Path(tempfile.gettempdir()) / "elynav-crm-bench"


def benchmark_database(
    accounts: int, activities_per_account: int, *, rebuild: bool = False
) -> tuple[Path, float | None]:
    """The path of the demo database, and its build time in seconds (``None`` when it was kept)."""
    CACHE_FOLDER.mkdir(exist_ok=True)
    path = CACHE_FOLDER / f"crm-{accounts}-accounts-{activities_per_account}-activities-seed1.sqlite"
    if path.exists() and not rebuild:
        return path, None
    partial = path.with_suffix(".partial")
    for leftover in (path, partial):
        leftover.unlink(missing_ok=True)
    started = time.perf_counter()
    with CrmStore.open(partial) as store:
        store.insert_batches(
            generate_demo_batches(accounts, seed=1, activities_per_account=activities_per_account)
        )
    partial.rename(path)  # closed, so the WAL is checkpointed and gone
    return path, time.perf_counter() - started
