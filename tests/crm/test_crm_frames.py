"""``Crm.open``: read-only frames with pandas 3 dtypes, the three faces, analyses."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from elynav_nb.crm import Crm
from elynav_nb.crm.analysis import (
    activities_per_agent_per_week,
    pipeline_by_stage,
    plot_activities_per_agent_per_week,
    plot_pipeline_by_stage,
    untouched_accounts,
)
from elynav_nb.crm.columns import apply_crm_dtypes
from elynav_nb.crm.schema import SCHEMA_VERSION
from elynav_nb.errors import InvalidInput, NotFound, StoreCorrupt


def test_frames_are_arrow_backed(demo_database: Path) -> None:
    crm = Crm.open(demo_database)
    accounts = crm.accounts()
    activities = crm.activities()
    opportunities = crm.opportunities()
    contacts = crm.contacts()
    assert accounts["id"].dtype == pd.ArrowDtype(pa.int64())
    assert (
        activities["contact_id"].dtype == pd.ArrowDtype(pa.int64()) and activities["contact_id"].isna().any()
    )
    assert pd.api.types.is_string_dtype(accounts["name"]) and accounts["name"].dtype == pd.ArrowDtype(
        pa.string()
    )
    assert activities["occurred_at"].dtype == pd.ArrowDtype(pa.timestamp("us", tz="UTC"))
    assert opportunities["close_date"].dtype == pd.ArrowDtype(pa.timestamp("us"))
    assert opportunities["amount"].dtype == pd.ArrowDtype(pa.float64())
    assert isinstance(activities["kind"].dtype, pd.CategoricalDtype)
    assert list(opportunities["stage"].cat.categories)[:2] == ["prospecting", "qualification"]
    assert opportunities["stage"].cat.ordered
    assert contacts["title"].dtype == accounts["name"].dtype
    pd.testing.assert_frame_equal(crm.to_frame(), accounts)
    numpy_backed = crm.to_frame(dtype_backend="numpy_nullable")
    assert (
        str(numpy_backed["id"].dtype) == "Int64"
        and str(numpy_backed["created_at"].dtype) == "datetime64[us, UTC]"
    )


def test_analyses_agree_on_both_backends(demo_database: Path) -> None:
    crm = Crm.open(demo_database)
    arrow_accounts, arrow_activities = crm.accounts(), crm.activities()
    numpy_accounts = crm.accounts(dtype_backend="numpy_nullable")
    numpy_activities = crm.activities(dtype_backend="numpy_nullable")
    pd.testing.assert_frame_equal(
        activities_per_agent_per_week(arrow_activities), activities_per_agent_per_week(numpy_activities)
    )
    pd.testing.assert_frame_equal(
        pipeline_by_stage(crm.opportunities()),
        pipeline_by_stage(crm.opportunities(dtype_backend="numpy_nullable")),
    )
    as_of = "2025-06-30T18:00:00Z"
    from_arrow = untouched_accounts(arrow_accounts, arrow_activities, days=90, as_of=as_of)
    from_numpy = untouched_accounts(numpy_accounts, numpy_activities, days=90, as_of=as_of)
    assert len(from_arrow) > 0
    assert from_arrow["id"].to_list() == from_numpy["id"].to_list()
    assert from_arrow["days_since_touch"].to_list() == from_numpy["days_since_touch"].to_list()


def test_repr_and_html(demo_database: Path) -> None:
    crm = Crm.open(demo_database)
    counts = crm.counts()
    assert repr(crm) == (
        f"<Crm 'demo.sqlite' accounts=60 contacts={counts['contacts']} activities={counts['activities']} "
        f"opportunities={counts['opportunities']}>"
    )
    assert "\n" not in repr(crm)
    html = crm._repr_html_()
    assert "<td>activities</td>" in html and f"{counts['activities']:,}" in html


def test_open_refuses_missing_and_newer_databases(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        Crm.open(tmp_path / "missing.sqlite")
    future = tmp_path / "future.sqlite"
    with sqlite3.connect(future) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    connection.close()
    with pytest.raises(StoreCorrupt, match="newer"):
        Crm.open(future)


def _opportunities() -> pd.DataFrame:
    return apply_crm_dtypes(
        pd.DataFrame(
            {
                "id": [1, 2, 3, 4],
                "account_id": [1, 1, 2, 2],
                "stage": ["proposal", "proposal", "won", "prospecting"],
                "amount": [100.0, 300.0, 50.0, 600.0],
            }
        )
    )


def test_pipeline_by_stage() -> None:
    table = pipeline_by_stage(_opportunities())
    assert list(table.index) == ["prospecting", "qualification", "proposal", "negotiation", "won", "lost"]
    assert table["opportunities"].to_list() == [1, 0, 2, 0, 1, 0]
    assert table.loc["proposal", "total_amount"] == 400.0
    assert table.loc["proposal", "average_amount"] == 200.0
    assert table.loc["qualification", "average_amount"] == 0.0
    assert table.loc["proposal", "share_of_open_amount"] == 0.4
    assert table.loc["won", "share_of_open_amount"] == 0.0


def _activities() -> pd.DataFrame:
    return apply_crm_dtypes(
        pd.DataFrame(
            {
                "id": [1, 2, 3, 4],
                "account_id": [1, 1, 2, 1],
                "kind": ["call", "email", "note", "call"],
                "occurred_at": [
                    "2025-06-02T10:00:00Z",  # Monday, week of 2 June
                    "2025-06-08T23:00:00Z",  # Sunday, same week
                    "2025-06-03T09:00:00Z",
                    "2025-06-24T09:00:00Z",  # two weeks later (16 June has none)
                ],
                "logged_by": ["elynav-sdr", "elynav-sdr", "Yann", "elynav-cmo"],
            }
        )
    )


def test_activities_per_agent_per_week() -> None:
    table = activities_per_agent_per_week(_activities())
    assert [day.strftime("%Y-%m-%d") for day in table.index] == [
        "2025-06-02",
        "2025-06-09",
        "2025-06-16",
        "2025-06-23",
    ]
    assert table.loc[pd.Timestamp("2025-06-02"), "elynav-sdr"] == 2
    assert table.loc[pd.Timestamp("2025-06-16")].sum() == 0
    assert table.loc[pd.Timestamp("2025-06-23"), "elynav-cmo"] == 1
    assert sorted(activities_per_agent_per_week(_activities(), agents_only=True).columns) == [
        "elynav-cmo",
        "elynav-sdr",
    ]


def test_untouched_accounts() -> None:
    accounts = apply_crm_dtypes(
        pd.DataFrame(
            {
                "id": [1, 2, 3],
                "name": ["Touched", "Silent", "Never"],
                "owner": ["Yann", "Yann", None],
                "status": ["customer", "prospect", "prospect"],
            }
        )
    )
    table = untouched_accounts(accounts, _activities(), days=14, as_of="2025-06-30T12:00:00Z")
    assert table["name"].to_list() == ["Never", "Silent"]
    assert pd.isna(table.loc[0, "days_since_touch"])
    assert table.loc[1, "days_since_touch"] == 27
    everyone = untouched_accounts(accounts, _activities(), days=1, as_of="2025-06-30")
    assert everyone["name"].to_list() == ["Never", "Silent", "Touched"]


def test_figures() -> None:
    pytest.importorskip("matplotlib")
    pipeline_figure = plot_pipeline_by_stage(pipeline_by_stage(_opportunities()))
    assert len(pipeline_figure.axes) == 1
    assert len(pipeline_figure.axes[0].patches) == 6
    weekly_figure = plot_activities_per_agent_per_week(activities_per_agent_per_week(_activities()))
    assert len(weekly_figure.axes[0].lines) == 3
    weekly_figure.draw_without_rendering()
    legend = weekly_figure.axes[0].get_legend()
    assert legend is not None
    plot_area = weekly_figure.axes[0].get_window_extent()
    legend_box = legend.get_window_extent()
    assert legend_box.x0 >= plot_area.x1  # beside the plot: it can cover no line
    assert legend_box.x1 <= weekly_figure.bbox.x1  # and still inside the figure


def test_repr_never_raises_when_the_file_is_gone(tmp_path: Path) -> None:
    from elynav_nb.crm.demo_database import create_demo_database

    path = tmp_path / "gone.sqlite"
    create_demo_database(path, accounts=3, seed=1)
    crm = Crm.open(path)
    path.unlink()
    assert repr(crm) == "<Crm 'gone.sqlite' unavailable (NOT_FOUND)>"
    assert "unavailable (NOT_FOUND)" in crm._repr_html_()


def test_to_frame_takes_a_table_name(demo_database: Path) -> None:
    crm = Crm.open(demo_database)
    pd.testing.assert_frame_equal(crm.to_frame(), crm.accounts())  # the default is unchanged
    pd.testing.assert_frame_equal(crm.to_frame("contacts"), crm.contacts())
    pd.testing.assert_frame_equal(crm.to_frame(table="activities"), crm.activities())
    numpy_backed = crm.to_frame("opportunities", dtype_backend="numpy_nullable")
    pd.testing.assert_frame_equal(numpy_backed, crm.opportunities(dtype_backend="numpy_nullable"))
    with pytest.raises(InvalidInput, match="unknown CRM table 'deals'; use one of: accounts, contacts"):
        crm.to_frame("deals")


def test_open_creates_an_empty_crm_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    with pytest.raises(NotFound, match="create=True"):
        Crm.open(path)
    assert not path.exists()  # a mistyped path never becomes an empty CRM
    crm = Crm.open(path, create=True)
    assert path.is_file() and crm.counts() == dict.fromkeys(crm.counts(), 0)
    assert crm.to_frame().empty
    Crm.open(path, create=True)  # an existing CRM is opened as it is
    with pytest.raises(NotFound, match="does not exist"):
        Crm.open(tmp_path / "no-such-dir" / "new.sqlite", create=True)
