"""One user turn of the stand-in: the scripted API round trips, tools, permission prompts and interrupts.

Where it sits: between ``claude_standin`` (the process: stdin, control requests, signals) and
``standin_wire`` (the shape of each line). ``TurnRunner.run`` plays one user message: ``system/init``,
``system/status``, one or more streamed "API responses" (``stream_event`` lines only with
``--include-partial-messages``), tool uses with their ``user`` tool_result lines, then one ``result``.
The process cancels the running task to interrupt it; ``run`` then writes the abort sequence observed
on the real CLI (partial assistant, ``[Request interrupted by user]`` marker, ``error_during_execution``).

Replies are deterministic and say they come from a stand-in. Directives (``standin_directives``) choose
the script; everything else gets the echo reply.

Data flow: user message -> ``ParsedMessage`` -> round trips -> ``SessionState.emit(dict)`` -> stdout;
the transcript (``SessionStore``) receives the user text and the final reply.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from elynav_nb.sandbox import standin_wire as wire
from elynav_nb.sandbox.standin_directives import Directive, ParsedMessage, parse_message
from elynav_nb.sandbox.standin_mcp import McpHub
from elynav_nb.sandbox.standin_sessions import SessionStore
from elynav_nb.sandbox.standin_tools import BashTool, bash_result_content, decide_permission

__all__ = ["SessionState", "TurnRunner", "TurnState", "message_text"]

STANDIN_TAG = "[elynav stand-in]"
ECHO_INTRO = "I am not Claude: a local stand-in that speaks the claude stream-json protocol."
WORDS_PER_DELTA = 3
REJECTED_TOOL_TEXT = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, "
    "the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how "
    "to proceed."
)
STOPPED_WHILE_RUNNING = (
    " Correction to the text above: this call was stopped while running, not refused before it ran."
)
NOT_LOGGED_IN = "Not logged in · Please run /login"
FLOOD_BATCH_LINES = 2000


@dataclass
class SessionState:
    """What persists across the turns of one stand-in process."""

    style: wire.WireStyle
    session_id: str
    cwd: str
    model: str
    permission_mode: str
    base_tools: list[str]
    mcp_tools_need_listing: bool
    agents: list[str]
    memory_directory: str
    additional_directories: list[str]
    include_partial_messages: bool
    replay_user_messages: bool
    forward_subagent_text: bool
    prompt_over_stdio: bool
    allowed_rules: list[str]
    disallowed_rules: list[str]
    max_turns: int | None
    hub: McpHub
    store: SessionStore
    emit: Callable[[dict[str, Any]], None]
    emit_bytes: Callable[[bytes], None]
    queued_count: Callable[[], int]
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    result_index: int = 0
    last_result_is_error: bool | None = None
    pending_permissions: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)

    def reported_permission_mode(self) -> str:
        return "default" if self.permission_mode == "manual" else self.permission_mode

    def init_tools(self) -> list[str]:
        tools = list(self.base_tools)
        for mcp_tool in self.hub.tool_names():
            if self.mcp_tools_need_listing and mcp_tool not in self.base_tools:
                continue
            if mcp_tool not in tools:
                tools.append(mcp_tool)
        return tools


@dataclass
class TurnState:
    """The progress of the running turn, read by the interrupt path."""

    started: float
    api_calls: int = 0
    api_milliseconds: int = 0
    ttft_ms: int | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    begun_message_ids: list[str] = field(default_factory=list)
    permission_denials: list[dict[str, Any]] = field(default_factory=list)
    stream_open: bool = False
    open_block_index: int | None = None
    current_message_id: str = ""
    current_parent: str | None = None
    streamed_text: str = ""
    tool_use_id: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_name: str = ""
    tool_running: bool = False
    pending_permission_id: str | None = None
    bash: BashTool | None = None
    subagents: int = 0
    interrupted: bool = False


def message_text(content: Any) -> str:
    """The text of a user ``message.content``: a string, or the text blocks of a list."""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                pieces.append(str(block.get("text", "")))
    return "\n".join(pieces)


def split_into_deltas(text: str) -> list[str]:
    """Word groups (three words each, spaces kept) so the reply streams as several deltas."""
    words = text.split(" ")
    deltas: list[str] = []
    for start in range(0, len(words), WORDS_PER_DELTA):
        group = " ".join(words[start : start + WORDS_PER_DELTA])
        if start + WORDS_PER_DELTA < len(words):
            group += " "
        deltas.append(group)
    return [delta for delta in deltas if delta] or [text]


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class TurnRunner:
    """Plays one user message. ``state`` is public so the process can route interrupts and answers."""

    def __init__(self, session: SessionState, user_message: dict[str, Any]) -> None:
        self.session = session
        self.user_message = user_message
        self.state = TurnState(started=time.monotonic())
        self.interrupt_by_signal = False

    # ------------------------------------------------------------------ entry point

    async def run(self) -> None:
        session = self.session
        content = self.user_message.get("content", "") if isinstance(self.user_message, dict) else ""
        user_text = message_text(content)
        parsed = parse_message(user_text)
        await session.hub.wait_ready()
        earlier_turns = session.store.earlier_user_turns()
        session.store.append("user", user_text)
        session.emit(self._init_line())
        try:
            final_text = await self._play(parsed, earlier_turns)
        except asyncio.CancelledError:
            if not self.state.interrupted:
                raise
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            self._write_abort()
            return
        if final_text is not None:
            session.store.append("assistant", final_text)

    def mark_interrupted(self) -> None:
        self.state.interrupted = True

    # ------------------------------------------------------------------ the script

    async def _play(self, parsed: ParsedMessage, earlier_turns: int) -> str | None:
        session = self.session
        if parsed.has("no-login"):
            self._status()
            return self._synthetic_error_turn(NOT_LOGGED_IN, "authentication_failed", None)
        api_error = parsed.first("api-error")
        if api_error is not None:
            return await self._api_error_turn(int(api_error.number))
        summaries: list[str] = []
        thinking_pending = parsed.has("think")
        max_turns = session.max_turns
        tool_directives = parsed.tool_directives()
        if parsed.has("max-turns"):
            max_turns = 1
            tool_directives = tool_directives or [Directive("bash", "echo 'max turns reached'")]
        for directive in tool_directives:
            if max_turns is not None and self.state.api_calls >= max_turns:
                self._max_turns_result(max_turns)
                return None
            summary = await self._tool_round_trip(directive, thinking_pending)
            thinking_pending = False
            summaries.append(summary)
        if max_turns is not None and self.state.api_calls >= max_turns:
            self._max_turns_result(max_turns)
            return None
        final_text = self._final_reply(parsed, summaries, earlier_turns)
        flood = parsed.first("flood")
        slow = parsed.first("slow")
        self._status()
        if flood is not None:
            final_text = await self._stream_flood(int(flood.number))
        else:
            blocks: list[dict[str, Any]] = []
            if thinking_pending:
                blocks.append({"type": "thinking", "thinking": f"{STANDIN_TAG} Thinking about the message."})
            blocks.append({"type": "text", "text": final_text})
            await self._stream_response(blocks, "end_turn", seconds=slow.number if slow is not None else 0.0)
        self._success_result(final_text)
        return final_text

    def _final_reply(self, parsed: ParsedMessage, summaries: list[str], earlier_turns: int) -> str:
        parts = [f"{STANDIN_TAG} {summary}" for summary in summaries]
        for problem in parsed.problems():
            parts.append(f"{STANDIN_TAG} {problem}.")
        if parsed.text or not parts:
            memory = ""
            if earlier_turns:
                plural = "turn" if earlier_turns == 1 else "turns"
                memory = f" I remember {earlier_turns} earlier {plural} of this session."
            said = parsed.text if parsed.text else "(nothing but directives)"
            parts.append(f"{STANDIN_TAG} {ECHO_INTRO}{memory} You said: {said}")
        return "\n".join(parts)

    # ------------------------------------------------------------------ lines shared by every turn

    def _init_line(self) -> dict[str, Any]:
        session = self.session
        servers = [(state.config.name, state.status) for state in session.hub.states]
        return wire.build_init(
            session.style,
            cwd=session.cwd,
            session_id=session.session_id,
            tools=session.init_tools(),
            mcp_servers=servers,
            model=session.model,
            permission_mode=session.reported_permission_mode(),
            agents=session.agents,
            memory_directory=session.memory_directory,
            additional_directories=session.additional_directories,
        )

    def _status(self) -> None:
        session = self.session
        session.emit(wire.build_status(session.style, session.session_id))
        if session.replay_user_messages and self.state.api_calls == 0:
            session.emit(wire.build_replay(session.session_id, self.user_message))

    def _event(self, event: dict[str, Any], ttft_ms: int | None = None) -> None:
        session = self.session
        if not session.include_partial_messages:
            return
        session.emit(
            wire.build_stream_event(
                session.style,
                session.session_id,
                self.state.current_message_id,
                event,
                parent_tool_use_id=self.state.current_parent,
                ttft_ms=ttft_ms,
            )
        )

    # ------------------------------------------------------------------ streamed API responses

    def _begin_response(self, parent: str | None = None) -> None:
        state = self.state
        state.api_calls += 1
        state.current_message_id = wire.new_message_id()
        state.current_parent = parent
        state.begun_message_ids.append(state.current_message_id)
        ttft = 12 + 3 * state.api_calls
        if state.ttft_ms is None:
            state.ttft_ms = ttft
        state.api_milliseconds += ttft + 10
        state.input_tokens += estimate_tokens(json.dumps(self.user_message))
        state.stream_open = True
        start = {
            "type": "message_start",
            "message": {
                "id": state.current_message_id,
                "type": "message",
                "role": "assistant",
                "model": self.session.model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": wire.assistant_usage(estimate_tokens(json.dumps(self.user_message))),
            },
        }
        self._event(start, ttft_ms=ttft)

    def _end_response(self, stop_reason: str, output_text: str) -> None:
        output_tokens = estimate_tokens(output_text)
        self.state.output_tokens += output_tokens
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
        self._event(delta)
        self._event({"type": "message_stop"})
        self.state.stream_open = False

    def _assistant_line(
        self,
        block: dict[str, Any],
        *,
        aborted: bool = False,
        tool_use_meta: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        session = self.session
        return wire.build_assistant(
            session.style,
            session.session_id,
            self.state.current_message_id,
            session.model,
            block,
            input_tokens=estimate_tokens(json.dumps(self.user_message)),
            parent_tool_use_id=self.state.current_parent,
            aborted=aborted,
            tool_use_meta=tool_use_meta,
        )

    async def _stream_response(
        self, blocks: list[dict[str, Any]], stop_reason: str, *, seconds: float = 0.0
    ) -> None:
        """One API response: message_start, each block (deltas, assistant line, stop), message_delta, message_stop."""
        self._begin_response()
        output_text = ""
        delta_count = 0
        for block in blocks:
            if block["type"] == "text":
                delta_count += len(split_into_deltas(block["text"]))
        pause = seconds / delta_count if seconds > 0 and delta_count else 0.0
        for index, block in enumerate(blocks):
            if block["type"] == "thinking":
                await self._stream_thinking(index, block["thinking"])
            elif block["type"] == "text":
                await self._stream_text(index, block["text"], pause)
                output_text += block["text"]
        self._end_response(stop_reason, output_text)

    async def _stream_thinking(self, index: int, thinking: str) -> None:
        signature = "ZWx5bmF2LXN0YW5kaW4="
        self._event(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            }
        )
        self._event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "thinking_delta", "thinking": thinking},
            }
        )
        self._event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "signature_delta", "signature": signature},
            }
        )
        self.session.emit(
            self._assistant_line({"type": "thinking", "thinking": thinking, "signature": signature})
        )
        self._event({"type": "content_block_stop", "index": index})
        await asyncio.sleep(0)

    async def _stream_text(self, index: int, text: str, pause: float) -> None:
        state = self.state
        state.open_block_index = index
        state.streamed_text = ""
        self._event(
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        )
        for delta in split_into_deltas(text):
            if pause > 0:
                await asyncio.sleep(pause)
            else:
                await asyncio.sleep(0)
            state.streamed_text += delta
            self._event(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": delta},
                }
            )
        self.session.emit(self._assistant_line({"type": "text", "text": text}))
        state.open_block_index = None
        state.streamed_text = ""
        self._event({"type": "content_block_stop", "index": index})

    async def _stream_flood(self, count: int) -> str:
        """``count`` text deltas written in batches from a precomputed line template."""
        session = self.session
        state = self.state
        self._begin_response()
        index = 0
        state.open_block_index = index
        self._event(
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        )
        pieces: list[str] = []
        prefix, middle, suffix = wire.text_delta_line_template(
            session.style, session.session_id, state.current_message_id, index
        )
        batch: list[str] = []
        for number in range(count):
            piece = f"t{number} "
            pieces.append(piece)
            if session.include_partial_messages:
                batch.append(prefix + '"' + piece + '"' + middle + wire.new_uuid() + suffix)
            if len(pieces) % FLOOD_BATCH_LINES == 0:
                if batch:
                    session.emit_bytes("".join(batch).encode("utf-8"))
                    batch = []
                state.streamed_text = "".join(pieces)
                await asyncio.sleep(0)
        if batch:
            session.emit_bytes("".join(batch).encode("utf-8"))
        text = "".join(pieces)
        session.emit(self._assistant_line({"type": "text", "text": text}))
        state.open_block_index = None
        state.streamed_text = ""
        self._event({"type": "content_block_stop", "index": index})
        self._end_response("end_turn", text)
        return text

    # ------------------------------------------------------------------ tool round trips

    async def _tool_round_trip(self, directive: Directive, with_thinking: bool) -> str:
        """API response with a tool_use block, the permission step, the tool, its tool_result; returns a summary."""
        tool_name, tool_input, mcp_server = self._tool_call_for(directive)
        state = self.state
        self._status()
        self._begin_response()
        block_index = 0
        if with_thinking:
            await self._stream_thinking(0, f"{STANDIN_TAG} Deciding which tool to use.")
            block_index = 1
        tool_use_id = wire.new_tool_use_id()
        state.tool_use_id = tool_use_id
        state.tool_input = tool_input
        state.tool_name = tool_name
        self._event(
            {
                "type": "content_block_start",
                "index": block_index,
                "content_block": {"type": "tool_use", "id": tool_use_id, "name": tool_name, "input": {}},
            }
        )
        input_json = json.dumps(tool_input)
        for start in range(0, len(input_json), 16):
            self._event(
                {
                    "type": "content_block_delta",
                    "index": block_index,
                    "delta": {"type": "input_json_delta", "partial_json": input_json[start : start + 16]},
                }
            )
        meta = None
        if mcp_server is not None and self.session.style.modern:
            server_state = self.session.hub.find(mcp_server)
            titles = server_state.tool_titles if server_state is not None else {}
            meta = [
                {
                    "id": tool_use_id,
                    "display_name": titles.get(directive.tool, directive.tool),
                    "server_display_name": mcp_server,
                    "tool_name": directive.tool,
                }
            ]
        tool_block = {"type": "tool_use", "id": tool_use_id, "name": tool_name, "input": tool_input}
        self.session.emit(self._assistant_line(tool_block, tool_use_meta=meta))
        self._event({"type": "content_block_stop", "index": block_index})
        self._end_response("tool_use", input_json)
        await asyncio.sleep(0)
        allowed_input, decision_meta = await self._permission_step(
            directive, tool_name, tool_input, mcp_server
        )
        if allowed_input is None:
            state.tool_use_id = None
            return f"The {tool_name} tool use was denied: {decision_meta.get('message', '')}"
        state.tool_running = True
        summary = await self._run_tool(directive, tool_name, allowed_input, decision_meta)
        state.tool_running = False  # left True on cancellation: the abort path reports a stopped tool
        state.tool_use_id = None
        return summary

    def _tool_call_for(self, directive: Directive) -> tuple[str, dict[str, Any], str | None]:
        if directive.name == "bash":
            return (
                "Bash",
                {
                    "command": directive.argument,
                    "description": "Run the command from the @standin bash directive",
                },
                None,
            )
        if directive.name == "ask":
            return (
                "Bash",
                {
                    "command": f"elynav ask {shlex.quote(directive.agent)} {shlex.quote(directive.argument)}",
                    "description": f"Ask the agent {directive.agent} through elynav",
                },
                None,
            )
        if directive.name == "sleep-tool":
            seconds = f"{directive.number:g}"
            return "Bash", {"command": f"sleep {seconds}", "description": f"Sleep {seconds} seconds"}, None
        if directive.name == "big-result":
            size = int(directive.number) + 1
            return (
                "Bash",
                {"command": f"head -c {size} /dev/zero | tr '\\0' x", "description": f"Print {size} bytes"},
                None,
            )
        if directive.name == "subagent":
            prompt = directive.argument or "Say hello from the subagent."
            return (
                "Task",
                {"description": "Stand-in subagent", "prompt": prompt, "subagent_type": "general-purpose"},
                None,
            )
        return f"mcp__{directive.server}__{directive.tool}", dict(directive.arguments), directive.server

    async def _permission_step(
        self, directive: Directive, tool_name: str, tool_input: dict[str, Any], mcp_server: str | None
    ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """``(input to run, tool_result_meta)``, or ``(None, meta with message)`` when denied."""
        session = self.session
        state = self.state
        command = tool_input.get("command") if tool_name == "Bash" else None
        if directive.name in ("sleep-tool", "big-result", "subagent"):
            return tool_input, {
                "permission_decision": {
                    "decision": "accept",
                    "source": "config",
                    "reason_type": "subcommandResults",
                }
            }
        decision = decide_permission(
            tool_name,
            command if isinstance(command, str) else None,
            permission_mode=session.permission_mode,
            allowed_rules=session.allowed_rules,
            disallowed_rules=session.disallowed_rules,
            prompt_over_stdio=session.prompt_over_stdio,
        )
        if decision.behavior == "allow":
            return tool_input, {
                "permission_decision": {
                    "decision": "accept",
                    "source": "config",
                    "reason_type": decision.reason_type,
                }
            }
        if decision.behavior == "deny":
            if session.style.modern:
                session.emit(
                    wire.build_permission_denied(
                        session.session_id, tool_name, state.tool_use_id or "", decision.message
                    )
                )
            self._write_denied(
                tool_name,
                tool_input,
                decision.message,
                {
                    "non_execution_kind": "user-rejected",
                    "permission_decision": {"decision": "reject", "source": "config"},
                },
            )
            return None, {"message": decision.message}
        request_id = wire.new_uuid()
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        session.pending_permissions[request_id] = answer
        state.pending_permission_id = request_id
        description = tool_input.get("description") if tool_name == "Bash" else None
        suggestions: list[dict[str, Any]]
        if tool_name == "Bash":
            suggestions = [
                {
                    "type": "addRules",
                    "rules": [{"toolName": "Bash", "ruleContent": command}],
                    "behavior": "allow",
                    "destination": "localSettings",
                },
                {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
            ]
        else:
            suggestions = [
                {
                    "type": "addRules",
                    "rules": [{"toolName": tool_name}],
                    "behavior": "allow",
                    "destination": "localSettings",
                }
            ]
        display_name = tool_name
        if mcp_server is not None:
            server_state = session.hub.find(mcp_server)
            display_name = (
                server_state.tool_titles.get(directive.tool, directive.tool)
                if server_state
                else directive.tool
            )
        session.emit(
            wire.build_can_use_tool_request(
                request_id,
                tool_name=tool_name,
                display_name=display_name,
                tool_input=tool_input,
                description=description if isinstance(description, str) else None,
                permission_suggestions=suggestions,
                tool_use_id=state.tool_use_id or "",
                mcp_server_name=mcp_server,
            )
        )
        try:
            response = await answer  # no timeout, like the real CLI
        finally:
            session.pending_permissions.pop(request_id, None)
        state.pending_permission_id = None  # kept set on cancellation: the abort path reports the denial
        if response.get("behavior") == "allow":
            updated = response.get("updatedInput")
            return (updated if isinstance(updated, dict) else tool_input), {
                "permission_decision": {"decision": "accept", "source": "user_temporary"}
            }
        message = str(response.get("message") or "The user denied this tool use.")
        self._write_denied(
            tool_name,
            tool_input,
            message,
            {
                "non_execution_kind": "permission-rule",
                "permission_decision": {"decision": "reject", "source": "user_reject"},
            },
        )
        return None, {"message": message}

    def _write_denied(
        self, tool_name: str, tool_input: dict[str, Any], message: str, meta: dict[str, Any]
    ) -> None:
        session = self.session
        tool_use_id = self.state.tool_use_id or ""
        self.state.permission_denials.append(
            {"tool_name": tool_name, "tool_use_id": tool_use_id, "tool_input": tool_input}
        )
        session.emit(
            wire.build_tool_result(
                session.style,
                session.session_id,
                tool_use_id,
                message,
                is_error=True,
                tool_use_result="Error: " + message,
                result_meta=meta,
            )
        )

    async def _run_tool(
        self, directive: Directive, tool_name: str, tool_input: dict[str, Any], meta: dict[str, Any]
    ) -> str:
        session = self.session
        tool_use_id = self.state.tool_use_id or ""
        if directive.name == "subagent":
            return await self._run_subagent(tool_use_id, tool_input)
        if tool_name == "Bash":
            bash = BashTool()
            self.state.bash = bash
            command = str(tool_input.get("command", ""))
            try:
                outcome = await bash.run(command, session.cwd)
            finally:
                if not self.state.interrupted:
                    self.state.bash = None
            content, is_error, structured = bash_result_content(outcome)
            session.emit(
                wire.build_tool_result(
                    session.style,
                    session.session_id,
                    tool_use_id,
                    content,
                    is_error=is_error,
                    tool_use_result=structured,
                    result_meta=meta,
                )
            )
            if directive.name == "big-result":
                return f"The Bash tool printed {len(outcome.output)} bytes."
            return f"The Bash command exited with code {outcome.exit_code}."
        outcome_mcp = await session.hub.call_tool(directive.server, directive.tool, tool_input)
        self._write_mcp_result(
            tool_use_id,
            outcome_mcp.content,
            outcome_mcp.structured_content,
            outcome_mcp.is_error,
            outcome_mcp.server_info,
            meta,
        )
        texts = [str(block.get("text", "")) for block in outcome_mcp.content if block.get("type") == "text"]
        verdict = "failed" if outcome_mcp.is_error else "returned"
        compact = " ".join(" ".join(texts).split())
        if len(compact) > 200:
            compact = compact[:199] + "…"
        return f"The tool {tool_name} {verdict}: {compact}"

    def _write_mcp_result(
        self,
        tool_use_id: str,
        content: list[dict[str, Any]],
        structured: dict[str, Any] | None,
        is_error: bool,
        server_info: dict[str, Any] | None,
        meta: dict[str, Any],
    ) -> None:
        """2.1.332 sends structured content as a compact JSON string; otherwise the block list, as 2.1.197 does."""
        session = self.session
        if session.style.modern and structured is not None and not is_error:
            text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
            result: dict[str, Any] = {"content": text}
            if server_info is not None:
                result["_meta"] = {"io.modelcontextprotocol/serverInfo": server_info}
            result["structuredContent"] = structured
            session.emit(
                wire.build_tool_result(
                    session.style,
                    session.session_id,
                    tool_use_id,
                    text,
                    is_error=False,
                    tool_use_result=result,
                    result_meta=meta,
                    include_is_error=False,
                )
            )
            return
        if is_error:
            texts = " ".join(str(block.get("text", "")) for block in content if block.get("type") == "text")
            session.emit(
                wire.build_tool_result(
                    session.style,
                    session.session_id,
                    tool_use_id,
                    texts,
                    is_error=True,
                    tool_use_result="Error: " + texts,
                    result_meta=meta,
                )
            )
            return
        session.emit(
            wire.build_tool_result(
                session.style,
                session.session_id,
                tool_use_id,
                content,
                is_error=False,
                tool_use_result=content,
                result_meta=meta,
                include_is_error=False,
            )
        )

    async def _run_subagent(self, tool_use_id: str, tool_input: dict[str, Any]) -> str:
        """The Task tool: task_started, the subagent's prompt line, its reply, task_notification, tool_result."""
        session = self.session
        state = self.state
        prompt = str(tool_input.get("prompt", ""))
        task_id = "a" + wire.new_uuid().replace("-", "")[:16]
        session.emit(
            wire.build_system_line(
                session.session_id,
                "task_started",
                {
                    "task_id": task_id,
                    "tool_use_id": tool_use_id,
                    "description": tool_input.get("description", ""),
                    "subagent_type": "general-purpose",
                    "task_type": "local_agent",
                    "prompt": prompt,
                },
            )
        )
        prompt_line = wire.build_interrupt_marker(session.session_id, prompt)
        prompt_line["parent_tool_use_id"] = tool_use_id
        prompt_line["subagent_type"] = "general-purpose"
        prompt_line["task_description"] = tool_input.get("description", "")
        session.emit(prompt_line)
        reply = f"{STANDIN_TAG} Subagent here. You asked: {prompt}"
        state.subagents += 1
        saved_message_id = state.current_message_id
        state.current_parent = tool_use_id
        if session.forward_subagent_text:
            state.current_message_id = wire.new_message_id()
            session.emit(self._assistant_line({"type": "text", "text": reply}))
        state.current_parent = None
        state.current_message_id = saved_message_id
        await asyncio.sleep(0)
        session.emit(
            wire.build_system_line(
                session.session_id,
                "task_notification",
                {
                    "task_id": task_id,
                    "tool_use_id": tool_use_id,
                    "status": "completed",
                    "output_file": "",
                    "summary": tool_input.get("description", ""),
                    "usage": {"total_tokens": estimate_tokens(reply), "tool_uses": 0, "duration_ms": 1},
                },
            )
        )
        content = [{"type": "text", "text": reply}]
        structured = {
            "status": "completed",
            "prompt": prompt,
            "agentId": task_id,
            "agentType": "general-purpose",
            "content": content,
            "totalDurationMs": 1,
            "totalTokens": estimate_tokens(reply),
            "totalToolUseCount": 0,
        }
        session.emit(
            wire.build_tool_result(
                session.style,
                session.session_id,
                tool_use_id,
                content,
                is_error=False,
                tool_use_result=structured,
                result_meta={"permission_decision": {"decision": "accept", "source": "config"}},
                include_is_error=False,
            )
        )
        return f"The subagent answered: {reply}"

    # ------------------------------------------------------------------ error turns

    def _synthetic_error_turn(self, text: str, error: str, status: int | None) -> str:
        session = self.session
        session.emit(wire.build_synthetic_assistant(session.style, session.session_id, text, error))
        self.state.api_calls = 1
        self._emit_result(
            subtype="success",
            is_error=True,
            stop_reason="stop_sequence",
            terminal_reason="api_error",
            result_text=text,
            errors=None,
            api_error_status=status,
            synthetic=True,
        )
        return text

    async def _api_error_turn(self, status: int) -> str:
        session = self.session
        self._status()
        retried = status == 429 or status >= 500
        if retried:
            for attempt in (1, 2):
                await asyncio.sleep(0.05)
                session.emit(
                    wire.build_system_line(
                        session.session_id,
                        "api_retry",
                        {
                            "attempt": attempt,
                            "max_retries": 2,
                            "retry_delay_ms": 50,
                            "error_status": status,
                            "error": "overloaded" if status == 529 else "server_error",
                        },
                    )
                )
            await asyncio.sleep(0.05)
        error_kind = {
            400: "invalid_request",
            401: "authentication_failed",
            404: "model_not_found",
            429: "rate_limit",
            529: "overloaded",
        }.get(status, "server_error" if status >= 500 else "unknown")
        text = f"API Error: {status} {STANDIN_TAG} scripted API error (@standin api-error)"
        return self._synthetic_error_turn(text, error_kind, status)

    def _max_turns_result(self, max_turns: int) -> None:
        self._emit_result(
            subtype="error_max_turns",
            is_error=True,
            stop_reason="tool_use",
            terminal_reason="max_turns",
            result_text=None,
            errors=[f"Reached maximum number of turns ({max_turns})"],
            api_error_status=None,
            num_turns=self.state.api_calls + 1,
        )

    # ------------------------------------------------------------------ results

    def _success_result(self, text: str) -> None:
        self._emit_result(
            subtype="success",
            is_error=False,
            stop_reason="end_turn",
            terminal_reason="completed",
            result_text=text,
            errors=None,
            api_error_status=None,
        )

    def _emit_result(
        self,
        *,
        subtype: str,
        is_error: bool,
        stop_reason: str | None,
        terminal_reason: str,
        result_text: str | None,
        errors: list[str] | None,
        api_error_status: int | None,
        num_turns: int | None = None,
        synthetic: bool = False,
        usage_details_first: bool = False,
    ) -> None:
        session = self.session
        state = self.state
        style = session.style
        session.total_input_tokens += state.input_tokens
        session.total_output_tokens += state.output_tokens
        model_usage: dict[str, Any] = {}
        since_last: dict[str, Any] = {}
        if not synthetic and (session.total_input_tokens or session.total_output_tokens):
            model_usage = {
                session.model: wire.model_usage_entry(
                    style, session.model, session.total_input_tokens, session.total_output_tokens
                )
            }
            since_last = {
                session.model: wire.model_usage_entry(
                    style, session.model, state.input_tokens, state.output_tokens
                )
            }
        duration_ms = int((time.monotonic() - state.started) * 1000)
        session.emit(
            wire.build_result(
                style,
                session_id=session.session_id,
                subtype=subtype,
                is_error=is_error,
                num_turns=num_turns if num_turns is not None else state.api_calls,
                stop_reason=stop_reason,
                terminal_reason=terminal_reason,
                duration_ms=duration_ms,
                duration_api_ms=0 if synthetic else state.api_milliseconds,
                ttft_ms=None if synthetic else state.ttft_ms,
                usage=wire.result_usage(
                    style, state.input_tokens, state.output_tokens, synthetic=synthetic or usage_details_first
                ),
                model_usage=model_usage,
                model_usage_since_last_result=since_last,
                permission_denials=state.permission_denials,
                result_text=result_text,
                errors=errors,
                api_error_status=api_error_status,
                begun_message_ids=[] if synthetic else state.begun_message_ids,
                queued_turn_count=session.queued_count(),
                result_index=session.result_index,
                subagents_spawned=state.subagents,
            )
        )
        session.result_index += 1
        session.last_result_is_error = is_error

    # ------------------------------------------------------------------ interrupts

    def _write_abort(self) -> None:
        """The sequence the real CLI writes after an interrupt (the control_response is already out)."""
        session = self.session
        state = self.state
        in_tool = state.tool_use_id is not None and not state.stream_open
        if in_tool:
            was_running = state.tool_running
            if state.bash is not None:
                state.bash.kill_group()
            text = REJECTED_TOOL_TEXT + (
                STOPPED_WHILE_RUNNING if was_running and session.style.modern else ""
            )
            if state.pending_permission_id is not None or not was_running:
                state.permission_denials.append(
                    {
                        "tool_name": state.tool_name,
                        "tool_use_id": state.tool_use_id,
                        "tool_input": state.tool_input,
                    }
                )
            session.emit(
                wire.build_tool_result(
                    session.style,
                    session.session_id,
                    state.tool_use_id or "",
                    text,
                    is_error=True,
                    tool_use_result="User rejected tool use",
                    result_meta={"non_execution_kind": "user-rejected"},
                )
            )
            session.emit(
                wire.build_interrupt_marker(session.session_id, "[Request interrupted by user for tool use]")
            )
            self._emit_result(
                subtype="error_during_execution",
                is_error=True,
                stop_reason="tool_use",
                terminal_reason="aborted_tools",
                result_text=None,
                errors=["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"],
                api_error_status=None,
                num_turns=state.api_calls + 2,
            )
            return
        if state.open_block_index is not None and state.streamed_text:
            session.emit(self._assistant_line({"type": "text", "text": state.streamed_text}, aborted=True))
        session.emit(wire.build_interrupt_marker(session.session_id, "[Request interrupted by user]"))
        if state.stream_open:
            if state.open_block_index is not None:
                self._event({"type": "content_block_stop", "index": state.open_block_index})
            delta: dict[str, Any] = {
                "type": "message_delta",
                "context_management": None,
                "delta": {
                    "container": None,
                    "stop_details": None,
                    "stop_reason": None,
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": estimate_tokens(state.streamed_text)},
            }
            self._event(delta)
            self._event({"type": "message_stop"})
            state.stream_open = False
        self._emit_result(
            subtype="error_during_execution",
            is_error=True,
            stop_reason=None,
            terminal_reason="aborted_streaming",
            result_text=None,
            errors=["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"],
            api_error_status=None,
            num_turns=state.api_calls + 1,
            usage_details_first=True,  # the real aborted_streaming result orders usage like a synthetic one
        )
