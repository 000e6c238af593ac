"""codex exec's command hooks as the runner's hooks: the ``hooks.json`` that registers them, an input, an answer; pure.

Facts (codex 0.171.0 ``exec --json``, checked offline on the real binary): with ``-c
features.hooks=true``, ``$CODEX_HOME/hooks.json`` ``{"hooks": {"PreToolUse": [{"matcher"?, "hooks":
[{"type": "command", "command", "timeout" (s)}]}], "PostToolUse": [...]}}`` runs the command for
each tool call, but only hooks the user trusted run, unless ``--dangerously-bypass-hook-trust`` is
given (the runner gives it, for its own hooks in its own ``CODEX_HOME``, and refuses a workspace
that brings hooks of its own: they would run unreviewed). The command's stdin is claude's shape
``{session_id, turn_id, transcript_path, cwd, hook_event_name, model, permission_mode, tool_name
("Bash"), tool_input {"command"}, tool_use_id}`` (``PostToolUse`` adds ``tool_response``, the
output text); its stdout:

- ``PreToolUse`` deny: ``hookSpecificOutput.permissionDecision: "deny"`` + ``permissionDecisionReason``
  (the model reads ``Command blocked by PreToolUse hook: <reason>. Command: <command>``);
- rewrite: ``permissionDecision: "allow"`` + ``updatedInput`` (codex refuses ``updatedInput``
  without a decision);
- ``PostToolUse`` deny: ``decision: "block"`` + ``reason`` (the model reads the reason instead
  of the output); ``{}``: no opinion.

``codex app-server`` 0.171.0 has the same hooks but no way to skip the trust review (the
``bypass_hook_trust`` config key is ignored there): its runner says so in ``limitations``.

Where it sits: like ``gemini/hooks.py``: the per-turn driver writes ``codex_hooks_file`` into the
runner's ``CODEX_HOME``; each hook command (``hooks/command.py``) reaches ``HookRunner.serve`` (``CODEX_HOOKS``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from elynav_nb.agents.hooks.rules import (
    CLAUDE_TIMEOUT_MARGIN,
    HOOK_EVENTS,
    HookCall,
    HookDecision,
    HookDialect,
    HookEvent,
    HookSet,
    claude_hook_output,
)
from elynav_nb.errors import InvalidInput

__all__ = [
    "CODEX_HOOKS",
    "CODEX_HOOK_ARGUMENTS",
    "CODEX_HOOK_CONFIG",
    "codex_hook_output",
    "codex_hooks_file",
    "hook_call_from_codex",
    "workspace_codex_hooks",
]

CODEX_HOOK_CONFIG: dict[str, Any] = {"features.hooks": True}
CODEX_HOOK_ARGUMENTS: tuple[str, ...] = ("--dangerously-bypass-hook-trust",)


def codex_hooks_file(hooks: HookSet, command: Sequence[str]) -> dict[str, Any]:
    """The content of ``$CODEX_HOME/hooks.json`` (every tool: the matching is ours)."""
    return {
        "hooks": {
            event: [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": shlex.join(command),
                            "timeout": int(hooks.total_timeout(event) + CLAUDE_TIMEOUT_MARGIN),
                        }
                    ]
                }
            ]
            for event in hooks.events
        }
    }


def workspace_codex_hooks(workspace: Path) -> list[Path]:
    """The hook files a workspace brings for codex (``.codex/hooks.json``, ``[hooks`` in ``.codex/config.toml``)."""
    found = []
    folder = workspace / ".codex"
    if (folder / "hooks.json").is_file():
        found.append(folder / "hooks.json")
    config = folder / "config.toml"
    try:
        if config.is_file() and "[hooks" in config.read_text(encoding="utf-8"):
            found.append(config)
    except OSError:
        found.append(config)
    return found


def hook_call_from_codex(data: Mapping[str, Any]) -> HookCall:
    """The ``HookCall`` of one hook command's stdin (``INVALID_INPUT`` for an event we did not register)."""
    event = str(data.get("hook_event_name") or "")
    if event not in HOOK_EVENTS:
        raise InvalidInput(f"not a tool hook of ours: {event!r}")
    tool_input = data.get("tool_input")
    return HookCall(
        event=event,  # type: ignore[arg-type]  # checked against HOOK_EVENTS above
        tool_name=str(data.get("tool_name") or ""),
        tool_input=dict(tool_input) if isinstance(tool_input, Mapping) else {},
        tool_use_id=str(data.get("tool_use_id") or ""),
        session_id=str(data.get("session_id") or ""),
        tool_response=data.get("tool_response"),
        raw=dict(data),
    )


def codex_hook_output(event: HookEvent, decision: HookDecision | None) -> dict[str, Any]:
    """What the hook command prints for ``decision`` (claude's shape, but a rewrite says ``allow``)."""
    if event == "PreToolUse" and decision is not None and decision.behavior == "rewrite":
        return {
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "allow",
                "updatedInput": dict(decision.updated_input or {}),
            }
        }
    return claude_hook_output(event, decision)


CODEX_HOOKS = HookDialect(hook_call_from_codex, codex_hook_output)
"""codex's dialect: its hook command's stdin in, the hook output it reads on stdout out."""
