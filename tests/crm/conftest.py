"""Fixtures for the CRM tests: a fresh store with a fixed clock, and a small demo database."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from elynav_nb.crm.demo_database import create_demo_database
from elynav_nb.crm.store import CrmStore

FIXED_NOW = datetime(2025, 7, 1, 9, 0, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[CrmStore]:
    with CrmStore.open(tmp_path / "crm.sqlite", clock=lambda: FIXED_NOW) as crm_store:
        yield crm_store


@pytest.fixture(scope="session")
def demo_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 accounts, seed 3; tests only read it."""
    path = tmp_path_factory.mktemp("demo") / "demo.sqlite"
    create_demo_database(path, accounts=60, seed=3)
    return path
