"""gemini's command hooks as the runner's hooks: the settings that register them, a hook input, a decision; pure.

Facts (gemini 0.61.0, headless ``-o stream-json``, checked offline on the real binary): the
``hooks`` key of ``settings.json`` — ``{"BeforeTool": [{"matcher"?, "hooks": [{"type": "command",
"command", "name", "timeout" (ms)}]}], "AfterTool": [...]}`` — runs the command for each tool call
(no matcher: every tool), its stdin one JSON object ``{session_id, transcript_path, cwd,
hook_event_name, timestamp, tool_name, tool_input}`` (``AfterTool`` adds ``tool_response``
``{llmContent, returnDisplay}``; there is no tool call id), its stdout one JSON object:

- ``{"decision": "deny", "reason": R}`` before a tool: it does not run, the model reads
  ``Tool execution blocked: R``; after it: the model reads ``R`` instead of the result.
- ``{"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {...}}}``: the tool runs
  with that input (the model is told "Tool input parameters were modified by a hook").
- ``{}``: no opinion.

Where it sits: the per-turn driver writes ``gemini_hook_settings`` into the runner's gemini home;
each hook command (``hooks/command.py``) hands its stdin to the runner's ``HookCommandServer``,
which asks ``HookRunner.serve`` (``hook_call_from_gemini`` -> run -> ``gemini_hook_output``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from elynav_nb.agents.hooks.rules import (
    CLAUDE_TIMEOUT_MARGIN,
    HookCall,
    HookDecision,
    HookDialect,
    HookEvent,
    HookSet,
)
from elynav_nb.errors import InvalidInput

__all__ = [
    "GEMINI_HOOKS",
    "GEMINI_HOOK_EVENTS",
    "gemini_hook_output",
    "gemini_hook_settings",
    "hook_call_from_gemini",
]

GEMINI_HOOK_EVENTS: dict[HookEvent, str] = {"PreToolUse": "BeforeTool", "PostToolUse": "AfterTool"}
_OUR_EVENTS = {gemini: ours for ours, gemini in GEMINI_HOOK_EVENTS.items()}
HOOK_NAME = "elynav"


def gemini_hook_settings(
    hooks: HookSet, command: Sequence[str], user_hooks: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The ``hooks`` value of ``settings.json``: the user's own (``cli_config``) then ours, per event."""
    merged: dict[str, Any] = {name: list(value) for name, value in (user_hooks or {}).items()}
    for event in hooks.events:
        entry = {
            "hooks": [
                {
                    "type": "command",
                    "command": shlex.join(command),
                    "name": HOOK_NAME,
                    "timeout": int((hooks.total_timeout(event) + CLAUDE_TIMEOUT_MARGIN) * 1000),
                }
            ]
        }
        merged.setdefault(GEMINI_HOOK_EVENTS[event], []).append(entry)
    return merged


def hook_call_from_gemini(data: Mapping[str, Any]) -> HookCall:
    """The ``HookCall`` of one hook command's stdin (``INVALID_INPUT`` for an event we did not register)."""
    event = _OUR_EVENTS.get(str(data.get("hook_event_name") or ""))
    if event is None:
        raise InvalidInput(f"not a tool hook of ours: {data.get('hook_event_name')!r}")
    tool_input = data.get("tool_input")
    return HookCall(
        event=event,
        tool_name=str(data.get("tool_name") or ""),
        tool_input=dict(tool_input) if isinstance(tool_input, Mapping) else {},
        session_id=str(data.get("session_id") or ""),
        tool_response=data.get("tool_response"),
        raw=dict(data),
    )


def gemini_hook_output(event: HookEvent, decision: HookDecision | None) -> dict[str, Any]:
    """What the hook command prints for ``decision`` (see the module docstring)."""
    if decision is None or decision.behavior == "allow":
        return {}
    if decision.behavior == "deny":
        return {"decision": "deny", "reason": decision.reason}
    return {
        "hookSpecificOutput": {
            "hookEventName": GEMINI_HOOK_EVENTS[event],
            "tool_input": dict(decision.updated_input or {}),
        }
    }


GEMINI_HOOKS = HookDialect(hook_call_from_gemini, gemini_hook_output)
"""gemini's dialect: its hook command's stdin in, the hook output it reads on stdout out."""
