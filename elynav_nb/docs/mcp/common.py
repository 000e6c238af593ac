"""What every tool of the Docs MCP server shares: result shapes, error payloads, annotations, fields.

Where it sits: under ``server.py`` and its tool modules (``mcp.content_tools``,
``mcp.tree_tools``). No I/O: it shapes what the tools return.

How data flows: a tool body returns a ``dict`` -> ``guarded`` makes it a ``CallToolResult`` (JSON
text + ``structured_content``); an ``ElynavError`` raised on the way becomes ``is_error`` with the
JSON ``{"code", "message", ...details}`` as its text (``error_payload``; the reference's
``INSTANCE_NOT_SET`` is given its own code); anything else becomes ``INTERNAL_ERROR``, its stack and
redacted text going to the server log only. ``document_summary`` is how a tree record
(``tree.DocumentNode``) is shown to an agent.

Errors and the other elynav servers: ``error_result`` uses the mapping they all share
(``elynav_nb/_mcp_errors.py``), so ``structured_content`` is the same ``{code, message[, details]}``
as the CRM's and the templates'. Only the text differs, on purpose: where they write
``CODE: message``, this server keeps lasuite-docs-mcp's JSON object (``{"code", "message", ...}``,
details flattened), because agents and prompts written for the reference parse that text.

Annotations are the hints clients act on (Codex asks before destructive tools): ``READ_ONLY``,
``ADDITIVE`` (creates something new each call), ``OVERWRITE`` (replaces or removes what is there,
the same call twice leaves the same state), ``LOCAL_RESET`` (only this server's memory).
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, Final

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from elynav_nb._mcp_errors import tool_error_payload, tool_error_result
from elynav_nb.docs.rest.tree import DocumentNode
from elynav_nb.errors import ElynavError, InvalidInput, redact_secrets

__all__ = [
    "ADDITIVE",
    "DOC_ID",
    "DOC_URL",
    "LOCAL_RESET",
    "OVERWRITE",
    "READ_ONLY",
    "RESTORE",
    "document_summary",
    "error_payload",
    "error_result",
    "guarded",
    "ok_result",
]

logger = logging.getLogger("elynav_nb.docs.mcp.server")

READ_ONLY: Final = ToolAnnotations(read_only_hint=True, open_world_hint=True)
ADDITIVE: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)
OVERWRITE: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
)
RESTORE: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
LOCAL_RESET: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

DOC_ID: Final[Any] = Field(
    default=None, description="The document's UUID v4 (needs a known instance), or use doc_url."
)
DOC_URL: Final[Any] = Field(
    default=None, description="The document link, https://<host>/docs/<uuid>/ (it also fixes the instance)."
)


def error_payload(error: ElynavError) -> dict[str, Any]:
    """``{"code", "message", **details}`` (details are secret-free by the error tree's contract)."""
    code = error.code
    if isinstance(error, InvalidInput) and error.details.get("reason") == "INSTANCE_NOT_SET":
        code = "INSTANCE_NOT_SET"  # the reference's code for "no instance known yet"
    payload: dict[str, Any] = {"code": code, "message": error.message}
    for key, value in error.details.items():
        payload.setdefault(key, value)
    return payload


def error_result(payload: dict[str, Any]) -> CallToolResult:
    """The ``is_error`` result for a reference payload: its JSON as the text (the reference's shape),
    the shared ``{code, message[, details]}`` as ``structured_content`` (``_mcp_errors``)."""
    text = json.dumps(payload, ensure_ascii=False, default=str)
    details = {key: value for key, value in payload.items() if key not in ("code", "message")}
    shared = tool_error_payload(str(payload["code"]), str(payload["message"]), details)
    return tool_error_result(shared, text=text)


def ok_result(payload: dict[str, Any]) -> CallToolResult:
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


async def guarded(action: Callable[[], Awaitable[dict[str, Any]]]) -> CallToolResult:
    """Run a tool body: its dict as the result, a typed error as ``{code, message}``."""
    try:
        return ok_result(await action())
    except ElynavError as error:
        return error_result(error_payload(error))
    except Exception as error:  # noqa: BLE001 - the model gets a stable code, the server log the stack
        stack = "".join(traceback.format_tb(error.__traceback__))
        logger.error(  # the error's own text, redacted: a library may have put a header in it
            "docs tool failed: %s: %s\n%s", type(error).__name__, redact_secrets(str(error)), stack
        )
        return error_result({"code": "INTERNAL_ERROR", "message": f"unexpected {type(error).__name__}"})


def document_summary(node: DocumentNode, *, parent_id: str | None = None) -> dict[str, Any]:
    """One document as tools list it: identity, place in the tree, what link access applies
    (inherited included), the caller's role; ``deleted_at`` only for documents in the trash."""
    summary: dict[str, Any] = {
        "id": node.id,
        "title": node.title,
        "url": node.link,
        "depth": node.depth,
        "numchild": node.numchild,
        "updated_at": node.updated_at,
        "link_reach": node.computed_link_reach or node.link_reach,
        "link_role": node.computed_link_role if node.computed_link_reach else node.link_role,
        "user_role": node.user_role,
    }
    known_parent = parent_id if parent_id is not None else node.parent_id
    if known_parent is not None:
        summary["parent_id"] = known_parent
    if node.deleted_at is not None:
        summary["deleted_at"] = node.deleted_at
    return summary
