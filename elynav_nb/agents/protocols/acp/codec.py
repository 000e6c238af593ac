"""Pure codec of the Agent Client Protocol (ACP v1: JSON-RPC 2.0 over stdio): lines in, events out.

Where it sits: the ``AcpWire`` (``wire.py``) feeds it every stdout line of one ACP agent process
and writes the lines its encoders return. No I/O, no clock: tested on lines recorded from real ACP
agents (``tests/fixtures/acp_real/*.jsonl``: claude-agent-acp, codex-acp, ``gemini --acp``) and on
the embedded stand-in's.

The wire: one JSON-RPC 2.0 object per line, ``"jsonrpc": "2.0"`` on each. Our requests carry string
ids; the agent's own requests (permission prompts, fs and terminal calls) carry ids of its choosing,
echoed exactly as they came (an integer stays an integer).

How data flows::

    {"id", "result"|"error"}                   -> ControlResponse (initialize, session/*, ...)
      ... of the session/prompt in flight       -> and TurnEnded from its stopReason (an error answer:
                                                   AgentError CLI_ERROR, then TurnEnded "error")
    {"id", "method": session/request_permission}-> PermissionRequest (the options kept for the answer)
    {"id", "method": fs/* | terminal/* | other} -> ControlRequest (the wire serves it or refuses it)
    session/update agent_message_chunk (text)   -> TextDelta
                   agent_thought_chunk (text)   -> ThinkingDelta
                   tool_call                    -> ToolUse (and ToolResult when it comes finished)
                   tool_call_update completed|failed -> ToolResult (a ToolUse first if none came)
                   usage_update                 -> RawEvent, its cost kept for TurnEnded
                   plan, user_message_chunk (a session/load replay), modes, commands, anything new
                                                -> RawEvent, never dropped
                   any of these with no session/prompt in flight (the history session/load
                   replays before it answers)   -> RawEvent (not the next turn's text or tools)
    a line that is not JSON                     -> AgentError INVALID_JSON
    JSON that is not JSON-RPC ({"hello": 1})    -> AgentError INVALID_JSON_RPC (the turn goes on)

A tool's name: the agent's own where it says it (claude-agent-acp ``_meta.claudeCode.toolName``),
else the call's ``title``, else its ``kind``. Its input: ``rawInput`` (``{}`` when the agent sends none).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from elynav_nb.agents._jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JSON_RPC, METHOD_NOT_FOUND
from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    ControlFrame,
    ControlRequest,
    ControlResponse,
    PermissionRequest,
    RawEvent,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.protocols.codec import JsonLineDecoder, as_dict, as_str, excerpt, json_line

__all__ = [
    "ACP_PROTOCOL_VERSION",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "RESOURCE_NOT_FOUND",
    "AcpCodec",
    "tool_result_text",
]

ACP_PROTOCOL_VERSION = 1
RESOURCE_NOT_FOUND = -32002  # ACP's own code (the JSON-RPC ones are ``_jsonrpc``'s)
PERMISSION_METHOD = "session/request_permission"
_FINISHED_STATUSES = ("completed", "failed")
_TURN_UPDATES = ("agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update")
_STOP_SUBTYPES = {  # stopReason -> (TurnEnded.subtype, is_error, terminal_reason, error_code)
    "end_turn": ("success", False, "completed", ""),
    "cancelled": ("interrupted", True, "cancelled", "CANCELLED_BY_AGENT"),
    "max_tokens": ("error", True, "max_tokens", "MAX_TOKENS"),
    "max_turn_requests": ("error_max_turns", True, "max_turns", ""),
    "refusal": ("error", True, "refusal", "REFUSAL"),
}


def tool_result_text(update: Mapping[str, Any]) -> str:
    """The text a finished tool call shows: its ``content`` blocks joined, else its ``rawOutput``."""
    parts: list[str] = []
    for item in update.get("content") or []:
        item = as_dict(item)
        kind = item.get("type")
        if kind == "content":
            block = as_dict(item.get("content"))
            parts.append(as_str(block.get("text")) if block.get("type") == "text" else json.dumps(block))
        elif kind == "diff":
            parts.append(f"diff of {as_str(item.get('path'))}")
        elif kind == "terminal":
            parts.append(f"terminal {as_str(item.get('terminalId'))}")
    if parts:
        return "\n".join(parts)
    raw = update.get("rawOutput")
    if raw is None:
        return ""
    if isinstance(raw, str):
        return raw
    output = as_dict(raw).get("output") if isinstance(raw, dict) else None
    return output if isinstance(output, str) else json.dumps(raw, ensure_ascii=False, default=str)


class AcpCodec(JsonLineDecoder[AgentEvent | ControlFrame]):
    """Decodes one ACP agent's stdout and encodes what we write to its stdin (see the module docstring).

    ``session_id`` is set by the wire from ``session/new`` (or ``session/load``); ``prompt_request_id``
    is the id of the ``session/prompt`` in flight (its answer ends the turn). ``agent_name`` and
    ``agent_version`` fill ``AgentStarted``.
    """

    def __init__(self, *, agent_name: str = "", agent_version: str = "", is_standin: bool = False) -> None:
        self.agent_name = agent_name
        self.agent_version = agent_version
        self.is_standin = is_standin
        self.session_id = ""
        self.model = ""
        self.prompt_request_id = ""
        self.cancel_asked = False  # the wire sent session/cancel for the prompt in flight
        self.updates_decoded = 0  # session/update notifications read (the wire waits for a replay's end)
        self.total_cost_usd = 0.0
        self._turn_text: list[str] = []
        self._started_tools: dict[str, ToolUse] = {}
        self._announced: dict[str, dict[str, Any]] = {}  # tool calls announced without their input yet
        self._raw_ids: dict[str, Any] = {}
        self._methods: dict[str, str] = {}  # the agent's pending requests: id -> method
        self._permission_options: dict[str, list[dict[str, Any]]] = {}
        self._pending_tool_uses: list[ToolUse] = []  # announced calls a permission prompt makes known

    # -- decoding ------------------------------------------------------------------------------------

    def decode_message(self, message: dict[str, Any]) -> list[AgentEvent | ControlFrame]:
        method = message.get("method")
        if isinstance(method, str):
            params = as_dict(message.get("params"))
            if "id" in message and message["id"] is not None:
                request = self._agent_request(message["id"], method, params)
                uses: list[AgentEvent | ControlFrame] = list(self._pending_tool_uses)
                self._pending_tool_uses.clear()
                return [*uses, request]
            if method == "session/update":
                return self._update(params, message)
            return [RawEvent(type=method, data=message)]
        if "id" in message and ("result" in message or "error" in message):
            return self._response(message)
        return [
            AgentError(
                "the agent wrote JSON that is not JSON-RPC (no method, no result, no error)",
                code="INVALID_JSON_RPC",
                excerpt=excerpt(json.dumps(message, ensure_ascii=False)),
            )
        ]

    def _response(self, message: dict[str, Any]) -> list[AgentEvent | ControlFrame]:
        request_id = str(message.get("id"))
        if "error" in message:
            error = as_dict(message.get("error"))
            text = as_str(error.get("message")) or json.dumps(message.get("error"))
            data = error.get("data")
            if data not in (None, {}, ""):
                text = f"{text} ({data if isinstance(data, str) else json.dumps(data, default=str)})"
            response = ControlResponse(request_id=request_id, ok=False, error=text)
        else:
            result = message.get("result")
            response = ControlResponse(request_id=request_id, ok=True, response=as_dict(result))
        if request_id != self.prompt_request_id or not request_id:
            return [response]
        self.prompt_request_id = ""
        return [response, *self._turn_ended(response)]

    def _turn_ended(self, response: ControlResponse) -> list[AgentEvent | ControlFrame]:
        cancel_asked, self.cancel_asked = self.cancel_asked, False
        text = "".join(self._turn_text)
        self._turn_text.clear()
        self._started_tools.clear()
        self._announced.clear()
        usage = _usage(response.response)
        if not response.ok:
            return [
                AgentError(response.error, code="CLI_ERROR"),
                TurnEnded(
                    subtype="error",
                    is_error=True,
                    result=response.error,
                    session_id=self.session_id,
                    total_cost_usd=self.total_cost_usd,
                    terminal_reason="error",
                    errors=(response.error,),
                    error_code="CLI_ERROR",
                ),
            ]
        stop_reason = as_str(response.response.get("stopReason")) or "end_turn"
        subtype, is_error, terminal, code = _STOP_SUBTYPES.get(
            stop_reason, ("error", True, stop_reason, "UNKNOWN_STOP_REASON")
        )
        errors: tuple[str, ...] = ()
        if stop_reason == "cancelled" and cancel_asked:  # as we asked (our cancel's outcome wins)
            errors, code = ("the turn was cancelled as the client asked (session/cancel)",), "CANCELLED"
        elif stop_reason == "cancelled":  # the agent's own (after a refused permission, or by itself)
            errors = ("the agent ended the turn as cancelled (after a refused permission, or on its own)",)
        elif is_error:
            errors = (f"the agent ended the turn with stopReason {stop_reason!r}",)
        return [
            TurnEnded(
                subtype=subtype,
                is_error=is_error,
                result=text if not is_error else errors[0],
                session_id=self.session_id,
                total_cost_usd=self.total_cost_usd,
                usage=usage,
                terminal_reason=terminal,
                stop_reason=stop_reason,
                errors=errors,
                error_code=code,
            )
        ]

    def _agent_request(self, raw_id: Any, method: str, params: dict[str, Any]) -> AgentEvent | ControlFrame:
        request_id = str(raw_id)
        self._raw_ids[request_id] = raw_id
        self._methods[request_id] = method
        if method != PERMISSION_METHOD:
            return ControlRequest(request_id=request_id, subtype=method, request=params)
        call = as_dict(params.get("toolCall"))
        call_id = as_str(call.get("toolCallId"))
        known = self._started_tools.get(call_id)
        if (
            known is None
            and call_id
            and (call_id in self._announced or call.get("rawInput") or call.get("title"))
        ):
            known = self._tool_use(call_id, call)  # gemini's first word of a call is its permission prompt
            self._pending_tool_uses.append(known)
        options = [as_dict(option) for option in params.get("options") or [] if isinstance(option, dict)]
        self._permission_options[request_id] = options
        raw_input = call.get("rawInput")
        return PermissionRequest(
            request_id=request_id,
            tool_name=_tool_name(call) or (known.name if known is not None else "") or "unknown tool",
            input=raw_input if isinstance(raw_input, dict) else (known.input if known is not None else {}),
            tool_use_id=call_id,
            description=as_str(call.get("title")),
            options=tuple(options),
        )

    def _update(self, params: dict[str, Any], message: dict[str, Any]) -> list[AgentEvent | ControlFrame]:
        update = as_dict(params.get("update"))
        kind = as_str(update.get("sessionUpdate"))
        self.updates_decoded += 1
        if not self.prompt_request_id and kind in _TURN_UPDATES:
            # no prompt in flight: the history a session/load replays (claude-agent-acp, codex-acp),
            # not the output of the turn that (re)starts the agent
            return [RawEvent(type="session/update", subtype=kind, data=message)]
        if kind in ("agent_message_chunk", "agent_thought_chunk"):
            content = as_dict(update.get("content"))
            if content.get("type") == "text":
                text = as_str(content.get("text"))
                if kind == "agent_thought_chunk":
                    return [ThinkingDelta(text)]
                if self.prompt_request_id:
                    self._turn_text.append(text)
                return [TextDelta(text)]
        elif kind == "tool_call":
            return self._tool_call(update, message)
        elif kind == "tool_call_update":
            return self._tool_call_update(update, message)
        elif kind == "usage_update":
            cost = as_dict(update.get("cost"))
            amount = cost.get("amount")
            if isinstance(amount, int | float) and as_str(cost.get("currency")).upper() in ("USD", ""):
                self.total_cost_usd = float(amount)
        return [RawEvent(type="session/update", subtype=kind or "unknown", data=message)]

    def _tool_call(self, update: dict[str, Any], message: dict[str, Any]) -> list[AgentEvent | ControlFrame]:
        call_id = as_str(update.get("toolCallId"))
        if call_id and call_id in self._started_tools:
            # known already: codex-acp announces an escalated call in its permission prompt, then
            # sends tool_call once allowed (one ToolUse per call)
            if update.get("status") in _FINISHED_STATUSES:
                return [self._tool_result(call_id, update)]
            return [RawEvent(type="session/update", subtype="tool_call", data=message)]
        if not isinstance(update.get("rawInput"), dict) or not update.get("rawInput"):
            if update.get("status") in (None, "", "pending"):
                # claude-agent-acp announces a call with rawInput {} and fills it in an update: the
                # ToolUse waits for its input (or a permission prompt, or the end of the call).
                # A call already in_progress (gemini, a tool its mode approves: it never sends its
                # input) is running: its ToolUse comes now, the turn waits on a tool
                self._announced[call_id] = dict(update)
                return [RawEvent(type="session/update", subtype="tool_call", data=message)]
        events: list[AgentEvent | ControlFrame] = [self._tool_use(call_id, update)]
        if update.get("status") in _FINISHED_STATUSES:
            events.append(self._tool_result(call_id, update))
        return events

    def _tool_use(self, call_id: str, update: Mapping[str, Any]) -> ToolUse:
        """The ``ToolUse`` of a call, from what its announcement and ``update`` say (once per call)."""
        merged = {
            **self._announced.pop(call_id, {}),
            **{k: v for k, v in update.items() if v not in (None, {}, "")},
        }
        raw_input = merged.get("rawInput")
        tool_use = ToolUse(
            id=call_id,
            name=_tool_name(merged) or "tool",
            input=raw_input if isinstance(raw_input, dict) else {},
        )
        self._started_tools[call_id] = tool_use
        return tool_use

    def _tool_call_update(
        self, update: dict[str, Any], message: dict[str, Any]
    ) -> list[AgentEvent | ControlFrame]:
        call_id = as_str(update.get("toolCallId"))
        finished = update.get("status") in _FINISHED_STATUSES
        events: list[AgentEvent | ControlFrame] = []
        if call_id not in self._started_tools and (finished or update.get("rawInput")):
            events.append(self._tool_use(call_id, update))
        if finished:
            events.append(self._tool_result(call_id, update))
        return events or [RawEvent(type="session/update", subtype="tool_call_update", data=message)]

    @staticmethod
    def _tool_result(call_id: str, update: Mapping[str, Any]) -> ToolResult:
        return ToolResult(
            tool_use_id=call_id,
            content=tool_result_text(update),
            is_error=update.get("status") == "failed",
        )

    def started(self) -> AgentStarted:
        """The ``AgentStarted`` a turn opens with (ACP has no start-of-turn message of its own)."""
        self._turn_text.clear()
        return AgentStarted(
            session_id=self.session_id,
            model=self.model,
            cli_version=self.agent_version,
            is_standin=self.is_standin,
        )

    # -- encoding ------------------------------------------------------------------------------------

    @staticmethod
    def request(request_id: str, method: str, params: Mapping[str, Any]) -> bytes:
        """One request line of ours."""
        return json_line(JSON_RPC.request(request_id, method, params))

    @staticmethod
    def notification(method: str, params: Mapping[str, Any]) -> bytes:
        """One notification line of ours (``session/cancel``)."""
        return json_line(JSON_RPC.notification(method, params))

    def method_of(self, request_id: str) -> str:
        """The method of one of the agent's pending requests ("" when unknown)."""
        return self._methods.get(request_id, "")

    def result(self, request_id: str, result: Mapping[str, Any] | None) -> bytes:
        """The answer to one of the agent's requests, with its id as the agent sent it."""
        self._methods.pop(request_id, None)
        raw_id = self._raw_ids.pop(request_id, request_id)
        return json_line(JSON_RPC.result(raw_id, None if result is None else dict(result)))

    def error(self, request_id: str, message: str, code: int = METHOD_NOT_FOUND) -> bytes:
        """An error answer to one of the agent's requests."""
        self._methods.pop(request_id, None)
        raw_id = self._raw_ids.pop(request_id, request_id)
        return json_line(JSON_RPC.error(raw_id, code, message))

    def pending_permissions(self) -> list[str]:
        """The permission prompts the agent still waits on (the wire cancels them with the turn)."""
        return list(self._permission_options)

    def permission_answer(self, request_id: str, allowed: bool, *, always: bool = False) -> bytes:
        """The option that matches the answer (allow once / always, reject once); none: ``cancelled``.

        An agent that offers no option of the asked kind (no ``reject_once``, say) gets its nearest
        one of the same sense (``reject_always``); one that offers no option of that sense at all
        gets ``cancelled``, which no agent reads as permission.
        """
        options = self._permission_options.pop(request_id, [])
        if allowed:
            wanted = ("allow_always", "allow_once") if always else ("allow_once", "allow_always")
        else:
            wanted = ("reject_once", "reject_always")
        for kind in wanted:
            for option in options:
                if option.get("kind") == kind and option.get("optionId") is not None:
                    outcome = {"outcome": "selected", "optionId": option["optionId"]}
                    return self.result(request_id, {"outcome": outcome})
        return self.permission_cancelled(request_id)

    def permission_cancelled(self, request_id: str) -> bytes:
        """``{"outcome": "cancelled"}``: what ACP asks a client to answer once it cancels the turn."""
        self._permission_options.pop(request_id, None)
        return self.result(request_id, {"outcome": {"outcome": "cancelled"}})


def _tool_name(call: Mapping[str, Any]) -> str:
    own = as_str(as_dict(as_dict(call.get("_meta")).get("claudeCode")).get("toolName"))
    return own or as_str(call.get("title")) or as_str(call.get("kind"))


def _usage(answer: Mapping[str, Any]) -> dict[str, Any]:
    """A prompt answer's token counts in our snake_case keys: ACP's ``usage`` (camelCase), else
    gemini's ``_meta.quota.token_count`` (snake_case already)."""
    quota = as_dict(as_dict(as_dict(answer.get("_meta")).get("quota")).get("token_count"))
    if quota and "usage" not in answer:
        return {key: value for key, value in quota.items() if isinstance(value, int)}
    usage = as_dict(answer.get("usage"))
    names = {
        "inputTokens": "input_tokens",
        "outputTokens": "output_tokens",
        "cachedReadTokens": "cache_read_input_tokens",
        "cachedWriteTokens": "cache_creation_input_tokens",
        "thoughtTokens": "reasoning_output_tokens",
        "totalTokens": "total_tokens",
    }
    return {ours: usage[theirs] for theirs, ours in names.items() if isinstance(usage.get(theirs), int)}
