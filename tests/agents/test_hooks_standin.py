"""Hooks on the stand-in (which asks ``hook_callback`` as claude 2.1.332 does): allow, deny, rewrite, failures."""

from __future__ import annotations

import asyncio
import time

import pytest

from elynav_nb.agents import AgentRunner, ToolResult, ToolUse
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.events import HookDenied, HookFailed
from elynav_nb.agents.hooks import HookCall, HookMatcher, allow, deny, rewrite
from elynav_nb.agents.transcript_display import transcript_html, transcript_text

FAST_STOP = StopBounds(close_stdin=2.0, sigint=2.0, sigterm=1.0, sigkill=1.0, orphans=1.0)

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def isolated_standin_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    monkeypatch.delenv("ELYNAV_STANDIN_VERSION", raising=False)


def make_runner(workspace, **options) -> AgentRunner:
    options.setdefault("stop_bounds", FAST_STOP)
    options.setdefault("permission_mode", "acceptEdits")
    return AgentRunner(None, workspace, executable="standin", **options)


def _tool_result(result) -> ToolResult:
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    return tool_result


async def test_a_pre_tool_hook_sees_the_call_and_allows_it(tmp_path):
    seen: list[HookCall] = []

    def watch(call: HookCall):
        seen.append(call)
        return allow()

    async with make_runner(tmp_path, hooks={"PreToolUse": watch}) as runner:
        result = await runner.send("@standin bash echo hooked")
    assert result.outcome == "completed", result.error
    [call] = seen
    [tool_use] = [event for event in result.events if isinstance(event, ToolUse)]
    assert call.event == "PreToolUse" and call.tool_name == "Bash"
    assert call.tool_input["command"] == "echo hooked" and call.tool_use_id == tool_use.id
    assert call.session_id == runner.session_id and call.raw["cwd"] == str(tmp_path)
    assert _tool_result(result).text.strip() == "hooked"


async def test_a_deny_stops_the_tool_and_the_model_reads_the_reason(tmp_path):
    marker = tmp_path / "ran"
    async with make_runner(
        tmp_path, hooks={"PreToolUse": lambda call: deny("not in this notebook")}
    ) as runner:
        result = await runner.send(f"@standin bash touch {marker}")
    tool_result = _tool_result(result)
    # claude's own words around the reason; the reason says a hook denied it on purpose
    assert tool_result.is_error
    assert tool_result.text == "PreToolUse:Bash hook error: Denied by a hook: not in this notebook"
    # the transcript reads it as the deny it was, not as a hook error
    [denied] = [event for event in result.events if isinstance(event, HookDenied)]
    assert denied.reason == "not in this notebook" and denied.tool_use_id == tool_result.tool_use_id
    assert tool_result.denial == denied.summary()
    assert tool_result.summary().startswith("denied by the PreToolUse hook")
    assert "hook error" not in tool_result.summary() and "not in this notebook" in tool_result.summary()
    assert not any(isinstance(event, HookFailed) for event in result.events)
    # terminals and saved outputs: the result's line and row say denied, not "error" / "failed"
    assert "← denied by the PreToolUse hook" in transcript_text(result.events)
    saved = transcript_html(result.events)
    assert "↳ denied by the PreToolUse hook" in saved and "↳ Bash failed" not in saved
    assert not marker.exists()
    assert result.ended is not None and result.ended.permission_denials
    assert result.outcome == "completed"  # the turn goes on: the model was told


async def test_a_rewrite_runs_the_new_input(tmp_path):
    async def safer(call: HookCall):
        await asyncio.sleep(0)
        return rewrite({**call.tool_input, "command": "echo rewritten"})

    async with make_runner(tmp_path, hooks={"PreToolUse": [("Bash", safer)]}) as runner:
        result = await runner.send("@standin bash echo original")
    [tool_use] = [event for event in result.events if isinstance(event, ToolUse)]
    assert tool_use.input["command"] == "echo original"  # what the model asked
    assert _tool_result(result).text.strip() == "rewritten"  # what ran


async def test_callbacks_run_in_order_a_rewrite_feeds_the_next_and_deny_ends_the_run(tmp_path):
    calls: list[str] = []

    def first(call: HookCall):
        calls.append(f"first:{call.tool_input['command']}")
        return rewrite({"command": "echo second-sees-this"})

    async def second(call: HookCall):
        calls.append(f"second:{call.tool_input['command']}")
        return deny("second says no")

    def third(call: HookCall):
        calls.append("third")

    async with make_runner(tmp_path, hooks={"PreToolUse": [first, second, third]}) as runner:
        result = await runner.send("@standin bash echo asked")
    assert calls == ["first:echo asked", "second:echo second-sees-this"]
    assert _tool_result(result).text.endswith("second says no")


async def test_a_matcher_picks_its_tools(tmp_path):
    called: list[str] = []
    hooks = {
        "PreToolUse": [
            HookMatcher(lambda call: called.append("write") or deny("no"), matcher="Write|Edit"),
            ("Bash", lambda call: called.append("bash")),
        ]
    }
    async with make_runner(tmp_path, hooks=hooks) as runner:
        result = await runner.send("@standin bash echo fine")
    assert called == ["bash"]
    assert not _tool_result(result).is_error


async def test_a_raising_callback_denies_with_a_diagnostic_event(tmp_path):
    def broken(call: HookCall):
        raise ValueError("the check itself is broken")

    async with make_runner(tmp_path, hooks={"PreToolUse": broken}) as runner:
        result = await runner.send("@standin bash echo never")
    [failed] = [event for event in result.events if isinstance(event, HookFailed)]
    assert failed.code == "HOOK_FAILED" and "ValueError: the check itself is broken" in failed.message
    assert failed.tool_name == "Bash" and failed.callback.endswith("broken")
    tool_result = _tool_result(result)
    assert tool_result.is_error and "broken" in tool_result.text and "never" not in tool_result.text
    assert not tool_result.denial and not any(isinstance(event, HookDenied) for event in result.events)
    assert "hook_failed" in set(result.to_frame()["kind"])


async def test_a_slow_async_callback_is_cut_by_its_timeout_and_denies(tmp_path):
    async def slow(call: HookCall):
        await asyncio.sleep(30)

    hooks = {"PreToolUse": HookMatcher(slow, timeout=0.3)}
    async with make_runner(tmp_path, hooks=hooks) as runner:
        started = time.monotonic()
        result = await runner.send("@standin bash echo late")
        elapsed = time.monotonic() - started
    assert elapsed < 10
    [failed] = [event for event in result.events if isinstance(event, HookFailed)]
    assert failed.code == "HOOK_TIMEOUT" and "0.3 s" in failed.message
    assert _tool_result(result).is_error


async def test_a_slow_sync_callback_answers_late_and_still_denies(tmp_path):
    def slow(call: HookCall):
        time.sleep(0.3)
        return allow()

    async with make_runner(tmp_path, hooks={"PreToolUse": slow}, hook_timeout=0.1) as runner:
        result = await runner.send("@standin bash echo late")
    [failed] = [event for event in result.events if isinstance(event, HookFailed)]
    assert failed.code == "HOOK_TIMEOUT"
    assert _tool_result(result).is_error


async def test_a_cancel_while_a_hook_is_waiting_ends_the_turn_and_the_hook(tmp_path):
    entered = asyncio.Event()
    cancelled = asyncio.Event()

    async def waits(call: HookCall):
        entered.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    hooks = {"PreToolUse": HookMatcher(waits, timeout=60)}
    async with make_runner(tmp_path, hooks=hooks) as runner:
        turn = runner.send("@standin bash echo never")
        await asyncio.wait_for(entered.wait(), timeout=15)
        result = await asyncio.wait_for(turn.cancel(), timeout=15)
        await asyncio.wait_for(cancelled.wait(), timeout=5)  # the CLI withdrew the request: the hook ends
        after = await runner.send("still here?")
    assert result.outcome == "cancelled"
    assert after.outcome == "completed"


async def test_a_wrong_answer_denies(tmp_path):
    async with make_runner(tmp_path, hooks={"PreToolUse": lambda call: True}) as runner:
        result = await runner.send("@standin bash echo nope")
    [failed] = [event for event in result.events if isinstance(event, HookFailed)]
    assert "returned bool" in failed.message and _tool_result(result).is_error


async def test_a_post_tool_hook_sees_the_response_and_its_deny_reaches_the_model(tmp_path):
    seen: list[HookCall] = []

    async def after(call: HookCall):
        seen.append(call)
        return deny("that output is confidential")

    async with make_runner(tmp_path, hooks={"PostToolUse": after}) as runner:
        result = await runner.send("@standin bash echo secret-ish")
    [call] = seen
    assert call.event == "PostToolUse" and call.tool_response["stdout"] == "secret-ish"
    assert "that output is confidential" in result.text  # the stand-in's model heard it


async def test_no_hooks_sends_no_hooks(tmp_path):
    async with make_runner(tmp_path) as runner:
        result = await runner.send("@standin bash echo plain")
    assert not runner.hooks and _tool_result(result).text.strip() == "plain"


def test_bad_hook_configs_are_refused_before_anything_starts(tmp_path):
    from elynav_nb.errors import InvalidInput

    for hooks in (
        {"Stop": lambda call: None},
        {"PreToolUse": 3},
        {"PreToolUse": ("Bash(rm:*)", lambda call: None)},
        {"PreToolUse": HookMatcher(lambda call: None, timeout=0)},
    ):
        with pytest.raises(InvalidInput):
            make_runner(tmp_path, hooks=hooks)
