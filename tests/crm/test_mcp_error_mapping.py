"""The one mapping from ``ElynavError`` to an MCP tool error (``elynav_nb/_mcp_errors.py``), alone."""

from __future__ import annotations

from pathlib import Path

from mcp.types import TextContent

from elynav_nb._mcp_errors import tool_error_payload, tool_error_result, tool_error_text, typed_error_result
from elynav_nb.crm.frames import tool_error
from elynav_nb.errors import Duplicate, NotFound, VersionConflict


def test_a_typed_error_becomes_a_coded_line_and_a_structured_payload() -> None:
    result = typed_error_result(
        Duplicate("contact exists (id 4)", details={"existing_id": 4, "email": "é@x.fr"})
    )
    assert result.is_error
    assert result.structured_content == {
        "code": "DUPLICATE",
        "message": "contact exists (id 4)",
        "details": {"existing_id": 4, "email": "é@x.fr"},
    }
    assert result.content == [
        TextContent(
            type="text", text='DUPLICATE: contact exists (id 4) {"email": "é@x.fr", "existing_id": 4}'
        )
    ]


def test_an_error_without_details_has_no_details_key() -> None:
    result = typed_error_result(NotFound("no such thing"))
    assert result.structured_content == {"code": "NOT_FOUND", "message": "no such thing"}
    assert tool_error_text(result.structured_content) == "NOT_FOUND: no such thing"


def test_details_are_made_json_safe() -> None:
    payload = tool_error_payload("STORE_CORRUPT", "bad file", {"path": Path("/x/y"), "sizes": (1, 2)})
    assert payload["details"] == {"path": "/x/y", "sizes": [1, 2]}


def test_a_server_may_keep_its_own_text_with_the_same_structured_content() -> None:
    payload = tool_error_payload("DOC_NOT_FOUND", "gone")
    result = tool_error_result(payload, text='{"code": "DOC_NOT_FOUND", "message": "gone"}')
    assert result.structured_content == payload and result.is_error
    assert result.content[0].text == '{"code": "DOC_NOT_FOUND", "message": "gone"}'  # type: ignore[union-attr]


def test_the_crm_client_reads_the_coded_line_back_into_the_typed_error() -> None:
    original = VersionConflict("stale", details={"currentVersion": 2, "expectedVersion": 1})
    restored = tool_error(typed_error_result(original))
    assert isinstance(restored, VersionConflict)
    assert restored.message == "stale" and restored.details == original.details
