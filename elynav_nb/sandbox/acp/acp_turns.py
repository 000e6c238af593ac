"""One prompt turn of the ACP stand-in: plays the ``@standin`` script as ACP notifications and requests.

Where it sits: ``acp_standin`` builds a ``Turn`` per ``session/prompt`` and runs ``Turn.play`` in its own
task; ``session/cancel`` calls ``Turn.request_cancel``, which cancels that task at once (any sleep,
pending client request or local command is interrupted; local commands are killed, client terminals
killed and released) unless the turn has run ``@standin ignore-cancel``. The tools come from
``acp_tools`` and ``acp_mcp``; the directive language from ``acp_directives``.

Permission: a shell step (and a write step outside ``acceptEdits``) asks ``session/request_permission``
unless the mode is ``bypassPermissions`` or the user answered ``allow_always`` / ``reject_always`` for
that tool kind earlier in the session (``SessionState.always``). A ``cancelled`` outcome ends the turn
``cancelled``; nothing is withdrawn when a cancel arrives while the request is pending (the client
answers it itself; a late answer is ignored).

Data flow: prompt blocks -> ``parse_prompt`` -> steps -> ``session/update`` notifications (chunks,
tool calls, plan), agent -> client requests (permission, fs, terminal) -> ``stopReason`` (or an
``RpcError`` for ``@standin error``); ``said`` keeps the agent's text for the session history.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from elynav_nb.sandbox.acp.acp_directives import Script, Step, parse_prompt, split_chunks
from elynav_nb.sandbox.acp.acp_mcp import call_mcp_tool
from elynav_nb.sandbox.acp.acp_sessions import SessionState
from elynav_nb.sandbox.acp.acp_tools import (
    Children,
    ClientCapabilities,
    ToolFailure,
    read_text,
    resolve_path,
    run_shell,
    write_text,
)
from elynav_nb.sandbox.acp.acp_wire import INTERNAL_ERROR, ClientError, Connection, RpcError

__all__ = ["PERMISSION_OPTIONS", "Turn", "TurnContext", "prompt_text"]

PERMISSION_OPTIONS: list[dict[str, str]] = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject_always", "name": "Always reject", "kind": "reject_always"},
]
MCP_REPLY_CHARS = 200


@dataclass(frozen=True)
class TurnContext:
    connection: Connection
    capabilities: ClientCapabilities
    children: Children
    exit_now: Callable[[int], None]


class _StopTurn(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def prompt_text(prompt: list[dict[str, Any]]) -> str:
    """The text blocks of a prompt, one after the other (other blocks carry no directives)."""
    # a block opening with <instructions> is the agent definition's prompt (elynav_nb sends it as the
    # first block of a new session's first turn: ACP has no system prompt), not the user's text
    return "\n".join(
        str(block.get("text", ""))
        for block in prompt
        if block.get("type") == "text" and not str(block.get("text", "")).startswith("<instructions>")
    )


def _first_line(text: str) -> str:
    lines = text.splitlines()
    return lines[0] if lines else ""


class Turn:
    def __init__(self, context: TurnContext, session: SessionState, prompt: list[dict[str, Any]]) -> None:
        self.context = context
        self.connection = context.connection
        self.session = session
        self.text = prompt_text(prompt)
        self.script: Script = parse_prompt(self.text)
        self.number = session.turns + 1
        self.delay = 0.0
        self.ignore_cancel = False
        self.cancelled = False
        self.said: list[str] = []
        self.task: asyncio.Task[str] | None = None
        self._tool_calls = 0

    # -- cancellation -------------------------------------------------------------------------------
    def request_cancel(self) -> None:
        if self.ignore_cancel or self.cancelled:
            return
        self.cancelled = True
        if self.task is not None:
            self.task.cancel()

    # -- output helpers -----------------------------------------------------------------------------
    def update(self, update: dict[str, Any]) -> None:
        self.connection.notify("session/update", {"sessionId": self.session.session_id, "update": update})

    async def stream(self, kind: str, text: str) -> None:
        for piece in split_chunks(text):
            if self.delay > 0:
                await asyncio.sleep(self.delay)
            self.update({"sessionUpdate": kind, "content": {"type": "text", "text": piece}})
        if kind == "agent_message_chunk":
            self.said.append(text)

    def next_tool_call_id(self) -> str:
        self._tool_calls += 1
        return f"call_{self.number}_{self._tool_calls}"

    def finish_tool(
        self, tool_call_id: str, status: str, text: str, raw_output: dict[str, Any] | None = None
    ) -> None:
        update: dict[str, Any] = {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tool_call_id,
            "status": status,
            "content": [{"type": "content", "content": {"type": "text", "text": text}}],
        }
        if raw_output is not None:
            update["rawOutput"] = raw_output
        self.update(update)

    # -- playing ------------------------------------------------------------------------------------
    async def play(self) -> str:
        """The stopReason; raises ``RpcError`` for ``@standin error``."""
        try:
            if not self.script.steps:
                await self.stream("agent_message_chunk", f"Stand-in reply to: {self.script.first_user_line}")
            for step in self.script.steps:
                await self.play_step(step)
        except _StopTurn as stop:
            return stop.reason
        return "end_turn"

    async def play_step(self, step: Step) -> None:
        name = step.name
        if name in ("say", "json", "invalid"):
            await self.stream("agent_message_chunk", step.text)
        elif name == "think":
            await self.stream("agent_thought_chunk", step.text)
        elif name == "delay":
            self.delay = step.seconds
        elif name == "plan":
            self.update(
                {
                    "sessionUpdate": "plan",
                    "entries": [
                        {"content": "Read the request", "priority": "high", "status": "completed"},
                        {"content": "Answer it", "priority": "medium", "status": "in_progress"},
                    ],
                }
            )
        elif name == "shell":
            await self.shell(step.text)
        elif name == "read":
            await self.read(step.path)
        elif name == "write":
            await self.write(step.path, step.text)
        elif name == "mcp":
            await self.mcp(step.server, step.tool, step.arguments)
        else:
            await self.fault(step)

    async def fault(self, step: Step) -> None:
        name = step.name
        if name == "malformed":
            self.connection.write_raw(b"this line is not JSON {\n")
            self.connection.write({"hello": 1})
        elif name == "unknown-update":
            self.update(
                {"sessionUpdate": "elynav_unknown_kind", "payload": {"note": "a kind no client knows"}}
            )
        elif name == "unknown-method":
            try:
                answer = await self.connection.request(
                    "elynav/unknown", {"sessionId": self.session.session_id}
                )
            except ClientError as error:
                await self.stream("agent_message_chunk", f"The client answered {error.code}")
            else:
                await self.stream(
                    "agent_message_chunk", f"The client answered a result: {json.dumps(answer)}"
                )
        elif name == "permission-unknown-tool":
            tool_call = {
                "toolCallId": f"never_announced_{self.number}",
                "title": "A tool call never announced",
                "kind": "other",
                "rawInput": {},
            }
            outcome = await self.ask(tool_call)
            await self.stream("agent_message_chunk", f"The permission outcome was {outcome}")
        elif name == "ignore-cancel":
            self.ignore_cancel = True
        elif name == "hang":
            await asyncio.get_running_loop().create_future()  # until cancelled
        elif name == "crash":
            self.context.exit_now(3)
        elif name == "error":
            raise RpcError(INTERNAL_ERROR, step.text)
        elif name == "stop":
            raise _StopTurn(step.text)

    # -- permission ---------------------------------------------------------------------------------
    async def ask(self, tool_call: dict[str, Any]) -> str:
        """``selected <optionId>``, ``cancelled`` or ``error <code>: <message>`` (the raw outcome)."""
        try:
            answer = await self.connection.request(
                "session/request_permission",
                {"sessionId": self.session.session_id, "toolCall": tool_call, "options": PERMISSION_OPTIONS},
            )
        except ClientError as error:
            return f"error {error.code}: {error.message}"
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        if isinstance(outcome, dict) and outcome.get("outcome") == "cancelled":
            return "cancelled"
        if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
            return f"selected {outcome.get('optionId')}"
        return f"unreadable {json.dumps(answer)}"

    async def permitted(
        self, tool_call_id: str, title: str, kind: str, raw_input: dict[str, Any]
    ) -> str | None:
        """``None`` when the tool may run, else why not (the tool has failed); a cancelled outcome ends the turn."""
        mode = self.session.mode
        if mode == "bypassPermissions" or (kind == "edit" and mode == "acceptEdits"):
            return None
        remembered = self.session.always.get(kind)
        if remembered == "allow":
            return None
        if remembered == "reject":
            return "denied by the user"
        outcome = await self.ask(
            {"toolCallId": tool_call_id, "title": title, "kind": kind, "rawInput": raw_input}
        )
        if outcome == "cancelled":
            self.cancelled = True
            raise _StopTurn("cancelled")
        if outcome in ("selected allow", "selected allow_always"):
            if outcome.endswith("allow_always"):
                self.session.always[kind] = "allow"
            return None
        if outcome in ("selected reject", "selected reject_always"):
            if outcome.endswith("reject_always"):
                self.session.always[kind] = "reject"
            return "denied by the user"
        return f"the permission request failed: {outcome}"

    def announce(self, title: str, kind: str, raw_input: dict[str, Any], path: str | None = None) -> str:
        tool_call_id = self.next_tool_call_id()
        update: dict[str, Any] = {
            "sessionUpdate": "tool_call",
            "toolCallId": tool_call_id,
            "title": title,
            "kind": kind,
            "status": "pending",
            "rawInput": raw_input,
        }
        if path is not None:
            update["locations"] = [{"path": path}]
        self.update(update)
        return tool_call_id

    def in_progress(self, tool_call_id: str) -> None:
        self.update(
            {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, "status": "in_progress"}
        )

    # -- tools --------------------------------------------------------------------------------------
    async def shell(self, command: str) -> None:
        raw_input = {"command": command}
        tool_call_id = self.announce(command, "execute", raw_input)
        refusal = await self.permitted(tool_call_id, command, "execute", raw_input)
        if refusal is not None:
            self.finish_tool(tool_call_id, "failed", refusal)
            await self.stream("agent_message_chunk", "The command was denied.")
            return
        self.in_progress(tool_call_id)
        try:
            outcome = await run_shell(
                self.connection,
                self.context.capabilities,
                self.context.children,
                self.session.session_id,
                command,
                self.session.cwd,
            )
        except ToolFailure as failure:
            self.finish_tool(tool_call_id, "failed", failure.message)
            await self.stream("agent_message_chunk", f"The terminal failed: {failure.message}")
            return
        self.finish_tool(tool_call_id, "completed", outcome.output, outcome.raw_output())
        first = _first_line(outcome.output)
        await self.stream(
            "agent_message_chunk",
            f"The command printed: {first}" if first else "The command printed nothing.",
        )

    async def read(self, given_path: str) -> None:
        path = resolve_path(given_path, self.session.cwd)
        tool_call_id = self.announce(f"Read {given_path}", "read", {"path": path}, path)
        self.in_progress(tool_call_id)
        try:
            content = await read_text(
                self.connection, self.context.capabilities, self.session.session_id, path
            )
        except ToolFailure as failure:
            self.finish_tool(tool_call_id, "failed", failure.message)
            await self.stream("agent_message_chunk", f"The file tool failed: {failure.message}")
            return
        self.finish_tool(tool_call_id, "completed", content)
        first = _first_line(content)
        await self.stream("agent_message_chunk", first if first else "The file is empty.")

    async def write(self, given_path: str, content: str) -> None:
        path = resolve_path(given_path, self.session.cwd)
        raw_input = {"path": path, "content": content}
        title = f"Write {given_path}"
        tool_call_id = self.announce(title, "edit", raw_input, path)
        refusal = await self.permitted(tool_call_id, title, "edit", raw_input)
        if refusal is not None:
            self.finish_tool(tool_call_id, "failed", refusal)
            await self.stream("agent_message_chunk", "The edit was denied.")
            return
        self.in_progress(tool_call_id)
        try:
            await write_text(
                self.connection, self.context.capabilities, self.session.session_id, path, content
            )
        except ToolFailure as failure:
            self.finish_tool(tool_call_id, "failed", failure.message)
            await self.stream("agent_message_chunk", f"The file tool failed: {failure.message}")
            return
        self.finish_tool(tool_call_id, "completed", f"Wrote {len(content)} characters to {path}")
        await self.stream("agent_message_chunk", f"Wrote {given_path}")

    async def mcp(self, server: str, tool: str, arguments: dict[str, Any]) -> None:
        tool_call_id = self.announce(f"mcp__{server}__{tool}", "other", arguments)
        entry = next((entry for entry in self.session.mcp_servers if entry.name == server), None)
        if entry is None:
            message = f"MCP server {server} is not configured in this session"
            self.finish_tool(tool_call_id, "failed", message)
            await self.stream("agent_message_chunk", f"The tool failed: {message[:MCP_REPLY_CHARS]}")
            return
        self.in_progress(tool_call_id)
        result = await call_mcp_tool(entry, tool, arguments, self.session.cwd)
        self.finish_tool(tool_call_id, "failed" if result.is_error else "completed", result.text, result.raw)
        verb = "failed" if result.is_error else "answered"
        await self.stream("agent_message_chunk", f"The tool {verb}: {result.text[:MCP_REPLY_CHARS]}")
