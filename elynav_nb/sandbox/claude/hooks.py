"""The stand-in's hook callbacks: ``PreToolUse`` / ``PostToolUse`` asked of the host, as the real CLI does.

Where it sits: a layer of the stand-in's turn, between ``streaming.ResponseStreaming`` (below)
and ``tool_calls.ToolRoundTrips`` (above, which calls it around each tool). The hooks are
the ``hooks`` field of the host's ``initialize`` (``{Event: [{matcher, hookCallbackIds, timeout}]}``),
kept in ``SessionState.hooks`` by the process.

How data flows, one tool use (facts checked on claude 2.1.332)::

    the tool_use response -> _pre_tool_hooks: for each matcher of PreToolUse that matches the tool,
      each callback id -> a ``hook_callback`` control request {callback_id, input{session_id,
      transcript_path, cwd, permission_mode, hook_event_name, tool_name, tool_input, tool_use_id},
      tool_use_id} -> the host's answer (the process hands it over; ``timeout`` seconds at most,
      then a ``control_cancel_request`` and no decision)
      -> ``permissionDecision: deny`` or ``decision: block``: the tool does not run; its tool_result
         is the error ``PreToolUse:<tool> hook error: <reason>`` (and a permission_denials entry)
      -> ``updatedInput``: the tool runs with it; ``permissionDecision: allow``: no permission step
    the tool ran -> _post_tool_hooks (``tool_response`` added): ``decision: block`` -> the reason
      reaches the model beside the result (the stand-in says it in its reply)

The stand-in says it is a stand-in everywhere else; the hook lines themselves imitate the real ones.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from typing import Any

from elynav_nb.sandbox.claude import wire as wire
from elynav_nb.sandbox.claude.sessions import standin_home
from elynav_nb.sandbox.claude.streaming import ResponseStreaming

__all__ = ["HookSteps", "PreToolVerdict"]

_DEFAULT_HOOK_TIMEOUT = 60.0
_PLAIN_MATCHER = re.compile(r"[A-Za-z0-9_|]+")


@dataclass(frozen=True)
class PreToolVerdict:
    """What the PreToolUse hooks decided: the input to run, a deny reason, or an approval."""

    tool_input: dict[str, Any]
    deny_reason: str | None = None
    approved: bool = False


def _matches(matcher: Any, tool_name: str) -> bool:
    if matcher is None or matcher in ("", "*"):
        return True
    text = str(matcher)
    if _PLAIN_MATCHER.fullmatch(text):
        return tool_name in text.split("|")
    try:
        return re.search(text, tool_name) is not None
    except re.error:
        return False


class HookSteps(ResponseStreaming):
    """Hook callbacks around a tool use (base of ``ToolRoundTrips``)."""

    def _hook_input(self, event: str, tool_name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        session = self.session
        slug = re.sub(r"[^A-Za-z0-9]", "-", session.cwd)
        return {
            "session_id": session.session_id,
            "transcript_path": str(standin_home() / "projects" / slug / f"{session.session_id}.jsonl"),
            "cwd": session.cwd,
            "permission_mode": session.reported_permission_mode(),
            "hook_event_name": event,
            "tool_name": tool_name,
            "tool_input": tool_input,
            "tool_use_id": self.state.tool_use_id or "",
        }

    def _callbacks_for(self, event: str, tool_name: str) -> list[tuple[str, float]]:
        found: list[tuple[str, float]] = []
        for matcher in self.session.hooks.get(event) or []:
            if not isinstance(matcher, dict) or not _matches(matcher.get("matcher"), tool_name):
                continue
            timeout = matcher.get("timeout")
            seconds = (
                float(timeout) if isinstance(timeout, int | float) and timeout > 0 else _DEFAULT_HOOK_TIMEOUT
            )
            for callback_id in matcher.get("hookCallbackIds") or []:
                found.append((str(callback_id), seconds))
        return found

    async def _ask_hook(self, callback_id: str, timeout: float, hook_input: dict[str, Any]) -> dict[str, Any]:
        """One ``hook_callback`` request and its answer ({} on an error answer or a timeout)."""
        session = self.session
        request_id = wire.new_uuid()
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        session.pending_permissions[request_id] = answer
        self.state.pending_hook_id = request_id
        session.emit(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {
                    "subtype": "hook_callback",
                    "callback_id": callback_id,
                    "input": hook_input,
                    "tool_use_id": hook_input.get("tool_use_id", ""),
                },
            }
        )
        try:
            response = await asyncio.wait_for(asyncio.shield(answer), timeout=timeout)
        except TimeoutError:
            session.emit(wire.build_control_cancel_request(request_id))
            return {}
        finally:
            session.pending_permissions.pop(request_id, None)
            self.state.pending_hook_id = None
        return {} if response.get("control_error") else response

    async def _pre_tool_hooks(self, tool_name: str, tool_input: dict[str, Any]) -> PreToolVerdict:
        current = dict(tool_input)
        approved = False
        for callback_id, timeout in self._callbacks_for("PreToolUse", tool_name):
            output = await self._ask_hook(
                callback_id, timeout, self._hook_input("PreToolUse", tool_name, current)
            )
            specific = output.get("hookSpecificOutput")
            specific = specific if isinstance(specific, dict) else {}
            decision = specific.get("permissionDecision")
            if decision == "deny" or output.get("decision") == "block":
                reason = (
                    specific.get("permissionDecisionReason") or output.get("reason") or "blocked by a hook"
                )
                return PreToolVerdict(current, deny_reason=str(reason))
            updated = specific.get("updatedInput")
            if isinstance(updated, dict):
                current = dict(updated)
            approved = approved or decision == "allow"
        return PreToolVerdict(current, approved=approved)

    async def _post_tool_hooks(
        self, tool_name: str, tool_input: dict[str, Any], tool_response: Any, started: float
    ) -> None:
        for callback_id, timeout in self._callbacks_for("PostToolUse", tool_name):
            hook_input = self._hook_input("PostToolUse", tool_name, tool_input)
            hook_input["tool_response"] = tool_response
            hook_input["duration_ms"] = int((time.monotonic() - started) * 1000)
            output = await self._ask_hook(callback_id, timeout, hook_input)
            if output.get("decision") == "block":
                reason = str(output.get("reason") or "blocked by a hook")
                self.state.hook_notes.append(
                    f'PostToolUse:{tool_name} hook blocking error from command: "callback": {reason}'
                )
