"""Pure codec of ``gemini -p … --output-format stream-json``: stdout lines in, ``AgentEvent`` out.

Where it sits: beside ``claude/codec.py`` and ``codex/exec_codec.py``; the runner (process per turn) feeds
it each stdout line of one gemini process and, when the process ends, asks ``verdict`` how the
turn ended. No I/O, no clock: tested on lines recorded from the real gemini-cli
(``tests/fixtures/gemini_real``).

How data flows (one decoder per process, i.e. per turn)::

    init {session_id, model}                  -> AgentStarted
    message role=user                         -> RawEvent (the prompt echoed)
    message role=assistant [delta]            -> TextDelta (token chunks)
    tool_use {tool_name, tool_id, parameters} -> ToolUse (``mcp_<server>_<tool>`` named
                                                 ``mcp__<server>__<tool>`` for a known server)
    tool_result {tool_id, status, output|error} -> ToolResult (is_error when status is error; an MCP
                                                 tool's error: error.message, which holds the tool's text)
    error {severity, message}                 -> AgentError CLI_WARNING / CLI_ERROR (non-fatal:
                                                 loop detection, max turns, a stream without finish)
    result {status, error?, stats}            -> TurnEnded (is_error unless status is success)
    anything else                             -> RawEvent, never dropped

The exit code does not tell success (0 after an error ``result``; 144/145 for HTTP 400/401;
0 and no ``result`` when signalled): ``verdict`` judges by the ``result`` line first. The
thinking parts the model streams are not in gemini's stream-json: no ``ThinkingDelta`` comes.
Gemini reports no cost: ``total_cost_usd`` stays 0; ``result.stats`` are per process (per turn).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    RawEvent,
    TextDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.protocols.codec import JsonLineDecoder, TurnVerdict, as_dict, as_int, as_str

__all__ = ["GeminiEventDecoder", "canonical_tool_name"]


def canonical_tool_name(native_name: str, mcp_server_names: Iterable[str]) -> str:
    """``mcp_crm_search_accounts`` -> ``mcp__crm__search_accounts`` when ``crm`` is a known server.

    The longest matching server name wins (``crm_eu`` before ``crm``); other names are kept.
    """
    for server in sorted(mcp_server_names, key=len, reverse=True):
        prefix = f"mcp_{server}_"
        if native_name.startswith(prefix) and len(native_name) > len(prefix):
            return f"mcp__{server}__{native_name[len(prefix) :]}"
    return native_name


class GeminiEventDecoder(JsonLineDecoder[AgentEvent]):
    """Decodes the stdout of one ``gemini -o stream-json`` process (one turn).

    ``mcp_server_names`` are the servers of the runner's settings (for canonical tool names);
    ``cli_version`` fills ``AgentStarted`` (gemini does not print it).
    """

    def __init__(self, *, mcp_server_names: Iterable[str] = (), cli_version: str = "") -> None:
        self.mcp_server_names = tuple(mcp_server_names)
        self.cli_version = cli_version
        self.session_id = ""
        self.ended: TurnEnded | None = None
        self._answer_parts: list[str] = []

    def decode_message(self, message: dict[str, Any]) -> list[AgentEvent]:
        """Events for one parsed JSON object."""
        message_type = as_str(message.get("type"))
        if message_type == "message":
            role = as_str(message.get("role"))
            if role == "assistant":
                text = as_str(message.get("content"))
                self._answer_parts.append(text)
                return [TextDelta(text)]
            return [RawEvent(type="message", subtype=role, data=message)]
        if message_type == "tool_use":
            return [
                ToolUse(
                    id=as_str(message.get("tool_id")),
                    name=canonical_tool_name(as_str(message.get("tool_name")), self.mcp_server_names),
                    input=as_dict(message.get("parameters")),
                )
            ]
        if message_type == "tool_result":
            error = as_dict(message.get("error"))
            output = message.get("output")
            content = as_str(output) if output is not None else as_str(error.get("message"))
            if as_str(error.get("type")) == "mcp_tool_error" and as_str(error.get("message")):
                # an MCP tool's own error: ``output`` only says "MCP tool 'x' reported an error.", the
                # message holds what the tool said (and what the model reads)
                content = as_str(error.get("message"))
            return [
                ToolResult(
                    tool_use_id=as_str(message.get("tool_id")),
                    content=content,
                    is_error=as_str(message.get("status")) != "success",
                )
            ]
        if message_type == "init":
            self.session_id = as_str(message.get("session_id"))
            return [
                AgentStarted(
                    session_id=self.session_id,
                    model=as_str(message.get("model")),
                    cli_version=self.cli_version,
                )
            ]
        if message_type == "error":
            code = "CLI_WARNING" if as_str(message.get("severity")) == "warning" else "CLI_ERROR"
            return [AgentError(as_str(message.get("message")) or "gemini reported an error", code=code)]
        if message_type == "result":
            return [self._result(message)]
        return [RawEvent(type=message_type or "unknown", data=message)]

    def _result(self, message: dict[str, Any]) -> TurnEnded:
        status = as_str(message.get("status"))
        error_message = as_str(as_dict(message.get("error")).get("message"))
        is_error = status != "success"
        if is_error and not error_message:
            error_message = "gemini ended the turn with an error"
        stats = as_dict(message.get("stats"))
        self.ended = TurnEnded(
            subtype=status or "unknown",
            is_error=is_error,
            result=error_message if is_error else "".join(self._answer_parts),
            session_id=self.session_id,
            usage=stats,
            duration_ms=as_int(stats.get("duration_ms")),
            terminal_reason="completed"
            if not is_error
            else as_str(as_dict(message.get("error")).get("type")) or "error",
            errors=(error_message,) if is_error else (),
        )
        return self.ended

    def verdict(self, exit_code: int | None, *, cancel_requested: bool = False) -> TurnVerdict:
        """The turn's outcome once the process exited: the ``result`` line decides, not the exit code.

        No ``result``: cancelled when we signalled it (gemini then exits 0 with no line), else
        failed (start-up refusals 41/42/55 write only to stderr).
        """
        if self.ended is not None:
            if self.ended.is_error:
                return TurnVerdict("error", self.ended.result)
            return TurnVerdict("completed", "")
        if cancel_requested:
            return TurnVerdict("cancelled", f"gemini stopped after the cancel (exit code {exit_code})")
        return TurnVerdict("failed", f"gemini exited without a result line (exit code {exit_code})")
