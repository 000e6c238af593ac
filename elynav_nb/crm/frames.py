"""Turn any MCP tool result into a DataFrame (works with any MCP server, not only the CRM).

Where it sits: a pure helper used by ``Crm.call``; it imports nothing of the CRM. Data flows
from a ``CallToolResult`` to a payload, then to a frame:

1. an error result (``is_error``) raises: text shaped ``CODE: message`` (what elynav servers
   send), optionally ending with a JSON object of details, becomes the ``ElynavError`` subclass
   with that code (details restored), anything else ``ServiceError``;
2. the payload is the structured content when there is one, otherwise the JSON parsed from the
   text blocks (several JSON blocks make a list; text that is not JSON gives a ``text`` column);
   the SDK's ``{"result": ...}`` wrapper around lists and scalars is removed;
3. a list of objects is one row per object; an object with an ``items`` list (a page), or with
   exactly one list of objects, is one row per item and its other scalar fields go to
   ``frame.attrs`` (``next_cursor``, totals); any other object is one row, nested objects
   flattened to ``parent.child`` columns; a scalar is one ``value`` cell.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd
from mcp.types import CallToolResult, TextContent

from elynav_nb.errors import ElynavError, ServiceError, error_for_code, redact_secrets

__all__ = ["mcp_result_payload", "mcp_result_to_frame", "payload_to_frame", "tool_error"]

_TOOL_ERROR_PREFIX = re.compile(r"^Error executing tool [^:]*: ")
_CODED_MESSAGE = re.compile(r"^([A-Z][A-Z0-9_]{2,}): (.*)$", re.DOTALL)
_TRAILING_DETAILS = re.compile(r"^(.*?) (\{[^{}]*\})$", re.DOTALL)


def _texts(result: CallToolResult) -> list[str]:
    texts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            texts.append(block.text)
    return texts


def tool_error(result: CallToolResult) -> ElynavError:
    """The typed error an ``is_error`` result stands for (``CODE: message`` -> that code's class)."""
    text = redact_secrets(" ".join(_texts(result)).strip()) or "the tool failed without a message"
    text = _TOOL_ERROR_PREFIX.sub("", text)
    match = _CODED_MESSAGE.match(text)
    if match is not None:
        code, message = match.group(1), match.group(2)
        details: dict[str, Any] = {}
        details_match = _TRAILING_DETAILS.match(message)
        if details_match is not None:
            try:
                parsed = json.loads(details_match.group(2))
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                message, details = details_match.group(1), parsed
        error_class = error_for_code(code)
        if error_class is not ElynavError:
            return error_class(message, details=details)
        return ServiceError(text, details={"code": code})
    return ServiceError(text)


def mcp_result_payload(result: CallToolResult) -> Any:
    """The JSON payload of a tool result (structured content first, else the text blocks as JSON)."""
    if result.is_error:
        raise tool_error(result)
    payload: Any
    if result.structured_content is not None:
        payload = result.structured_content
    else:
        texts = _texts(result)
        parsed: list[Any] = []
        for text in texts:
            try:
                parsed.append(json.loads(text))
            except ValueError:
                return {"text": texts}
        payload = parsed[0] if len(parsed) == 1 else parsed
    if isinstance(payload, dict) and list(payload) == ["result"]:
        payload = payload["result"]
    return payload


def _is_record_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def payload_to_frame(payload: Any) -> pd.DataFrame:
    """A DataFrame for a JSON payload (rules in the module docstring)."""
    if isinstance(payload, list):
        if _is_record_list(payload):
            return pd.DataFrame.from_records(payload) if payload else pd.DataFrame()
        return pd.DataFrame({"value": payload})
    if not isinstance(payload, dict):
        return pd.DataFrame({"value": [payload]})
    if payload.keys() == {"text"} and isinstance(payload["text"], list):
        return pd.DataFrame({"text": payload["text"]})
    record_list_keys = [key for key, value in payload.items() if _is_record_list(value)]
    if "items" in record_list_keys:
        rows_key: str | None = "items"
    elif len(record_list_keys) == 1:
        rows_key = record_list_keys[0]
    else:
        rows_key = None
    if rows_key is None:
        return pd.json_normalize(payload, max_level=1)
    rows = payload[rows_key]
    frame = pd.DataFrame.from_records(rows) if rows else pd.DataFrame()
    for key, value in payload.items():
        if key != rows_key and not isinstance(value, list | dict):
            frame.attrs[key] = value
    return frame


def mcp_result_to_frame(result: CallToolResult) -> pd.DataFrame:
    """One DataFrame for one MCP tool result; an error result raises its typed error."""
    return payload_to_frame(mcp_result_payload(result))
