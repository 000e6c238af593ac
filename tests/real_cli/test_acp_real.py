"""The three real ACP agents through ``AgentRunner(cli="acp")``, offline against the fake model API.

``acp_agent`` runs each test on claude-agent-acp (the real claude underneath), codex-acp and
``gemini --acp`` (pinned in ``package-lock.json``; set up by ``acp_setups``). Every test goes
through the runner only: a streamed text turn, a shell call denied then allowed, an MCP tool of the
workspace's ``.mcp.json``, cancels mid-stream and mid-tool, a ``kill -9`` between turns, an API
error and a cut stream. What the agents do differently is said where it is checked (see also
``tests/fixtures/acp_real/README.md``, recorded from the same versions). Each test records the
version it ran (``says_version``) and stops its runner in ``finally``.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from elynav_nb.agents import AgentError, AgentStarted, PermissionRequest, TextDelta, ToolResult, ToolUse
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply

from .acp_runner_setups import agent_requests, make_acp_runner, run_answering, session_saved, shell_reply
from .conftest import RealCli
from .runner_setups import command_of, process_tree, wait_for, wait_gone
from .setups import crm_workspace, plain_workspace

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]

AGENTS = ("claude_acp_agent", "codex_acp_agent", "gemini_acp_agent")
PROOF = "shell-proof.txt"
SHELL_COMMAND = f"echo hello-from-shell > {PROOF} && echo done"


@pytest.fixture(params=AGENTS, ids=lambda name: name.removesuffix("_acp_agent"))
def acp_agent(request: pytest.FixtureRequest) -> RealCli:
    """Each pinned ACP agent in turn: claude-agent-acp, codex-acp, gemini --acp."""
    agent: RealCli = request.getfixturevalue(str(request.param))
    return agent


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """The agent's scratch home (its config files, sessions and TMPDIR)."""
    return tmp_path / "home"


def _allow(request: PermissionRequest) -> None:
    request.allow()


def _deny(request: PermissionRequest) -> None:
    request.deny()


async def test_a_streamed_text_turn(acp_agent, says_version, home, tmp_path):
    says_version(acp_agent)
    chunks = ("Hello", " from the", " fake model.")
    deltas: list[str] = []
    async with FakeModelApi([Reply.say(*chunks, chunk_delay=0.1)]) as api:
        runner = make_acp_runner(acp_agent, api, plain_workspace(tmp_path), home)
        try:
            turn = runner.send("Say hello.")
            async for event in turn:
                if isinstance(event, TextDelta) and event.text:
                    deltas.append(event.text)
            result = await turn
        finally:
            await runner.stop()

    assert result.outcome == "completed", result.error
    assert result.text == "".join(chunks)
    assert len(deltas) >= 2 and "".join(deltas) == result.text  # streamed chunk by chunk
    assert runner.session_id and result.session_id == runner.session_id
    [started] = [event for event in result.events if isinstance(event, AgentStarted)]
    assert started.session_id == runner.session_id
    frame = result.to_frame()
    assert "text" in frame["kind"].tolist() and frame["kind"].tolist()[-1] == "ended"
    assert runner.to_frame()["outcome"].tolist() == ["completed"]


async def test_a_shell_call_denied_then_allowed(acp_agent, says_version, home, tmp_path):
    """claude-agent-acp and gemini ask before any shell command; codex-acp only for one the model
    marks ``require_escalated`` (else it runs it in its read-only sandbox without asking).

    After the denial: claude reports the call failed (a ToolResult) and asks the model again;
    gemini says nothing more of the call and asks the model again; codex-acp ends the turn
    ``cancelled`` without asking the model again (so its script has no reply for that): the
    runner reads an agent's own ``cancelled`` as outcome ``error`` (only our cancel is ``cancelled``).
    """
    says_version(acp_agent)
    workspace = plain_workspace(tmp_path)
    proof = workspace / PROOF
    asks_model_after_denial = acp_agent.name != "codex-acp"
    script = [shell_reply(acp_agent, SHELL_COMMAND, text="Running it.")]
    if asks_model_after_denial:
        script.append(Reply.say("It was refused."))
    script += [shell_reply(acp_agent, SHELL_COMMAND, text="Running it."), Reply.say("Done.")]
    async with FakeModelApi(script) as api:
        runner = make_acp_runner(acp_agent, api, workspace, home, permission_prompts=True)
        try:
            denied, denied_asks = await run_answering(runner, "Run the shell command.", _deny)
            existed_after_deny = proof.exists()
            pid = runner.pid
            allowed, allowed_asks = await run_answering(runner, "Run it now.", _allow)
            same_process = runner.pid == pid
        finally:
            await runner.stop()

    for asks in (denied_asks, allowed_asks):
        [request] = asks
        kinds = {option.get("kind") for option in request.options}
        assert {"allow_once", "reject_once"} <= kinds, request.options
        assert request.tool_use_id and PROOF in json.dumps([request.input, request.description])
    decisions = [
        event.decision for event in [*denied.events, *allowed.events] if event.kind == "permission_closed"
    ]
    assert decisions == ["denied", "allowed"]
    assert not existed_after_deny and proof.read_text().strip() == "hello-from-shell"
    assert same_process

    [denied_use] = [event for event in denied.events if isinstance(event, ToolUse)]
    assert denied_use.id == denied_asks[0].tool_use_id
    refused = [event for event in denied.events if isinstance(event, ToolResult)]
    if acp_agent.name == "codex-acp":
        # abort ends codex's turn with stopReason "cancelled": not our cancel, so outcome error
        assert denied.outcome == "error" and denied.terminal_reason == "cancelled" and not refused
        assert "cancelled" in denied.error
    else:
        assert denied.outcome == "completed" and denied.text.endswith("It was refused."), denied.error
        if acp_agent.name == "claude-agent-acp":
            [result] = refused
            assert result.is_error and result.tool_use_id == denied_use.id
        else:
            assert not refused  # gemini: nothing more of a rejected call

    assert allowed.outcome == "completed" and allowed.text.endswith("Done."), allowed.error
    [allowed_use] = [event for event in allowed.events if isinstance(event, ToolUse)]
    [ran] = [event for event in allowed.events if isinstance(event, ToolResult)]
    assert ran.tool_use_id == allowed_use.id and not ran.is_error
    assert allowed_use.id == allowed_asks[0].tool_use_id


async def test_an_mcp_tool_of_the_workspace(acp_agent, says_version, home, tmp_path):
    """The CRM server of the workspace's ``.mcp.json`` goes to ``session/new``; claude and gemini
    ask before an MCP tool runs (approved here), codex-acp does not."""
    says_version(acp_agent)
    workspace, _ = crm_workspace(tmp_path)
    script = [Reply.mcp("crm", "search_accounts", {"query": "Girard"}), Reply.say("Found it.")]
    async with FakeModelApi(script) as api:
        runner = make_acp_runner(acp_agent, api, workspace, home, permission_handler=lambda request: True)
        try:
            result = await runner.send("Search the CRM for Girard.")
            servers = await runner.mcp_status()
            requests = agent_requests(api, acp_agent)
        finally:
            await runner.stop()

    assert result.outcome == "completed", f"{result.error} {result.stderr_tail[-1500:]}"
    assert result.text.endswith("Found it.")
    assert [server["name"] for server in servers] == ["crm"]
    assert any("search_accounts" in name for name in requests[0].tool_names), requests[0].tool_names
    [tool_use] = [event for event in result.events if isinstance(event, ToolUse)]
    assert "search_accounts" in tool_use.name or "search_accounts" in json.dumps(tool_use.input)
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    assert tool_result.tool_use_id == tool_use.id and not tool_result.is_error
    assert "Atelier Girard" in tool_result.text
    asked = [event for event in result.events if isinstance(event, PermissionRequest)]
    if acp_agent.name == "codex-acp":
        assert not asked
    else:
        assert len(asked) == 1


async def test_a_cancel_mid_stream_keeps_the_process(acp_agent, says_version, home, tmp_path):
    says_version(acp_agent)
    slow = Reply.slow(*[f"chunk {index} " for index in range(20)], chunk_delay=0.5)
    async with FakeModelApi([slow, Reply.say("Still here.")]) as api:
        runner = make_acp_runner(acp_agent, api, plain_workspace(tmp_path), home)
        try:
            turn = runner.send("Tell a long story.")
            async for event in turn:
                if isinstance(event, TextDelta) and event.text:
                    break
            pid = runner.pid
            cancelled = await turn.cancel()
            after = await runner.send("Are you there?")
            pid_after = runner.pid
            requests = agent_requests(api, acp_agent)
        finally:
            await runner.stop()

    assert cancelled.outcome == "cancelled"
    assert after.outcome == "completed" and after.text == "Still here.", after.error
    assert pid_after == pid  # session/cancel: the same process takes the next turn
    assert after.session_id == cancelled.session_id == runner.session_id
    assert "Are you there?" in json.dumps(requests[-1].body)


async def test_a_cancel_mid_tool_ends_the_command(acp_agent, says_version, home, tmp_path):
    """Each agent runs the command itself (no agent calls the client's terminal/*): the cancel
    must end the ``sleep`` in the agent's own process tree."""
    says_version(acp_agent)
    marker = tmp_path / "tool-started"
    command = f"touch {marker} && sleep 30"
    async with FakeModelApi([shell_reply(acp_agent, command), Reply.say("After the cancel.")]) as api:
        runner = make_acp_runner(
            acp_agent, api, plain_workspace(tmp_path), home, permission_handler=lambda request: True
        )
        try:
            turn = runner.send("Run the long command.")
            await wait_for(marker.exists, timeout=90)
            tree = process_tree(runner.pid)
            sleepers = [process for process in tree if "sleep 30" in command_of(process)]
            assert sleepers, f"the command runs under the agent: {[command_of(p) for p in tree]}"
            pid = runner.pid
            cancelled = await turn.cancel()
            left = await wait_gone(sleepers, timeout=20)
            after = await runner.send("Still there?")
            pid_after = runner.pid
        finally:
            await runner.stop()

    assert cancelled.outcome == "cancelled"
    assert not left, f"left running after the cancel: {[command_of(process) for process in left]}"
    assert after.outcome == "completed" and after.text == "After the cancel.", after.error
    assert pid_after == pid


async def test_a_kill_9_between_turns(acp_agent, says_version, home, tmp_path):
    """claude-agent-acp and codex-acp load the session again (``session/load``: the model gets the
    first turn); gemini mostly cannot load it after a restart (its chat file is not written yet): a
    new session, and the next turn says so with ``CONVERSATION_LOST``."""
    says_version(acp_agent)
    script = [Reply.say("Noted the word."), Reply.say("Back again.")]
    async with FakeModelApi(script) as api:
        runner = make_acp_runner(acp_agent, api, plain_workspace(tmp_path), home)
        try:
            first = await runner.send("Remember the word tangerine.")
            first_session = runner.session_id
            if acp_agent.name != "gemini":
                # claude answers end_turn before its transcript is on disk: a kill -9 at once loses
                # the session (session/load: "Resource not found"). Wait until the turn is saved.
                await wait_for(lambda: session_saved(home, first_session, "Noted the word."), timeout=30)
            tree = process_tree(runner.pid)
            group = os.getpgid(tree[0].pid)
            assert group != os.getpgid(0), "the agent runs in a process group of its own"
            os.killpg(group, signal.SIGKILL)
            left = await wait_gone(tree)
            await wait_for(lambda: not runner.is_running, timeout=30)
            after = await runner.send("Which word?")
            new_pid = runner.pid
            requests = agent_requests(api, acp_agent)
        finally:
            await runner.stop()

    assert first.outcome == "completed", first.error
    assert not left, f"left running after the kill: {left}"
    assert after.outcome == "completed" and after.text == "Back again.", after.error
    assert new_pid is not None and new_pid != tree[0].pid  # a new process took the turn
    lost = [
        event for event in after.events if isinstance(event, AgentError) and event.code == "CONVERSATION_LOST"
    ]
    # gemini 0.61.0 writes its chat file after it answers the turn: killed before that, its
    # session/load finds nothing ("No previous sessions found") and a new session starts, said with
    # CONVERSATION_LOST; killed after (a busy machine), it loads the session as the other two do
    if acp_agent.name == "gemini" and lost:
        assert len(lost) == 1 and first_session in lost[0].message
        assert runner.session_id and runner.session_id != first_session == first.session_id
        assert after.session_id == runner.session_id
        assert "tangerine" not in json.dumps(requests[-1].body)
        assert runner.history[-1] is after
        frame = after.to_frame()
        assert any(summary.startswith("CONVERSATION_LOST") for summary in frame["summary"])
    else:
        assert not lost
        assert runner.session_id == first_session == after.session_id
        assert "tangerine" in json.dumps(requests[-1].body)  # session/load gave the model the history


async def test_a_kill_9_mid_turn(acp_agent, says_version, home, tmp_path):
    """The killed turn fails (``CLI_EXITED``); the next one continues as after a kill between turns:
    claude-agent-acp and codex-acp load the session, gemini starts a new one (``CONVERSATION_LOST``)."""
    says_version(acp_agent)
    slow = Reply.slow(*[f"word{index} " for index in range(40)], chunk_delay=0.5)
    script = [Reply.say("Noted the word."), slow, Reply.say("Back again.")]
    async with FakeModelApi(script) as api:
        runner = make_acp_runner(acp_agent, api, plain_workspace(tmp_path), home)
        try:
            first = await runner.send("Remember the word tangerine.")
            first_session = runner.session_id
            if acp_agent.name != "gemini":  # see test_a_kill_9_between_turns
                await wait_for(lambda: session_saved(home, first_session, "Noted the word."), timeout=30)
            turn = runner.send("Talk slowly.")
            async for event in turn:
                if isinstance(event, TextDelta) and event.text:
                    break
            tree = process_tree(runner.pid)
            os.killpg(os.getpgid(tree[0].pid), signal.SIGKILL)
            killed = await turn
            left = await wait_gone(tree)
            after = await runner.send("Which word?")
            requests = agent_requests(api, acp_agent)
        finally:
            await runner.stop()

    assert first.outcome == "completed", first.error
    assert killed.outcome == "failed" and killed.error_code == "CLI_EXITED", killed
    assert not left, f"left running after the kill: {left}"
    assert after.outcome == "completed" and after.text == "Back again.", after.error
    lost = [
        event for event in after.events if isinstance(event, AgentError) and event.code == "CONVERSATION_LOST"
    ]
    if acp_agent.name == "gemini" and lost:  # see test_a_kill_9_between_turns: lost, or loaded
        assert len(lost) == 1 and runner.session_id != first_session
    else:
        assert not lost and runner.session_id == first_session == after.session_id
        assert "tangerine" in json.dumps(requests[-1].body)


async def test_an_api_error_and_a_cut_stream_end_typed(acp_agent, says_version, home, tmp_path):
    """An HTTP 400 and a stream dropped after two frames end the turn ``error``; the agent goes on.

    claude (under claude-agent-acp) sometimes retries a dropped stream once within the same turn by
    itself (its "Connection to the API was lost" path, despite ``CLAUDE_CODE_MAX_RETRIES=0``; the
    non-streaming fallback is off in ``acp_setups``): then the cut turn completes on the retry, which
    the fake API sees as a second request of that turn. A spare reply keeps the last turn's answer
    the same either way.
    """
    says_version(acp_agent)
    script = [
        Reply.http_error(400, "fake bad request"),
        Reply.say("Recovered."),
        Reply.cut("Partial", " answer", " never ends.", after_frames=2),
        Reply.say("Back."),
        Reply.say("Back."),  # spare: taken by the last turn when claude's own retry took the first
    ]
    async with FakeModelApi(script) as api:
        runner = make_acp_runner(acp_agent, api, plain_workspace(tmp_path), home)
        try:
            pid = None
            results = []
            requests_per_turn = []
            for prompt in ("Fail please.", "Try again.", "Cut me off.", "Once more."):
                before = len(agent_requests(api, acp_agent))
                results.append(await runner.send(prompt))
                requests_per_turn.append(len(agent_requests(api, acp_agent)) - before)
                pid = pid or runner.pid
            same_process = runner.pid == pid
        finally:
            await runner.stop()

    api_error, recovered, cut, back = results
    failures = [api_error]
    if acp_agent.name == "claude-agent-acp" and cut.outcome == "completed":
        assert requests_per_turn[2] == 2 and cut.text == "Back."  # claude retried the dropped stream
    else:
        assert requests_per_turn[2] == 1
        failures.append(cut)
    for failed in failures:
        assert failed.outcome == "error", failed
        # the agent's own error answer (a JSON-RPC error to session/prompt): ACP says it is one, so
        # the result carries the code (CLI_ERROR), the AgentError event too, the agent's message in ``error``
        assert failed.error_code == "CLI_ERROR" and failed.error and failed.ended is not None
        assert failed.ended.is_error and failed.ended.terminal_reason == "error"
        [error] = [event for event in failed.events if isinstance(event, AgentError)]
        assert error.code == "CLI_ERROR" and error.message == failed.error
    assert "fake bad request" in api_error.error
    assert requests_per_turn[0] == 1  # no retry of the 400
    assert recovered.outcome == "completed" and recovered.text == "Recovered.", recovered.error
    assert back.outcome == "completed" and back.text == "Back.", back.error
    assert same_process  # an error ends a turn, not the agent


async def test_a_slow_mcp_server_is_there_at_the_first_turn(acp_agent, says_version, home, tmp_path):
    """A workspace MCP server that takes seconds to start is connected before the first model request.

    claude under claude-agent-acp connects MCP servers in the background unless
    ``MCP_CONNECTION_NONBLOCKING`` is falsy; the runner lays ``MCP_CONNECTION_NONBLOCKING=0`` under every
    ACP agent's environment (``acp_launch.MCP_WAIT``). Without it this first request had no CRM tool.
    """
    says_version(acp_agent)
    workspace, _ = crm_workspace(tmp_path)
    config = json.loads((workspace / ".mcp.json").read_text())
    for server in config["mcpServers"].values():  # the CRM server, 3 s late
        server["args"] = ["-c", 'sleep 3; exec "$0" "$@"', server["command"], *server.get("args", [])]
        server["command"] = "sh"
    (workspace / ".mcp.json").write_text(json.dumps(config))
    async with FakeModelApi([Reply.say("Ready.")]) as api:
        runner = make_acp_runner(acp_agent, api, workspace, home)
        try:
            result = await runner.send("Which tools do you have?")
            requests = agent_requests(api, acp_agent)
        finally:
            await runner.stop()

    assert result.outcome == "completed", f"{result.error} {result.stderr_tail[-1500:]}"
    assert any("search_accounts" in name for name in requests[0].tool_names), requests[0].tool_names
