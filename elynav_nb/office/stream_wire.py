"""What the office socket streams of an ask and of the board: agent events and snapshots as JSON. Pure.

Where it sits: ``office/socket_server.py`` encodes (an ask asked with ``"stream": true``, and the
``watch`` op); ``office/client.py`` decodes, for ``elynav acp``, the chat personas and the kernels
attached to an office. No I/O. ``office/wire.py`` holds the requests and the other answers.

Lines, office -> caller, after ``accepted`` (one JSON object each)::

    {"type": "position", "ask_id", "position", "busy_for"}   while queued, at each change (1 = next)
    {"type": "started", "ask_id", "session_id"}              the employee took it
    {"type": "event", "ask_id", "event": {"kind", ...}}       one agent event of its turn:
        text {text} | thinking {text} | tool_use {id, name, input} | tool_result {tool_use_id, content,
        is_error} | permission {request_id, tool_name, input, tool_use_id, description, options}
        | permission_closed {request_id, decision} | error {message, code}
        | plan {entries: [{content, status, priority}]}    (an ACP agent's plan; claude's TodoWrite)
    {"type": "reply", ...}                                    as ``wire.encode_reply``, with cost and usage
    {"type": "board", "status", "employees": [...], "asks": [...]}   the ``watch`` op, at each change

Caller -> office, on the same connection after a streamed ask::

    {"op": "permission", "request_id", "allow": true|false, "always": false, "message": ""}
    {"op": "cancel"}                                          cancel this ask (with the caller's rights)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    PermissionRequest,
    PermissionWithdrawn,
    RawEvent,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
)
from elynav_nb.errors import ProtocolError

__all__ = [
    "CancelThisAsk",
    "encode_board",
    "encode_event_line",
    "encode_position",
    "encode_started",
    "PermissionAnswer",
    "PlanUpdate",
    "decode_event",
    "decode_followup",
    "encode_event",
    "plan_entries",
]

_PLAN_STATUSES = ("pending", "in_progress", "completed")
_PLAN_PRIORITIES = ("high", "medium", "low")
_TEXT_LIMIT = 200_000  # one tool result's text on the socket (the office keeps the whole)


@dataclass(frozen=True, slots=True)
class PlanUpdate(AgentEvent):
    """The employee's plan as it stands (ACP ``plan``; claude's ``TodoWrite``): ``(content, status, priority)``."""

    entries: tuple[tuple[str, str, str], ...] = ()

    def summary(self) -> str:
        return f"plan: {len(self.entries)} entries"


@dataclass(frozen=True)
class PermissionAnswer:
    request_id: str
    allow: bool
    always: bool = False
    message: str = ""


@dataclass(frozen=True)
class CancelThisAsk:
    pass


def plan_entries(event: AgentEvent) -> tuple[tuple[str, str, str], ...] | None:
    """The plan an event carries (an ACP ``plan`` update, a claude ``TodoWrite`` call), else None."""
    items: Any = None
    if isinstance(event, RawEvent) and event.subtype == "plan":
        update = event.data.get("params", {}).get("update", {}) if isinstance(event.data, dict) else {}
        items = update.get("entries") if isinstance(update, dict) else None
        content_key = "content"
    elif isinstance(event, ToolUse) and event.name == "TodoWrite":
        items = event.input.get("todos")
        content_key = "content"
    if not isinstance(items, list):
        return None
    entries = []
    for item in items:
        if not isinstance(item, dict):
            continue
        status = str(item.get("status") or "pending")
        priority = str(item.get("priority") or "medium")
        entries.append(
            (
                str(item.get(content_key) or ""),
                status if status in _PLAN_STATUSES else "pending",
                priority if priority in _PLAN_PRIORITIES else "medium",
            )
        )
    return tuple(entries)


def encode_event(event: AgentEvent) -> list[dict[str, Any]]:
    """The socket form of one agent event ([] for what a client is not shown: raw lines, starts, ends)."""
    encoded: list[dict[str, Any]] = []
    if isinstance(event, TextDelta) and event.parent_tool_use_id is None:
        encoded.append({"kind": "text", "text": event.text})
    elif isinstance(event, ThinkingDelta) and event.parent_tool_use_id is None:
        encoded.append({"kind": "thinking", "text": event.text})
    elif isinstance(event, ToolUse):
        encoded.append({"kind": "tool_use", "id": event.id, "name": event.name, "input": event.input})
    elif isinstance(event, ToolResult):
        content = event.text
        encoded.append(
            {
                "kind": "tool_result",
                "tool_use_id": event.tool_use_id,
                "content": content[:_TEXT_LIMIT],
                "is_error": event.is_error,
            }
        )
    elif isinstance(event, PermissionRequest):
        encoded.append(
            {
                "kind": "permission",
                "request_id": event.request_id,
                "tool_name": event.tool_name,
                "input": event.input,
                "tool_use_id": event.tool_use_id,
                "description": event.description,
                "options": list(event.options),
            }
        )
    elif isinstance(event, PermissionWithdrawn):
        encoded.append(
            {"kind": "permission_closed", "request_id": event.request_id, "decision": event.decision}
        )
    elif isinstance(event, AgentError):
        encoded.append({"kind": "error", "message": event.message, "code": event.code})
    entries = plan_entries(event)
    if entries is not None:
        encoded.append({"kind": "plan", "entries": [list(entry) for entry in entries]})
    return encoded


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8") + b"\n"


def encode_position(ask_id: str, position: int, busy_for: str | None) -> bytes:
    return _line({"type": "position", "ask_id": ask_id, "position": position, "busy_for": busy_for})


def encode_started(ask_id: str, session_id: str) -> bytes:
    return _line({"type": "started", "ask_id": ask_id, "session_id": session_id})


def encode_event_line(ask_id: str, event: dict[str, Any]) -> bytes:
    return _line({"type": "event", "ask_id": ask_id, "event": event})


def encode_board(status: str, employees: list[dict[str, Any]], asks: list[dict[str, Any]]) -> bytes:
    """A snapshot of the office (rows as ``Employee.to_row`` and ``Ask.to_row``; datetimes as ISO text)."""
    return _line({"type": "board", "status": status, "employees": employees, "asks": asks})


def _text(data: dict[str, Any], name: str) -> str:
    value = data.get(name, "")
    if not isinstance(value, str):
        raise ProtocolError(f"the office sent an event whose {name!r} is not text")
    return value


def _object(data: dict[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name) or {}
    if not isinstance(value, dict):
        raise ProtocolError(f"the office sent an event whose {name!r} is not an object")
    return value


def decode_event(data: Any) -> AgentEvent | None:
    """One event of a ``{"type": "event"}`` line back as an ``AgentEvent`` (None for a kind this
    version does not know); ``PROTOCOL_ERROR`` for one that is malformed."""
    if not isinstance(data, dict):
        raise ProtocolError("the office sent an event that is not an object")
    kind = data.get("kind")
    if kind == "text":
        return TextDelta(_text(data, "text"))
    if kind == "thinking":
        return ThinkingDelta(_text(data, "text"))
    if kind == "tool_use":
        return ToolUse(id=_text(data, "id"), name=_text(data, "name"), input=_object(data, "input"))
    if kind == "tool_result":
        return ToolResult(
            tool_use_id=_text(data, "tool_use_id"),
            content=_text(data, "content"),
            is_error=bool(data.get("is_error")),
        )
    if kind == "permission":
        options = data.get("options") or []
        return PermissionRequest(
            request_id=_text(data, "request_id"),
            tool_name=_text(data, "tool_name"),
            input=_object(data, "input"),
            tool_use_id=_text(data, "tool_use_id"),
            description=_text(data, "description"),
            options=tuple(option for option in options if isinstance(option, dict)),
        )
    if kind == "permission_closed":
        return PermissionWithdrawn(request_id=_text(data, "request_id"), decision=_text(data, "decision"))
    if kind == "error":
        return AgentError(_text(data, "message"), code=_text(data, "code") or "AGENT_ERROR")
    if kind == "plan":
        entries = data.get("entries") or []
        return PlanUpdate(
            entries=tuple(
                (str(entry[0]), str(entry[1]), str(entry[2]))
                for entry in entries
                if isinstance(entry, list) and len(entry) == 3
            )
        )
    return None


def decode_followup(line: bytes) -> PermissionAnswer | CancelThisAsk:
    """A line a caller sends after its streamed ask; ``PROTOCOL_ERROR`` for anything else."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        raise ProtocolError("a follow-up line is not JSON") from None
    if not isinstance(message, dict):
        raise ProtocolError("a follow-up line must be a JSON object")
    operation = message.get("op")
    if operation == "cancel":
        return CancelThisAsk()
    if operation == "permission":
        request_id = message.get("request_id")
        allow = message.get("allow")
        if not isinstance(request_id, str) or not isinstance(allow, bool):
            raise ProtocolError("a permission answer needs a string 'request_id' and a boolean 'allow'")
        message_text = message.get("message", "")
        return PermissionAnswer(
            request_id,
            allow,
            always=message.get("always") is True,
            message=message_text if isinstance(message_text, str) else "",
        )
    raise ProtocolError("a follow-up line needs an 'op' of 'permission' or 'cancel'")
