"""One user turn of the stand-in: the scripted API round trips, tools, permission prompts and interrupts.

Where it sits: between ``claude_standin`` (the process: stdin, control requests, signals) and
``wire`` (the shape of each line). ``TurnRunner.run`` plays one user message: ``system/init``,
``system/status``, one or more streamed "API responses" (``stream_event`` lines only with
``--include-partial-messages``), tool uses with their ``user`` tool_result lines, then one ``result``.
The process cancels the running task to interrupt it; ``run`` then writes the abort sequence observed
on the real CLI (partial assistant, ``[Request interrupted by user]`` marker, ``error_during_execution``).

Replies are deterministic and say they come from a stand-in. Directives (``directives``) choose
the script; everything else gets the echo reply. A process started with ``--json-schema`` ends each turn
with a ``StructuredOutput`` call checked as the real CLI checks it (``structured``).

Data flow: user message -> ``ParsedMessage`` -> round trips -> ``SessionState.emit(dict)`` -> stdout;
the transcript (``SessionStore``) receives the user text and the final reply.

``TurnRunner`` is built in layers, one module each: ``turn_state`` (``SessionState``,
``TurnState``, the texts and helpers; re-exported here), ``streaming`` (``ResponseStreaming``:
init and status lines, one streamed API response), ``tool_calls`` (``ToolRoundTrips``: a tool
use with its permission step and tool_result) and this module (the script, error turns, the result
line and the abort sequence).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from elynav_nb.sandbox.claude import wire as wire
from elynav_nb.sandbox.claude.directives import Directive, ParsedMessage, parse_message
from elynav_nb.sandbox.claude.structured import (
    MAX_ATTEMPTS,
    MINIMAL_NOTE,
    STRUCTURED_OUTPUT_OK,
    STRUCTURED_OUTPUT_TOOL,
    minimal_instance,
    schema_problems,
)
from elynav_nb.sandbox.claude.tool_calls import ToolRoundTrips
from elynav_nb.sandbox.claude.turn_state import (
    ECHO_INTRO,
    NOT_LOGGED_IN,
    REJECTED_TOOL_TEXT,
    STANDIN_TAG,
    STOPPED_WHILE_RUNNING,
    BudgetExhausted,
    SessionState,
    TurnState,
    estimate_tokens,
    message_text,
)

__all__ = ["SessionState", "TurnRunner", "TurnState", "message_text"]


class TurnRunner(ToolRoundTrips):
    """Plays one user message. ``state`` is public so the process can route interrupts and answers."""

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
        cost = parsed.first("cost")
        self.state.cost_per_response = cost.number if cost is not None else 0.0
        if session.over_budget():  # the process's budget is spent: every later turn ends at once
            self._status()
            self.state.api_calls = 1
            self._budget_result(stop_reason=None)
            return None
        try:
            return await self._play_script(parsed, earlier_turns)
        except BudgetExhausted:
            self._budget_result(stop_reason="tool_use")
            return None

    async def _play_script(self, parsed: ParsedMessage, earlier_turns: int) -> str | None:
        session = self.session
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
        if session.json_schema is not None and session.structured_output_offered:
            return await self._structured_ending(parsed, final_text, session.json_schema)
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
        parts += [f"{STANDIN_TAG} A hook told me: {note}" for note in self.state.hook_notes]
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

    async def _structured_ending(self, parsed: ParsedMessage, final_text: str, schema: dict[str, Any]) -> str:
        """``--json-schema``: the reply and a StructuredOutput call, checked like the real CLI (``structured``)."""
        state = self.state
        directive = parsed.first("json")
        scripted = directive is not None and not directive.problem
        value = directive.value if directive is not None and scripted else minimal_instance(schema)
        if not scripted:
            final_text = f"{final_text}\n{STANDIN_TAG} {MINIMAL_NOTE}"
        problems = ""
        for attempt in range(MAX_ATTEMPTS):
            self._status()
            self._begin_response()
            text = final_text if attempt == 0 else ""
            if text:
                await self._stream_text(0, text, 0.0)
            tool_use_id = wire.new_tool_use_id()
            state.tool_use_id, state.tool_name, state.tool_input = tool_use_id, STRUCTURED_OUTPUT_TOOL, value
            input_json = self._stream_tool_use(1 if text else 0, tool_use_id, STRUCTURED_OUTPUT_TOOL, value)
            self._end_response("tool_use", text + input_json)
            await asyncio.sleep(0)
            problems = schema_problems(schema, value)
            accepted = {"permission_decision": {"decision": "accept", "source": "config"}}
            if problems:
                message = f"Output does not match required schema: {problems}"
                self._emit_tool_result(
                    tool_use_id,
                    message,
                    is_error=True,
                    tool_use_result=f"Error: {message}",
                    result_meta=accepted,
                )
                state.tool_use_id = None
                continue
            self._emit_tool_result(
                tool_use_id,
                STRUCTURED_OUTPUT_OK,
                is_error=False,
                tool_use_result=STRUCTURED_OUTPUT_OK,
                result_meta=accepted,
                include_is_error=False,
            )
            state.tool_use_id = None
            self._emit_result(
                subtype="success",
                is_error=False,
                stop_reason="tool_use",
                terminal_reason="completed",
                result_text=json.dumps(value, ensure_ascii=False, separators=(",", ":")),
                errors=None,
                api_error_status=None,
                num_turns=state.api_calls + 1,
                structured_output=value,
            )
            return final_text
        self._emit_result(
            subtype="error_max_structured_output_retries",
            is_error=True,
            stop_reason="tool_use",
            terminal_reason="structured_output_retry_exhausted",
            result_text=None,
            errors=[
                f"Failed to provide valid structured output after {MAX_ATTEMPTS} attempts — last "
                f"StructuredOutput error: Output does not match required schema: {problems}"
            ],
            api_error_status=None,
            num_turns=state.api_calls + 1,
        )
        return final_text

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

    def _budget_result(self, stop_reason: str | None) -> None:
        budget = self.session.max_budget_usd or 0.0
        self._emit_result(
            subtype="error_max_budget_usd",
            is_error=True,
            stop_reason=stop_reason,
            terminal_reason="budget_exhausted",
            result_text=None,
            errors=[f"Reached maximum budget (${budget:g})"],
            api_error_status=None,
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
        structured_output: Any = None,
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
                structured_output=structured_output,
                total_cost_usd=round(session.total_cost_usd, 6) if session.total_cost_usd else 0,
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
            self._emit_tool_result(
                state.tool_use_id or "",
                text,
                is_error=True,
                tool_use_result="User rejected tool use",
                result_meta={"non_execution_kind": "user-rejected"},
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
