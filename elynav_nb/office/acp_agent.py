"""``EmployeeAgent``: one employee of the office as an Agent Client Protocol agent (``elynav acp``).

Where it sits: ``office/acp_command.py`` runs it over stdio with the official ACP Python SDK
(``agent-client-protocol``: ``acp.run_agent``, its pydantic schema, its JSON-RPC connection). It
reaches the office only through ``OfficeClient`` (``office/client.py``), as the user: the office's
rules (FIFO, busy, cancel rights, cascade, one history) hold for the chat as for anyone.

How a session flows::

    initialize -> this agent: loadSession, text and resource links; agentInfo names the employee
    session/new -> a session id on the employee's one canonical conversation (no new CLI session)
    session/load -> that conversation's past asks replayed from the office history (user and agent
      message chunks), then the answer
    session/prompt -> OfficeClient.submit(employee, text) (one ask of the user, FIFO) and, until its reply:
      Position  -> agent_thought_chunk "waiting: place N in <employee>'s queue (busy for X)"
      TextDelta -> agent_message_chunk ; ThinkingDelta -> agent_thought_chunk
      ToolUse / ToolResult -> tool_call / tool_call_update (kind from the tool's name)
      PlanUpdate -> plan ; PermissionRequest -> session/request_permission -> the ask's answer
      the Reply -> stopReason (done: end_turn, cancelled: cancelled), usage, _meta.elynav (cost, ask
      id); failed or timed out: a JSON-RPC error whose data carries the office's code
    session/cancel -> the user's cancel of the session's asks (queued or running; it cascades)
    stdin closes (the client went away) -> every ask still open is hung up: the office cancels it
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

import acp
from acp import schema

from elynav_nb.agents.events import (
    AgentEvent,
    PermissionRequest,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
)
from elynav_nb.errors import ElynavError
from elynav_nb.office.asks import Reply
from elynav_nb.office.client import OfficeClient, Position, RemoteAsk, Started
from elynav_nb.office.history import HistoryLog, fold_records
from elynav_nb.office.stream_wire import PlanUpdate

__all__ = ["EmployeeAgent", "tool_kind", "waiting_text"]

AGENT_NAME = "elynav-office"
_KINDS: dict[str, schema.ToolKind] = {
    "Read": "read",
    "NotebookRead": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Bash": "execute",
    "Grep": "search",
    "Glob": "search",
    "LS": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "TodoWrite": "think",
    "Task": "think",
}


def tool_kind(name: str, tool_input: dict[str, Any] | None = None) -> schema.ToolKind:
    """ACP's ``ToolKind`` of a tool call, from its name (claude's tools), else its input (a shell
    ``command``: execute), else words of its name; ``other`` when nothing tells."""
    if name in _KINDS:
        return _KINDS[name]
    if tool_input and isinstance(tool_input.get("command"), str | list):
        return "execute"
    lowered = name.lower()
    guesses: tuple[tuple[str, schema.ToolKind], ...] = (
        ("read", "read"),
        ("write", "edit"),
        ("edit", "edit"),
        ("search", "search"),
        ("fetch", "fetch"),
    )
    for word, kind in guesses:
        if word in lowered:
            return kind
    return "other"


def waiting_text(agent: str, place: int, busy_for: str | None) -> str:
    """What the chat is told while an ask waits in the employee's FIFO."""
    working = f", busy for {busy_for}" if busy_for else ""
    ahead = "next" if place == 1 else f"place {place}"
    return f"Waiting in {agent}'s queue: {ahead}{working}.\n"


class EmployeeAgent:
    """The ACP agent of one employee (see the module docstring). ``client`` reaches the office."""

    def __init__(
        self, client: OfficeClient, employee: str, *, description: str = "", version: str = "0.1.0"
    ) -> None:
        self.client = client
        self.employee = employee
        self.description = description
        self.version = version
        self.history_log: HistoryLog | None = None  # set by the command: the workspace's history
        self.connection: Any = None
        self.asks: dict[str, list[RemoteAsk]] = {}  # session id -> its asks in flight

    def on_connect(self, connection: Any) -> None:
        self.connection = connection

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
            ),
            agent_info=schema.Implementation(
                name=AGENT_NAME, title=f"{self.employee} (elynav office)", version=self.version
            ),
            auth_methods=[],
        )

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, **kwargs: Any
    ) -> schema.NewSessionResponse:
        session_id = f"{self.employee}:{uuid.uuid4().hex[:12]}"
        self.asks[session_id] = []
        return schema.NewSessionResponse(session_id=session_id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> schema.LoadSessionResponse:
        """The employee's one conversation, replayed from the office history (asks to it, both ways)."""
        self.asks.setdefault(session_id, [])
        if self.history_log is not None:
            rows = await asyncio.to_thread(
                lambda: fold_records(self.history_log.records()) if self.history_log else []
            )
            for row in rows:
                if row["agent"] != self.employee or row["outcome"] == "refused":
                    continue
                await self._update(session_id, acp.update_user_message_text(str(row["prompt"] or "")))
                if row["reply"]:
                    await self._update(session_id, acp.update_agent_message_text(str(row["reply"])))
        return schema.LoadSessionResponse()

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> None:
        return None

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> schema.PromptResponse:
        text = _prompt_text(prompt)
        try:
            remote = await self.client.submit(self.employee, text)
        except ElynavError as error:
            raise acp.RequestError.invalid_params({"code": error.code, "message": error.message}) from None
        session_asks = self.asks.setdefault(session_id, [])
        session_asks.append(remote)
        try:
            reply = await self._follow(session_id, remote)
        finally:
            if remote in session_asks:
                session_asks.remove(remote)
            await remote.close()
        return self._response(reply, remote.usage)

    async def _follow(self, session_id: str, remote: RemoteAsk) -> Reply:
        """Say each update; the deltas that arrived together become one chunk (fewer messages, same text)."""
        async for batch in remote.batches():
            pending: TextDelta | ThinkingDelta | None = None
            for update in batch:
                if isinstance(update, Reply):
                    if pending is not None:
                        await self._say(session_id, remote, pending)
                    return update
                if pending is not None and type(update) is type(pending):
                    pending = type(pending)(pending.text + update.text)
                    continue
                if pending is not None:
                    await self._say(session_id, remote, pending)
                    pending = None
                if isinstance(update, TextDelta | ThinkingDelta):
                    pending = update
                else:
                    await self._say(session_id, remote, update)
            if pending is not None:
                await self._say(session_id, remote, pending)
        return await remote

    async def _say(self, session_id: str, remote: RemoteAsk, update: Position | Started | AgentEvent) -> None:
        if isinstance(update, Position):
            waiting = waiting_text(self.employee, update.place, update.busy_for)
            await self._update(session_id, acp.update_agent_thought_text(waiting))
        elif isinstance(update, TextDelta):
            await self._update(session_id, acp.update_agent_message_text(update.text))
        elif isinstance(update, ThinkingDelta):
            await self._update(session_id, acp.update_agent_thought_text(update.text))
        elif isinstance(update, ToolUse):
            await self._update(
                session_id,
                acp.start_tool_call(
                    update.id,
                    update.name,
                    kind=tool_kind(update.name, update.input),
                    status="in_progress",
                    raw_input=update.input,
                ),
            )
        elif isinstance(update, ToolResult):
            content = [acp.tool_content(acp.text_block(update.text))] if update.text else None
            status: schema.ToolCallStatus = "failed" if update.is_error else "completed"
            await self._update(
                session_id, acp.update_tool_call(update.tool_use_id, status=status, content=content)
            )
        elif isinstance(update, PlanUpdate):
            entries = [
                schema.PlanEntry.model_validate({"content": content, "status": status, "priority": priority})
                for content, status, priority in update.entries
            ]
            await self._update(session_id, acp.update_plan(entries))
        elif isinstance(update, PermissionRequest):
            asyncio.get_running_loop().create_task(self._ask_permission(session_id, remote, update))

    async def _ask_permission(self, session_id: str, remote: RemoteAsk, request: PermissionRequest) -> None:
        """The employee's tool prompt, asked of the client; its answer goes back to the ask."""
        options = [
            schema.PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
            schema.PermissionOption(option_id="reject_once", name="Deny", kind="reject_once"),
        ]
        if request.offers_always:
            options.insert(
                1, schema.PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always")
            )
        tool_call = schema.ToolCallUpdate(
            tool_call_id=request.tool_use_id or request.request_id,
            title=request.description or request.tool_name,
            kind=tool_kind(request.tool_name, request.input),
            raw_input=request.input,
            status="pending",
        )
        allow, always = False, False
        with contextlib.suppress(Exception):  # a client that cannot answer denies (the office's rule)
            answer = await self.connection.request_permission(
                session_id=session_id, tool_call=tool_call, options=options
            )
            outcome = answer.outcome
            if getattr(outcome, "outcome", "") == "selected":
                allow = outcome.option_id in ("allow_once", "allow_always")
                always = outcome.option_id == "allow_always"
        await remote.answer_permission(
            request.request_id, allow, always=always, message="" if allow else "Denied in the chat."
        )

    async def _update(self, session_id: str, update: Any) -> None:
        await self.connection.session_update(session_id=session_id, update=update)

    def _response(self, reply: Reply, usage: dict[str, Any]) -> schema.PromptResponse:
        meta = {"elynav": {"ask_id": reply.ask_id, "outcome": reply.outcome, "cost_usd": reply.cost_usd}}
        if reply.outcome in ("failed", "timeout"):
            raise acp.RequestError(
                -32603,
                f"{reply.error_code}: {reply.error}"
                if reply.error_code
                else reply.error or f"the ask {reply.outcome}",
                {"code": reply.error_code, "outcome": reply.outcome, "ask_id": reply.ask_id},
            )
        return schema.PromptResponse(
            stop_reason="cancelled" if reply.outcome == "cancelled" else "end_turn",
            usage=_usage(usage),
            field_meta=meta,
        )

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """The user's cancel of every ask of this session (queued or running); their replies end the prompts."""
        for remote in list(self.asks.get(session_id, [])):
            await remote.cancel()

    async def close_all(self) -> None:
        """Hang up every ask still open (the client went away): the office cancels them."""
        for session_asks in self.asks.values():
            for remote in list(session_asks):
                await remote.close()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def _prompt_text(prompt: list[Any]) -> str:
    parts: list[str] = []
    for block in prompt:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[{block.name}]({block.uri})")
        elif kind == "resource" and hasattr(block.resource, "text"):
            parts.append(f"<resource uri={block.resource.uri!r}>\n{block.resource.text}\n</resource>")
    return "\n".join(parts)


def _usage(usage: dict[str, Any]) -> schema.Usage | None:
    """ACP's usage of the tokens the CLI reported (our snake_case keys), None when it reported none."""
    input_tokens = usage.get("input_tokens")
    output_tokens = usage.get("output_tokens")
    if not isinstance(input_tokens, int) or not isinstance(output_tokens, int):
        return None
    return schema.Usage(
        total_tokens=input_tokens + output_tokens,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_read_tokens=usage.get("cache_read_input_tokens"),
        cached_write_tokens=usage.get("cache_creation_input_tokens"),
    )
