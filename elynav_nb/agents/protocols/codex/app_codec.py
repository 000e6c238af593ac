"""Pure codec of ``codex app-server`` (JSON-RPC over stdio): lines in, ``AgentEvent``/control frames out.

Where it sits: beside ``codex/exec_codec.py`` (``codex exec --json``). Its wire (``app_wire.py``, under
the persistent driver) feeds it every stdout line of one ``codex app-server`` process and writes the
lines its encoders return. No I/O, no clock: tested on lines recorded from the
real codex-cli (``tests/fixtures/codex_real/codex-<version>-app-server-*.jsonl``).

The wire: one JSON object per line, JSON-RPC 2.0 without the ``"jsonrpc"`` field. Our requests
carry string ids; codex's own requests (approvals) carry integer ids, echoed as they came.

How data flows::

    {"id", "result"|"error"}                      -> ControlResponse (our initialize, thread/*, turn/*)
    {"id", "method": item/commandExecution/requestApproval}
                                                  -> PermissionRequest "command_execution" {command, cwd}
    {"id", "method": item/fileChange/requestApproval}
                                                  -> PermissionRequest "file_change"
    {"id", "method": anything else}               -> ControlRequest (the runner answers "unsupported")
    serverRequest/resolved {requestId}            -> ControlCancel (a prompt codex no longer waits on)
    turn/started (our thread)                     -> AgentStarted (session id = thread id)
    item/agentMessage/delta                       -> TextDelta (token deltas)
    item/reasoning/summaryTextDelta|textDelta     -> ThinkingDelta
    item/started  commandExecution|mcpToolCall|fileChange|webSearch -> ToolUse (as ``codex exec``)
    item/completed  the same                      -> ToolResult (a ToolUse first when none came)
                    agentMessage|reasoning        -> TextDelta/ThinkingDelta when no delta came
    thread/tokenUsage/updated                     -> usage kept; TurnEnded.usage is this turn's share
    error {willRetry: true}                       -> AgentError CLI_RETRY (non-fatal: codex retries)
    error {willRetry: false}                      -> AgentError CLI_ERROR (turn/completed "failed" follows)
    warning / configWarning / deprecationNotice   -> AgentError CLI_WARNING
    turn/completed  completed|failed|interrupted  -> TurnEnded (failed/interrupted: is_error)
    anything else (status, rate limits, new methods) -> RawEvent, never dropped

Turns and items of other threads (codex sub-agents run their own threads) never end ours: only
``turn/*`` of ``thread_id`` start or end a turn, the rest become ``RawEvent``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from elynav_nb.agents._jsonrpc import METHOD_NOT_FOUND, UNTAGGED
from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    ControlCancel,
    ControlFrame,
    ControlRequest,
    ControlResponse,
    PermissionRequest,
    RawEvent,
    TextDelta,
    ThinkingDelta,
    TurnEnded,
)
from elynav_nb.agents.protocols.codec import JsonLineDecoder, as_dict, as_int, as_str, json_line
from elynav_nb.agents.protocols.codex.exec_codec import USAGE_KEYS, codex_tool_use, finished_tool_events

__all__ = ["APPROVAL_METHODS", "CodexAppServerCodec", "app_item_as_exec_item"]

APPROVAL_METHODS = {
    "item/commandExecution/requestApproval": "command_execution",
    "item/fileChange/requestApproval": "file_change",
}
_WARNING_METHODS = ("warning", "configWarning", "deprecationNotice", "guardianWarning")
_THINKING_DELTAS = ("item/reasoning/summaryTextDelta", "item/reasoning/textDelta")
_ITEM_TYPES = {  # app-server item types -> the ``codex exec --json`` ones ``codex_tool_use`` reads
    "commandExecution": "command_execution",
    "mcpToolCall": "mcp_tool_call",
    "fileChange": "file_change",
    "webSearch": "web_search",
}
_USAGE_FIELDS = {
    "inputTokens": "input_tokens",
    "cachedInputTokens": "cached_input_tokens",
    "cacheWriteInputTokens": "cache_write_input_tokens",
    "outputTokens": "output_tokens",
    "reasoningOutputTokens": "reasoning_output_tokens",
}


def app_item_as_exec_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A tool item of app-server in the ``codex exec --json`` shape (snake_case type and fields)."""
    return {
        "id": item.get("id"),
        "type": _ITEM_TYPES.get(as_str(item.get("type")), as_str(item.get("type"))),
        "command": item.get("command"),
        "server": item.get("server"),
        "tool": item.get("tool"),
        "arguments": item.get("arguments"),
        "changes": [_exec_change(change) for change in item.get("changes") or []],
        "query": item.get("query"),
        "status": item.get("status"),
        "exit_code": item.get("exitCode"),
        "aggregated_output": item.get("aggregatedOutput"),
        "result": item.get("result"),
        "error": item.get("error"),
    }


def _exec_change(change: Any) -> dict[str, Any]:
    """``{"path", "kind": {"type": "add"}}`` -> ``{"path", "kind": "add"}`` (the exec shape)."""
    change = as_dict(change)
    kind = change.get("kind")
    return {**change, "kind": as_str(as_dict(kind).get("type")) if isinstance(kind, dict) else as_str(kind)}


class CodexAppServerCodec(JsonLineDecoder[AgentEvent | ControlFrame]):
    """Decodes one ``codex app-server`` process's stdout and encodes what we write to its stdin.

    ``thread_id`` is set by the runner from the ``thread/start`` (or ``thread/resume``) answer;
    ``turn_id`` follows ``turn/started``. ``model`` and ``cli_version`` fill ``AgentStarted``.
    """

    def __init__(self, *, model: str = "", cli_version: str = "") -> None:
        self.model = model
        self.cli_version = cli_version
        self.thread_id = ""
        self.turn_id = ""
        self.thread_usage: dict[str, int] = {}
        self._usage_at_turn_start: dict[str, int] = {}
        self._streamed_items: set[str] = set()
        self._started_tools: set[str] = set()
        self._raw_ids: dict[str, Any] = {}
        self._last_message = ""

    # -- decoding ------------------------------------------------------------------------------------

    def decode_message(self, message: dict[str, Any]) -> list[AgentEvent | ControlFrame]:
        """Events and control frames for one parsed JSON-RPC message."""
        method = message.get("method")
        if not isinstance(method, str):
            if "id" in message:
                return [self._response(message)]
            return [RawEvent(type="unknown", data=message)]
        params = as_dict(message.get("params"))
        if "id" in message:
            return [self._server_request(message["id"], method, params)]
        return self._notification(method, params, message)

    @staticmethod
    def _response(message: dict[str, Any]) -> ControlResponse:
        request_id = str(message.get("id"))
        if "error" in message:
            error = as_dict(message.get("error"))
            return ControlResponse(
                request_id=request_id, ok=False, error=as_str(error.get("message")) or json.dumps(error)
            )
        return ControlResponse(request_id=request_id, ok=True, response=as_dict(message.get("result")))

    def _server_request(self, raw_id: Any, method: str, params: dict[str, Any]) -> ControlFrame | AgentEvent:
        request_id = str(raw_id)
        self._raw_ids[request_id] = raw_id
        tool_name = APPROVAL_METHODS.get(method)
        if tool_name is None:
            return ControlRequest(request_id=request_id, subtype=method, request=params)
        if tool_name == "command_execution":
            asked: dict[str, Any] = {
                "command": as_str(params.get("command")),
                "cwd": as_str(params.get("cwd")),
            }
        else:
            asked = {"grant_root": as_str(params.get("grantRoot"))} if params.get("grantRoot") else {}
        return PermissionRequest(
            request_id=request_id,
            tool_name=tool_name,
            input=asked,
            tool_use_id=as_str(params.get("itemId")),
            description=as_str(params.get("reason")),
        )

    def _ours(self, params: Mapping[str, Any]) -> bool:
        thread = params.get("threadId")
        return not self.thread_id or thread is None or thread == self.thread_id

    def _notification(
        self, method: str, params: dict[str, Any], message: dict[str, Any]
    ) -> list[AgentEvent | ControlFrame]:
        if method == "item/agentMessage/delta" and self._ours(params):
            self._streamed_items.add(as_str(params.get("itemId")))
            return [TextDelta(as_str(params.get("delta")))]
        if method in _THINKING_DELTAS and self._ours(params):
            self._streamed_items.add(as_str(params.get("itemId")))
            return [ThinkingDelta(as_str(params.get("delta")))]
        if method == "item/started" and self._ours(params):
            return self._item_started(as_dict(params.get("item")), message)
        if method == "item/completed" and self._ours(params):
            return self._item_completed(as_dict(params.get("item")), message)
        if method == "thread/tokenUsage/updated" and self._ours(params):
            total = as_dict(as_dict(params.get("tokenUsage")).get("total"))
            self.thread_usage = {name: as_int(total.get(field)) for field, name in _USAGE_FIELDS.items()}
            return [RawEvent(type=method, data=message)]
        if method == "turn/started" and params.get("threadId") == self.thread_id:
            self.turn_id = as_str(as_dict(params.get("turn")).get("id"))
            self._usage_at_turn_start = dict(self.thread_usage)
            self._last_message = ""
            return [AgentStarted(session_id=self.thread_id, model=self.model, cli_version=self.cli_version)]
        if method == "turn/completed" and params.get("threadId") == self.thread_id:
            return [self._turn_completed(as_dict(params.get("turn")))]
        if method == "serverRequest/resolved":
            return [ControlCancel(request_id=str(params.get("requestId")))]
        if method == "error" and self._ours(params):
            error = as_dict(params.get("error"))
            text = as_str(error.get("message")) or "codex reported an error"
            return [AgentError(text, code="CLI_RETRY" if params.get("willRetry") else "CLI_ERROR")]
        if method in _WARNING_METHODS:
            text = as_str(params.get("summary")) or as_str(params.get("message")) or json.dumps(params)
            return [AgentError(text, code="CLI_WARNING")]
        return [RawEvent(type=method, data=message)]

    def _item_started(self, item: dict[str, Any], message: dict[str, Any]) -> list[AgentEvent | ControlFrame]:
        tool_use = codex_tool_use(app_item_as_exec_item(item)) if item.get("type") in _ITEM_TYPES else None
        if tool_use is None:
            return [RawEvent(type="item/started", subtype=as_str(item.get("type")), data=message)]
        self._started_tools.add(tool_use.id)
        return [tool_use]

    def _item_completed(
        self, item: dict[str, Any], message: dict[str, Any]
    ) -> list[AgentEvent | ControlFrame]:
        item_type = as_str(item.get("type"))
        item_id = as_str(item.get("id"))
        streamed = item_id in self._streamed_items
        self._streamed_items.discard(item_id)
        if item_type == "agentMessage":
            self._last_message = as_str(item.get("text"))
            if not streamed and self._last_message:
                return [TextDelta(self._last_message)]
        elif item_type == "reasoning" and not streamed:
            parts = [as_str(part) for part in [*(item.get("summary") or []), *(item.get("content") or [])]]
            if any(parts):
                return [ThinkingDelta("\n".join(part for part in parts if part))]
        elif item_type in _ITEM_TYPES:
            return list(finished_tool_events(app_item_as_exec_item(item), self._started_tools))
        return [RawEvent(type="item/completed", subtype=item_type, data=message)]

    def _turn_completed(self, turn: dict[str, Any]) -> TurnEnded:
        status = as_str(turn.get("status"))
        error = as_str(as_dict(turn.get("error")).get("message"))
        usage: dict[str, Any] = {
            key: max(0, self.thread_usage.get(key, 0) - self._usage_at_turn_start.get(key, 0))
            for key in USAGE_KEYS
        }
        usage["thread_total"] = dict(self.thread_usage)
        self._usage_at_turn_start = dict(self.thread_usage)
        self._started_tools.clear()
        self._streamed_items.clear()
        if status == "completed":
            return TurnEnded(
                subtype="success",
                is_error=False,
                result=self._last_message,
                session_id=self.thread_id,
                usage=usage,
                duration_ms=as_int(turn.get("durationMs")),
                terminal_reason="completed",
            )
        interrupted = status == "interrupted"
        message = error or ("the turn was interrupted" if interrupted else f"the turn ended {status}")
        return TurnEnded(
            subtype="interrupted" if interrupted else "error",
            is_error=True,
            result="" if interrupted else message,
            session_id=self.thread_id,
            usage=usage,
            duration_ms=as_int(turn.get("durationMs")),
            terminal_reason=status or "failed",
            errors=(message,),
        )

    # -- encoding ------------------------------------------------------------------------------------

    @staticmethod
    def request(request_id: str, method: str, params: Mapping[str, Any]) -> bytes:
        """One request line of ours."""
        return json_line(UNTAGGED.request(request_id, method, params))

    @staticmethod
    def notification(method: str) -> bytes:
        """One notification line of ours (``initialized``)."""
        return json_line(UNTAGGED.notification(method))

    def result(self, request_id: str, result: Mapping[str, Any]) -> bytes:
        """The answer to one of codex's requests, with its id as codex sent it."""
        return json_line(UNTAGGED.result(self._raw_ids.pop(request_id, request_id), dict(result)))

    def error(self, request_id: str, message: str) -> bytes:
        """An error answer (method not found) to one of codex's requests."""
        raw_id = self._raw_ids.pop(request_id, request_id)
        return json_line(UNTAGGED.error(raw_id, METHOD_NOT_FOUND, message))

    def permission_answer(self, request_id: str, allowed: bool, *, always: bool = False) -> bytes:
        """``accept`` (``acceptForSession`` when ``always``) or ``decline`` for an approval request."""
        decision = ("acceptForSession" if always else "accept") if allowed else "decline"
        return self.result(request_id, {"decision": decision})
