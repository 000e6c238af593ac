"""What a stand-in turn knows: the session's state across turns, the running turn's progress, text helpers.

Where it sits: the data of the stand-in's turns. ``claude_standin`` (the process) makes one
``SessionState`` per process and hands it to each ``TurnRunner`` (``turns``); the runner
keeps the progress of its turn in a ``TurnState``, which the process reads to route interrupts and
permission answers. The constants are the texts the real CLI writes. No I/O here.

How data flows: argv and start-up -> ``SessionState`` (style, session id, rules, MCP hub, transcript,
``emit``) -> every turn; each turn -> ``TurnState`` (API calls, tokens, the open block, the tool in
flight) -> the result line and the abort path. ``message_text`` reads a user message's text;
``split_into_deltas`` and ``estimate_tokens`` shape the streamed reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from elynav_nb.sandbox.claude import wire as wire
from elynav_nb.sandbox.claude.mcp_servers import McpHub
from elynav_nb.sandbox.claude.sessions import SessionStore
from elynav_nb.sandbox.claude.structured import with_structured_output_tool
from elynav_nb.sandbox.claude.tools import BashTool

__all__ = [
    "BudgetExhausted",
    "ECHO_INTRO",
    "FLOOD_BATCH_LINES",
    "NOT_LOGGED_IN",
    "REJECTED_TOOL_TEXT",
    "STANDIN_TAG",
    "STOPPED_WHILE_RUNNING",
    "WORDS_PER_DELTA",
    "SessionState",
    "TurnState",
    "estimate_tokens",
    "message_text",
    "split_into_deltas",
]

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


class BudgetExhausted(Exception):
    """``--max-budget-usd`` was reached after an API response: the turn ends ``error_max_budget_usd``."""


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
    max_budget_usd: float | None
    hub: McpHub
    store: SessionStore
    emit: Callable[[dict[str, Any]], None]
    emit_bytes: Callable[[bytes], None]
    queued_count: Callable[[], int]
    json_schema: dict[str, Any] | None = None  # --json-schema: every turn ends with a StructuredOutput call
    agent_tools_listed: bool = False  # the --agent's own tools list (it must name StructuredOutput)
    total_input_tokens: int = 0
    total_output_tokens: int = 0
    result_index: int = 0
    last_result_is_error: bool | None = None
    pending_permissions: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    hooks: dict[str, Any] = field(default_factory=dict)  # initialize's ``hooks`` (event -> matchers)
    total_cost_usd: float = 0.0

    def over_budget(self) -> bool:
        """``--max-budget-usd`` counts the whole process, as on the real CLI."""
        return self.max_budget_usd is not None and self.total_cost_usd >= self.max_budget_usd

    def reported_permission_mode(self) -> str:
        return "default" if self.permission_mode == "manual" else self.permission_mode

    @property
    def structured_output_offered(self) -> bool:
        """``--json-schema`` adds ``StructuredOutput``, except to an agent whose tools list lacks it (2.1.332)."""
        if self.json_schema is None:
            return False
        return not self.agent_tools_listed or "StructuredOutput" in self.base_tools

    def init_tools(self) -> list[str]:
        tools = list(self.base_tools)
        if self.structured_output_offered:
            tools = with_structured_output_tool(tools)
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
    pending_hook_id: str | None = None
    cost_per_response: float = 0.0
    last_tool_response: Any = None
    hook_notes: list[str] = field(default_factory=list)
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
