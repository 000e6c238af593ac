"""Demo data: deterministic, realistic enough, and the ``elynav crm demo`` command."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from elynav_nb.cli import main as elynav_main
from elynav_nb.crm.demo_data import ELYNAV_AGENTS, TEAM_PEOPLE
from elynav_nb.crm.demo_database import create_demo_database
from elynav_nb.crm.reader import read_table
from elynav_nb.crm.schema import TABLES


def _frame_bytes(path: Path) -> dict[str, bytes]:
    snapshot: dict[str, bytes] = {}
    for table in TABLES:
        frame = read_table(path, table)
        snapshot[table] = (frame.to_csv(index=False) + repr(frame.dtypes.to_dict())).encode("utf-8")
    return snapshot


def test_same_seed_gives_the_same_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    first = tmp_path / "first.sqlite"
    second = tmp_path / "second.sqlite"
    other = tmp_path / "other.sqlite"
    create_demo_database(first, accounts=40, seed=11)
    create_demo_database(second, accounts=40, seed=11)
    create_demo_database(other, accounts=40, seed=12)
    assert _frame_bytes(first) == _frame_bytes(second)
    assert _frame_bytes(first)["accounts"] != _frame_bytes(other)["accounts"]


def test_demo_content_is_a_french_b2b_year(demo_database: Path) -> None:
    accounts = read_table(demo_database, "accounts")
    contacts = read_table(demo_database, "contacts")
    activities = read_table(demo_database, "activities")
    opportunities = read_table(demo_database, "opportunities")
    assert len(accounts) == 60
    assert accounts["domain"].str.endswith(".fr").all() and accounts["domain"].is_unique
    assert (accounts["country"] == "FR").all()
    assert contacts["email"].is_unique
    assert contacts.groupby("account_id").size().between(1, 5).all()
    assert set(activities["logged_by"]) <= set(ELYNAV_AGENTS) | set(TEAM_PEOPLE)
    assert "elynav-sdr" in set(activities["logged_by"])
    span = activities["occurred_at"].max() - activities["occurred_at"].min()
    assert pd.Timedelta(days=300) < span <= pd.Timedelta(days=366)
    assert (activities["occurred_at"].dt.day_of_week < 5).all()  # weekdays only
    notes = activities.loc[activities["kind"] == "note"]
    assert notes["contact_id"].isna().all()
    contact_accounts = contacts.set_index("id")["account_id"]
    touched = activities.dropna(subset=["contact_id"])
    assert (touched["contact_id"].map(contact_accounts) == touched["account_id"]).all()
    assert (opportunities["amount"] > 0).all()


def test_elynav_crm_demo_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cli.sqlite"
    assert elynav_main(["crm", "demo", "--accounts", "25", "--seed", "5", "--db", str(path)]) == 0
    output = capsys.readouterr().out
    assert "accounts" in output and "25" in output
    assert len(read_table(path, "accounts")) == 25
    assert elynav_main(["crm", "demo", "--accounts", "25", "--seed", "5", "--db", str(path)]) == 2
    assert "INVALID_INPUT" in capsys.readouterr().err
    assert elynav_main(["crm", "demo", "--accounts", "10", "--seed", "5", "--db", str(path), "--force"]) == 0
    assert len(read_table(path, "accounts")) == 10
