"""The stand-in's control protocol lines: control responses, the initialize answer, permission requests.

Where it sits: one of the stand-in's wire builders, re-exported by ``wire`` (the face the
stand-in imports as ``wire``). ``claude_standin`` answers control requests with these (even mid-turn);
``tool_calls`` asks for a permission with ``build_can_use_tool_request``. No I/O.

How data flows: a ``control_request`` read from stdin -> ``build_control_success`` /
``build_control_error`` (``build_initialize_response`` for ``initialize``: commands, agents, output
styles, MCP servers) -> ``encode_line`` -> stdout; a tool use needing an answer ->
``build_can_use_tool_request`` -> stdout -> the SDK's answer, or ``build_control_cancel_request``.
"""

from __future__ import annotations

from typing import Any

from elynav_nb.sandbox.claude.wire_style import BUILTIN_SLASH_COMMANDS, OUTPUT_STYLES, WireStyle

__all__ = [
    "build_can_use_tool_request",
    "build_control_cancel_request",
    "build_control_error",
    "build_control_success",
    "build_initialize_control_response",
    "build_initialize_response",
    "build_mcp_status_entry",
]


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
