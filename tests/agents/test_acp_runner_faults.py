"""``AgentRunner(cli="acp")`` on the ACP stand-in under faults: cancels, crashes, lost sessions, bad starts.

How: each test runs a runner on the embedded ACP stand-in (a fresh workspace and stand-in home per
test), injects a fault by ``@standin`` directive (``delay``, ``ignore-cancel``, ``hang``, ``crash``) or
at start-up by ``ELYNAV_ACP_STANDIN_FAULT`` (``no-initialize``, ``no-load-session``, ``exit-at-start``),
and asserts what a user sees: the outcome and typed error code, the stderr said, the process left
(psutil: gone, not a zombie) and the next turn (same process, or a new one that loads the session or
says the conversation was lost). The tool call ids of the stand-in (``call_<turn>_<n>``) say which
turn of its session it plays, so how many earlier turns a reloaded session remembers. Every wait is
bounded; nothing is timed. The plain turns are in ``test_acp_runner.py``.
"""

from __future__ import annotations

import asyncio

import psutil
import pytest

from elynav_nb.agents.events import AgentError, PermissionRequest, RawEvent, TextDelta, ToolUse
from elynav_nb.errors import CliStartFailed, ElynavError, SessionNotFound
from tests.widgets.helpers import wait_until

from .acp_standin_runs import TURN_BOUND, acp_standin_home, ask, make_runner, of_type

pytestmark = pytest.mark.anyio

__all__ = ["acp_standin_home", "make_runner"]  # fixtures, used by name


async def first_text(turn) -> None:
    async def read() -> None:
        async for event in turn:
            if isinstance(event, TextDelta):
                return

    await asyncio.wait_for(read(), TURN_BOUND)


def alive(pid: int | None) -> bool:
    """The process runs (a zombie left un-reaped counts as alive: it is still in the table)."""
    if pid is None:
        return False
    try:
        psutil.Process(pid).status()
    except psutil.NoSuchProcess:
        return False
    return True


async def gone(pid: int | None, timeout: float = 10.0) -> bool:
    """The process left the table (exited and reaped), within ``timeout``."""
    return await wait_until(lambda: not alive(pid), timeout)


def tool_ids(result) -> list[str]:
    return [event.id for event in of_type(result, ToolUse)]


def replayed(result, kind: str) -> list[str]:
    """The texts of the history a session/load replayed into this turn (``user_message_chunk``...)."""
    return [
        event.data["params"]["update"]["content"]["text"]
        for event in of_type(result, RawEvent)
        if event.subtype == kind
    ]


# -- cancels ----------------------------------------------------------------------------------------


async def test_a_cancel_mid_stream_is_honoured_and_the_process_stays(make_runner):
    runner = make_runner()
    turn = runner.send(
        "@standin say first words\n@standin delay 1\n@standin say and then a long tail nobody should see"
    )
    await first_text(turn)
    pid = runner.pid
    result = await asyncio.wait_for(turn.cancel(), TURN_BOUND)
    assert result.outcome == "cancelled"
    assert result.text == "first words"
    assert runner.pid == pid and alive(pid)
    after = await ask(runner, "after the cancel")
    assert after.outcome == "completed" and after.text == "Stand-in reply to: after the cancel"
    assert runner.pid == pid
    assert [entry.outcome for entry in runner.history] == ["cancelled", "completed"]


async def test_an_agent_that_ignores_the_cancel_is_stopped_and_the_next_turn_loads_the_session(make_runner):
    runner = make_runner()
    first = await ask(runner, "@standin say remembered reply")
    session = runner.session_id
    turn = runner.send("@standin say stuck words\n@standin ignore-cancel\n@standin hang")
    await first_text(turn)
    pid = runner.pid
    result = await asyncio.wait_for(turn.cancel(), TURN_BOUND)
    assert result.outcome == "cancelled"
    assert "being stopped" in result.error
    assert result.text == "stuck words"
    # the background stop: interrupt_timeout, then the short forced steps; no zombie left
    assert await gone(pid)
    after = await ask(runner, "@standin say fresh")
    assert after.outcome == "completed", after.error
    assert runner.pid != pid and alive(runner.pid)
    assert after.session_id == session == runner.session_id  # session/load, not a new session
    assert "CONVERSATION_LOST" not in [error.code for error in of_type(after, AgentError)]
    assert first.text in replayed(after, "agent_message_chunk")  # the history came back as raw updates
    assert after.text == "fresh"  # not the replayed history
    assert all("remembered" not in event.text for event in of_type(after, TextDelta))


# -- crashes ----------------------------------------------------------------------------------------


async def test_a_crash_mid_turn_fails_typed_and_the_next_turn_reloads_the_session(make_runner):
    runner = make_runner(permission_mode="bypassPermissions", permission_prompts=True)
    first = await ask(runner, "@standin shell echo one")
    assert first.outcome == "completed" and tool_ids(first) == ["call_1_1"]
    session = runner.session_id
    pid = runner.pid
    crashed = await ask(runner, "@standin say about to go\n@standin crash")
    assert crashed.outcome == "failed"
    assert crashed.error_code == "CLI_EXITED"
    assert "code 3" in crashed.error
    assert "elynav-acp-standin" in crashed.stderr_tail  # what it said on stderr is kept
    assert crashed.text == "about to go"
    assert await gone(pid)
    after = await ask(runner, "@standin shell echo two")
    assert after.outcome == "completed", after.error
    assert runner.pid != pid
    assert after.session_id == session
    # the crashed turn was never saved: the stand-in plays turn 2 of its session, remembering one
    assert tool_ids(after) == ["call_2_1"]
    assert replayed(after, "user_message_chunk") == ["@standin shell echo one"]
    assert after.text == "The command printed: two"
    assert not of_type(after, PermissionRequest)  # still in bypassPermissions: not asked
    codes = [error.code for error in of_type(after, AgentError)]
    assert "CONVERSATION_LOST" not in codes
    assert "MODE_NOT_OFFERED" not in codes  # the loaded session keeps its mode


async def test_a_history_replayed_after_the_load_answer_is_not_the_next_turn_s_output(
    make_runner, monkeypatch
):
    # gemini 0.61.0 answers session/load, then streams the history (ACP says: before the answer);
    # the stand-in's late-replay does the same. The wire waits for the replay to end before prompting.
    monkeypatch.setenv("ELYNAV_ACP_STANDIN_FAULT", "late-replay")
    runner = make_runner()
    first = await ask(runner, "@standin say remembered words")
    assert (await ask(runner, "@standin crash")).outcome == "failed"
    after = await ask(
        runner, "@standin delay 0.1\n@standin say fresh words come slowly"
    )  # outlasts the delay
    assert after.outcome == "completed", after.error
    assert after.text == "fresh words come slowly"
    assert first.text in replayed(after, "agent_message_chunk")  # kept, as raw updates


async def test_the_permission_mode_can_be_changed_on_a_session_reloaded_after_a_crash(make_runner):
    # the stand-in answers session/load with null (ACP allows it: no modes said); the mode is still
    # the agent's to accept, not "offered by nobody"
    runner = make_runner(permission_prompts=True)
    await ask(runner, "hello")
    assert (await ask(runner, "@standin crash")).outcome == "failed"
    await asyncio.wait_for(runner.set_permission_mode("bypassPermissions"), TURN_BOUND)
    turn = runner.send("@standin shell echo free")

    async def prompts() -> list[PermissionRequest]:
        seen = []
        async for event in turn:
            if isinstance(event, PermissionRequest):
                seen.append(event)
                event.deny()
        return seen

    assert await asyncio.wait_for(prompts(), TURN_BOUND) == []
    result = await turn
    assert result.outcome == "completed" and result.text == "The command printed: free"
    assert runner.permission_mode == "bypassPermissions"


async def test_a_model_on_a_reloaded_session_is_asked_of_the_agent(make_runner):
    # a new session says its models (the stand-in's: none); a reloaded one that says nothing is asked,
    # and the agent's own refusal is the notice
    runner = make_runner(model="some-model")
    first = await ask(runner, "hello")
    [notice] = [error for error in of_type(first, AgentError) if error.code == "MODEL_NOT_OFFERED"]
    assert "offers no model 'some-model'" in notice.message
    assert (await ask(runner, "@standin crash")).outcome == "failed"
    after = await ask(runner, "again")
    assert after.outcome == "completed", after.error
    [notice] = [error for error in of_type(after, AgentError) if error.code == "MODEL_NOT_OFFERED"]
    assert "refused model 'some-model'" in notice.message and "its own default" in notice.message


async def test_a_crash_on_an_agent_that_cannot_load_sessions_says_the_conversation_is_lost(
    make_runner, monkeypatch
):
    monkeypatch.setenv("ELYNAV_ACP_STANDIN_FAULT", "no-load-session")
    runner = make_runner(permission_mode="bypassPermissions")
    await ask(runner, "hello")
    old_session = runner.session_id
    crashed = await ask(runner, "@standin crash")
    assert crashed.outcome == "failed" and crashed.error_code == "CLI_EXITED"
    after = await ask(runner, "@standin shell echo two")
    assert after.outcome == "completed", after.error
    lost = [error for error in of_type(after, AgentError) if error.code == "CONVERSATION_LOST"]
    assert len(lost) == 1 and old_session in lost[0].message
    assert after.session_id != old_session and after.session_id == runner.session_id
    assert tool_ids(after) == ["call_1_1"]  # a new session: its first turn
    assert replayed(after, "user_message_chunk") == []
    frame = runner.to_frame()
    assert list(frame["outcome"]) == ["completed", "failed", "completed"]
    assert list(frame["session_id"]) == [old_session, old_session, after.session_id]
    assert any(error.code == "CONVERSATION_LOST" for error in of_type(runner.history[-1], AgentError))


# -- start-up faults --------------------------------------------------------------------------------


async def test_an_agent_that_never_answers_initialize_fails_the_start_typed(make_runner, monkeypatch):
    monkeypatch.setenv("ELYNAV_ACP_STANDIN_FAULT", "no-initialize")
    runner = make_runner(start_timeout=0.5)
    with pytest.raises(CliStartFailed) as caught:
        await asyncio.wait_for(runner.start(), TURN_BOUND)
    assert isinstance(caught.value, ElynavError) and caught.value.code == "CLI_START_FAILED"
    assert "did not answer" in str(caught.value)
    assert "elynav-acp-standin" in caught.value.details.get("stderr_tail", "")
    assert await gone(runner.pid)
    assert runner.status == "stopped"


async def test_an_agent_that_exits_at_start_fails_typed_with_its_stderr(make_runner, monkeypatch):
    monkeypatch.setenv("ELYNAV_ACP_STANDIN_FAULT", "exit-at-start")
    runner = make_runner()
    with pytest.raises(CliStartFailed) as caught:
        await asyncio.wait_for(runner.start(), TURN_BOUND)
    assert caught.value.code == "CLI_START_FAILED"
    assert "exiting at start" in str(caught.value)
    assert caught.value.details.get("exit_code") == 2
    assert await gone(runner.pid)
    # a turn sent to it does not raise: it ends failed with the same code
    result = await ask(runner, "anyone?")
    assert result.outcome == "failed"
    assert result.error_code == "CLI_START_FAILED" and "exiting at start" in result.error


async def test_a_session_the_agent_cannot_load_is_session_not_found(make_runner):
    runner = make_runner(resume="no-such-session")
    with pytest.raises(SessionNotFound) as caught:
        await asyncio.wait_for(runner.start(), TURN_BOUND)
    assert caught.value.code == "SESSION_NOT_FOUND" and "no-such-session" in str(caught.value)
    assert runner.status == "stopped"
