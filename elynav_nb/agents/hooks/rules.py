"""Hooks: Python callbacks that see each tool call of an agent and may allow it, deny it or change its input.

What a user writes::

    from elynav_nb.agents.hooks import HookMatcher, deny, rewrite

    def no_rm(call):                       # sync or async; gets a HookCall
        if "rm " in call.tool_input.get("command", ""):
            return deny("no rm in this notebook")
        return None                        # no opinion

    runner = AgentRunner(agent, workspace, hooks={
        "PreToolUse": [("Bash", no_rm), HookMatcher(audit, timeout=2.0)],
        "PostToolUse": log_result,
    })

The events are ``PreToolUse`` (before a tool runs: the answer may deny it or rewrite its input) and
``PostToolUse`` (after it ran, with ``call.tool_response``: a deny there tells the model the reason
beside the result; a rewrite is refused). A value is a callback, a ``(matcher, callback)`` pair, a
``HookMatcher`` or a list of those. ``matcher`` is a tool name or names joined by ``|``
(``"Bash|Write"``); None or ``"*"`` match every tool. Callbacks of one event run one after the
other, in the order given, for the tools they match: the first deny ends the run (later callbacks
are not called), a rewrite hands the new input to the next callback.

A callback returns None (no opinion), ``allow()`` (no objection: the CLI's permission rules still
apply; it approves nothing the permission mode would prompt for), ``deny(reason)`` (the tool does not
run; the model reads the reason as the tool's error) or ``rewrite(new_input)`` (the tool runs with
``new_input``; the ``ToolUse`` event keeps what the model asked, the tool's result shows what ran).
A callback that raises, returns anything else, or takes longer than its timeout (``HookMatcher
.timeout``, else the runner's ``hook_timeout``, 5 s by default) **denies**, and the turn gets a
``HookFailed`` event saying why. An async callback is cut at its timeout; a sync one runs on the
kernel's loop and cannot be cut while it runs: its late answer is replaced by a deny.

Where it sits: the pure part of hooks (this module: the config normalised into a ``HookSet``, the
decisions, and how a decision reads in claude's hook output; gemini's and codex's in
``protocols/gemini/hooks.py`` and ``protocols/codex/hooks.py``) under the running part (``hooks/runner.HookRunner``:
calls the callbacks with their timeouts, reports ``HookFailed``). No I/O here.

How data flows, claude (native hooks through the control protocol)::

    HookSet -> claude_initialize_hooks -> initialize {hooks: {PreToolUse: [{matcher: null,
      hookCallbackIds: ["elynav_PreToolUse"], timeout}]}} -> every tool call: a ``hook_callback``
      control request -> hook_call_from_claude -> HookRunner.run -> HookDecision
      -> claude_hook_output -> the control response

One callback id per event with no CLI-side matcher: the matching and the order are ours, so a
claude tool and a kernel tool meet the same rules. The CLI-side timeout is the sum of that event's
timeouts plus a margin, so our own deny always answers first.

gemini 0.61.0 and codex 0.171.0 ``exec`` (their own command hooks, verified on the binaries)::

    HookSet -> gemini ``settings.json`` hooks / codex ``$CODEX_HOME/hooks.json`` (``protocols/gemini/hooks.py``,
      ``protocols/codex/hooks.py``): one command per event, ``hooks/command.py`` -> the runner's
      ``HookCommandServer`` (a private Unix socket and a token) -> HookRunner.serve -> the
      CLI's hook output on the command's stdout

A ``HookCall``'s ``tool_name`` is the CLI's own name (claude and codex ``Bash``, gemini
``run_shell_command``; MCP tools ``mcp__<server>__<tool>``, gemini ``mcp_<server>_<tool>``), so a
matcher names the tools of the CLI it runs on.

Kernel tools (the contract for the kernel tool server): kernel tools reach the CLIs as MCP tools,
and wherever the CLI runs the hooks itself (``runner.capabilities.native_tool_hooks``: claude, gemini,
codex exec) its hooks already see those calls (verified on the three binaries with an MCP tool): the
server must not apply them a second time. Where it cannot (codex app-server), the server calls
``await runner.hooks.before_tool(name, arguments, tool_use_id=...)`` before running the function and
acts on the ``HookDecision`` it returns (None or allow: run it; deny: answer a tool error holding
``decision.reason``, do not run; rewrite: run it with ``decision.updated_input``), then ``await
runner.hooks.after_tool(name, arguments, result, tool_use_id=...)`` (deny: answer a tool error
holding the reason instead of the result). ``name`` is the tool's name as the model sees it. Neither
raises for a callback's failure: that is a deny, reported in the turn as ``HookFailed``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from elynav_nb.errors import InvalidInput

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

HookEvent = Literal["PreToolUse", "PostToolUse"]
HOOK_EVENTS: tuple[str, ...] = get_args(HookEvent)
DEFAULT_HOOK_TIMEOUT = 5.0
CLAUDE_TIMEOUT_MARGIN = 5.0
_CLAUDE_CALLBACK_PREFIX = "elynav_"
_MATCHER_SYNTAX = re.compile(r"[A-Za-z0-9_.:\-]+(\|[A-Za-z0-9_.:\-]+)*")


@dataclass(frozen=True)
class HookCall:
    """What a hook callback is asked about: one tool call, before (``PreToolUse``) or after it ran.

    ``tool_input`` is the input as it stands (a rewrite by an earlier callback included);
    ``tool_response`` is the tool's output (``PostToolUse`` only); ``raw`` is the CLI's whole hook
    input where there is one (claude: ``cwd``, ``permission_mode``, ``transcript_path``...).
    """

    event: HookEvent
    tool_name: str
    tool_input: dict[str, Any]
    tool_use_id: str = ""
    session_id: str = ""
    tool_response: Any = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class HookDecision:
    """A callback's answer: ``allow``, ``deny`` (with ``reason``) or ``rewrite`` (with ``updated_input``)."""

    behavior: Literal["allow", "deny", "rewrite"]
    reason: str = ""
    updated_input: dict[str, Any] | None = None

    @property
    def denied(self) -> bool:
        return self.behavior == "deny"


def allow(reason: str = "") -> HookDecision:
    """No objection (the CLI's permission rules still decide)."""
    return HookDecision("allow", reason)


def deny(reason: str = "Denied by a hook.") -> HookDecision:
    """The tool does not run; the model reads ``reason``."""
    return HookDecision("deny", reason or "Denied by a hook.")


def rewrite(new_input: Mapping[str, Any], reason: str = "") -> HookDecision:
    """The tool runs with ``new_input`` instead of the input the model gave."""
    if not isinstance(new_input, Mapping):
        raise InvalidInput(f"rewrite() takes the new tool input as a dict, not {type(new_input).__name__}")
    return HookDecision("rewrite", reason, dict(new_input))


HookCallback = Callable[[HookCall], "HookDecision | None | Awaitable[HookDecision | None]"]


@dataclass(frozen=True)
class HookMatcher:
    """A callback with the tools it is for (``matcher``: a name or ``A|B``; None: all) and its timeout."""

    callback: HookCallback
    matcher: str | None = None
    timeout: float | None = None


@dataclass(frozen=True)
class HookEntry:
    """One callback of one event, normalised (see ``normalise_hooks``)."""

    event: HookEvent
    callback: HookCallback
    tool_names: frozenset[str] | None  # None: every tool
    timeout: float
    matcher: str | None

    def matches(self, tool_name: str) -> bool:
        return self.tool_names is None or tool_name in self.tool_names

    @property
    def name(self) -> str:
        return callback_name(self.callback)


@dataclass(frozen=True)
class HookSet:
    """The hooks of one runner, in order (empty: no hooks)."""

    entries: tuple[HookEntry, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def events(self) -> tuple[HookEvent, ...]:
        seen: list[HookEvent] = []
        for entry in self.entries:
            if entry.event not in seen:
                seen.append(entry.event)
        return tuple(seen)

    def matching(self, event: HookEvent, tool_name: str) -> tuple[HookEntry, ...]:
        return tuple(entry for entry in self.entries if entry.event == event and entry.matches(tool_name))

    def total_timeout(self, event: HookEvent) -> float:
        return sum(entry.timeout for entry in self.entries if entry.event == event)


@dataclass(frozen=True)
class HookDialect:
    """How one CLI asks about a tool call and reads the answer: its hook input -> ``HookCall``, and a
    ``HookDecision`` -> its hook output (claude's ``hook_callback`` requests; gemini's and codex's hook commands)."""

    call_from: Callable[[Mapping[str, Any]], HookCall]
    output: Callable[[HookEvent, HookDecision | None], dict[str, Any]]
    deny_reason: Callable[[str], str] | None = (
        None  # how a callback's deliberate deny is worded (None: as is)
    )


Hooks = Mapping[str, Any]
"""What ``AgentRunner(hooks=...)`` takes: event name -> callback | (matcher, callback) | HookMatcher | list."""


def callback_name(callback: Any) -> str:
    return str(
        getattr(callback, "__qualname__", None) or getattr(callback, "__name__", None) or repr(callback)
    )


def normalise_hooks(
    hooks: Hooks | HookSet | None, *, default_timeout: float = DEFAULT_HOOK_TIMEOUT
) -> HookSet:
    """The ``HookSet`` of a runner's ``hooks=`` (``INVALID_INPUT`` for an unknown event or a bad item)."""
    if hooks is None:
        return HookSet()
    if isinstance(hooks, HookSet):
        return hooks
    if not isinstance(hooks, Mapping):
        raise InvalidInput(f"hooks is a dict of event name -> callbacks, not {type(hooks).__name__}")
    if default_timeout <= 0:
        raise InvalidInput("hook_timeout must be a positive number of seconds")
    entries: list[HookEntry] = []
    for event, value in hooks.items():
        if event not in HOOK_EVENTS:
            raise InvalidInput(
                f"unknown hook event {event!r}: the hooks elynav_nb runs on every CLI are {', '.join(HOOK_EVENTS)}"
            )
        checked_event: HookEvent = event  # type: ignore[assignment]  # one of HOOK_EVENTS (checked above)
        for item in _items_of(value):
            entries.append(_entry_of(checked_event, item, default_timeout))
    return HookSet(tuple(entries))


def _items_of(value: Any) -> list[Any]:
    if _is_pair(value) or isinstance(value, HookMatcher) or callable(value):
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    raise InvalidInput(f"a hook is a callable, a (matcher, callable) pair or a HookMatcher, not {value!r}")


def _is_pair(value: Any) -> bool:
    return (
        isinstance(value, tuple | list)
        and len(value) == 2
        and (value[0] is None or isinstance(value[0], str))
        and callable(value[1])
    )


def _entry_of(event: HookEvent, item: Any, default_timeout: float) -> HookEntry:
    if isinstance(item, HookMatcher):
        matcher, callback, timeout = item.matcher, item.callback, item.timeout
    elif _is_pair(item):
        matcher, callback, timeout = item[0], item[1], None
    elif callable(item):
        matcher, callback, timeout = None, item, None
    else:
        raise InvalidInput(f"a hook is a callable, a (matcher, callable) pair or a HookMatcher, not {item!r}")
    if not callable(callback):
        raise InvalidInput(f"the callback of a {event} hook is not callable: {callback!r}")
    if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
        raise InvalidInput(f"a hook timeout is a positive number of seconds, not {timeout!r}")
    return HookEntry(
        event=event,
        callback=callback,
        tool_names=_tool_names(matcher),
        timeout=float(timeout if timeout is not None else default_timeout),
        matcher=matcher,
    )


def _tool_names(matcher: str | None) -> frozenset[str] | None:
    if matcher is None or matcher.strip() in ("", "*"):
        return None
    text = matcher.strip()
    if not _MATCHER_SYNTAX.fullmatch(text):
        raise InvalidInput(
            f"a hook matcher is a tool name or names joined by '|' (e.g. 'Bash|Write'), not {matcher!r}"
        )
    return frozenset(text.split("|"))


# -- claude: the control protocol's hook callbacks ----------------------------------------------------


def claude_callback_id(event: HookEvent) -> str:
    return _CLAUDE_CALLBACK_PREFIX + event


def claude_initialize_hooks(hooks: HookSet) -> dict[str, list[dict[str, Any]]] | None:
    """The ``hooks`` field of claude's ``initialize`` (None: no hooks), one callback id per event."""
    if not hooks:
        return None
    return {
        event: [
            {
                "matcher": None,
                "hookCallbackIds": [claude_callback_id(event)],
                "timeout": hooks.total_timeout(event) + CLAUDE_TIMEOUT_MARGIN,
            }
        ]
        for event in hooks.events
    }


def hook_call_from_claude(fields: Mapping[str, Any]) -> HookCall:
    """The ``HookCall`` of a ``hook_callback`` request (``INVALID_INPUT`` for one that is not ours)."""
    callback_id = str(fields.get("callback_id") or "")
    event = callback_id.removeprefix(_CLAUDE_CALLBACK_PREFIX)
    hook_input = fields.get("input")
    if not callback_id.startswith(_CLAUDE_CALLBACK_PREFIX) or event not in HOOK_EVENTS:
        raise InvalidInput(f"no hook callback with id {callback_id!r}")
    raw = dict(hook_input) if isinstance(hook_input, Mapping) else {}
    tool_input = raw.get("tool_input")
    return HookCall(
        event=event,  # type: ignore[arg-type]  # checked against HOOK_EVENTS above
        tool_name=str(raw.get("tool_name") or ""),
        tool_input=dict(tool_input) if isinstance(tool_input, Mapping) else {},
        tool_use_id=str(fields.get("tool_use_id") or raw.get("tool_use_id") or ""),
        session_id=str(raw.get("session_id") or ""),
        tool_response=raw.get("tool_response"),
        raw=raw,
    )


def claude_deny_reason(reason: str) -> str:
    """What claude gets for a callback's deliberate deny: it shows any deny as ``<event>:<tool> hook
    error: <reason>`` (2.1.332), so the reason itself says it was a deny, not a hook that broke."""
    return f"Denied by a hook: {reason}"


def claude_hook_output(event: HookEvent, decision: HookDecision | None) -> dict[str, Any]:
    """The hook output claude 2.1.332 reads for ``decision`` (verified on the real binary).

    ``PreToolUse`` deny: ``permissionDecision: "deny"`` (the tool result is the error
    ``PreToolUse:<tool> hook error: <reason>``); rewrite: ``updatedInput`` alone (no
    ``permissionDecision``, so the permission rules still apply). ``PostToolUse`` deny:
    ``decision: "block"`` (the next model request carries the reason). No opinion, or allow: ``{}``.
    """
    if decision is None or decision.behavior == "allow":
        return {}
    if event == "PostToolUse":
        return {"decision": "block", "reason": decision.reason}
    if decision.behavior == "deny":
        return {
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "deny",
                "permissionDecisionReason": decision.reason,
            }
        }
    return {
        "hookSpecificOutput": {"hookEventName": event, "updatedInput": dict(decision.updated_input or {})}
    }


CLAUDE_HOOKS = HookDialect(hook_call_from_claude, claude_hook_output, claude_deny_reason)
"""claude's dialect: ``hook_callback`` control requests in, their ``control_response`` answers out."""
