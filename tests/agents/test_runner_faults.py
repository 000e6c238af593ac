"""The runner against a fault-injecting fake CLI: every failure ends typed or synthetic, bounded, clean."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

import pytest

from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.events import AgentError, AgentStarted, TextDelta, ToolResult, ToolUse, TurnEnded
from elynav_nb.agents.runner import AgentRunner
from elynav_nb.errors import AgentBusy, BypassRefusedAsRoot, CliNotFound, CliStartFailed, SyncCallInsideLoop

from .helpers import (
    FAKE_CLI,
    fake_cli_command,
    our_zombies,
    process_alive,
    wait_until_gone,
    wait_until_gone_async,
)

FAST_STOP = StopBounds(close_stdin=1.0, sigint=1.0, sigterm=1.0, sigkill=1.0, orphans=1.0)


def make_runner(tmp_path, mode: str, **options) -> AgentRunner:
    options.setdefault("stop_bounds", FAST_STOP)
    switch_mode(tmp_path, mode)
    environment = {"FAKE_CLI_MODE_FILE": str(tmp_path / "fake-mode")}
    return AgentRunner(None, tmp_path, executable=fake_cli_command(), environment=environment, **options)


def switch_mode(tmp_path, mode: str) -> None:
    """What the fake CLI does from its next start on (the runner's environment is frozen)."""
    (tmp_path / "fake-mode").write_text(mode, encoding="utf-8")


async def assert_clean_stop(runner: AgentRunner) -> None:
    pid = runner.pid
    await runner.stop()
    assert pid is not None and not process_alive(pid)
    assert our_zombies() == []


@pytest.mark.anyio
async def test_echo_turn_result_and_events(tmp_path):
    runner = make_runner(tmp_path, "echo", session_id="11111111-2222-4333-8444-555555555555")
    await runner.start()
    turn = runner.send("hello")
    kinds = [type(event) async for event in turn]
    result = await turn
    assert kinds == [AgentStarted, TextDelta, TurnEnded]
    assert result.outcome == "completed"
    assert result.text == "echo: hello"
    assert result.session_id == "11111111-2222-4333-8444-555555555555"
    assert result.cost_usd == pytest.approx(0.25)
    assert list(result.to_frame()["kind"]) == ["started", "text", "ended"]
    assert "--session-id" in runner.process.argv
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_second_send_while_busy_is_agent_busy(tmp_path):
    runner = make_runner(tmp_path, "hang", idle_timeout=30)
    await runner.start()
    turn = runner.send("first")
    with pytest.raises(AgentBusy) as caught:
        runner.send("second")
    assert caught.value.code == "AGENT_BUSY"
    result = await turn.cancel()
    assert result.outcome == "cancelled"
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_crash_mid_turn_gives_failed_with_stderr_tail(tmp_path):
    runner = make_runner(tmp_path, "crash")
    result = await runner.send("boom")
    assert result.outcome == "failed"
    assert result.error_code == "CLI_EXITED"
    assert "crashed on purpose" in result.stderr_tail
    assert "crashed on purpose" in result.error
    assert any(isinstance(event, TextDelta) for event in result.events)
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_hang_ends_with_synthetic_timeout_and_no_process(tmp_path):
    runner = make_runner(tmp_path, "hang", idle_timeout=0.5, interrupt_timeout=0.5)
    await runner.start()
    pid = runner.pid
    result = await asyncio.wait_for(runner.send("anyone?"), timeout=20)
    assert result.outcome == "timeout"
    assert result.error_code == "AGENT_TIMEOUT"
    assert "no output" in result.error
    assert await wait_until_gone_async(pid)
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_turn_timeout_is_separate_from_inactivity(tmp_path):
    runner = make_runner(tmp_path, "hang", turn_timeout=0.5, idle_timeout=60, interrupt_timeout=0.3)
    result = await asyncio.wait_for(runner.send("slow"), timeout=20)
    assert result.outcome == "timeout"
    assert "longer than" in result.error
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_garbage_lines_become_agent_errors_and_the_turn_goes_on(tmp_path):
    runner = make_runner(tmp_path, "garbage")
    result = await runner.send("hi")
    errors = [event for event in result.events if isinstance(event, AgentError)]
    assert result.outcome == "completed"
    assert [error.code for error in errors] == ["INVALID_JSON", "INVALID_JSON", "INVALID_JSON"]
    assert errors[0].excerpt == "this is not json"
    assert result.text == "echo: hi"
    await assert_clean_stop(runner)


@pytest.mark.anyio
@pytest.mark.slow
async def test_fifty_megabyte_line_is_read_whole(tmp_path):
    runner = make_runner(tmp_path, "huge")
    result = await asyncio.wait_for(runner.send("big"), timeout=120)
    tool_results = [event for event in result.events if isinstance(event, ToolResult)]
    assert result.outcome == "completed"
    assert len(tool_results) == 1 and len(tool_results[0].content) == 50 * 1024 * 1024
    await assert_clean_stop(runner)


@pytest.mark.anyio
@pytest.mark.slow
async def test_line_over_the_cap_costs_one_error_not_the_session(tmp_path):
    runner = make_runner(tmp_path, "huge", max_line_bytes=1024 * 1024)
    result = await asyncio.wait_for(runner.send("big"), timeout=120)
    errors = [event for event in result.events if isinstance(event, AgentError)]
    assert result.outcome == "completed"
    assert [error.code for error in errors] == ["LINE_TOO_LONG"]
    assert result.text == "echo: big"
    second = await runner.send("again")
    assert second.text == "echo: again"
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_stderr_flood_does_not_block_and_tail_is_bounded(tmp_path):
    runner = make_runner(tmp_path, "stderr-flood", stderr_tail_bytes=4096)
    result = await asyncio.wait_for(runner.send("noise"), timeout=60)
    assert result.outcome == "completed"
    assert runner.process.stderr.total_bytes >= 8 * 1024 * 1024 - 2048
    assert len(runner.process.stderr.text()) <= 4096
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_exit_at_start_is_cli_start_failed_with_stderr(tmp_path):
    runner = make_runner(tmp_path, "exit-at-start")
    with pytest.raises(CliStartFailed) as caught:
        await runner.start()
    assert caught.value.code == "CLI_START_FAILED"
    assert "cannot start (fake)" in str(caught.value)
    assert caught.value.details["exit_code"] == 1
    assert our_zombies() == []


@pytest.mark.anyio
async def test_silent_start_is_bounded(tmp_path):
    runner = make_runner(tmp_path, "slow-init", start_timeout=0.5)
    with pytest.raises(CliStartFailed) as caught:
        await asyncio.wait_for(runner.start(), timeout=20)
    assert "did not answer" in str(caught.value)
    assert not process_alive(runner.pid)


@pytest.mark.anyio
async def test_root_bypass_refusal_is_explained(tmp_path):
    runner = make_runner(tmp_path, "refuse-root", permission_mode="bypassPermissions")
    with pytest.raises(BypassRefusedAsRoot) as caught:
        await runner.start()
    assert caught.value.code == "BYPASS_REFUSED_AS_ROOT"
    assert "IS_SANDBOX=1" in str(caught.value)
    assert "acceptEdits" in str(caught.value)


@pytest.mark.anyio
async def test_missing_binary_is_cli_not_found_with_hint(tmp_path):
    runner = AgentRunner(None, tmp_path, executable="/nonexistent/claude")
    with pytest.raises(CliNotFound) as caught:
        await runner.start()
    assert caught.value.code == "CLI_NOT_FOUND"
    assert "npm install -g @anthropic-ai/claude-code" in str(caught.value)
    assert "standin" in str(caught.value)


@pytest.mark.anyio
async def test_missing_binary_fails_the_turn_when_sent_without_start(tmp_path):
    runner = AgentRunner(None, tmp_path, executable="no-such-claude-binary")
    result = await runner.send("hi")
    assert result.outcome == "failed"
    assert result.error_code == "CLI_NOT_FOUND"
    with pytest.raises(CliNotFound):
        result.raise_for_outcome()


@pytest.mark.anyio
async def test_cancel_kills_grandchild_in_its_own_session(tmp_path):
    runner = make_runner(tmp_path, "grandchild", interrupt_timeout=0.5)
    turn = runner.send("start a tool")
    async for event in turn:
        if isinstance(event, ToolUse):
            grandchild_pid = event.input["pid"]
            break
    assert process_alive(grandchild_pid)
    assert os.getsid(grandchild_pid) != os.getsid(runner.pid)
    result = await asyncio.wait_for(turn.cancel(), timeout=20)
    assert result.outcome == "cancelled"
    assert await wait_until_gone_async(grandchild_pid, timeout=3)
    assert not process_alive(runner.pid)
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_clean_interrupt_keeps_process_and_ends_tool_sessions(tmp_path):
    runner = make_runner(tmp_path, "grandchild-interruptible")
    turn = runner.send("start a tool")
    async for event in turn:
        if isinstance(event, ToolUse):
            grandchild_pid = event.input["pid"]
            break
    result = await asyncio.wait_for(turn.cancel(), timeout=20)
    assert result.outcome == "cancelled"
    assert result.terminal_reason == "aborted_tools"
    assert runner.is_running
    assert await wait_until_gone_async(grandchild_pid, timeout=3)
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_stop_is_idempotent(tmp_path):
    runner = make_runner(tmp_path, "echo")
    await runner.start()
    await runner.stop()
    await runner.stop()
    assert runner.status == "closed"
    assert our_zombies() == []


@pytest.mark.anyio
async def test_next_turn_after_a_crash_restarts_with_resume(tmp_path):
    runner = make_runner(tmp_path, "crash")
    first = await runner.send("boom")
    assert first.outcome == "failed"
    switch_mode(tmp_path, "echo")
    second = await runner.send("again")
    assert second.outcome == "completed"
    assert any(word.startswith("--resume=") for word in runner.process.argv)
    assert second.session_id == first.session_id
    await assert_clean_stop(runner)


def test_send_sync_in_a_plain_script(tmp_path):
    runner = make_runner(tmp_path, "echo")
    result = runner.send_sync("from a script")
    assert result.text == "echo: from a script"
    second = runner.send_sync("again")
    assert second.text == "echo: again"
    pid = runner.pid
    runner.stop_sync()
    assert not process_alive(pid)


@pytest.mark.anyio
async def test_send_sync_on_the_runner_loop_is_a_typed_error(tmp_path):
    runner = make_runner(tmp_path, "echo")
    await runner.start()
    with pytest.raises(SyncCallInsideLoop):
        runner.send_sync("would deadlock")
    await assert_clean_stop(runner)


def test_reaper_leaves_no_cli_and_no_tool_after_interpreter_exit(tmp_path):
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from elynav_nb.agents.events import ToolUse
        from elynav_nb.agents.runner import AgentRunner

        async def main():
            runner = AgentRunner(None, {str(tmp_path)!r}, executable=[sys.executable, {FAKE_CLI!r}],
                                 environment={{"FAKE_CLI_MODE": "grandchild"}})
            turn = runner.send("go")
            async for event in turn:
                if isinstance(event, ToolUse):
                    print(runner.pid, event.input["pid"], flush=True)
                    return runner   # exit without stop(): the reaper must clean up

        keep = asyncio.new_event_loop().run_until_complete(main())
        """
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    cli_pid, grandchild_pid = (int(word) for word in completed.stdout.split())
    assert wait_until_gone(cli_pid, timeout=5)
    assert wait_until_gone(grandchild_pid, timeout=5)


@pytest.mark.anyio
async def test_several_readers_each_see_every_event(tmp_path):
    runner = make_runner(tmp_path, "echo")
    await runner.start()
    turn = runner.send("fan out")

    async def collect() -> list:
        return [event async for event in turn]

    first, second = await asyncio.gather(collect(), collect())
    late = await collect()  # a reader that starts after the end still gets everything
    assert first == second == late == list((await turn).events)
    assert len(first) == 3
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_awaiting_cell_interrupted_cancels_the_turn(tmp_path):
    runner = make_runner(tmp_path, "hang", idle_timeout=60, interrupt_timeout=0.5)
    turn = runner.send("long")
    waiter = asyncio.ensure_future(turn._wait_result())  # what `await turn` does in a cell
    await asyncio.sleep(0.5)
    waiter.cancel()  # a kernel interrupt reaching the cell
    with pytest.raises(asyncio.CancelledError):
        await waiter
    result = await asyncio.wait_for(asyncio.shield(turn._done), timeout=20)
    assert result.outcome == "cancelled"
    await assert_clean_stop(runner)


@pytest.mark.anyio
async def test_an_unexpected_failure_still_settles_the_turn(tmp_path, monkeypatch):
    runner = make_runner(tmp_path, "echo")

    async def broken_start() -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(runner._driver, "start", broken_start)  # what a turn calls to start the CLI
    result = await asyncio.wait_for(runner.send("hi"), timeout=10)
    assert result.outcome == "failed" and result.error_code == "AGENT_PROCESS_ERROR"
    assert "disk on fire" in result.error
    assert not runner.busy


@pytest.mark.anyio
async def test_a_cancel_settles_the_turn_at_once_when_the_cli_ignores_everything(tmp_path):
    # A wedged CLI: no answer to the interrupt, SIGINT and SIGTERM ignored. The caller gets the turn's
    # result while the process is still being stopped, in the background, down to SIGKILL.
    runner = make_runner(tmp_path, "deaf", interrupt_timeout=2.0, settle_timeout=0.5)
    turn = runner.send("anyone?")
    await asyncio.sleep(0.5)
    pid = runner.pid
    result = await asyncio.wait_for(turn.cancel(), timeout=30)
    assert result.outcome == "cancelled"
    assert "did not end the turn within 0.5 s and is being stopped" in result.error
    assert runner.status == "stopping" and process_alive(pid)  # settled before the stop sequence ran
    assert not runner.busy  # the next send is accepted: it waits for the stop, then restarts the CLI
    await asyncio.wait_for(runner._driver.stopping, timeout=30)
    assert not process_alive(pid) and runner.status in ("stopped", "exited")
    assert our_zombies() == []
    await runner.stop()


@pytest.mark.anyio
async def test_a_timeout_settles_at_once_and_the_next_turn_restarts_the_cli_on_the_same_session(tmp_path):
    runner = make_runner(tmp_path, "deaf", idle_timeout=0.5, interrupt_timeout=1.0, settle_timeout=0.3)
    first = await asyncio.wait_for(runner.send("one"), timeout=30)
    first_pid = runner.pid
    assert first.outcome == "timeout" and "is being stopped" in first.error
    second_turn = runner.send("two")  # waits for the stop, then a new CLI with --resume
    await asyncio.sleep(0.2)
    assert not second_turn.done
    second = await asyncio.wait_for(second_turn, timeout=30)
    assert runner.pid != first_pid and not process_alive(first_pid)
    assert "--resume=" + runner.session_id in runner.process.argv
    assert second.outcome == "timeout"  # the new CLI is deaf too
    await runner.stop()
    assert our_zombies() == []


@pytest.mark.anyio
async def test_a_cli_that_honours_the_interrupt_late_keeps_its_conversation(tmp_path):
    # grandchild-interruptible answers the interrupt; a settle bound shorter than its answer still keeps it.
    runner = make_runner(tmp_path, "grandchild-interruptible", interrupt_timeout=5.0, settle_timeout=0.0)
    turn = runner.send("tool")
    await asyncio.sleep(0.5)
    pid = runner.pid
    result = await asyncio.wait_for(turn.cancel(), timeout=30)
    assert result.outcome == "cancelled"
    await asyncio.wait_for(runner._driver.stopping, timeout=30)
    assert runner.pid == pid and process_alive(pid) and runner.status == "idle"  # the late result kept it
    await runner.stop()


@pytest.mark.anyio
async def test_the_command_line_of_the_last_start_is_shown_and_holds_no_environment_secret(tmp_path):
    runner = AgentRunner(
        None,
        tmp_path,
        executable=fake_cli_command(),
        stop_bounds=FAST_STOP,
        environment={"FAKE_CLI_MODE": "echo", "ANTHROPIC_API_KEY": "sk-secret-1"},
    )
    assert runner.command_line == []
    await runner.start()
    line = runner.command_line
    assert line[:2] == fake_cli_command()[:2]
    assert "stream-json" in line and "--session-id" in line and runner.session_id in line
    assert not any("sk-secret-1" in part for part in line)
    await assert_clean_stop(runner)
