"""The generic MCP result -> DataFrame helper, on hand-built results (any server's shapes)."""

from __future__ import annotations

import pandas as pd
import pytest
from mcp.types import CallToolResult, ImageContent, TextContent

from elynav_nb.crm.frames import mcp_result_to_frame, payload_to_frame
from elynav_nb.errors import Duplicate, NotFound, ServiceError


def _result(
    *texts: str, structured: dict[str, object] | None = None, is_error: bool = False
) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text) for text in texts],
        structured_content=structured,
        is_error=is_error,
    )


def test_page_rows_with_cursor_in_attrs() -> None:
    frame = mcp_result_to_frame(
        _result(
            "{}", structured={"items": [{"id": 1, "name": "A"}, {"id": 2, "name": "B"}], "next_cursor": "abc"}
        )
    )
    assert frame["name"].to_list() == ["A", "B"]
    assert frame.attrs == {"next_cursor": "abc"}
    assert pd.api.types.is_string_dtype(frame["name"])


def test_sdk_list_wrapper_is_removed() -> None:
    frame = mcp_result_to_frame(_result('{"a": 1}', '{"a": 2}', structured={"result": [{"a": 1}, {"a": 2}]}))
    assert frame["a"].to_list() == [1, 2]


def test_json_text_without_structured_content() -> None:
    assert mcp_result_to_frame(_result('[{"x": 1}, {"x": 3}]'))["x"].to_list() == [1, 3]
    assert mcp_result_to_frame(_result('{"x": 1}', '{"x": 2}'))["x"].to_list() == [1, 2]
    assert mcp_result_to_frame(_result("42"))["value"].to_list() == [42]


def test_plain_text_and_non_text_blocks() -> None:
    frame = mcp_result_to_frame(_result("hello", "world"))
    assert frame["text"].to_list() == ["hello", "world"]
    image_only = CallToolResult(content=[ImageContent(type="image", data="AAAA", mime_type="image/png")])
    assert mcp_result_to_frame(image_only).empty


def test_single_list_of_records_wins_and_scalars_go_to_attrs() -> None:
    frame = payload_to_frame({"stages": [{"stage": "won", "count": 2}], "open_count": 3, "meta": {"a": 1}})
    assert frame["count"].to_list() == [2]
    assert frame.attrs == {"open_count": 3}


def test_object_without_rows_is_one_flattened_row() -> None:
    frame = payload_to_frame({"account": {"id": 7, "name": "A"}, "contacts": [], "notes": []})
    assert frame.loc[0, "account.id"] == 7
    assert len(frame) == 1


def test_coded_error_becomes_the_typed_error_with_details() -> None:
    result = _result(
        'Error executing tool create_contact: DUPLICATE: a contact exists (id 4) {"existing_id": 4}',
        is_error=True,
    )
    with pytest.raises(Duplicate) as caught:
        mcp_result_to_frame(result)
    assert caught.value.details == {"existing_id": 4}
    assert str(caught.value) == "a contact exists (id 4)"
    with pytest.raises(NotFound):
        mcp_result_to_frame(_result("Error executing tool x: NOT_FOUND: no such thing", is_error=True))


def test_uncoded_or_unknown_errors_are_service_errors_without_secrets() -> None:
    with pytest.raises(ServiceError) as caught:
        mcp_result_to_frame(_result("Error executing tool x: boom token=abcdef123456", is_error=True))
    assert "abcdef123456" not in str(caught.value)
    with pytest.raises(ServiceError) as unknown:
        mcp_result_to_frame(_result("WEIRD_CODE: something", is_error=True))
    assert unknown.value.details == {"code": "WEIRD_CODE"}
