"""Pure codec of ``codex exec --json``: stdout lines in, the shared ``AgentEvent`` types out.

Where it sits: beside ``claude/codec.py``; the runner (process per turn) feeds it each stdout line of
one ``codex exec`` process and, when the process ends, asks ``verdict`` how the turn ended. No
I/O, no clock: tested on lines recorded from the real codex-cli (``tests/fixtures/codex_real``).

How data flows (one decoder per process, i.e. per turn)::

    thread.started {thread_id}            -> AgentStarted (session id = thread id)
    turn.started                          -> RawEvent
    item.started  command_execution       -> ToolUse  "command_execution" {"command": …}
                  mcp_tool_call           -> ToolUse  "mcp__<server>__<tool>" {arguments}
                  file_change / web_search-> ToolUse  "file_change" / "web_search"
    item.completed (same item id)         -> ToolResult (a ToolUse first when no item.started came)
                  agent_message           -> TextDelta (whole: exec --json has no token deltas)
                  reasoning               -> ThinkingDelta
                  error                   -> AgentError CLI_WARNING (non-fatal: model metadata…)
    error {message}                       -> AgentError CLI_ERROR (non-fatal: retries, reconnects)
    turn.completed {usage}                -> TurnEnded success (usage made per turn, see below)
    turn.failed {error}                   -> TurnEnded error
    anything else (item.updated, todo_list, collab_tool_call, new types) -> RawEvent, never dropped

Usage: codex reports the *thread's* cumulative totals on ``turn.completed``. Give the decoder
the previous total (``previous_thread_usage``, from the last turn's ``thread_usage``) and
``TurnEnded.usage`` holds this turn's share, with the thread totals under ``"thread_total"``.
Codex reports no cost: ``total_cost_usd`` stays 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    RawEvent,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.protocols.codec import JsonLineDecoder, TurnVerdict, as_dict, as_int, as_str

__all__ = ["USAGE_KEYS", "CodexEventDecoder", "codex_tool_result", "codex_tool_use", "finished_tool_events"]

USAGE_KEYS = (
    "input_tokens",
    "cached_input_tokens",
    "cache_write_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
)

_TOOL_ITEM_TYPES = ("command_execution", "mcp_tool_call", "file_change", "web_search")


def codex_tool_use(item: Mapping[str, Any]) -> ToolUse | None:
    """The ``ToolUse`` a tool item stands for (``None`` for items that are not tool calls)."""
    item_type = item.get("type")
    item_id = as_str(item.get("id"))
    if item_type == "command_execution":
        return ToolUse(id=item_id, name="command_execution", input={"command": as_str(item.get("command"))})
    if item_type == "mcp_tool_call":
        name = f"mcp__{as_str(item.get('server'))}__{as_str(item.get('tool'))}"
        return ToolUse(id=item_id, name=name, input=as_dict(item.get("arguments")))
    if item_type == "file_change":
        return ToolUse(id=item_id, name="file_change", input={"changes": list(item.get("changes") or [])})
    if item_type == "web_search":
        return ToolUse(id=item_id, name="web_search", input={"query": as_str(item.get("query"))})
    return None


def codex_tool_result(item: Mapping[str, Any]) -> ToolResult:
    """The ``ToolResult`` of a finished tool item (``failed``/``declined`` or a non-zero exit: an error)."""
    item_type = item.get("type")
    item_id = as_str(item.get("id"))
    status = as_str(item.get("status"))
    failed = status in ("failed", "declined")
    if item_type == "command_execution":
        exit_code = item.get("exit_code")
        is_error = failed or (isinstance(exit_code, int) and exit_code != 0)
        output = as_str(item.get("aggregated_output"))
        if status == "declined" and not output:
            output = "the command was declined"
        return ToolResult(tool_use_id=item_id, content=output, is_error=is_error)
    if item_type == "mcp_tool_call":
        error = as_dict(item.get("error"))
        if error:
            return ToolResult(tool_use_id=item_id, content=as_str(error.get("message")), is_error=True)
        result = as_dict(item.get("result"))
        content = result.get("content")
        return ToolResult(
            tool_use_id=item_id, content=content if isinstance(content, list) else "", is_error=failed
        )
    if item_type == "file_change":
        changes = [
            f"{as_str(as_dict(change).get('kind'))} {as_str(as_dict(change).get('path'))}"
            for change in item.get("changes") or []
        ]
        return ToolResult(tool_use_id=item_id, content="\n".join(changes), is_error=failed)
    return ToolResult(tool_use_id=item_id, content=as_str(item.get("query")), is_error=failed)


def finished_tool_events(item: Mapping[str, Any], started: set[str]) -> list[AgentEvent]:
    """A finished tool item's ``ToolResult``, after its ``ToolUse`` when none was sent at its start."""
    events: list[AgentEvent] = []
    item_id = as_str(item.get("id"))
    if item_id not in started:
        tool_use = codex_tool_use(item)
        if tool_use is not None:
            events.append(tool_use)
    started.discard(item_id)
    events.append(codex_tool_result(item))
    return events


class CodexEventDecoder(JsonLineDecoder[AgentEvent]):
    """Decodes the stdout of one ``codex exec --json`` process (one turn).

    ``model`` and ``cli_version`` fill ``AgentStarted`` (codex prints neither). After ``turn.completed``, ``thread_usage`` holds the
    thread's totals, to pass as ``previous_thread_usage`` to the next turn's decoder.
    """

    def __init__(
        self,
        *,
        model: str = "",
        cli_version: str = "",
        previous_thread_usage: Mapping[str, int] | None = None,
    ) -> None:
        self.model = model
        self.cli_version = cli_version
        self.previous_thread_usage = dict(previous_thread_usage or {})
        self.thread_id = ""
        self.thread_usage: dict[str, int] = dict(self.previous_thread_usage)
        self.ended: TurnEnded | None = None
        self._started_items: set[str] = set()
        self._last_message = ""

    def decode_message(self, message: dict[str, Any]) -> list[AgentEvent]:
        """Events for one parsed JSON object."""
        message_type = as_str(message.get("type"))
        if message_type == "item.completed":
            return self._item_completed(as_dict(message.get("item")), message)
        if message_type == "item.started":
            return self._item_started(as_dict(message.get("item")), message)
        if message_type == "thread.started":
            self.thread_id = as_str(message.get("thread_id"))
            return [AgentStarted(session_id=self.thread_id, model=self.model, cli_version=self.cli_version)]
        if message_type == "turn.completed":
            return [self._turn_completed(as_dict(message.get("usage")))]
        if message_type == "turn.failed":
            error_message = as_str(as_dict(message.get("error")).get("message")) or "the turn failed"
            self.ended = TurnEnded(
                subtype="error",
                is_error=True,
                result=error_message,
                session_id=self.thread_id,
                terminal_reason="turn_failed",
                errors=(error_message,),
            )
            return [self.ended]
        if message_type == "error":
            return [AgentError(as_str(message.get("message")) or "codex reported an error", code="CLI_ERROR")]
        return [RawEvent(type=message_type or "unknown", data=message)]

    def _item_started(self, item: dict[str, Any], message: dict[str, Any]) -> list[AgentEvent]:
        tool_use = codex_tool_use(item)
        if tool_use is None:
            return [RawEvent(type="item.started", subtype=as_str(item.get("type")), data=message)]
        self._started_items.add(tool_use.id)
        return [tool_use]

    def _item_completed(self, item: dict[str, Any], message: dict[str, Any]) -> list[AgentEvent]:
        item_type = as_str(item.get("type"))
        if item_type == "agent_message":
            self._last_message = as_str(item.get("text"))
            return [TextDelta(self._last_message)]
        if item_type == "reasoning":
            return [ThinkingDelta(as_str(item.get("text")))]
        if item_type == "error":
            return [AgentError(as_str(item.get("message")) or "codex reported an error", code="CLI_WARNING")]
        if item_type not in _TOOL_ITEM_TYPES:
            return [RawEvent(type="item.completed", subtype=item_type, data=message)]
        return finished_tool_events(item, self._started_items)

    def _turn_completed(self, usage: dict[str, Any]) -> TurnEnded:
        totals = {key: as_int(usage.get(key)) for key in USAGE_KEYS}
        for key, value in usage.items():
            if key not in totals and isinstance(value, int):
                totals[key] = value
        this_turn: dict[str, Any] = {
            key: max(0, value - self.previous_thread_usage.get(key, 0)) for key, value in totals.items()
        }
        this_turn["thread_total"] = dict(totals)
        self.thread_usage = totals
        self.ended = TurnEnded(
            subtype="success",
            is_error=False,
            result=self._last_message,
            session_id=self.thread_id,
            usage=this_turn,
            terminal_reason="completed",
        )
        return self.ended

    def verdict(self, exit_code: int | None, *, cancel_requested: bool = False) -> TurnVerdict:
        """The turn's outcome once the process exited: the terminal line decides, then the exit.

        No ``turn.completed``/``turn.failed``: cancelled when we asked (SIGINT gives exit 1 and no
        line), else failed (crash, exit 101 after stdout closed, killed by our time bound).
        """
        if self.ended is not None:
            if self.ended.is_error:
                return TurnVerdict("error", self.ended.result)
            return TurnVerdict("completed", "")
        if cancel_requested:
            return TurnVerdict("cancelled", f"codex stopped after the cancel (exit code {exit_code})")
        return TurnVerdict("failed", f"codex exited without ending the turn (exit code {exit_code})")
