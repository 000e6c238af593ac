"""The Anthropic Messages API as the fake model server speaks it to the claude CLI (pure).

Where it sits: called by ``fake_model_api`` for ``POST …/v1/messages`` (and ``…/count_tokens``).
No I/O: a request body in, ``RequestFacts`` and a ``WireAnswer`` (SSE frames) out.

Stream of one reply (``event: <type>`` + ``data: <json>`` frames): ``message_start`` →
per block ``content_block_start`` / ``content_block_delta`` (``thinking_delta`` + ``signature_delta``,
``text_delta`` per chunk, ``input_json_delta`` for a tool call) / ``content_block_stop`` →
``message_delta`` (``stop_reason`` ``end_turn`` or ``tool_use``, usage) → ``message_stop``.
A ``ShellCall`` becomes claude's ``Bash`` tool, an ``McpCall`` ``mcp__<server>__<tool>``.
Errors: the HTTP status with ``{"type":"error","error":{"type":…,"message":…}}``.
"""

from __future__ import annotations

import json
from typing import Any

from elynav_nb.sandbox.model_api.fake_model_script import (
    McpCall,
    NativeToolCall,
    Reply,
    RequestFacts,
    ShellCall,
    ToolCall,
    WireAnswer,
    sse_frame,
)

__all__ = ["ERROR_TYPES", "describe_request", "render_reply", "side_answer", "tool_name_and_input"]

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
    return "\n".join(texts)


def describe_request(path: str, body: Any) -> RequestFacts:
    """Model, system prompt, tool names and the last user text of a Messages request."""
    if not isinstance(body, dict):
        return RequestFacts(conversational=False)
    last_user_text = ""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            text = _text_of(message.get("content"))
            if text:
                last_user_text = text
    tool_names = tuple(
        str(tool.get("name"))
        for tool in body.get("tools") or []
        if isinstance(tool, dict) and tool.get("name")
    )
    return RequestFacts(
        model=str(body.get("model") or ""),
        system_prompt=_text_of(body.get("system")),
        tool_names=tool_names,
        last_user_text=last_user_text,
        conversational=not path.rstrip("/").endswith("count_tokens") and bool(body.get("stream")),
    )


def tool_name_and_input(call: ToolCall) -> tuple[str, dict[str, Any]]:
    """The claude tool a scripted call becomes."""
    if isinstance(call, ShellCall):
        return "Bash", {"command": call.command, "description": call.description}
    if isinstance(call, McpCall):
        return f"mcp__{call.server}__{call.tool}", dict(call.arguments)
    assert isinstance(call, NativeToolCall)
    return call.name, dict(call.arguments)


def _error_answer(status: int, message: str) -> WireAnswer:
    error_type = ERROR_TYPES.get(status, "api_error")
    body = json.dumps({"type": "error", "error": {"type": error_type, "message": message}}).encode()
    return WireAnswer(status=status, content_type="application/json", frames=(body,))


def render_reply(reply: Reply, body: Any, sequence: int) -> WireAnswer:
    """The SSE stream (or HTTP error) answering one Messages request with ``reply``."""
    if reply.failure is not None:
        return _error_answer(reply.failure.status, reply.failure.message)
    model = str(body.get("model") or "claude-fake") if isinstance(body, dict) else "claude-fake"
    usage = reply.usage
    frames = [
        sse_frame(
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_fake_{sequence:04d}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": usage.input_tokens - usage.cached_tokens,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": usage.cached_tokens,
                        "output_tokens": 1,
                    },
                },
            },
            event="message_start",
        )
    ]
    index = 0
    if reply.thinking:
        frames += _block(
            index,
            {"type": "thinking", "thinking": "", "signature": ""},
            [
                {"type": "thinking_delta", "thinking": reply.thinking},
                {"type": "signature_delta", "signature": f"fake-signature-{sequence}"},
            ],
        )
        index += 1
    if reply.text:
        frames += _block(
            index,
            {"type": "text", "text": ""},
            [{"type": "text_delta", "text": chunk} for chunk in reply.text],
        )
        index += 1
    for call_number, call in enumerate(reply.tool_calls):
        name, arguments = tool_name_and_input(call)
        block = {
            "type": "tool_use",
            "id": f"toolu_fake_{sequence:04d}_{call_number}",
            "name": name,
            "input": {},
        }
        frames += _block(index, block, [{"type": "input_json_delta", "partial_json": json.dumps(arguments)}])
        index += 1
    stop_reason = "tool_use" if reply.tool_calls else "end_turn"
    frames.append(
        sse_frame(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage.output_tokens},
            },
            event="message_delta",
        )
    )
    frames.append(sse_frame({"type": "message_stop"}, event="message_stop"))
    return WireAnswer(
        status=200,
        content_type="text/event-stream",
        frames=tuple(frames),
        chunk_delay=reply.chunk_delay,
        cut_after_frames=reply.cut_after_frames,
    )


def _block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    frames = [
        sse_frame(
            {"type": "content_block_start", "index": index, "content_block": start},
            event="content_block_start",
        )
    ]
    for delta in deltas:
        frames.append(
            sse_frame(
                {"type": "content_block_delta", "index": index, "delta": delta}, event="content_block_delta"
            )
        )
    frames.append(sse_frame({"type": "content_block_stop", "index": index}, event="content_block_stop"))
    return frames


def side_answer(path: str, body: Any, sequence: int) -> WireAnswer:
    """Token counts, or a short plain (non-streamed) message for side requests."""
    if path.rstrip("/").endswith("count_tokens"):
        return WireAnswer(status=200, content_type="application/json", frames=(b'{"input_tokens":100}',))
    model = str(body.get("model") or "claude-fake") if isinstance(body, dict) else "claude-fake"
    message = {
        "id": f"msg_fake_{sequence:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "OK."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    return WireAnswer(status=200, content_type="application/json", frames=(json.dumps(message).encode(),))
