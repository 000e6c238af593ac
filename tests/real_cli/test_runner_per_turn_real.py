"""The real codex and gemini CLIs through ``AgentRunner(..., cli=...)``, offline against the fake model API.

Phase 2 of issue 12: the same runner, turn and result objects as claude, one CLI process per turn.
Each test runs once per CLI (``per_turn_cli``: the pinned codex, then the pinned gemini), says
which version it ran, and checks the process table with psutil where processes are stopped.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from elynav_nb.agents import (
    AgentError,
    AgentRunner,
    AgentStarted,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
)
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply

from .recordings import check_app_server_recording, record_lines
from .runner_setups import (
    agent_definition,
    command_of,
    make_runner,
    process_tree,
    wait_for,
    wait_gone,
)
from .setups import TEST_AGENT_PROMPT, crm_workspace, plain_workspace

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]

SLOW_CHUNKS = tuple(f"word{index} " for index in range(40))


def _model_requests(api: FakeModelApi, cli_name: str) -> list:
    return api.model_requests("openai" if cli_name == "codex" else "gemini")


async def test_a_streamed_text_turn_then_a_resumed_one(per_turn_cli, says_version, isolated_home, tmp_path):
    cli = per_turn_cli
    says_version(cli)
    chunks = ("Hello ", "from ", "the ", "fake ", "model.")
    script = [Reply(text=chunks, thinking="first thoughts", chunk_delay=0.3), Reply.say("Again.")]
    seen_while_streaming: list[str] = []
    async with FakeModelApi(script) as api:
        runner = make_runner(cli, api, plain_workspace(tmp_path), isolated_home)
        assert runner.cli_name == cli.name and any("no cost" in note for note in runner.limitations)
        turn = runner.send("say hello")
        async for event in turn:
            if api.streams_finished == 0:
                seen_while_streaming.append(event.kind)
        first = await turn
        conversation = runner.session_id
        second = await runner.send("once more")
        requests = _model_requests(api, cli.name)
        await runner.stop()

    assert first.outcome == "completed", first.error
    assert first.text == "Hello from the fake model." and first.session_id == conversation and conversation
    [started] = [event for event in first.events if isinstance(event, AgentStarted)]
    assert started.cli_version == cli.version and started.session_id == conversation
    assert runner.cli_version == cli.version and cli.version in repr(runner)
    # Events reach the reader while the model still streams: codex exec per item (its reasoning
    # first), codex app-server and gemini per token chunk.
    assert "started" in seen_while_streaming
    assert ("thinking" if cli.name == "codex" and not cli.persistent else "text") in seen_while_streaming
    if cli.name == "codex":
        assert [event.text for event in first.events if isinstance(event, ThinkingDelta)] == [
            "first thoughts"
        ]
    assert first.usage["input_tokens"] == 100

    # The second turn resumes the same conversation: same id, the history sent again.
    assert second.outcome == "completed" and second.text == "Again." and second.session_id == conversation
    assert [request.last_user_text for request in requests] == ["say hello", "once more"]
    assert TEST_AGENT_PROMPT in requests[0].system_prompt
    assert "Hello from the fake model." in json.dumps(requests[1].body)
    assert runner.to_frame()["outcome"].tolist() == ["completed", "completed"]


async def test_a_turn_that_runs_a_shell_command(per_turn_cli, says_version, isolated_home, tmp_path):
    cli = per_turn_cli
    says_version(cli)
    definition = agent_definition(tools=("Bash",), permission_mode="bypassPermissions")
    async with FakeModelApi([Reply.shell("echo hi"), Reply.say("Tool done.")]) as api:
        runner = make_runner(cli, api, plain_workspace(tmp_path), isolated_home, definition)
        async with runner:
            result = await runner.send("run it")

    assert result.outcome == "completed", result.error
    [tool_use] = result.tool_uses
    assert "echo hi" in json.dumps(tool_use.input)
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    assert (
        tool_result.tool_use_id == tool_use.id
        and tool_result.text.strip() == "hi"
        and not tool_result.is_error
    )
    assert result.text == "Tool done."


async def test_a_turn_that_calls_the_crm_mcp_server(per_turn_cli, says_version, isolated_home, tmp_path):
    cli = per_turn_cli
    says_version(cli)
    workspace, _ = crm_workspace(tmp_path)  # its .mcp.json declares `elynav mcp crm`
    definition = agent_definition(tools=("Read", "mcp__crm__search_accounts"))
    script = [Reply.mcp("crm", "search_accounts", {"query": "Girard"}), Reply.say("Found it.")]
    async with FakeModelApi(script) as api:
        runner = make_runner(cli, api, workspace, isolated_home, definition)
        lines = record_lines(runner)
        async with runner:
            result = await runner.send("find Girard in the CRM")
            servers = await runner.mcp_status()

    assert result.outcome == "completed", f"{result.error} {result.stderr_tail[-1500:]}"
    [tool_use] = result.tool_uses
    assert tool_use.name == "mcp__crm__search_accounts" and tool_use.input == {"query": "Girard"}
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    assert not tool_result.is_error and "Atelier Girard" in tool_result.text
    assert result.text == "Found it."
    if cli.persistent:  # app-server reports the live server and its tools
        [server] = servers
        assert server["name"] == "crm" and server["status"] in ("connected", "configured")
        assert "search_accounts" in server["tools"]
        check_app_server_recording(cli.version, "mcp_turn", lines, tmp_path)
    else:
        assert servers == [{"name": "crm", "status": "configured"}]


async def test_a_cancel_mid_stream_stops_the_process_and_keeps_the_conversation(
    per_turn_cli, says_version, isolated_home, tmp_path
):
    cli = per_turn_cli
    says_version(cli)
    script = [Reply(text=SLOW_CHUNKS, thinking="thinking first", chunk_delay=0.5), Reply.say("Still here.")]
    async with FakeModelApi(script) as api:
        runner = make_runner(cli, api, plain_workspace(tmp_path), isolated_home)
        lines = record_lines(runner)
        turn = runner.send("talk slowly")
        await wait_for(lambda: any(isinstance(event, AgentStarted) for event in turn.events))
        await api.wait_for_requests(1, timeout=60)
        tree = process_tree(runner.pid)
        assert tree, "the turn's process runs"
        result = await turn.cancel()
        left = [] if cli.persistent else await wait_gone(tree)
        pid_after_cancel = runner.pid
        after = await runner.send("are you there?")
        requests = _model_requests(api, cli.name)
        await runner.stop()

    assert result.outcome == "cancelled" and result.error == "cancelled by the user"
    assert not left, f"left running after the cancel: {left}"
    if cli.persistent:  # turn/interrupt: the same process takes the next turn
        assert pid_after_cancel == tree[0].pid and after.session_id == result.session_id
        check_app_server_recording(cli.version, "interrupt", lines, tmp_path)
    assert after.outcome == "completed" and after.text == "Still here."
    assert after.session_id == result.session_id  # the same conversation goes on
    assert requests[-1].last_user_text == "are you there?" and "talk slowly" in json.dumps(requests[-1].body)


async def test_a_cancel_mid_tool_kills_the_tool_process(per_turn_cli, says_version, isolated_home, tmp_path):
    cli = per_turn_cli
    says_version(cli)
    marker = tmp_path / "tool-started"
    definition = agent_definition(tools=("Bash",), permission_mode="bypassPermissions")
    command = f"touch {marker} && sleep 300"
    async with FakeModelApi([Reply.shell(command), Reply.say("never")]) as api:
        runner = make_runner(cli, api, plain_workspace(tmp_path), isolated_home, definition)
        turn = runner.send("run the long command")
        await wait_for(marker.exists)
        await wait_for(lambda: any(isinstance(event, ToolUse) for event in turn.events))
        tree = process_tree(runner.pid)
        sleepers = [process for process in tree if "sleep 300" in command_of(process)]
        assert sleepers, f"the tool runs under the CLI: {[command_of(process) for process in tree]}"
        result = await turn.cancel()
        left = await wait_gone(sleepers if cli.persistent else tree)
        still_serving = runner.is_running
        await runner.stop()
        stopped = await wait_gone(tree)

    assert result.outcome == "cancelled"
    assert not left, f"left running after the cancel: {[command_of(process) for process in left]}"
    if cli.persistent:  # the interrupt ended the tool, the app-server stays for the next turn
        assert still_serving
    assert not stopped


async def test_resume_after_a_kill_9_mid_turn(per_turn_cli, says_version, isolated_home, tmp_path):
    cli = per_turn_cli
    says_version(cli)
    script = [Reply.say("First answer."), Reply(text=SLOW_CHUNKS, chunk_delay=0.5), Reply.say("Back again.")]
    async with FakeModelApi(script) as api:
        runner = make_runner(cli, api, plain_workspace(tmp_path), isolated_home)
        first = await runner.send("remember the word tangerine")
        turn = runner.send("talk slowly")
        await wait_for(lambda: any(isinstance(event, AgentStarted) for event in turn.events))
        await api.wait_for_requests(2, timeout=60)
        tree = process_tree(runner.pid)
        os.killpg(tree[0].pid, signal.SIGKILL)  # the CLI's group: codex's node wrapper and its native binary
        killed = await turn
        left = await wait_gone(tree)
        after = await runner.send("what was the word?")
        requests = _model_requests(api, cli.name)
        await runner.stop()

    assert first.outcome == "completed"
    assert killed.outcome == "failed" and killed.error_code == "CLI_EXITED"
    assert "-9" in killed.error  # the diagnostic says how the process ended
    assert not left, f"left running after the kill: {left}"
    assert after.outcome == "completed", after.error
    assert after.text == "Back again." and after.session_id == first.session_id
    assert "tangerine" in json.dumps(requests[-1].body)  # the resumed thread/session holds the history


async def test_an_api_error_and_a_cut_stream_end_typed(per_turn_cli, says_version, isolated_home, tmp_path):
    cli = per_turn_cli
    says_version(cli)
    script = [Reply.http_error(400, "fake 400 error"), Reply.cut("Hello ", "from ", "fake.", after_frames=2)]
    async with FakeModelApi(script) as api:
        runner = make_runner(cli, api, plain_workspace(tmp_path), isolated_home)
        lines = record_lines(runner)
        async with runner:
            api_error = await runner.send("fail please")
            cut = await runner.send("cut me off")

    assert api_error.outcome == "error" and "fake 400 error" in api_error.error
    assert api_error.ended is not None and api_error.ended.is_error
    assert cut.outcome == "error" and cut.ended is not None and cut.ended.is_error
    assert not [
        event for event in cut.events if isinstance(event, AgentError) and event.code == "INVALID_JSON"
    ]
    if cli.persistent:
        check_app_server_recording(cli.version, "errors", lines, tmp_path)


async def test_an_unreachable_api_is_ended_by_our_own_bound(
    per_turn_cli, says_version, isolated_home, tmp_path
):
    cli = per_turn_cli
    says_version(cli)
    async with FakeModelApi() as api:
        closed_port_environment = {
            "OPENAI_BASE_URL": f"http://127.0.0.1:{_free_port()}/v1",
            "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{_free_port()}",
        }
        runner = make_runner(
            cli,
            api,
            plain_workspace(tmp_path),
            isolated_home,
            environment=closed_port_environment,
            cli_config={},  # codex's own retries on: it would retry for ever
            retry_timeout=3.0,  # codex: error lines ("Reconnecting...") that are no progress
            idle_timeout=10.0,  # gemini: it retries in silence (nothing on stdout for minutes)
        )
        turn = runner.send("hello?")
        await wait_for(lambda: runner.pid is not None)
        tree = process_tree(runner.pid)
        result = await turn
        left = [] if cli.persistent else await wait_gone(tree)  # app-server honoured turn/interrupt
        await runner.stop()
        left += await wait_gone(tree)

    # Neither CLI gives up soon by itself (codex never; gemini after minutes): our bounds end the turn.
    assert result.outcome == "timeout" and result.error_code == "AGENT_TIMEOUT"
    if cli.name == "codex":
        assert "kept retrying the model API for 3 s" in result.error
        assert "Reconnecting" in result.error
    else:
        assert "no output from gemini for 10 s" in result.error
    assert not left


async def test_a_prompt_too_long_for_an_argument_goes_through_stdin(
    per_turn_cli, says_version, isolated_home, tmp_path
):
    cli = per_turn_cli
    says_version(cli)
    prompt = "é" * 80_000 + " end of the long prompt"  # 160 kB: over Linux's 128 KiB per argument
    async with FakeModelApi([Reply.say("Read it.")]) as api:
        runner = make_runner(cli, api, plain_workspace(tmp_path), isolated_home)
        async with runner:
            result = await runner.send(prompt)
        [request] = _model_requests(api, cli.name)

    assert result.outcome == "completed", result.error
    if cli.persistent:
        assert "app-server" in runner.command_line and prompt not in " ".join(
            runner.command_line
        )  # in turn/start
    elif cli.name == "codex":
        assert runner.command_line[-1] == "-"  # codex exec reads the prompt from stdin
    else:
        assert not any(word.startswith("--prompt") for word in runner.command_line)  # piped: the prompt
    assert request.last_user_text.strip().endswith("end of the long prompt")


async def test_the_same_code_runs_each_cli(per_turn_cli, says_version, isolated_home, tmp_path):
    """What notebook 01 shows: only ``cli=`` changes; the result says the outcome and the version."""
    cli = per_turn_cli
    says_version(cli)
    async with FakeModelApi([Reply.say("Bonjour.")]) as api:
        runner = AgentRunner(
            agent_definition(),
            plain_workspace(tmp_path),
            cli=cli.name,
            executable=cli.argv[0],
            environment={**api.cli_environment(), **isolated_home},
            **({"cli_mode": cli.mode} if cli.mode else {}),
        )
        async with runner:
            result = await runner.send("dis bonjour")

    assert type(runner) is AgentRunner
    assert runner.plan.driver == ("persistent" if cli.persistent else "per-turn")
    assert result.outcome == "completed" and result.text == "Bonjour."
    assert [event.cli_version for event in result.events if isinstance(event, AgentStarted)] == [cli.version]
    assert "".join(event.text for event in result.events if isinstance(event, TextDelta)) == "Bonjour."


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
