"""The runner against the protocol-exact stand-in CLI: agents, sessions, interrupts, tools, error turns."""

from __future__ import annotations

import asyncio
import os

import pytest

from elynav_nb.agents import AgentRunner, PermissionRequest, ToolResult, ToolUse, builtin_agents
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.errors import AgentNotFound, SessionNotFound

from .helpers import process_alive, wait_until_gone_async

FAST_STOP = StopBounds(close_stdin=2.0, sigint=2.0, sigterm=1.0, sigkill=1.0, orphans=1.0)


@pytest.fixture(autouse=True)
def isolated_standin_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    monkeypatch.delenv("ELYNAV_STANDIN_VERSION", raising=False)


def make_runner(workspace, agent=None, **options) -> AgentRunner:
    options.setdefault("stop_bounds", FAST_STOP)
    return AgentRunner(agent, workspace, executable="standin", **options)


@pytest.mark.anyio
async def test_an_agent_definition_is_installed_and_run_with_its_tools(tmp_path):
    sdr = builtin_agents()["elynav-sdr"]
    async with make_runner(tmp_path, sdr) as runner:
        result = await runner.send("Bonjour")
        started = runner.last_started
    assert (tmp_path / ".claude" / "agents" / "elynav-sdr.md").is_file()
    assert result.outcome == "completed" and result.used_standin
    assert "[elynav stand-in]" in result.text and "Bonjour" in result.text
    assert started is not None and started.is_standin and started.model == "elynav-standin"
    assert set(started.tools) == set(sdr.tools)
    assert "stand-in" in repr(runner)
    assert ["--agent", "elynav-sdr"] == runner.process.argv[runner.process.argv.index("--agent") :][:2]
    assert "--permission-mode" in runner.process.argv  # the file's mode is passed: --agent alone ignores it


@pytest.mark.anyio
async def test_an_agent_name_that_is_not_installed_fails_fast(tmp_path):
    runner = make_runner(tmp_path, "elynav-nobody")
    with pytest.raises(AgentNotFound) as caught:
        await runner.start()
    assert "elynav-sdr" in str(caught.value) and "elynav-nobody.md" in str(
        caught.value
    )  # what exists, the fix
    assert runner.pid is None  # nothing was spawned
    assert not (tmp_path / ".claude" / "agents" / "elynav-nobody.md").exists()


@pytest.mark.anyio
async def test_a_built_in_agent_runs_in_any_workspace_as_the_magic_does(tmp_path):
    """One rule for a name: ``AgentRunner("elynav-sdr")`` in an empty folder writes the built-in file, as
    ``%%agent sdr`` (a definition object) does, and runs it."""
    async with make_runner(tmp_path, "elynav-sdr") as runner:
        result = await runner.send("Bonjour")
    assert result.ok
    assert (tmp_path / ".claude" / "agents" / "elynav-sdr.md").is_file()


@pytest.mark.anyio
async def test_turns_share_one_session_and_resume_keeps_history(tmp_path):
    async with make_runner(tmp_path) as runner:
        first = await runner.send("one")
        second = await runner.send("two")
        session_id = runner.session_id
    assert first.session_id == second.session_id == session_id
    assert "I remember 1 earlier turn" in second.text
    async with make_runner(tmp_path, resume=session_id) as resumed:
        third = await resumed.send("three")
    assert third.session_id == session_id
    assert "I remember 2 earlier turns" in third.text
    assert [result.prompt for result in runner.history] == ["one", "two"]
    assert list(runner.to_frame()["outcome"]) == ["completed", "completed"]


@pytest.mark.anyio
async def test_cancel_while_streaming_interrupts_and_the_conversation_goes_on(tmp_path):
    async with make_runner(tmp_path) as runner:
        pid = runner.pid
        turn = runner.send("tell me a long story\n@standin slow 30")
        async for event in turn:
            if event.kind == "text":
                break
        result = await asyncio.wait_for(turn.cancel(), timeout=15)
        assert result.outcome == "cancelled"
        assert result.terminal_reason == "aborted_streaming"
        assert runner.is_running and runner.pid == pid  # the process survived the interrupt
        after = await runner.send("still there?")
    assert after.outcome == "completed" and "still there?" in after.text


@pytest.mark.anyio
async def test_cancel_during_a_tool_ends_the_tool_process(tmp_path):
    async with make_runner(tmp_path) as runner:
        turn = runner.send("@standin sleep-tool 60")
        async for event in turn:
            if isinstance(event, ToolUse):
                break
        tool_pids: list[int] = []
        for _ in range(100):
            tool_pids = [
                process.pid for process in runner.process.live_descendants() if process.name() == "sleep"
            ]
            if tool_pids:
                break
            await asyncio.sleep(0.05)
            runner.process.record_descendants()
        assert tool_pids, "the stand-in's Bash tool should be running"
        assert os.getsid(tool_pids[0]) != os.getsid(runner.pid)  # in its own session, like the real Bash tool
        result = await asyncio.wait_for(turn.cancel(), timeout=15)
        assert result.outcome == "cancelled" and result.terminal_reason == "aborted_tools"
        assert await wait_until_gone_async(tool_pids[0], timeout=3)
        assert runner.is_running


@pytest.mark.anyio
async def test_permission_prompt_allows_a_real_bash_write(tmp_path):
    async with make_runner(tmp_path, permission_prompts=True) as runner:
        turn = runner.send("@standin bash touch created-by-agent.txt")
        async for event in turn:
            if isinstance(event, PermissionRequest):
                assert event.tool_name == "Bash"
                event.allow()
        result = await turn
    assert (tmp_path / "created-by-agent.txt").is_file()
    assert not next(event for event in result.events if isinstance(event, ToolResult)).is_error


@pytest.mark.anyio
async def test_denied_permission_is_reported_and_nothing_runs(tmp_path):
    async with make_runner(tmp_path, permission_handler=lambda request: False) as runner:
        result = await runner.send("@standin bash touch should-not-exist.txt")
    assert not (tmp_path / "should-not-exist.txt").exists()
    tool_result = next(event for event in result.events if isinstance(event, ToolResult))
    assert tool_result.is_error
    assert result.ended is not None and result.ended.permission_denials


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("directive", "expected"),
    [
        ("@standin api-error", "API Error: 400"),
        ("@standin no-login", "Not logged in"),
        ("@standin max-turns", "maximum number of turns"),
    ],
)
async def test_error_turns_end_with_outcome_error_and_a_message(tmp_path, directive, expected):
    async with make_runner(tmp_path) as runner:
        result = await runner.send(directive)
        assert runner.is_running  # an error turn does not end the conversation
    # the CLI's own max-turns end is a bound reached (outcome limit), not an error
    assert result.outcome == ("limit" if "max-turns" in directive else "error")
    assert expected in result.error or expected in result.text


@pytest.mark.anyio
async def test_more_than_a_mebibyte_of_tool_output_arrives_whole(tmp_path):
    async with make_runner(
        tmp_path, permission_mode="bypassPermissions", environment={"IS_SANDBOX": "1"}
    ) as runner:
        result = await runner.send("@standin big-result 2000000")
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    assert len(tool_result.text) >= 2_000_000
    assert result.outcome == "completed"


@pytest.mark.anyio
async def test_stop_leaves_no_process(tmp_path):
    runner = make_runner(tmp_path)
    await runner.start()
    pid = runner.pid
    await runner.stop()
    assert not process_alive(pid)


@pytest.mark.anyio
async def test_stop_during_start_leaves_no_process(tmp_path):
    runner = make_runner(tmp_path, builtin_agents()["elynav-sdr"])
    starting = asyncio.ensure_future(runner.start())
    await asyncio.sleep(0.05)  # the start is under way (locating the CLI, spawning it)
    await runner.stop()
    await asyncio.wait_for(asyncio.gather(starting, return_exceptions=True), timeout=30)
    assert runner.status == "closed"
    pid = runner.pid
    assert pid is None or not process_alive(pid), "a start racing the stop left its CLI running"


@pytest.mark.anyio
async def test_a_session_claude_cannot_resume_is_session_not_found(tmp_path):
    runner = make_runner(tmp_path, resume="01a00000-0000-4000-8000-000000000000")
    with pytest.raises(SessionNotFound) as caught:
        await runner.start()
    await runner.stop()
    assert caught.value.code == "SESSION_NOT_FOUND" and "No conversation found" in str(caught.value)
