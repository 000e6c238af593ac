"""Pure codec of the claude CLI's stream-json protocol: stdout lines in, typed events out.

Where it sits: between the subprocess supervisor (which only cuts stdout into lines) and the
runner (which routes what comes out). No I/O, no clock: tested with plain bytes.

How data flows: ``ClaudeStreamDecoder.decode_line(line)`` parses the line as JSON (never by
prefix: 2.1.332 starts ``result`` with ``duration_api_ms``; orjson first, the standard library
for the lines it refuses), dispatches on ``type`` then
``subtype`` and returns a list of ``AgentEvent`` (conversation) and ``ControlFrame`` (control
protocol) objects. Text comes from ``stream_event`` deltas when partial messages are on; the
``assistant`` text block of a message already streamed is only a check and is not emitted twice.
Unknown types become ``RawEvent``; an undecodable line becomes one ``AgentError``.

The ``encode_*`` functions build the stdin lines (``json.dumps(message) + "\\n"``, one object
per line, inner newlines escaped).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    ControlCancel,
    ControlFrame,
    ControlRequest,
    ControlResponse,
    McpServerStatus,
    PermissionRequest,
    RawEvent,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)

__all__ = [
    "STANDIN_MARKER_KEY",
    "ClaudeStreamDecoder",
    "DecodedItem",
    "encode_control_error",
    "encode_control_request",
    "encode_control_success",
    "encode_user_message",
]

DecodedItem = AgentEvent | ControlFrame

STANDIN_MARKER_KEY = "elynav_standin"
EXCERPT_LENGTH = 120


def _excerpt(line: bytes | str) -> str:
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    return text if len(text) <= EXCERPT_LENGTH else text[:EXCERPT_LENGTH] + "…"


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _as_float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _as_int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


class ClaudeStreamDecoder:
    """Decodes one claude process's stdout, line by line. Keeps only what de-duplication needs.

    ``partial_messages`` says whether the CLI was started with ``--include-partial-messages``.
    Even when it says no, text deltas seen on the wire win over the ``assistant`` copy.
    """

    def __init__(self, *, partial_messages: bool = True) -> None:
        self.partial_messages = partial_messages
        self._streaming_message_id = ""
        self._message_ids_with_text_deltas: set[str] = set()
        self._message_ids_with_thinking_deltas: set[str] = set()

    def decode_line(self, line: bytes | str) -> list[DecodedItem]:
        """All items carried by one stdout line (usually one; none for a blank line)."""
        try:
            message = orjson.loads(line)  # the fast path: valid UTF-8 JSON, the usual case
        except orjson.JSONDecodeError:
            return self._decode_refused_line(line)
        return self._decode_value(message, line)

    def _decode_refused_line(self, line: bytes | str) -> list[DecodedItem]:
        """A line orjson refused: blank, not UTF-8, not JSON, or JSON only the standard library accepts."""
        if isinstance(line, bytes):
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                return [
                    AgentError("stdout line is not valid UTF-8", code="INVALID_UTF8", excerpt=_excerpt(line))
                ]
        else:
            text = line
        if not text.strip():
            return []
        try:
            message = json.loads(text)
        except json.JSONDecodeError as error:
            return [
                AgentError(
                    f"stdout line is not JSON ({error.msg})", code="INVALID_JSON", excerpt=_excerpt(text)
                )
            ]
        return self._decode_value(message, line)

    def _decode_value(self, message: Any, line: bytes | str) -> list[DecodedItem]:
        if not isinstance(message, dict):
            return [
                AgentError(
                    "stdout line is JSON but not an object", code="INVALID_JSON", excerpt=_excerpt(line)
                )
            ]
        return self.decode_message(message)

    def decode_message(self, message: dict[str, Any]) -> list[DecodedItem]:
        """Items for one already-parsed message object."""
        message_type = _as_str(message.get("type"))
        if message_type == "stream_event":  # by far the most frequent line: tested first
            return self._decode_stream_event(message)
        if message_type == "control_request":
            return [self._decode_control_request(message)]
        if message_type == "control_response":
            return [self._decode_control_response(message)]
        if message_type == "control_cancel_request":
            return [ControlCancel(request_id=_as_str(message.get("request_id")))]
        if message_type == "system":
            return self._decode_system(message)
        if message_type == "assistant":
            return self._decode_assistant(message)
        if message_type == "user":
            return self._decode_user(message)
        if message_type == "result":
            return [self._decode_result(message)]
        return [
            RawEvent(type=message_type or "unknown", subtype=_as_str(message.get("subtype")), data=message)
        ]

    # -- control protocol -------------------------------------------------------------------

    def _decode_control_request(self, message: dict[str, Any]) -> DecodedItem:
        request_id = _as_str(message.get("request_id"))
        request = _as_dict(message.get("request"))
        subtype = _as_str(request.get("subtype"))
        if subtype == "can_use_tool":
            return PermissionRequest(
                request_id=request_id,
                tool_name=_as_str(request.get("tool_name")),
                input=_as_dict(request.get("input")),
                tool_use_id=_as_str(request.get("tool_use_id")),
                description=_as_str(request.get("description")),
            )
        return ControlRequest(request_id=request_id, subtype=subtype, request=request)

    def _decode_control_response(self, message: dict[str, Any]) -> ControlFrame:
        envelope = _as_dict(message.get("response"))
        return ControlResponse(
            request_id=_as_str(envelope.get("request_id")),
            ok=envelope.get("subtype") == "success",
            response=_as_dict(envelope.get("response")),
            error=_as_str(envelope.get("error")),
        )

    # -- conversation -----------------------------------------------------------------------

    def _decode_system(self, message: dict[str, Any]) -> list[DecodedItem]:
        subtype = _as_str(message.get("subtype"))
        if subtype != "init":
            return [RawEvent(type="system", subtype=subtype, data=message)]
        servers = []
        for server in message.get("mcp_servers") or []:
            if isinstance(server, dict):
                servers.append(
                    McpServerStatus(name=_as_str(server.get("name")), status=_as_str(server.get("status")))
                )
        return [
            AgentStarted(
                session_id=_as_str(message.get("session_id")),
                model=_as_str(message.get("model")),
                tools=tuple(str(tool) for tool in message.get("tools") or []),
                mcp_servers=tuple(servers),
                agents=tuple(str(agent) for agent in message.get("agents") or []),
                permission_mode=_as_str(message.get("permissionMode")),
                cli_version=_as_str(message.get("claude_code_version")),
                is_standin=bool(message.get(STANDIN_MARKER_KEY)),
            )
        ]

    def _decode_stream_event(self, message: dict[str, Any]) -> list[DecodedItem]:
        event = message.get("event")
        if type(event) is not dict:
            return []
        event_type = event.get("type")
        if event_type == "content_block_delta":
            delta = event.get("delta")
            if type(delta) is not dict:
                return []
            delta_type = delta.get("type")
            if delta_type == "text_delta":
                if self._streaming_message_id not in self._message_ids_with_text_deltas:
                    self._message_ids_with_text_deltas.add(self._streaming_message_id)
                return [TextDelta(_as_str(delta.get("text")), message.get("parent_tool_use_id"))]
            if delta_type == "thinking_delta":
                self._message_ids_with_thinking_deltas.add(self._streaming_message_id)
                return [ThinkingDelta(_as_str(delta.get("thinking")), message.get("parent_tool_use_id"))]
            return []  # input_json_delta (ToolUse comes whole from the assistant line), signature_delta
        if event_type == "message_start":
            self._streaming_message_id = _as_str(_as_dict(event.get("message")).get("id"))
        return []  # block starts/stops and message deltas carry nothing a reader needs

    def _decode_assistant(self, message: dict[str, Any]) -> list[DecodedItem]:
        body = _as_dict(message.get("message"))
        message_id = _as_str(body.get("id"))
        parent_tool_use_id = message.get("parent_tool_use_id")
        items: list[DecodedItem] = []
        for block in body.get("content") or []:
            if not isinstance(block, dict):
                continue
            block_type = block.get("type")
            if block_type == "text":
                if message_id not in self._message_ids_with_text_deltas:
                    items.append(
                        TextDelta(text=_as_str(block.get("text")), parent_tool_use_id=parent_tool_use_id)
                    )
            elif block_type == "thinking":
                if message_id not in self._message_ids_with_thinking_deltas:
                    items.append(
                        ThinkingDelta(
                            text=_as_str(block.get("thinking")), parent_tool_use_id=parent_tool_use_id
                        )
                    )
            elif block_type == "tool_use":
                items.append(
                    ToolUse(
                        id=_as_str(block.get("id")),
                        name=_as_str(block.get("name")),
                        input=_as_dict(block.get("input")),
                        parent_tool_use_id=parent_tool_use_id,
                    )
                )
            else:
                items.append(RawEvent(type="assistant", subtype=str(block_type), data=block))
        error_kind = message.get("error")
        if isinstance(error_kind, str) and error_kind:
            items.append(AgentError(f"the CLI reported an API error: {error_kind}", code="API_ERROR"))
        return items

    def _decode_user(self, message: dict[str, Any]) -> list[DecodedItem]:
        body = _as_dict(message.get("message"))
        parent_tool_use_id = message.get("parent_tool_use_id")
        content = body.get("content")
        if isinstance(content, str):
            return [RawEvent(type="user", subtype="text", data=message)]
        items: list[DecodedItem] = []
        for block in content or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                result_content = block.get("content")
                items.append(
                    ToolResult(
                        tool_use_id=_as_str(block.get("tool_use_id")),
                        content=result_content if isinstance(result_content, str | list) else "",
                        is_error=bool(block.get("is_error", False)),
                        parent_tool_use_id=parent_tool_use_id,
                    )
                )
            else:
                items.append(RawEvent(type="user", subtype=str(block.get("type")), data=block))
        return items

    def _decode_result(self, message: dict[str, Any]) -> TurnEnded:
        self._message_ids_with_text_deltas.clear()
        self._message_ids_with_thinking_deltas.clear()
        self._streaming_message_id = ""
        denials = tuple(
            denial for denial in message.get("permission_denials") or [] if isinstance(denial, dict)
        )
        errors = tuple(str(error) for error in message.get("errors") or [])
        stop_reason = message.get("stop_reason")
        return TurnEnded(
            subtype=_as_str(message.get("subtype")),
            is_error=bool(message.get("is_error", False)),
            result=_as_str(message.get("result")),
            session_id=_as_str(message.get("session_id")),
            total_cost_usd=_as_float(message.get("total_cost_usd")),
            usage=_as_dict(message.get("usage")),
            duration_ms=_as_int(message.get("duration_ms")),
            duration_api_ms=_as_int(message.get("duration_api_ms")),
            num_turns=_as_int(message.get("num_turns")),
            permission_denials=denials,
            terminal_reason=_as_str(message.get("terminal_reason")),
            stop_reason=stop_reason if isinstance(stop_reason, str) else None,
            errors=errors,
            structured_output=message.get("structured_output"),
        )


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")


def encode_user_message(content: str | list[dict[str, Any]], *, session_id: str = "default") -> bytes:
    """One user message line (``content``: a string or a list of content blocks)."""
    return _line(
        {
            "type": "user",
            "message": {"role": "user", "content": content},
            "parent_tool_use_id": None,
            "session_id": session_id,
        }
    )


def encode_control_request(request_id: str, subtype: str, **fields: Any) -> bytes:
    """A host -> CLI control request (``initialize``, ``interrupt``, ``set_model``...)."""
    return _line(
        {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}}
    )


def encode_control_success(request_id: str, response: dict[str, Any] | None = None) -> bytes:
    """Our success answer to a CLI -> host request (e.g. a ``can_use_tool`` decision)."""
    envelope: dict[str, Any] = {"subtype": "success", "request_id": request_id}
    if response is not None:
        envelope["response"] = response
    return _line({"type": "control_response", "response": envelope})


def encode_control_error(request_id: str, error: str) -> bytes:
    """Our error answer to a CLI -> host request we do not handle."""
    return _line(
        {
            "type": "control_response",
            "response": {"subtype": "error", "request_id": request_id, "error": error},
        }
    )
