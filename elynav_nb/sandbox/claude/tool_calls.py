"""The stand-in's tool round trips: a tool_use response, the permission step, the tool, its tool_result.

Where it sits: ``ToolRoundTrips`` is the middle layer of the stand-in's turn (``turns.TurnRunner``
builds on it; it builds on ``streaming.ResponseStreaming`` for the response lines). The
script (``TurnRunner._play``) calls ``_tool_round_trip`` once per tool directive (``@standin bash``,
``ask``, ``mcp``, ``sleep-tool``, ``big-result``, ``subagent``).

How data flows, one tool use::

    directive -> _tool_call_for: tool name, input, MCP server
      -> one API response with the tool_use block (input streamed as input_json_delta)
      -> over --max-budget-usd (``@standin cost``): BudgetExhausted, the tool does not run
      -> the PreToolUse hooks (``hooks``): deny, a new input, or an approval
      -> _permission_step: the rules (``tools.decide_permission``) allow, deny (a denied
         tool_result, ``_write_denied``) or ask: a ``can_use_tool`` control request, then wait for
         the answer the process hands over (no timeout, like the real CLI)
      -> _run_tool: Bash (``tools.BashTool``), an MCP tool (``McpHub.call_tool``,
         ``_write_mcp_result``) or the Task subagent (``_run_subagent``)
      -> the ``user`` tool_result line -> the PostToolUse hooks -> a one-line summary for the final reply

``state`` tracks the tool in flight (id, input, running, pending permission, Bash process), so an
interrupt can write what the real CLI writes for a stopped or refused tool.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from typing import Any

from elynav_nb.sandbox.claude import wire as wire
from elynav_nb.sandbox.claude.directives import Directive
from elynav_nb.sandbox.claude.hooks import HookSteps
from elynav_nb.sandbox.claude.tools import BashTool, bash_result_content, decide_permission
from elynav_nb.sandbox.claude.turn_state import STANDIN_TAG, BudgetExhausted, estimate_tokens

__all__ = ["ToolRoundTrips"]


class ToolRoundTrips(HookSteps):
    """Tool uses within one user message (base of ``TurnRunner``)."""

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
        input_json = self._stream_tool_use(block_index, tool_use_id, tool_name, tool_input, meta)
        self._end_response("tool_use", input_json)
        if self.session.over_budget():
            raise BudgetExhausted
        await asyncio.sleep(0)
        if mcp_server is not None and tool_name not in self.session.hub.tool_names():
            return self._write_no_such_tool(tool_use_id, tool_name)
        verdict = await self._pre_tool_hooks(tool_name, tool_input)
        if verdict.deny_reason is not None:
            message = f"PreToolUse:{tool_name} hook error: {verdict.deny_reason}"
            self._write_denied(tool_name, tool_input, message, {"non_execution_kind": "hook-denied"})
            state.tool_use_id = None
            return f"The {tool_name} tool use was denied: {message}"
        allowed_input: dict[str, Any] | None
        if verdict.approved:
            allowed_input = verdict.tool_input
            decision_meta: dict[str, Any] = {"permission_decision": {"decision": "accept", "source": "hook"}}
        else:
            allowed_input, decision_meta = await self._permission_step(
                directive, tool_name, verdict.tool_input, mcp_server
            )
        if allowed_input is None:
            state.tool_use_id = None
            return f"The {tool_name} tool use was denied: {decision_meta.get('message', '')}"
        state.tool_running = True
        started = time.monotonic()
        summary = await self._run_tool(directive, tool_name, allowed_input, decision_meta)
        state.tool_running = False  # left True on cancellation: the abort path reports a stopped tool
        await self._post_tool_hooks(tool_name, allowed_input, state.last_tool_response, started)
        state.tool_use_id = None
        return summary

    def _emit_tool_result(
        self,
        tool_use_id: str,
        content: str | list[dict[str, Any]],
        *,
        is_error: bool,
        tool_use_result: Any,
        result_meta: dict[str, Any] | None = None,
        include_is_error: bool = True,
    ) -> None:
        """One ``user`` line carrying the ``tool_result`` of ``tool_use_id`` (``wire.build_tool_result``)."""
        session = self.session
        self.session.emit(
            wire.build_tool_result(
                session.style,
                session.session_id,
                tool_use_id,
                content,
                is_error=is_error,
                tool_use_result=tool_use_result,
                result_meta=result_meta,
                include_is_error=include_is_error,
            )
        )

    def _write_no_such_tool(self, tool_use_id: str, tool_name: str) -> str:
        """The real CLI's answer to a tool no connected server offers: an error result, no permission asked."""
        text = f"<tool_use_error>Error: No such tool available: {tool_name}</tool_use_error>"
        self._emit_tool_result(
            tool_use_id,
            text,
            is_error=True,
            tool_use_result=f"Error: No such tool available: {tool_name}",
            result_meta=None,
        )
        self.state.tool_use_id = None
        return f"The tool {tool_name} is not available."

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
        tool_use_id = self.state.tool_use_id or ""
        self.state.permission_denials.append(
            {"tool_name": tool_name, "tool_use_id": tool_use_id, "tool_input": tool_input}
        )
        self._emit_tool_result(
            tool_use_id,
            message,
            is_error=True,
            tool_use_result="Error: " + message,
            result_meta=meta,
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
            self.state.last_tool_response = structured
            self._emit_tool_result(
                tool_use_id,
                content,
                is_error=is_error,
                tool_use_result=structured,
                result_meta=meta,
            )
            if directive.name == "big-result":
                return f"The Bash tool printed {len(outcome.output)} bytes."
            return f"The Bash command exited with code {outcome.exit_code}."
        outcome_mcp = await session.hub.call_tool(directive.server, directive.tool, tool_input)
        self.state.last_tool_response = outcome_mcp.structured_content or outcome_mcp.content
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
            self._emit_tool_result(
                tool_use_id,
                text,
                is_error=False,
                tool_use_result=result,
                result_meta=meta,
                include_is_error=False,
            )
            return
        if is_error:
            texts = " ".join(str(block.get("text", "")) for block in content if block.get("type") == "text")
            self._emit_tool_result(
                tool_use_id,
                texts,
                is_error=True,
                tool_use_result="Error: " + texts,
                result_meta=meta,
            )
            return
        self._emit_tool_result(
            tool_use_id,
            content,
            is_error=False,
            tool_use_result=content,
            result_meta=meta,
            include_is_error=False,
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
        self._emit_tool_result(
            tool_use_id,
            content,
            is_error=False,
            tool_use_result=structured,
            result_meta={"permission_decision": {"decision": "accept", "source": "config"}},
            include_is_error=False,
        )
        return f"The subagent answered: {reply}"
