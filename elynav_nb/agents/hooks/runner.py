"""``HookRunner``: runs a runner's hook callbacks, each within its timeout; a failure denies and is reported.

Where it sits: ``AgentRunner.hooks`` (one per runner). Its callers: claude's wire, through the
``hook_callback`` request server, and gemini's and codex exec's hook commands, through the runner's
``HookCommandServer``: both ``serve(dialect, hook_input)``, the dialect (``hooks.HookDialect``) being the
protocol's own way to ask and answer; and the kernel tool server, through ``before_tool`` / ``after_tool``
(the contract is in ``rules.py``'s docstring). The config and the decisions are the pure ``rules.py``;
this module only calls the callbacks and times them; it knows no CLI by name.

How data flows::

    before_tool(name, input) / after_tool(name, input, response) / serve(dialect, hook input)
      -> HookCall -> run(call): the matching callbacks in order (sync: called on the loop;
         async: awaited under asyncio.wait_for) -> deny ends the run, rewrite feeds the next one
      -> HookDecision | None; a deliberate deny -> HookDenied -> report(), the model reads its reason
         (on claude, which calls any deny "hook error", as "Denied by a hook: <reason>");
         a raise, a wrong answer or a timeout -> deny + HookFailed -> report()

``report`` puts the ``HookDenied`` / ``HookFailed`` event into the turn in flight (the runner gives it).
Every reason and message passes ``_redaction.redact_for_model`` (the path kernel tool errors take):
an exception's text or a reason that holds a secret reaches neither the model nor the transcript.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Mapping
from typing import Any

from elynav_nb._redaction import describe_exception, redact_for_model
from elynav_nb.agents.events import AgentEvent, HookDenied, HookFailed
from elynav_nb.agents.hooks.rules import (
    HookCall,
    HookDecision,
    HookDialect,
    HookEntry,
    HookSet,
    deny,
    rewrite,
)

__all__ = ["HookRunner"]

_MESSAGE_CHARS = 300


class HookRunner:
    """The hooks of one runner (see the module docstring). ``bool(hook_runner)``: any hook at all."""

    def __init__(
        self,
        hooks: HookSet,
        *,
        report: Callable[[AgentEvent], None] | None = None,
        session_id: Callable[[], str] | None = None,
    ) -> None:
        self.hook_set = hooks
        self.report = report
        self._session_id = session_id

    def __bool__(self) -> bool:
        return bool(self.hook_set)

    def __repr__(self) -> str:
        described = ", ".join(
            f"{entry.event}[{entry.matcher or '*'}]:{entry.name}" for entry in self.hook_set.entries
        )
        return f"<HookRunner {described or 'no hooks'}>"

    # -- the kernel tool server's entry points ------------------------------------------------------

    async def before_tool(
        self, tool_name: str, tool_input: Mapping[str, Any], *, tool_use_id: str = "", session_id: str = ""
    ) -> HookDecision | None:
        """The ``PreToolUse`` verdict on a call (None: no callback had an opinion)."""
        call = HookCall(
            "PreToolUse", tool_name, dict(tool_input), tool_use_id, session_id or self._current_session()
        )
        return await self.run(call)

    async def after_tool(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        tool_response: Any,
        *,
        tool_use_id: str = "",
        session_id: str = "",
    ) -> HookDecision | None:
        """The ``PostToolUse`` verdict on a call that ran (deny: tell the model the reason)."""
        call = HookCall(
            "PostToolUse",
            tool_name,
            dict(tool_input),
            tool_use_id,
            session_id or self._current_session(),
            tool_response,
        )
        return await self.run(call)

    # -- the CLI's own hook requests (claude's hook_callback, gemini's and codex's hook commands) -----

    async def serve(self, dialect: HookDialect, hook_input: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to one hook request of a CLI, in its ``dialect`` (claude's request server, the hook socket).

        A callback's deliberate deny reads as the dialect words it (claude calls any deny a "hook error":
        its reason says it was a deny).
        """
        call = dialect.call_from(hook_input)
        decision, deliberate = await self._run(call)
        if deliberate and decision is not None and dialect.deny_reason is not None:
            decision = deny(dialect.deny_reason(decision.reason))
        return dialect.output(call.event, decision)

    # -- running -------------------------------------------------------------------------------------

    async def run(self, call: HookCall) -> HookDecision | None:
        """The matching callbacks of ``call.event``, in order (see ``rules.py`` for the rules)."""
        return (await self._run(call))[0]

    async def _run(self, call: HookCall) -> tuple[HookDecision | None, bool]:
        """``run``'s decision, and whether it is a callback's deliberate deny (not a failure's)."""
        current_input = dict(call.tool_input)
        rewritten = False
        allowed: HookDecision | None = None
        for entry in self.hook_set.matching(call.event, call.tool_name):
            asked = call if not rewritten else _with_input(call, current_input)
            try:
                decision = await self._call_one(entry, asked)
            except _HookFailure as failure:
                return self._failed(entry, call, failure.code, failure.what), False
            if decision is None:
                continue
            if decision.behavior == "deny":
                return self._denied(entry, call, decision), True
            if decision.behavior == "rewrite":
                current_input = dict(decision.updated_input or {})
                rewritten = True
            else:
                allowed = decision
        if rewritten:
            return rewrite(current_input), False
        return allowed, False

    async def _call_one(self, entry: HookEntry, call: HookCall) -> HookDecision | None:
        """The callback's own decision; ``_HookFailure`` when it raised, timed out or answered wrong."""
        started = time.monotonic()
        try:
            answer: Any = entry.callback(call)
            if inspect.isawaitable(answer):
                answer = await asyncio.wait_for(_awaited(answer), timeout=entry.timeout)
            elif time.monotonic() - started > entry.timeout:
                raise _HookFailure(
                    "HOOK_TIMEOUT",
                    f"took {time.monotonic() - started:.2f} s, longer than its {entry.timeout:g} s timeout",
                )
        except TimeoutError:
            raise _HookFailure("HOOK_TIMEOUT", f"did not answer within {entry.timeout:g} s") from None
        except (asyncio.CancelledError, _HookFailure):
            raise
        except Exception as error:  # the callback's own failure: a deny, reported
            raise _HookFailure("HOOK_FAILED", f"raised {describe_exception(error)}") from None
        if answer is None or isinstance(answer, HookDecision):
            if answer is not None and answer.behavior == "rewrite" and call.event != "PreToolUse":
                raise _HookFailure("HOOK_FAILED", "returned a rewrite, which only PreToolUse can do")
            return answer
        raise _HookFailure(
            "HOOK_FAILED",
            f"returned {type(answer).__name__}, not None or a HookDecision (allow(), deny(reason), rewrite(input))",
        )

    def _denied(self, entry: HookEntry, call: HookCall, decision: HookDecision) -> HookDecision:
        """A deliberate deny: reported as ``HookDenied``; the model reads its reason (redacted)."""
        reason = redact_for_model(decision.reason, max_chars=_MESSAGE_CHARS)
        if self.report is not None:
            self.report(
                HookDenied(
                    event=call.event,
                    tool_name=call.tool_name,
                    reason=reason,
                    tool_use_id=call.tool_use_id,
                    callback=entry.name,
                )
            )
        return deny(reason)

    def _failed(self, entry: HookEntry, call: HookCall, code: str, what: str) -> HookDecision:
        message = redact_for_model(what, max_chars=_MESSAGE_CHARS)
        if self.report is not None:
            self.report(
                HookFailed(
                    event=call.event,
                    tool_name=call.tool_name,
                    message=message,
                    code=code,
                    tool_use_id=call.tool_use_id,
                    callback=entry.name,
                )
            )
        return deny(f"Denied: the {call.event} hook {entry.name} {message}.")

    def _current_session(self) -> str:
        return self._session_id() if self._session_id is not None else ""


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _with_input(call: HookCall, tool_input: dict[str, Any]) -> HookCall:
    return HookCall(
        call.event,
        call.tool_name,
        dict(tool_input),
        call.tool_use_id,
        call.session_id,
        call.tool_response,
        call.raw,
    )


class _HookFailure(Exception):
    """A callback that did not decide: it raised, outlasted its timeout, or answered something else."""

    def __init__(self, code: str, what: str) -> None:
        super().__init__(what)
        self.code = code
        self.what = what
