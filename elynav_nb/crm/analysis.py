"""Ready-made CRM analyses on DataFrames: pipeline by stage, activities per agent per week,
accounts with no touch in N days. Pure pandas, no I/O.

Where it sits: called by ``Crm.pipeline_by_stage()`` and friends with the frames of
``reader.py`` (any frames with the same columns work, Arrow-backed or NumPy-backed, e.g. from
``Crm.call``). Each
analysis returns a DataFrame; the ``plot_*`` functions draw one as a matplotlib ``Figure``.
matplotlib is imported inside them (it is optional: ``pip install matplotlib``), and figures are
built without pyplot, so nothing global changes and a figure is shown only when returned.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import pandas as pd

from elynav_nb.crm.domain import CLOSED_STAGES

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "activities_per_agent_per_week",
    "pipeline_by_stage",
    "plot_activities_per_agent_per_week",
    "plot_pipeline_by_stage",
    "untouched_accounts",
]


def pipeline_by_stage(opportunities: pd.DataFrame) -> pd.DataFrame:
    """One row per stage, in pipeline order (stages with no deal included).

    Columns: ``opportunities`` (count), ``total_amount``, ``average_amount`` (0 when none) and
    ``share_of_open_amount`` (the stage's part of the open pipeline, 0 for won and lost).
    """
    grouped = opportunities.groupby("stage", observed=False)["amount"]
    table = pd.DataFrame(
        {
            "opportunities": grouped.count().astype("int64"),
            "total_amount": grouped.sum().astype("float64").round(2),
            "average_amount": grouped.mean().astype("float64").fillna(0.0).round(2),
        }
    )
    is_open = ~table.index.isin(list(CLOSED_STAGES))
    open_amount = float(table.loc[is_open, "total_amount"].sum())
    share = table["total_amount"] / open_amount if open_amount else table["total_amount"] * 0.0
    table["share_of_open_amount"] = share.where(is_open, 0.0).round(4)
    table.index.name = "stage"
    return table


def plot_pipeline_by_stage(table: pd.DataFrame) -> Figure:
    """Horizontal bars: total amount per stage (k€), with the deal count on each bar."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 3.5), layout="constrained")
    axes = figure.add_subplot()
    stages = [str(stage) for stage in table.index]
    amounts_in_thousands = (table["total_amount"] / 1000).to_list()
    bars = axes.barh(stages, amounts_in_thousands, color="#3b6ea5")
    for bar, count in zip(bars, table["opportunities"].to_list(), strict=True):
        axes.annotate(
            f"{count} deals",
            (bar.get_width(), bar.get_y() + bar.get_height() / 2),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    axes.invert_yaxis()
    axes.set_xlabel("total amount (k€)")
    axes.set_title("Pipeline by stage")
    return figure


def activities_per_agent_per_week(activities: pd.DataFrame, *, agents_only: bool = False) -> pd.DataFrame:
    """Activities counted per week (rows, Monday dates, no gaps) and per author (columns).

    ``agents_only`` keeps the Elynav agents (``elynav-*``) and drops the people.
    """
    selected = activities
    if agents_only:
        selected = activities.loc[activities["logged_by"].str.startswith("elynav-")]
    # NumPy-backed UTC times first: Arrow-backed ones have no ``dt.to_period``
    occurred_utc = selected["occurred_at"].astype("datetime64[us, UTC]").dt.tz_localize(None)
    week_start = occurred_utc.dt.to_period("W-SUN").dt.start_time.rename("week")
    table = pd.crosstab(week_start, selected["logged_by"].rename("logged_by"))
    if not table.empty:
        all_weeks = pd.date_range(table.index.min(), table.index.max(), freq="W-MON", name="week")
        table = table.reindex(all_weeks, fill_value=0)
    table = table.astype("int64")
    table.columns = [str(column) for column in table.columns]
    table.columns.name = "logged_by"
    return table


def plot_activities_per_agent_per_week(table: pd.DataFrame) -> Figure:
    """One line per author: activities per week; the legend sits right of the plot, never over a line."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 4), layout="constrained")
    axes = figure.add_subplot()
    for author in table.columns:
        axes.plot(table.index, table[author].to_list(), label=str(author), linewidth=1.2)
    axes.set_ylabel("activities per week")
    axes.set_title("Activities per agent per week")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="logged by", title_fontsize=7)
    return figure


def _as_utc_timestamp(moment: datetime | str | pd.Timestamp | None) -> pd.Timestamp:
    stamp = pd.Timestamp.now(tz="UTC") if moment is None else pd.Timestamp(moment)
    if stamp.tzinfo is None:
        return stamp.tz_localize("UTC")
    return stamp.tz_convert("UTC")


def untouched_accounts(
    accounts: pd.DataFrame,
    activities: pd.DataFrame,
    *,
    days: int = 30,
    as_of: datetime | str | pd.Timestamp | None = None,
) -> pd.DataFrame:
    """Accounts with no activity in the ``days`` days before ``as_of`` (default: now, UTC).

    Columns: ``id``, ``name``, ``owner``, ``status``, ``last_touch`` (``NaT`` when never touched)
    and ``days_since_touch`` (nullable). Never-touched accounts come first, then the longest silent.
    """
    reference = _as_utc_timestamp(as_of)
    known_activities = activities.loc[activities["occurred_at"] <= reference]
    last_touch_by_account = known_activities.groupby("account_id")["occurred_at"].max()
    table = accounts.loc[:, ["id", "name", "owner", "status"]].copy()
    table["last_touch"] = table["id"].map(last_touch_by_account).astype("datetime64[us, UTC]")
    table["days_since_touch"] = (reference - table["last_touch"]).dt.days.astype("Int64")
    cutoff = reference - pd.Timedelta(days=days)
    is_untouched = table["last_touch"].isna() | (table["last_touch"] < cutoff)
    table = table.loc[is_untouched]
    table = table.assign(_never=table["last_touch"].isna())
    table = table.sort_values(["_never", "days_since_touch", "id"], ascending=[False, False, True])
    return table.drop(columns="_never").reset_index(drop=True)
