"""How a typed ``ElynavError`` becomes an MCP tool error: the one mapping the MCP servers share.

Where it sits: a package-level private module, because capabilities do not import each other and
the CRM (``crm/server.py``), templates (``templates/server.py``) and Docs (``docs/mcp/common.py``)
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

``answer_to_unread_line`` is the answer to a stdio line the SDK could not read (``_mcp_stdio.py``
serves it): a request whose text is not valid Unicode (a lone surrogate such as ``"\ud800"``, valid
JSON, refused by the SDK's parser) gets ``INVALID_INPUT`` under its own id (``tools/call``: the
tool-error result above; any other method: a JSON-RPC ``-32602`` error whose ``data`` is the payload);
another request the SDK cannot read gets ``PROTOCOL_ERROR`` (``-32600``); a line that is not JSON
at all, JSON-RPC's parse error with a null id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult, TextContent

from elynav_nb.errors import ElynavError

__all__ = [
    "answer_to_unread_line",
    "tool_error_payload",
    "tool_error_result",
    "tool_error_text",
    "typed_error_result",
]

_NOT_UNICODE = (
    "the request holds text that is not valid Unicode (a lone surrogate such as \\ud800): send UTF-8 text"
)


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


def answer_to_unread_line(line: object) -> dict[str, Any] | None:
    """The JSON-RPC answer to a line the SDK dropped (see the module docstring); None: nothing to answer.

    ``line`` is the raw line, or the object the SDK had parsed from it.
    """
    if isinstance(line, str | bytes):
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return _jsonrpc_error(None, -32700, "PROTOCOL_ERROR", "the line is not JSON")
    else:
        message = line
    if not isinstance(message, dict) or "method" not in message or "id" not in message:
        return None  # a notification, a response, or no request at all: no id to answer
    request_id = message["id"]
    if not (isinstance(request_id, str | int) and not isinstance(request_id, bool)) or _has_lone_surrogate(
        request_id
    ):
        request_id = None
    if _has_lone_surrogate(message):
        payload = tool_error_payload("INVALID_INPUT", _NOT_UNICODE)
        if message.get("method") == "tools/call" and request_id is not None:
            result = tool_error_result(payload).model_dump(by_alias=True, exclude_none=True, mode="json")
            return {"jsonrpc": "2.0", "id": request_id, "result": result}
        return _jsonrpc_error(request_id, -32602, "INVALID_INPUT", _NOT_UNICODE)
    return _jsonrpc_error(request_id, -32600, "PROTOCOL_ERROR", "the request is not a valid JSON-RPC message")


def _jsonrpc_error(request_id: str | int | None, number: int, code: str, message: str) -> dict[str, Any]:
    payload = tool_error_payload(code, message)
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": number, "message": tool_error_text(payload), "data": payload},
    }


def _has_lone_surrogate(value: object) -> bool:
    """Whether a string anywhere in ``value`` (keys included) holds a lone surrogate (no recursion)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False
