"""Typed events of one agent conversation, shared by every CLI adapter (claude, codex, gemini).

Where it sits: the pure codecs in ``elynav_nb.agents.protocols`` turn stdout lines into these objects;
the runner collects them per turn; widgets, DataFrames and the office read them. No I/O here.

Data flow: stdout line -> codec -> ``AgentEvent`` subclasses (conversation) or ``ControlFrame``
subclasses (control protocol, handled by the runner, never shown as conversation) -> ``Turn``.

Each event has ``kind`` (a short stable name used in tables) and ``to_row()`` (one dict per event,
the rows of ``TurnResult.to_frame()``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = [
    "AgentError",
    "AgentEvent",
    "AgentStarted",
    "ControlCancel",
    "ControlFrame",
    "ControlRequest",
    "ControlResponse",
    "HookDenied",
    "HookFailed",
    "McpServerStatus",
    "PermissionRequest",
    "PermissionWithdrawn",
    "RawEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolResult",
    "ToolUse",
    "TurnEnded",
]

_SUMMARY_LIMIT = 200


def _short(value: Any, limit: int = _SUMMARY_LIMIT) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """Base of conversation events. ``parent_tool_use_id`` is set on a subagent's events."""

    kind: ClassVar[str] = "event"

    def summary(self) -> str:
        """One short line describing the event (tables, terminal transcripts)."""
        return ""

    def to_row(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "summary": self.summary(),
            "parent_tool_use_id": getattr(self, "parent_tool_use_id", None),
        }


@dataclass(frozen=True, slots=True)
class McpServerStatus:
    """One MCP server as the CLI reports it in ``system/init`` (``connected``, ``failed``...)."""

    name: str
    status: str


@dataclass(frozen=True, slots=True)
class AgentStarted(AgentEvent):
    """A turn began (claude ``system/init``; codex ``thread.started``; gemini ``init``)."""

    kind: ClassVar[str] = "started"
    session_id: str
    model: str = ""
    tools: tuple[str, ...] = ()
    mcp_servers: tuple[McpServerStatus, ...] = ()
    agents: tuple[str, ...] = ()
    permission_mode: str = ""
    cli_version: str = ""
    is_standin: bool = False

    def summary(self) -> str:
        failed = [server.name for server in self.mcp_servers if server.status != "connected"]
        text = f"session {self.session_id} · model {self.model} · {len(self.tools)} tools"
        if failed:
            text += f" · MCP not connected: {', '.join(failed)}"
        return text


@dataclass(frozen=True, slots=True)
class TextDelta(AgentEvent):
    """A piece of the assistant's visible answer (in a turn's stored events: a run of them, joined)."""

    kind: ClassVar[str] = "text"
    text: str
    parent_tool_use_id: str | None = None

    def summary(self) -> str:
        return _short(self.text)


@dataclass(frozen=True, slots=True)
class ThinkingDelta(AgentEvent):
    """A piece of the model's reasoning, when the CLI shows it (stored events: a run of them, joined)."""

    kind: ClassVar[str] = "thinking"
    text: str
    parent_tool_use_id: str | None = None

    def summary(self) -> str:
        return _short(self.text)


@dataclass(frozen=True, slots=True)
class ToolUse(AgentEvent):
    """The model calls a tool (complete input)."""

    kind: ClassVar[str] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    parent_tool_use_id: str | None = None

    def summary(self) -> str:
        return f"{self.name} {_short(self.input, 160)}"


@dataclass(frozen=True, slots=True)
class ToolResult(AgentEvent):
    """A tool answered. ``content`` is a string or a list of content blocks.

    ``denial`` says who refused the call and why when one of the runner's hooks denied it on
    purpose (``HookDenied``; the turn sets it): ``content`` keeps the CLI's own words (claude's
    ``PreToolUse:<tool> hook error: <reason>``), the summary reads as the deny it was.
    """

    kind: ClassVar[str] = "tool_result"
    tool_use_id: str
    content: str | list[Any] = ""
    is_error: bool = False
    parent_tool_use_id: str | None = None
    denial: str = ""

    @property
    def text(self) -> str:
        """The text of the result, blocks joined."""
        if isinstance(self.content, str):
            return self.content
        parts = []
        for block in self.content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(_short(block))
        return "\n".join(parts)

    def summary(self) -> str:
        if self.denial:
            return _short(self.denial, 160)
        return ("error: " if self.is_error else "") + _short(self.text, 160)


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """An answer to a permission prompt: ``allowed``; a denial's ``message`` (the model reads it); an
    allow's ``updated_input`` (None: as asked) and ``always`` (the rest of the session, where the CLI can)."""

    allowed: bool
    message: str = ""
    updated_input: dict[str, Any] | None = None
    always: bool = False
    by: str = "the user"  # who answered (``PermissionWithdrawn.by``): the user, or the permission handler


@dataclass(frozen=True, slots=True)
class PermissionRequest(AgentEvent):
    """The CLI asks whether a tool may run (``can_use_tool``). Answer with ``allow()``/``deny()``.

    The runner attaches ``responder``; until answered the agent waits, and an unanswered
    request is denied when the runner's permission timeout expires.
    """

    kind: ClassVar[str] = "permission"
    request_id: str
    tool_name: str
    input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str = ""
    description: str = ""
    # the choices the agent offers, where it names them (ACP: ``optionId``, ``name``, ``kind`` =
    # allow_once / allow_always / reject_once / reject_always); empty for claude and codex
    options: tuple[dict[str, Any], ...] = ()
    responder: Callable[[PermissionRequest, PermissionAnswer], None] | None = field(
        default=None, compare=False, repr=False
    )

    @property
    def offers_always(self) -> bool:
        """Whether the agent names an option that allows such calls for the rest of the session (ACP)."""
        return any(option.get("kind") == "allow_always" for option in self.options)

    def allow(self, updated_input: dict[str, Any] | None = None, *, always: bool = False) -> None:
        """Let the tool run (with ``updated_input`` instead of the asked input, if given).

        ``always=True`` also allows the same kind of call for the rest of the session, where the CLI
        can (an ACP ``allow_always`` option, codex's ``acceptForSession``); elsewhere it allows once.
        """
        self._answer(PermissionAnswer(True, "", updated_input, always))

    def deny(self, message: str = "Denied by the user.") -> None:
        """Refuse the tool; the model reads ``message``."""
        self._answer(PermissionAnswer(False, message))

    def _answer(self, answer: PermissionAnswer) -> None:
        if self.responder is None:
            from elynav_nb.errors import InvalidInput

            raise InvalidInput("this permission request is not attached to a running turn")
        self.responder(self, answer)

    def summary(self) -> str:
        return f"{self.tool_name} asks permission: {_short(self.input, 160)}"


@dataclass(frozen=True, slots=True)
class PermissionWithdrawn(AgentEvent):
    """The CLI withdrew a pending permission request (an interrupt overtook it), or it was answered.

    ``decision``: ``allowed``, ``denied``, ``expired`` (nobody answered in time) or ``withdrawn``;
    ``by`` says who answered: ``the user`` (``allow()`` / ``deny()``: a button or a cell's code) or
    ``the permission handler`` ("" when nobody did).
    """

    kind: ClassVar[str] = "permission_closed"
    request_id: str
    decision: str = "withdrawn"
    by: str = ""

    def summary(self) -> str:
        return f"{self.request_id}: {self.decision}" + (f" by {self.by}" if self.by else "")


@dataclass(frozen=True, slots=True)
class TurnEnded(AgentEvent):
    """The CLI's end-of-turn record (claude ``result``). ``total_cost_usd`` is cumulative per process."""

    kind: ClassVar[str] = "ended"
    subtype: str
    is_error: bool
    result: str = ""
    session_id: str = ""
    total_cost_usd: float = 0.0
    usage: dict[str, Any] = field(default_factory=dict)
    duration_ms: int = 0
    duration_api_ms: int = 0
    num_turns: int = 0
    permission_denials: tuple[dict[str, Any], ...] = ()
    terminal_reason: str = ""
    stop_reason: str | None = None
    errors: tuple[str, ...] = ()
    structured_output: Any = None  # claude --json-schema: the StructuredOutput tool's input (None: none)
    error_code: str = ""  # the stable code of an error end, where the protocol says one (ACP: CLI_ERROR...)

    def summary(self) -> str:
        state = "error" if self.is_error else "ok"
        text = f"{state} ({self.terminal_reason or self.subtype})"
        if self.duration_ms or self.num_turns:  # ACP reports neither: not said as "0 ms"
            text += f" in {self.duration_ms} ms, {self.num_turns} API round trips"
        return text


@dataclass(frozen=True, slots=True)
class AgentError(AgentEvent):
    """Something went wrong but the conversation goes on (a bad line, an API error...).

    ``code`` is stable: ``INVALID_JSON``, ``LINE_TOO_LONG``, ``API_ERROR``, ``CLI_EXITED``...
    ``excerpt`` is the start of the offending line, when there is one.
    """

    kind: ClassVar[str] = "error"
    message: str
    code: str = "AGENT_ERROR"
    excerpt: str = ""

    def summary(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True, slots=True)
class HookDenied(AgentEvent):
    """A hook callback denied a tool call on purpose (``deny(reason)``): not an error of the hook.

    ``reason`` is the callback's reason (redacted, as the model reads it); ``callback`` names the
    function. The denied call's ``ToolResult`` then carries the same words in ``denial``.
    """

    kind: ClassVar[str] = "hook_denied"
    event: str
    tool_name: str
    reason: str
    tool_use_id: str = ""
    callback: str = ""

    def summary(self) -> str:
        return f"denied by the {self.event} hook {self.callback or '?'} on {self.tool_name}: {self.reason}"


@dataclass(frozen=True, slots=True)
class HookFailed(AgentEvent):
    """A hook callback raised or took longer than its timeout: the tool call it was asked about was denied.

    ``code`` is ``HOOK_FAILED`` (it raised, or returned something that is not a decision) or
    ``HOOK_TIMEOUT``; ``callback`` names the function; ``message`` says what happened.
    """

    kind: ClassVar[str] = "hook_failed"
    event: str
    tool_name: str
    message: str
    code: str = "HOOK_FAILED"
    tool_use_id: str = ""
    callback: str = ""

    def summary(self) -> str:
        return f"{self.code}: {self.event} hook {self.callback or '?'} on {self.tool_name}: {self.message} (denied)"


@dataclass(frozen=True, slots=True)
class RawEvent(AgentEvent):
    """A line of a type we do not model (kept, never dropped): ``type``/``subtype`` and the data."""

    kind: ClassVar[str] = "raw"
    type: str
    subtype: str = ""
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    def summary(self) -> str:
        """``type/subtype``, and the line's ``status`` when it has one (claude's ``system/status:
        requesting``: the CLI is calling the model)."""
        text = f"{self.type}/{self.subtype}" if self.subtype else self.type
        status = self.data.get("status")
        return f"{text}: {status}" if isinstance(status, str) and status else text


@dataclass(frozen=True, slots=True)
class ControlFrame:
    """Base of control-protocol frames: routed by the runner, never shown as conversation."""

    request_id: str


@dataclass(frozen=True, slots=True)
class ControlRequest(ControlFrame):
    """A request the CLI sends us (``hook_callback``, ``mcp_message``...) other than ``can_use_tool``."""

    subtype: str
    request: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ControlResponse(ControlFrame):
    """The CLI's answer to one of our control requests."""

    ok: bool
    response: dict[str, Any] = field(default_factory=dict)
    error: str = ""


@dataclass(frozen=True, slots=True)
class ControlCancel(ControlFrame):
    """The CLI withdraws one of its own pending requests (``control_cancel_request``)."""
