"""Pure builders of the claude stream-json wire messages, in the key order of each imitated version.

Where it sits: under ``claude_standin`` (the process loop) and ``turns`` (the scripted turns),
which decide *what* happens; this module only decides *how it looks on the wire*. It does no I/O.
Every builder returns a plain ``dict`` whose insertion order is the key order the real CLI writes
(observed on the bundled 2.1.332 binary; 2.1.197 orders come from the design note). ``encode_line``
turns one into the bytes of one stdout line.

Data flow: turn logic -> ``build_*(style, ...)`` -> ``encode_line`` -> stdout.

This module is the face the stand-in imports (``from elynav_nb.sandbox.claude import wire as wire``)
and builds the system, stream-event, assistant and user lines itself; the rest lives beside it and
is re-exported here: ``wire_style`` (``WireStyle``, ids, timestamps, ``encode_line``),
``wire_results`` (the ``result`` lines) and ``wire_control`` (the control protocol).
"""

from __future__ import annotations

from typing import Any

from elynav_nb.sandbox.claude.wire_control import (
    build_can_use_tool_request,
    build_control_cancel_request,
    build_control_error,
    build_control_success,
    build_initialize_control_response,
    build_initialize_response,
    build_mcp_status_entry,
)
from elynav_nb.sandbox.claude.wire_results import (
    build_result,
    build_resume_failure_result,
    model_usage_entry,
    result_usage,
)
from elynav_nb.sandbox.claude.wire_style import (
    BUILTIN_SKILLS,
    BUILTIN_SLASH_COMMANDS,
    DEFAULT_VERSION,
    MODEL_NAME,
    SUPPORTED_VERSIONS,
    WireStyle,
    encode_line,
    new_message_id,
    new_tool_use_id,
    new_uuid,
    now_timestamp,
)

__all__ = [
    "DEFAULT_VERSION",
    "MODEL_NAME",
    "SUPPORTED_VERSIONS",
    "WireStyle",
    "build_assistant",
    "build_can_use_tool_request",
    "build_control_cancel_request",
    "build_control_error",
    "build_control_success",
    "build_init",
    "build_initialize_control_response",
    "build_initialize_response",
    "build_interrupt_marker",
    "build_mcp_status_entry",
    "build_permission_denied",
    "build_permission_mode_status",
    "build_replay",
    "build_result",
    "build_resume_failure_result",
    "build_status",
    "build_stream_event",
    "build_synthetic_assistant",
    "build_system_line",
    "build_tool_result",
    "encode_line",
    "model_usage_entry",
    "new_message_id",
    "new_tool_use_id",
    "new_uuid",
    "now_timestamp",
    "result_usage",
    "text_delta_line_template",
]

# ---------------------------------------------------------------------------------------------
# system lines


def build_init(
    style: WireStyle,
    *,
    cwd: str,
    session_id: str,
    tools: list[str],
    mcp_servers: list[tuple[str, str]],
    model: str,
    permission_mode: str,
    agents: list[str],
    memory_directory: str,
    additional_directories: list[str],
) -> dict[str, Any]:
    """``system/init``: opens every turn. ``mcp_servers`` is ``[(name, "connected" | "failed"), ...]``."""
    server_entries: list[dict[str, Any]] = []
    for server_name, server_status in mcp_servers:
        entry: dict[str, Any] = {"name": server_name, "status": server_status}
        if style.modern:
            entry["source"] = "dynamic"
        server_entries.append(entry)
    message: dict[str, Any] = {
        "type": "system",
        "subtype": "init",
        "cwd": cwd,
        "session_id": session_id,
        "tools": tools,
        "mcp_servers": server_entries,
        "model": model,
        "permissionMode": permission_mode,
        "slash_commands": list(BUILTIN_SLASH_COMMANDS),
    }
    if style.modern:
        message["terminal_slash_commands"] = []
    message["apiKeySource"] = "none"
    message["claude_code_version"] = style.version
    message["output_style"] = "default"
    message["agents"] = agents
    message["skills"] = list(BUILTIN_SKILLS)
    message["plugins"] = []
    if style.modern:
        message["capabilities"] = []
    message["analytics_disabled"] = True
    message["product_feedback_disabled"] = True
    if style.modern:
        message["served_by_anthropic"] = False
    message["uuid"] = new_uuid()
    if style.modern:
        message["sandbox_enabled"] = False
    message["memory_paths"] = {"auto": memory_directory}
    if style.modern:
        message["original_cwd"] = cwd
        message["additional_directories"] = additional_directories
        message["messaging_socket_path"] = None
    message["fast_mode_state"] = "off"
    if style.modern:
        message["fast_mode_disabled_reason"] = "sdk_opt_in_required"
        message["per_turn_effort_active"] = False
        message["ultrathink_available"] = False
        message["ultrathink_typed_raises"] = False
        message["view_mode"] = "default"
    message["elynav_standin"] = True
    return message


def build_status(style: WireStyle, session_id: str, status: str | None = "requesting") -> dict[str, Any]:
    """``system/status`` ``requesting``: before each API request."""
    if style.modern:
        return {
            "type": "system",
            "subtype": "status",
            "status": status,
            "session_id": session_id,
            "uuid": new_uuid(),
        }
    return {
        "type": "system",
        "subtype": "status",
        "status": status,
        "uuid": new_uuid(),
        "session_id": session_id,
    }


def build_permission_mode_status(session_id: str, permission_mode: str) -> dict[str, Any]:
    """``system/status`` written after a ``set_permission_mode`` request (same shape on both versions)."""
    return {
        "type": "system",
        "subtype": "status",
        "status": None,
        "permissionMode": permission_mode,
        "uuid": new_uuid(),
        "session_id": session_id,
    }


def build_system_line(session_id: str, subtype: str, fields: dict[str, Any]) -> dict[str, Any]:
    """Any other ``system`` line: ``type, subtype, <fields>, uuid, session_id``."""
    message: dict[str, Any] = {"type": "system", "subtype": subtype}
    message.update(fields)
    message["uuid"] = new_uuid()
    message["session_id"] = session_id
    return message


def build_permission_denied(session_id: str, tool_name: str, tool_use_id: str, text: str) -> dict[str, Any]:
    """``system/permission_denied`` (2.1.332): a tool refused without asking anyone."""
    return build_system_line(
        session_id, "permission_denied", {"tool_name": tool_name, "tool_use_id": tool_use_id, "message": text}
    )


# ---------------------------------------------------------------------------------------------
# stream events and assistant lines


def build_stream_event(
    style: WireStyle,
    session_id: str,
    message_id: str,
    event: dict[str, Any],
    *,
    parent_tool_use_id: str | None = None,
    ttft_ms: int | None = None,
) -> dict[str, Any]:
    """One ``stream_event`` line wrapping a raw Messages streaming event."""
    message: dict[str, Any] = {
        "type": "stream_event",
        "event": event,
        "session_id": session_id,
        "parent_tool_use_id": parent_tool_use_id,
        "uuid": new_uuid(),
    }
    if ttft_ms is not None:
        message["ttft_ms"] = ttft_ms
        if style.modern:
            message["thinking_display"] = "updates"
    if style.modern:
        message["api_message_id"] = message_id
    return message


def text_delta_line_template(
    style: WireStyle, session_id: str, message_id: str, index: int
) -> tuple[str, str, str]:
    """``(prefix, middle, suffix)``: a text-delta line is ``prefix + json_text + middle + uuid + suffix``.

    Used by the flood scenario, where building 100,000 dicts would cost more than the writes.
    """
    prefix = (
        '{"type":"stream_event","event":{"type":"content_block_delta","index":'
        + str(index)
        + ',"delta":{"type":"text_delta","text":'
    )
    middle = '}},"session_id":"' + session_id + '","parent_tool_use_id":null,"uuid":"'
    if style.modern:
        suffix = '","api_message_id":"' + message_id + '"}\n'
    else:
        suffix = '"}\n'
    return prefix, middle, suffix


def assistant_usage(input_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": 1,
    }


def build_assistant(
    style: WireStyle,
    session_id: str,
    message_id: str,
    model: str,
    block: dict[str, Any],
    *,
    input_tokens: int,
    parent_tool_use_id: str | None = None,
    aborted: bool = False,
    tool_use_meta: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One ``assistant`` line: exactly one content block, ``stop_reason`` null."""
    message: dict[str, Any] = {
        "type": "assistant",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": assistant_usage(input_tokens),
            "context_management": None,
        },
        "parent_tool_use_id": parent_tool_use_id,
        "session_id": session_id,
        "uuid": new_uuid(),
    }
    if style.modern:
        message["timestamp"] = now_timestamp()
        if aborted:
            message["aborted"] = True
    if tool_use_meta:
        message["tool_use_meta"] = tool_use_meta
    if extra:
        message.update(extra)
    return message


def build_synthetic_assistant(style: WireStyle, session_id: str, text: str, error: str) -> dict[str, Any]:
    """The ``<synthetic>`` assistant line of an API error or of a turn without login."""
    usage: dict[str, Any] = {}
    if style.modern:
        usage["output_tokens_details"] = None
    usage.update(
        {
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": None,
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            "inference_geo": None,
            "iterations": None,
            "speed": None,
        }
    )
    if style.modern:
        usage["fallback_credit"] = None
    inner: dict[str, Any] = {}
    if style.modern:
        inner["diagnostics"] = None
    inner.update(
        {
            "id": new_uuid(),
            "container": None,
            "model": "<synthetic>",
            "role": "assistant",
            "stop_details": None,
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "type": "message",
            "usage": usage,
            "content": [{"type": "text", "text": text}],
            "context_management": None,
        }
    )
    message: dict[str, Any] = {
        "type": "assistant",
        "message": inner,
        "parent_tool_use_id": None,
        "session_id": session_id,
        "uuid": new_uuid(),
    }
    if style.modern:
        message["timestamp"] = now_timestamp()
    message["error"] = error
    if style.modern:
        message["is_api_error_message"] = True
    return message


# ---------------------------------------------------------------------------------------------
# user lines


def build_tool_result(
    style: WireStyle,
    session_id: str,
    tool_use_id: str,
    content: str | list[dict[str, Any]],
    *,
    is_error: bool,
    tool_use_result: Any,
    result_meta: dict[str, Any] | None = None,
    parent_tool_use_id: str | None = None,
    include_is_error: bool = True,
) -> dict[str, Any]:
    """A ``user`` line carrying one ``tool_result`` block (key order differs between ok and error, as on the wire)."""
    block: dict[str, Any]
    if is_error:
        block = {"type": "tool_result", "content": content, "is_error": True, "tool_use_id": tool_use_id}
    else:
        block = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content}
        if include_is_error:
            block["is_error"] = False
    message: dict[str, Any] = {
        "type": "user",
        "message": {"role": "user", "content": [block]},
        "parent_tool_use_id": parent_tool_use_id,
        "session_id": session_id,
        "uuid": new_uuid(),
        "timestamp": now_timestamp(),
        "tool_use_result": tool_use_result,
    }
    if style.modern and result_meta is not None:
        meta: dict[str, Any] = {"id": tool_use_id}
        meta.update(result_meta)
        message["tool_result_meta"] = [meta]
    return message


def build_interrupt_marker(session_id: str, text: str) -> dict[str, Any]:
    """``[Request interrupted by user]`` (or ``... for tool use``) as a ``user`` text line."""
    return {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        "parent_tool_use_id": None,
        "session_id": session_id,
        "uuid": new_uuid(),
        "timestamp": now_timestamp(),
    }


def build_replay(session_id: str, user_message: dict[str, Any]) -> dict[str, Any]:
    """The stdin user message echoed back with ``isReplay`` (``--replay-user-messages``)."""
    return {
        "type": "user",
        "message": user_message,
        "session_id": session_id,
        "parent_tool_use_id": None,
        "uuid": new_uuid(),
        "timestamp": now_timestamp(),
        "isReplay": True,
    }
