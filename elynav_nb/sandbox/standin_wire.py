"""Pure builders of the claude stream-json wire messages, in the key order of each imitated version.

Where it sits: under ``claude_standin`` (the process loop) and ``standin_turns`` (the scripted turns),
which decide *what* happens; this module only decides *how it looks on the wire*. It does no I/O.
Every builder returns a plain ``dict`` whose insertion order is the key order the real CLI writes
(observed on the bundled 2.1.332 binary; 2.1.197 orders come from the design note). ``encode_line``
turns one into the bytes of one stdout line.

Data flow: turn logic -> ``build_*(style, ...)`` -> ``encode_line`` -> stdout.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

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
    "new_message_id",
    "new_tool_use_id",
    "new_uuid",
    "now_timestamp",
    "text_delta_line_template",
]

DEFAULT_VERSION = "2.1.332"
SUPPORTED_VERSIONS = ("2.1.332", "2.1.197")
MODEL_NAME = "elynav-standin"
CONTEXT_WINDOW = 200000
MAX_OUTPUT_TOKENS = 32000

BUILTIN_SLASH_COMMANDS = ["debug", "code-review", "simplify", "compact", "context", "init", "model", "usage"]
BUILTIN_SKILLS = ["debug", "code-review", "simplify"]
OUTPUT_STYLES = ["default", "Explanatory", "Learning"]


@dataclass(frozen=True)
class WireStyle:
    """Which real version the stand-in imitates: ``2.1.332`` (default) or ``2.1.197``."""

    version: str = DEFAULT_VERSION

    @property
    def modern(self) -> bool:
        """True for 2.1.332: ``result`` starts with ``duration_api_ms``, ``timestamp`` on assistant lines..."""
        return self.version != "2.1.197"


def new_uuid() -> str:
    return str(uuid.uuid4())


def new_message_id() -> str:
    return "msg_" + uuid.uuid4().hex[:24]


def new_tool_use_id() -> str:
    return "toolu_" + uuid.uuid4().hex[:24]


def now_timestamp() -> str:
    """``2026-11-29T18:10:31.022Z``: the ISO form the CLI writes."""
    moment = datetime.now(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def encode_line(message: dict[str, Any]) -> bytes:
    """One stdout line: compact JSON, raw UTF-8 (the CLI does not escape ``·``), newline."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


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


# ---------------------------------------------------------------------------------------------
# result lines


def result_usage(
    style: WireStyle, input_tokens: int, output_tokens: int, *, synthetic: bool = False
) -> dict[str, Any]:
    usage: dict[str, Any] = {}
    if synthetic and style.modern:
        usage["output_tokens_details"] = {"thinking_tokens": 0}
    usage.update(
        {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        }
    )
    if style.modern and not synthetic:
        usage["output_tokens_details"] = {"thinking_tokens": 0}
    usage["server_tool_use"] = {"web_search_requests": 0, "web_fetch_requests": 0}
    usage["service_tier"] = "standard"
    usage["cache_creation"] = {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0}
    usage["inference_geo"] = ""
    usage["iterations"] = []
    usage["speed"] = "standard"
    if style.modern:
        usage["fallback_credit"] = None
    return usage


def model_usage_entry(style: WireStyle, model: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "inputTokens": input_tokens,
        "outputTokens": output_tokens,
        "cacheReadInputTokens": 0,
        "cacheCreationInputTokens": 0,
        "webSearchRequests": 0,
        "costUSD": 0,
        "contextWindow": CONTEXT_WINDOW,
        "maxOutputTokens": MAX_OUTPUT_TOKENS,
    }
    if style.modern:
        entry.update(
            {
                "thinkingTokens": 0,
                "cacheCreationEphemeral5mInputTokens": 0,
                "cacheCreationEphemeral1hInputTokens": 0,
                "canonicalModel": model,
                "provider": "elynav-standin",
                "costBasis": "list",
            }
        )
    return entry


def subagent_stats(spawned: int) -> dict[str, Any]:
    return {
        "spawned": spawned,
        "requested": {"background": 0, "foreground": spawned, "unset": 0},
        "started_in_background": 0,
        "max_depth": 1 if spawned else 0,
        "spawned_by_subagents": 0,
        "completed": spawned,
        "failed": 0,
        "killed": {"parent": 0, "user": 0, "system": 0},
        "refused": {"depth_limit": 0, "concurrency_limit": 0, "budget": 0},
        "by_type": {"general-purpose": spawned} if spawned else {},
    }


def build_result(
    style: WireStyle,
    *,
    session_id: str,
    subtype: str,
    is_error: bool,
    num_turns: int,
    stop_reason: str | None,
    terminal_reason: str,
    duration_ms: int,
    duration_api_ms: int,
    ttft_ms: int | None,
    usage: dict[str, Any],
    model_usage: dict[str, Any],
    model_usage_since_last_result: dict[str, Any],
    permission_denials: list[dict[str, Any]],
    result_text: str | None,
    errors: list[str] | None,
    api_error_status: int | None,
    begun_message_ids: list[str],
    queued_turn_count: int,
    result_index: int,
    subagents_spawned: int = 0,
) -> dict[str, Any]:
    """The ``result`` line closing a turn. ``errors`` set = an error subtype (no ``result`` key)."""
    total_cost_usd = 0
    if not style.modern:
        return _build_result_legacy(
            session_id=session_id,
            subtype=subtype,
            is_error=is_error,
            num_turns=num_turns,
            stop_reason=stop_reason,
            terminal_reason=terminal_reason,
            duration_ms=duration_ms,
            duration_api_ms=duration_api_ms,
            ttft_ms=ttft_ms,
            usage=usage,
            model_usage=model_usage,
            permission_denials=permission_denials,
            result_text=result_text,
            errors=errors,
            api_error_status=api_error_status,
        )
    message: dict[str, Any] = {
        "duration_api_ms": duration_api_ms,
        "stop_reason": stop_reason,
        "session_id": session_id,
        "total_cost_usd": total_cost_usd,
        "usage": usage,
        "modelUsage": model_usage,
        "permission_denials": permission_denials,
        "terminal_reason": terminal_reason,
        "fast_mode_state": "off",
        "fast_mode_disabled_reason": "sdk_opt_in_required",
        "subagent_stats": subagent_stats(subagents_spawned),
        "safety_stops": 0,
        "is_error": is_error,
        "num_turns": num_turns,
        "subtype": subtype,
    }
    if errors is not None:
        message["errors"] = errors
    else:
        message["api_error_status"] = api_error_status
        message["result"] = result_text
        if ttft_ms is not None:
            message["ttft_ms"] = ttft_ms
    message["type"] = "result"
    message["duration_ms"] = duration_ms
    message["uuid"] = new_uuid()
    message["begun_message_ids"] = begun_message_ids
    if errors is None and ttft_ms is not None:
        message["ttft_stream_ms"] = ttft_ms
        message["time_to_request_ms"] = max(0, ttft_ms - 1)
        message["first_content_frame_ms"] = ttft_ms
    message["queued_turn_count"] = queued_turn_count
    message["result_index"] = result_index
    message["model_usage_since_last_result"] = model_usage_since_last_result
    return message


def _build_result_legacy(
    *,
    session_id: str,
    subtype: str,
    is_error: bool,
    num_turns: int,
    stop_reason: str | None,
    terminal_reason: str,
    duration_ms: int,
    duration_api_ms: int,
    ttft_ms: int | None,
    usage: dict[str, Any],
    model_usage: dict[str, Any],
    permission_denials: list[dict[str, Any]],
    result_text: str | None,
    errors: list[str] | None,
    api_error_status: int | None,
) -> dict[str, Any]:
    """2.1.197 order: ``type`` first; error results keep a shorter, different order (design note §2.7)."""
    if errors is not None:
        return {
            "type": "result",
            "subtype": subtype,
            "duration_ms": duration_ms,
            "duration_api_ms": duration_api_ms,
            "is_error": is_error,
            "num_turns": num_turns,
            "stop_reason": stop_reason,
            "session_id": session_id,
            "total_cost_usd": 0,
            "usage": usage,
            "modelUsage": model_usage,
            "permission_denials": permission_denials,
            "terminal_reason": terminal_reason,
            "fast_mode_state": "off",
            "uuid": new_uuid(),
            "errors": errors,
        }
    message: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "api_error_status": api_error_status,
        "duration_ms": duration_ms,
        "duration_api_ms": duration_api_ms,
    }
    if ttft_ms is not None:
        message["ttft_ms"] = ttft_ms
        message["ttft_stream_ms"] = ttft_ms
        message["time_to_request_ms"] = max(0, ttft_ms - 1)
    message.update(
        {
            "num_turns": num_turns,
            "result": result_text,
            "stop_reason": stop_reason,
            "session_id": session_id,
            "total_cost_usd": 0,
            "usage": usage,
            "modelUsage": model_usage,
            "permission_denials": permission_denials,
            "terminal_reason": terminal_reason,
            "fast_mode_state": "off",
            "uuid": new_uuid(),
        }
    )
    return message


def build_resume_failure_result(style: WireStyle, session_id: str, error_text: str) -> dict[str, Any]:
    """The start-up ``result`` written when ``--resume`` names no stored conversation."""
    message: dict[str, Any] = {
        "type": "result",
        "subtype": "error_during_execution",
        "duration_ms": 0,
        "duration_api_ms": 0,
        "is_error": True,
        "num_turns": 0,
        "stop_reason": None,
        "session_id": session_id,
        "total_cost_usd": 0,
        "usage": result_usage(style, 0, 0, synthetic=True),
        "modelUsage": {},
        "permission_denials": [],
        "uuid": new_uuid(),
        "errors": [error_text],
    }
    if style.modern:
        message["result_index"] = 0
    return message


# ---------------------------------------------------------------------------------------------
# control protocol


def build_control_success(request_id: str, response: dict[str, Any] | None = None) -> dict[str, Any]:
    inner: dict[str, Any] = {"subtype": "success", "request_id": request_id}
    if response is not None:
        inner["response"] = response
    return {"type": "control_response", "response": inner}


def build_control_error(
    style: WireStyle, request_id: str, error: str, error_code: str | None = None
) -> dict[str, Any]:
    inner: dict[str, Any] = {"subtype": "error", "request_id": request_id, "error": error}
    if style.modern and error_code is not None:
        inner["error_code"] = error_code
    return {"type": "control_response", "response": inner}


def build_initialize_control_response(
    style: WireStyle, request_id: str, payload: dict[str, Any]
) -> dict[str, Any]:
    """The ``initialize`` envelope; 2.1.332 adds the pending prompt lists beside the payload."""
    message = build_control_success(request_id, payload)
    if style.modern:
        message["response"]["pending_permission_requests"] = []
        message["response"]["pending_user_dialog_requests"] = []
    return message


def build_control_cancel_request(request_id: str) -> dict[str, Any]:
    return {"type": "control_cancel_request", "request_id": request_id}


def build_can_use_tool_request(
    request_id: str,
    *,
    tool_name: str,
    display_name: str,
    tool_input: dict[str, Any],
    description: str | None,
    permission_suggestions: list[dict[str, Any]],
    tool_use_id: str,
    mcp_server_name: str | None = None,
) -> dict[str, Any]:
    """The CLI -> host permission prompt (``--permission-prompt-tool stdio``)."""
    request: dict[str, Any] = {"subtype": "can_use_tool", "tool_name": tool_name}
    if mcp_server_name is not None:
        request["mcp_server"] = {"name": mcp_server_name, "source": "dynamic"}
    request["display_name"] = display_name
    request["input"] = tool_input
    if description is not None:
        request["description"] = description
    request["permission_suggestions"] = permission_suggestions
    if mcp_server_name is not None:
        request["server_policy_ask_only"] = True
    request["tool_use_id"] = tool_use_id
    return {"type": "control_request", "request_id": request_id, "request": request}


def build_mcp_status_entry(
    style: WireStyle,
    *,
    name: str,
    status: str,
    config: dict[str, Any],
    error: str | None,
    server_info: dict[str, Any] | None,
    tools: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "status": status}
    if server_info is not None:
        entry["serverInfo"] = server_info
    if error is not None:
        entry["error"] = error
    entry["config"] = config
    if style.modern:
        entry["transport"] = config.get("type", "stdio")
    entry["scope"] = "dynamic"
    if style.modern:
        entry["source"] = "dynamic"
    if tools is not None:
        entry["tools"] = tools
    return entry


def build_initialize_response(
    style: WireStyle,
    *,
    agents: list[dict[str, Any]],
    model: str,
    pid: int,
    permission_mode: str,
    output_styles_directory: str,
) -> dict[str, Any]:
    """The payload of the ``initialize`` control response (without the envelope)."""
    commands: list[dict[str, Any]] = [
        {"name": name, "description": f"Built-in /{name}", "argumentHint": ""}
        for name in BUILTIN_SLASH_COMMANDS
    ]
    if style.modern:
        for command in commands:
            command["builtin"] = True
    models = [
        {
            "value": "default",
            "resolvedModel": model,
            "displayName": "Default (recommended)",
            "description": "elynav stand-in: deterministic local replies, no API",
            "supportsEffort": False,
            "supportedEffortLevels": [],
            "supportsAdaptiveThinking": False,
            "supportsFastMode": False,
            "supportsAutoMode": False,
            "supportsThinkingOff": True,
        }
    ]
    response: dict[str, Any] = {
        "commands": commands,
        "agents": agents,
        "output_style": "default",
        "available_output_styles": list(OUTPUT_STYLES),
    }
    if style.modern:
        response["user_output_styles_dir"] = output_styles_directory
    response["models"] = models
    if style.modern:
        response["account"] = {"tokenSource": "none", "apiProvider": "firstParty"}
    else:
        response["account"] = {"tokenSource": "none", "apiKeySource": "none", "apiProvider": "firstParty"}
    response["pid"] = pid
    if style.modern:
        response.update(
            {
                "claude_code_version": style.version,
                "current_permission_mode": permission_mode,
                "hook_on_failure_supported": False,
                "hooks_when_unanswered_kept": 0,
                "other_hook_ask_outranks_host": False,
                "feedback_mode": {"kind": "disabled"},
                "analytics_disabled": True,
                "sandbox_enabled": False,
                "remote_control_auto_enable": False,
                "remote_control_auto_connect_default": False,
                "remote_control_available": False,
                "remote_control_auto_on_by_default": False,
                "ide_rc_auto_enable_gate": False,
                "fast_mode_state": "off",
                "fast_mode_disabled_reason": "sdk_opt_in_required",
                "session_state": "idle",
                "capabilities": [],
                "elynav_standin": True,
            }
        )
    else:
        response["elynav_standin"] = True
    return response
