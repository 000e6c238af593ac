"""The OpenAI Responses API as the fake model server speaks it to the codex CLI (pure).

Where it sits: called by ``fake_model_api`` for ``POST …/responses``. No I/O: a request body in,
``RequestFacts`` and a ``WireAnswer`` (SSE frames) out.

Stream of one reply (``event: <type>`` + ``data: <json>`` frames): ``response.created`` → a
``reasoning`` item (``output_item.done`` with a ``summary_text``) → the ``message`` item
(``output_item.added``, one ``output_text.delta`` per chunk, ``output_item.done`` with the whole
text) → one ``function_call`` item per tool call → ``response.completed`` with usage.

Tools: a ``ShellCall`` becomes codex's ``exec_command`` (``{"cmd": …}``). Codex defers MCP tools
behind its client-side ``tool_search`` tool, so an ``McpCall`` whose namespace (``mcp__<server>``)
was not offered yet is answered by a ``tool_search_call`` first (``consumed=False``: the same
reply answers the next request, which carries the search result, with the namespaced
``function_call``). Errors: the HTTP status with ``{"error":{"message","type","code"}}``.
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

__all__ = ["describe_request", "offered_namespaces", "render_reply"]

_TOOL_SEARCH_CALL_PREFIX = "call_fake_search_"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


def _tool_names(tools: Any) -> list[str]:
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            namespace = str(tool.get("name", ""))
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict):
                    names.append(f"{namespace}__{inner.get('name', '')}")
        else:
            names.append(str(tool.get("name") or tool.get("type") or ""))
    return names


def describe_request(path: str, body: Any) -> RequestFacts:
    """Model, instructions + developer messages, tools (searched ones included), last user text."""
    if not isinstance(body, dict):
        return RequestFacts(conversational=False)
    system_parts = [str(body["instructions"])] if body.get("instructions") else []
    last_user_text = ""
    tool_names = _tool_names(body.get("tools"))
    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        role = item.get("role")
        if item.get("type", "message") == "message" and role in ("developer", "system"):
            system_parts.append(_content_text(item.get("content")))
        elif item.get("type", "message") == "message" and role == "user":
            text = _content_text(item.get("content"))
            if text:
                last_user_text = text
        elif item.get("type") == "tool_search_output":
            tool_names += _tool_names(item.get("tools"))
    return RequestFacts(
        model=str(body.get("model") or ""),
        system_prompt="\n\n".join(system_parts),
        tool_names=tuple(tool_names),
        last_user_text=last_user_text,
        conversational=True,
    )


def offered_namespaces(body: Any) -> set[str]:
    """Namespaces (``mcp__<server>``) the model may call: offered in ``tools`` or found by a search."""
    found: set[str] = set()
    if not isinstance(body, dict):
        return found
    sources = [body.get("tools")]
    sources += [
        item.get("tools")
        for item in body.get("input") or []
        if isinstance(item, dict) and item.get("type") == "tool_search_output"
    ]
    for tools in sources:
        for tool in tools if isinstance(tools, list) else []:
            if isinstance(tool, dict) and tool.get("type") == "namespace":
                found.add(str(tool.get("name", "")))
    return found


def _searched_already(body: Any) -> bool:
    for item in body.get("input") or [] if isinstance(body, dict) else []:
        if isinstance(item, dict) and str(item.get("call_id", "")).startswith(_TOOL_SEARCH_CALL_PREFIX):
            return True
    return False


def _function_call(call: ToolCall, call_id: str) -> dict[str, Any]:
    if isinstance(call, ShellCall):
        name, arguments, namespace = "exec_command", {"cmd": call.command}, None
    elif isinstance(call, McpCall):
        name, arguments, namespace = call.tool, dict(call.arguments), f"mcp__{call.server}"
    else:
        assert isinstance(call, NativeToolCall)
        name, arguments, namespace = call.name, dict(call.arguments), None
    item: dict[str, Any] = {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


def _frame(data: dict[str, Any]) -> bytes:
    return sse_frame(data, event=str(data["type"]))


def render_reply(reply: Reply, body: Any, sequence: int) -> WireAnswer:
    """The SSE stream (or HTTP error) answering one Responses request with ``reply``."""
    if reply.failure is not None:
        error = {"error": {"message": reply.failure.message, "type": "invalid_request_error", "code": None}}
        return WireAnswer(
            status=reply.failure.status, content_type="application/json", frames=(json.dumps(error).encode(),)
        )
    response_id = f"resp_fake_{sequence:04d}"
    frames = [_frame({"type": "response.created", "response": {"id": response_id, "status": "in_progress"}})]
    output_index = 0
    missing = [
        call
        for call in reply.tool_calls
        if isinstance(call, McpCall) and f"mcp__{call.server}" not in offered_namespaces(body)
    ]
    if missing and not _searched_already(body):
        for number, missing_call in enumerate(missing):
            search = {
                "type": "tool_search_call",
                "call_id": f"{_TOOL_SEARCH_CALL_PREFIX}{sequence:04d}_{number}",
                "execution": "client",
                "status": "completed",
                "arguments": {"query": missing_call.tool},
            }
            frames.append(
                _frame({"type": "response.output_item.done", "output_index": number, "item": search})
            )
        frames.append(_completed(response_id, reply))
        return WireAnswer(
            200, "text/event-stream", tuple(frames), reply.chunk_delay, reply.cut_after_frames, consumed=False
        )
    if reply.thinking:
        reasoning = {
            "type": "reasoning",
            "id": f"rs_fake_{sequence:04d}",
            "summary": [{"type": "summary_text", "text": reply.thinking}],
        }
        frames.append(
            _frame({"type": "response.output_item.done", "output_index": output_index, "item": reasoning})
        )
        output_index += 1
    if reply.text:
        message_id = f"msg_fake_{sequence:04d}"
        message: dict[str, Any] = {
            "type": "message",
            "role": "assistant",
            "id": message_id,
            "status": "in_progress",
            "content": [],
        }
        frames.append(
            _frame({"type": "response.output_item.added", "output_index": output_index, "item": message})
        )
        for chunk in reply.text:
            frames.append(
                _frame(
                    {
                        "type": "response.output_text.delta",
                        "item_id": message_id,
                        "output_index": output_index,
                        "content_index": 0,
                        "delta": chunk,
                    }
                )
            )
        done = {
            **message,
            "status": "completed",
            "content": [{"type": "output_text", "text": reply.full_text, "annotations": []}],
        }
        frames.append(
            _frame({"type": "response.output_item.done", "output_index": output_index, "item": done})
        )
        output_index += 1
    for number, call in enumerate(reply.tool_calls):
        item = _function_call(call, f"call_fake_{sequence:04d}_{number}")
        frames.append(
            _frame({"type": "response.output_item.done", "output_index": output_index, "item": item})
        )
        output_index += 1
    frames.append(_completed(response_id, reply))
    return WireAnswer(200, "text/event-stream", tuple(frames), reply.chunk_delay, reply.cut_after_frames)


def _completed(response_id: str, reply: Reply) -> bytes:
    usage = reply.usage
    return _frame(
        {
            "type": "response.completed",
            "response": {
                "id": response_id,
                "status": "completed",
                "usage": {
                    "input_tokens": usage.input_tokens,
                    "input_tokens_details": {"cached_tokens": usage.cached_tokens},
                    "output_tokens": usage.output_tokens,
                    "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
                    "total_tokens": usage.input_tokens + usage.output_tokens,
                },
            },
        }
    )
