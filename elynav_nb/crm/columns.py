"""CRM column dtypes for pandas 3: which columns are ids, times, categories. Pure (no I/O).

Where it sits: applied by ``reader.py`` to frames read straight from SQLite and by ``Crm.call``
to frames that came through MCP, so both paths give the same dtypes:

- ids (``id``, ``account_id``, ``contact_id``) -> ``Int64`` (nullable: a note has no contact);
- ``created_at``, ``updated_at``, ``occurred_at`` -> ``datetime64[us, UTC]``;
- ``close_date`` -> ``datetime64[us]`` (a calendar date);
- ``kind``, ``status`` -> ``category``; ``stage`` and ``size`` -> ordered ``category``;
- other text stays pandas 3 ``str`` (missing text is ``NaN``); ``amount`` is ``float64``.
"""

from __future__ import annotations

import pandas as pd

from elynav_nb.crm.domain import ACCOUNT_SIZES, ACCOUNT_STATUSES, ACTIVITY_KINDS, OPPORTUNITY_STAGES

__all__ = ["CATEGORY_DTYPES", "ID_COLUMNS", "TIMESTAMP_COLUMNS", "apply_crm_dtypes"]

ID_COLUMNS: tuple[str, ...] = ("id", "account_id", "contact_id")
TIMESTAMP_COLUMNS: tuple[str, ...] = ("created_at", "updated_at", "occurred_at")
DATE_COLUMNS: tuple[str, ...] = ("close_date",)
CATEGORY_DTYPES: dict[str, pd.CategoricalDtype] = {
    "kind": pd.CategoricalDtype(list(ACTIVITY_KINDS)),
    "stage": pd.CategoricalDtype(list(OPPORTUNITY_STAGES), ordered=True),
    "status": pd.CategoricalDtype(list(ACCOUNT_STATUSES)),
    "size": pd.CategoricalDtype(list(ACCOUNT_SIZES), ordered=True),
}


def apply_crm_dtypes(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with the CRM dtypes on the columns it has (others untouched)."""
    converted = frame.copy()
    for column in ID_COLUMNS:
        if column in converted.columns:
            converted[column] = converted[column].astype("Int64")
    for column in TIMESTAMP_COLUMNS:
        if column in converted.columns:
            converted[column] = pd.to_datetime(converted[column], utc=True, format="ISO8601").astype(
                "datetime64[us, UTC]"
            )
    for column in DATE_COLUMNS:
        if column in converted.columns:
            converted[column] = pd.to_datetime(converted[column], format="%Y-%m-%d").astype("datetime64[us]")
    for column, dtype in CATEGORY_DTYPES.items():
        if column in converted.columns:
            converted[column] = converted[column].astype(dtype)
    if "amount" in converted.columns:
        converted["amount"] = converted["amount"].astype("float64")
    return converted
