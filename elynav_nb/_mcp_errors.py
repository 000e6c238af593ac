"""How a typed ``ElynavError`` becomes an MCP tool error: the one mapping the MCP servers share.

Where it sits: a package-level private module, because capabilities do not import each other and
the CRM (``crm/server.py``), templates (``templates/server.py``) and Docs (``docs/server_common.py``)
servers meet here. Pure: it shapes a ``CallToolResult``, it does no I/O.

The shape, for ``Duplicate("a contact with email ... already exists", details={"existing_id": 4})``::

    CallToolResult(
        is_error=True,
        content=[TextContent(text='DUPLICATE: a contact with email ... already exists {"existing_id": 4}')],
        structured_content={"code": "DUPLICATE", "message": "a contact with email ... already exists",
                            "details": {"existing_id": 4}},
    )

* ``structured_content`` is ``{code, message}``, plus ``details`` only when the error has some
  (secret-free by the error tree's contract, made JSON-safe here): what programs read;
* the text is what a model reads: ``CODE: message``, then the details as one JSON object when
  there are some (the existing id of a ``DUPLICATE``, the current version of a
  ``VERSION_CONFLICT``). ``crm/frames.tool_error`` turns that line back into the typed error.

A server that must keep another text (the Docs server keeps lasuite-docs-mcp's JSON text, see its
docstring) passes its own ``text`` and still gets the same ``structured_content``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult, TextContent

from elynav_nb.errors import ElynavError

__all__ = ["tool_error_payload", "tool_error_result", "tool_error_text", "typed_error_result"]


def tool_error_payload(code: str, message: str, details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``{"code", "message"[, "details"]}``; ``details`` is left out when empty and made JSON-safe."""
    payload: dict[str, Any] = {"code": code, "message": message}
    if details:
        payload["details"] = json.loads(json.dumps(dict(details), ensure_ascii=False, default=str))
    return payload


def tool_error_text(payload: Mapping[str, Any]) -> str:
    """``CODE: message``, then `` {details as JSON}`` when the payload has details."""
    text = f"{payload['code']}: {payload['message']}"
    details = payload.get("details")
    if details:
        text += " " + json.dumps(details, ensure_ascii=False, sort_keys=True)
    return text


def tool_error_result(payload: Mapping[str, Any], *, text: str | None = None) -> CallToolResult:
    """The ``is_error`` result for ``payload`` (a ``tool_error_payload``); ``text`` replaces the coded line."""
    shown = text if text is not None else tool_error_text(payload)
    return CallToolResult(
        content=[TextContent(type="text", text=shown)], structured_content=dict(payload), is_error=True
    )


def typed_error_result(error: ElynavError) -> CallToolResult:
    """The ``is_error`` result for a typed error (the shape in the module docstring)."""
    return tool_error_result(tool_error_payload(error.code, error.message, error.details))
