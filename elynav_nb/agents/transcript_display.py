"""A turn's events as people read them: terminal text, and the HTML of the transcript (pure: no I/O).

Where it sits: below every place that shows a turn. ``elynav demo`` and the magics outside a
notebook frontend print ``event_text`` as events stream; a ``Turn``'s text form (``text/plain``) is
``transcript_text``; its HTML form (``text/html``, what a saved notebook shows without widget state)
is ``transcript_html``; the live ``TurnView`` (``elynav_nb.widgets``) builds its rows with the same
``*_html`` functions, so the live view and the saved one read alike.

How data flows::

    AgentEvent -> event_text(event, tool_names)  -> "" (not shown), a piece of answer, or "\\n  → line\\n"
    [events]   -> transcript_text(events)         -> the answer with one line per tool call, result, error
    [events]   -> transcript_html(events)         -> <span> text runs, <details> tool rows, error rows

A tool result is one line in a terminal: its size and the start of its first line, cut with ``…``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import Any

from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    HookFailed,
    PermissionRequest,
    PermissionWithdrawn,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)

__all__ = [
    "ERROR_STYLE",
    "MUTED_STYLE",
    "RESULT_LINE_CHARS",
    "SEGMENT_STYLES",
    "SUMMARY_LIMIT",
    "TOOL_TEXT_LIMIT",
    "ABORTED_STATUSES",
    "ended_with_error_text",
    "event_text",
    "limited_block",
    "outcome_row_html",
    "permission_decision",
    "row_html",
    "shorten",
    "tool_input_summary",
    "tool_result_html",
    "tool_result_line",
    "tool_use_html",
    "transcript_html",
    "transcript_text",
]

TOOL_TEXT_LIMIT = 2000  # characters of a tool's input or output shown in the HTML transcript
SUMMARY_LIMIT = 120  # characters of a tool call's one-line summary
RESULT_LINE_CHARS = 100  # characters of a tool result's first line in a terminal

SEGMENT_STYLES = {
    "text": "white-space:pre-wrap",
    "thinking": "white-space:pre-wrap;color:#888;font-style:italic",
    "subagent-text": "white-space:pre-wrap;color:#666",
}
# A cancelled or timed-out turn ends with the CLI's "interrupted" error: the end row says why instead.
ABORTED_STATUSES = ("cancelling", "cancelled", "timeout", "limit")
ROW_STYLE = "margin:2px 0"
ERROR_STYLE = "margin:2px 0;color:#c62828"
MUTED_STYLE = "margin:2px 0;color:#777"


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_input_summary(tool_input: dict[str, Any]) -> str:
    """The one value that best says what a tool call does (a command, a path), else its JSON."""
    for key in ("command", "file_path", "path", "pattern", "url", "query"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value
    return json.dumps(tool_input, ensure_ascii=False, default=str)


def limited_block(text: str) -> str:
    """Escaped text for a ``<pre>``, cut at ``TOOL_TEXT_LIMIT`` characters (the cut is said)."""
    if len(text) <= TOOL_TEXT_LIMIT:
        return html.escape(text)
    hidden = len(text) - TOOL_TEXT_LIMIT
    return html.escape(text[:TOOL_TEXT_LIMIT]) + f"\n… ({hidden} more characters)"


def permission_decision(event: PermissionWithdrawn) -> str:
    """``allowed``, ``denied by the permission handler``, ``expired``...: the decision and who made it."""
    return f"{event.decision} by {event.by}" if event.by else event.decision


def tool_result_line(event: ToolResult) -> str:
    """A tool result in one line: ok or error, its size, the start of its first line (``…`` when cut)."""
    text = event.text.strip()
    first_line = text.splitlines()[0] if text else ""
    shown = shorten(first_line, RESULT_LINE_CHARS)
    if shown != text:  # more lines, or a longer line: say that it is cut
        shown = shown if shown.endswith("…") else shown + " …"
    state = "error" if event.is_error else "ok"
    return f"← {state} ({len(event.text)} characters): {shown}" if text else f"← {state} (empty)"


def event_text(event: AgentEvent, tool_names: dict[str, str] | None = None) -> str:
    """What a terminal shows of one event, as it arrives: the main answer's text as is, everything
    else on lines of its own (indented), "" for events a terminal leaves out (raw lines, ends)."""
    if isinstance(event, TextDelta):
        return event.text if event.parent_tool_use_id is None else ""
    if isinstance(event, AgentStarted):
        failed = [server.name for server in event.mcp_servers if server.status != "connected"]
        servers = ", ".join(f"{server.name} ({server.status})" for server in event.mcp_servers) or "none"
        line = f"session {event.session_id} · model {event.model} · MCP servers: {servers}\n"
        return line + (f"warning: MCP servers not connected: {', '.join(failed)}\n" if failed else "")
    if isinstance(event, ToolUse):
        if tool_names is not None:
            tool_names[event.id] = event.name
        return f"\n  → {event.name} {json.dumps(event.input, ensure_ascii=False, default=str)}\n"
    if isinstance(event, ToolResult):
        return f"  {tool_result_line(event)}\n"
    if isinstance(event, PermissionRequest):
        return f"  ? permission asked for {event.tool_name}"
    if isinstance(event, PermissionWithdrawn):
        return f": {permission_decision(event)}\n"
    if isinstance(event, (AgentError, HookFailed)):
        return f"\n  ! {event.summary()}\n"
    return ""


def transcript_text(events: Iterable[AgentEvent]) -> str:
    """The turn as text: its answer, with a line for each tool call, result, permission and error."""
    tool_names: dict[str, str] = {}
    pieces = [event_text(event, tool_names) for event in events if not isinstance(event, AgentStarted)]
    lines = [line.rstrip() for line in "".join(pieces).strip("\n").splitlines()]
    return "\n".join(line for index, line in enumerate(lines) if line or (index and lines[index - 1]))


def row_html(style: str, css_class: str, text: str) -> str:
    return f"<div class='{css_class}' style='{style}'>{html.escape(text)}</div>"


def tool_use_html(event: ToolUse) -> str:
    """A tool call as a collapsible row: its name and what it does; its whole input inside."""
    summary = shorten(tool_input_summary(event.input), SUMMARY_LIMIT)
    full_input = json.dumps(event.input, ensure_ascii=False, indent=1, default=str)
    return (
        f"<details class='elynav-tool' style='{ROW_STYLE}'><summary style='cursor:pointer;color:#1565c0'>"
        f"tool <b>{html.escape(event.name)}</b> <code>{html.escape(summary)}</code></summary>"
        f"<pre style='margin:0 0 0 1em'>{limited_block(full_input)}</pre></details>"
    )


def tool_result_html(event: ToolResult, name: str) -> str:
    """A tool result as a collapsible row: failed, or its size; its text inside (cut, the cut said)."""
    text = event.text
    if event.is_error:
        heading, color = f"↳ {html.escape(name)} failed", "#c62828"
    else:
        heading, color = f"↳ {html.escape(name)} result ({len(text)} characters)", "#555"
    return (
        f"<details class='elynav-tool-result' style='{ROW_STYLE}'>"
        f"<summary style='cursor:pointer;color:{color}'>{heading}</summary>"
        f"<pre style='margin:0 0 0 1em'>{limited_block(text)}</pre></details>"
    )


def ended_with_error_text(event: TurnEnded) -> str:
    """The row of a CLI's end-of-turn record that says the turn ended in error."""
    reason = "; ".join(event.errors) or event.result or event.terminal_reason or event.subtype
    return f"the agent ended the turn with an error: {reason}"


def outcome_row_html(outcome: str, error_code: str, error: str) -> str:
    """The last row of a settled turn that did not complete ("" when there is nothing to say)."""
    if not error or outcome == "completed":
        return ""
    if outcome == "cancelled":
        return row_html(MUTED_STYLE, "elynav-cancelled", f"cancelled: {error}")
    code = f"{error_code}: " if error_code else ""
    return row_html(ERROR_STYLE, "elynav-error", f"{outcome}: {code}{error}")


def transcript_html(
    events: Iterable[AgentEvent], *, outcome: str = "", error_code: str = "", error: str = ""
) -> str:
    """The turn's transcript as the live view draws it, without the buttons (for saved notebooks);
    ``outcome`` (a settled turn's) adds the row saying why it did not complete."""
    parts: list[str] = []
    tool_names: dict[str, str] = {}
    open_segment = ""
    for event in events:
        segment = ""
        if isinstance(event, TextDelta):
            segment = "text" if event.parent_tool_use_id is None else "subagent-text"
        elif isinstance(event, ThinkingDelta):
            segment = "thinking"
        if segment:
            if segment != open_segment:
                parts.append("</span>" if open_segment else "")
                parts.append(f"<span class='elynav-{segment}' style='{SEGMENT_STYLES[segment]}'>")
                open_segment = segment
            parts.append(html.escape(event.text))  # type: ignore[attr-defined]
            continue
        row = _event_row_html(event, tool_names, aborted=outcome in ABORTED_STATUSES)
        if row:
            if open_segment:
                parts.append("</span>")
                open_segment = ""
            parts.append(row)
    if open_segment:
        parts.append("</span>")
    parts.append(outcome_row_html(outcome, error_code, error))
    return "".join(parts)


def _event_row_html(event: AgentEvent, tool_names: dict[str, str], *, aborted: bool) -> str:
    if isinstance(event, ToolUse):
        tool_names[event.id] = event.name
        return tool_use_html(event)
    if isinstance(event, ToolResult):
        return tool_result_html(event, tool_names.get(event.tool_use_id, "tool"))
    if isinstance(event, PermissionRequest):
        return row_html(MUTED_STYLE, "elynav-permission", f"{event.tool_name} asks permission")
    if isinstance(event, PermissionWithdrawn):
        return row_html(MUTED_STYLE, "elynav-permission", f"permission {permission_decision(event)}")
    if isinstance(event, (AgentError, HookFailed)):
        return row_html(ERROR_STYLE, "elynav-error", event.summary())
    if isinstance(event, TurnEnded) and event.is_error and not aborted:
        return row_html(ERROR_STYLE, "elynav-error", ended_with_error_text(event))
    return ""
