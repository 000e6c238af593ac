"""The stand-in's ``result`` lines: usage, model usage, subagent counts, a turn's or a failed resume's result.

Where it sits: one of the stand-in's wire builders, re-exported by ``wire`` (the face the
stand-in imports as ``wire``). ``turns`` writes one result per user message; ``claude_standin``
writes the result of a ``--resume`` that names nothing stored. No I/O.

How data flows: the turn's counters (tokens, API time, denials, message ids) -> ``result_usage`` /
``model_usage_entry`` / ``subagent_stats`` -> ``build_result(style, ...)`` in the key order of the
imitated version (2.1.332; ``_build_result_legacy`` for 2.1.197) -> ``encode_line`` -> stdout.
"""

from __future__ import annotations

from typing import Any

from elynav_nb.sandbox.claude.wire_style import CONTEXT_WINDOW, MAX_OUTPUT_TOKENS, WireStyle, new_uuid

__all__ = [
    "build_result",
    "build_resume_failure_result",
    "model_usage_entry",
    "result_usage",
    "subagent_stats",
]


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
    structured_output: Any = None,
    total_cost_usd: float = 0,
) -> dict[str, Any]:
    """The ``result`` line closing a turn. ``errors`` set = an error subtype (no ``result`` key).

    ``structured_output`` (``--json-schema``) follows ``result``, as on 2.1.332. ``total_cost_usd`` is
    the process's running total (0 unless ``@standin cost`` set a price)."""
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
        if structured_output is not None:
            message["structured_output"] = structured_output
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
