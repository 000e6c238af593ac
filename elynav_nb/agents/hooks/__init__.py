"""Hooks: Python callbacks that see each tool call of an agent and may allow it, deny it or change its input.

The public face of ``agents/hooks/`` (``from elynav_nb.agents.hooks.rules import HookMatcher, deny, rewrite``):
the rules and decisions (``rules.py``: pure; its docstring is the user's guide), the runner that
calls the callbacks within their timeouts (``runner.py``), the hook socket of the CLIs that run
hooks as commands (``server.py``) and the command they run (``command.py``, a plain script).
"""

from elynav_nb.agents.hooks.rules import (
    CLAUDE_HOOKS,
    CLAUDE_TIMEOUT_MARGIN,
    DEFAULT_HOOK_TIMEOUT,
    HOOK_EVENTS,
    HookCall,
    HookCallback,
    HookDecision,
    HookDialect,
    HookEntry,
    HookEvent,
    HookMatcher,
    Hooks,
    HookSet,
    allow,
    callback_name,
    claude_callback_id,
    claude_deny_reason,
    claude_hook_output,
    claude_initialize_hooks,
    deny,
    hook_call_from_claude,
    normalise_hooks,
    rewrite,
)

__all__ = [
    "CLAUDE_HOOKS",
    "CLAUDE_TIMEOUT_MARGIN",
    "HOOK_EVENTS",
    "DEFAULT_HOOK_TIMEOUT",
    "HookCall",
    "HookCallback",
    "HookDecision",
    "HookDialect",
    "HookEntry",
    "HookEvent",
    "HookMatcher",
    "HookSet",
    "Hooks",
    "allow",
    "callback_name",
    "claude_callback_id",
    "claude_deny_reason",
    "claude_hook_output",
    "claude_initialize_hooks",
    "deny",
    "hook_call_from_claude",
    "normalise_hooks",
    "rewrite",
]
