"""The Gemini API as the fake model server speaks it to the gemini CLI (pure).

Where it sits: called by ``fake_model_api`` for ``POST /v1beta/models/<model>:<method>``. No I/O:
a path and a request body in, ``RequestFacts`` and a ``WireAnswer`` out.

``streamGenerateContent?alt=sse`` is the conversation: ``data: <GenerateContentResponse>`` frames
(``\\r\\n\\r\\n`` separated, as Google sends them): the thinking as a ``thought: true`` part, one frame
per text chunk, then the tool calls as ``functionCall`` parts; the last frame carries
``finishReason: "STOP"`` and ``usageMetadata``. A ``ShellCall`` becomes ``run_shell_command``, an
``McpCall`` ``mcp_<server>_<tool>``. Side calls (``generateContent``: the model router and other
helpers; ``countTokens``) get a fixed answer: for a JSON-schema request, a small object with one
placeholder value per required property. Errors: ``{"error":{"code","message","status"}}``.
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

__all__ = [
    "STATUS_NAMES",
    "describe_request",
    "model_and_method",
    "render_reply",
    "side_answer",
    "tool_name_and_arguments",
]

STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def model_and_method(path: str) -> tuple[str, str]:
    """``/v1beta/models/gemini-2.5-flash:streamGenerateContent`` -> (``gemini-2.5-flash``, ``streamGenerateContent``)."""
    last = path.rstrip("/").rsplit("/", 1)[-1]
    model, _, method = last.partition(":")
    return model, method


def _texts(parts: Any) -> list[str]:
    return (
        [str(part["text"]) for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)]
        if isinstance(parts, list)
        else []
    )


def describe_request(path: str, body: Any) -> RequestFacts:
    """Model, system instruction, function names and the last user text of a Gemini request."""
    model, method = model_and_method(path)
    if not isinstance(body, dict):
        return RequestFacts(model=model, conversational=False)
    system = body.get("systemInstruction")
    system_prompt = "\n".join(_texts(system.get("parts"))) if isinstance(system, dict) else str(system or "")
    last_user_text = ""
    for content in body.get("contents") or []:
        if isinstance(content, dict) and content.get("role", "user") == "user":
            texts = _texts(content.get("parts"))
            if texts:
                last_user_text = texts[-1]
    tool_names: list[str] = []
    for tool in body.get("tools") or []:
        for declaration in tool.get("functionDeclarations") or [] if isinstance(tool, dict) else []:
            if isinstance(declaration, dict):
                tool_names.append(str(declaration.get("name", "")))
    return RequestFacts(
        model=model,
        system_prompt=system_prompt,
        tool_names=tuple(tool_names),
        last_user_text=last_user_text,
        conversational=method == "streamGenerateContent",
    )


def tool_name_and_arguments(call: ToolCall) -> tuple[str, dict[str, Any]]:
    """The gemini tool a scripted call becomes."""
    if isinstance(call, ShellCall):
        return "run_shell_command", {"command": call.command, "description": call.description}
    if isinstance(call, McpCall):
        return f"mcp_{call.server}_{call.tool}", dict(call.arguments)
    assert isinstance(call, NativeToolCall)
    return call.name, dict(call.arguments)


def _error_answer(status: int, message: str) -> WireAnswer:
    error = {"error": {"code": status, "message": message, "status": STATUS_NAMES.get(status, "UNKNOWN")}}
    return WireAnswer(status=status, content_type="application/json", frames=(json.dumps(error).encode(),))


def _chunk(model: str, parts: list[dict[str, Any]], reply: Reply | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    response: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
    if reply is not None:
        usage = reply.usage
        candidate["finishReason"] = "STOP"
        response["usageMetadata"] = {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": usage.output_tokens,
            "totalTokenCount": usage.input_tokens + usage.output_tokens,
            "cachedContentTokenCount": usage.cached_tokens,
            "thoughtsTokenCount": usage.reasoning_tokens if reply.thinking else 0,
        }
    return response


def render_reply(reply: Reply, path: str, sequence: int) -> WireAnswer:
    """The SSE stream (or HTTP error) answering one ``streamGenerateContent`` request."""
    if reply.failure is not None:
        return _error_answer(reply.failure.status, reply.failure.message)
    model, _ = model_and_method(path)
    pieces: list[list[dict[str, Any]]] = []
    if reply.thinking:
        pieces.append([{"text": reply.thinking, "thought": True}])
    for chunk in reply.text:
        pieces.append([{"text": chunk}])
    if reply.tool_calls:
        calls = []
        for call in reply.tool_calls:
            name, arguments = tool_name_and_arguments(call)
            calls.append({"functionCall": {"name": name, "args": arguments}})
        pieces.append(calls)
    if not pieces:
        pieces.append([{"text": ""}])
    frames = []
    for number, parts in enumerate(pieces):
        last = number == len(pieces) - 1
        frames.append(sse_frame(_chunk(model, parts, reply if last else None), separator="\r\n"))
    return WireAnswer(200, "text/event-stream", tuple(frames), reply.chunk_delay, reply.cut_after_frames)


def _placeholder(schema: Any) -> Any:
    kind = str(schema.get("type", "")).lower() if isinstance(schema, dict) else ""
    if kind == "object":
        properties = schema.get("properties") or {}
        return {str(name): _placeholder(inner) for name, inner in properties.items()}
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if isinstance(schema, dict) and schema.get("enum"):
        return schema["enum"][0]
    return "fake"


def side_answer(path: str, body: Any) -> WireAnswer:
    """``countTokens`` and ``generateContent`` (router, helpers): a fixed, well-formed answer."""
    model, method = model_and_method(path)
    if method == "countTokens":
        return WireAnswer(200, "application/json", (b'{"totalTokens":100}',))
    config = body.get("generationConfig") if isinstance(body, dict) else None
    schema = None
    if isinstance(config, dict):
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
    text = json.dumps(_placeholder(schema)) if schema is not None else "OK."
    response = _chunk(model, [{"text": text}], Reply())
    return WireAnswer(200, "application/json", (json.dumps(response).encode(),))
