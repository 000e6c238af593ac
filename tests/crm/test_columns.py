"""The pure column mapping on frames that came through MCP (any JSON shape): CRM types, kept extras."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from elynav_nb.crm.columns import apply_crm_dtypes, with_numpy_dtypes
from elynav_nb.errors import InvalidInput


def _mcp_like_frame() -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "id": [1, 2],
            "contact_id": [4.0, None],  # JSON null in an id column arrives as NaN in a float column
            "kind": ["call", "telegram"],  # a value outside the fixed list
            "occurred_at": ["2025-06-02T10:00:00Z", None],
            "close_date": ["2025-09-30", None],
            "recent_activities": [[{"id": 1}], {"nested": True}],  # Arrow cannot hold this mix
            "count": [3, 4],
        }
    )
    frame.attrs["next_cursor"] = "abc"
    return frame


def test_crm_columns_get_crm_types_and_extras_are_kept() -> None:
    converted = apply_crm_dtypes(_mcp_like_frame())
    assert list(converted.columns) == list(_mcp_like_frame().columns)
    assert converted.attrs == {"next_cursor": "abc"}
    assert converted["id"].dtype == pd.ArrowDtype(pa.int64())
    assert converted["contact_id"].to_list()[0] == 4 and pd.isna(converted["contact_id"].iloc[1])
    assert converted["kind"].iloc[0] == "call" and pd.isna(converted["kind"].iloc[1])
    assert list(converted["kind"].cat.categories) == ["email", "call", "meeting", "note", "linkedin"]
    assert converted["occurred_at"].iloc[0] == pd.Timestamp("2025-06-02T10:00:00Z")
    assert converted["close_date"].dtype == pd.ArrowDtype(pa.timestamp("us"))
    assert converted["recent_activities"].dtype == object
    assert converted["count"].dtype == pd.ArrowDtype(pa.int64())


def test_numpy_backend_and_conversion_agree() -> None:
    numpy_backed = apply_crm_dtypes(_mcp_like_frame(), dtype_backend="numpy_nullable")
    assert str(numpy_backed["id"].dtype) == "Int64"
    assert str(numpy_backed["occurred_at"].dtype) == "datetime64[us, UTC]"
    pd.testing.assert_frame_equal(with_numpy_dtypes(apply_crm_dtypes(_mcp_like_frame())), numpy_backed)


def test_a_time_that_is_not_iso_8601_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="occurred_at"):
        apply_crm_dtypes(pd.DataFrame({"occurred_at": ["next tuesday"]}))
