"""The real codex over ``codex app-server`` (``AgentRunner(cli="codex")``'s default), offline on the fake model API.

What only the persistent mode has: permission prompts answered deny then allow, token deltas, a
turn/interrupt that keeps the process, one process for many turns. The scenarios codex shares
with the per-turn runner (shell, CRM MCP, cancels, kill -9 then resume, API errors, an
unreachable API) run in ``test_runner_per_turn_real.py`` for both codex modes. Each test records
the real JSON-RPC lines (``tests/fixtures/codex_real/codex-<version>-app-server-*.jsonl``) or checks
the live lines against them, and ``tests/agents/test_codex_app_codec.py`` decodes the recordings.
"""

from __future__ import annotations

import json

import pytest

from elynav_nb.agents import (
    AgentStarted,
    PermissionRequest,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
)
from elynav_nb.errors import CliStartFailed
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply

from .recordings import check_app_server_recording as check_recording
from .recordings import record_lines
from .runner_setups import agent_definition, make_runner
from .setups import plain_workspace

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]


@pytest.fixture
def codex(codex_cli):
    return codex_cli  # the default mode: app-server


async def test_two_turns_stream_token_deltas_in_one_process(codex, says_version, isolated_home, tmp_path):
    says_version(codex)
    chunks = tuple(f"word{index} " for index in range(8))
    script = [Reply(text=chunks, thinking="first thoughts", chunk_delay=0.2), Reply.say("Again.")]
    deltas_while_streaming: list[str] = []
    async with FakeModelApi(script) as api:
        runner = make_runner(codex, api, plain_workspace(tmp_path), isolated_home)
        lines = record_lines(runner)
        turn = runner.send("say words")
        async for event in turn:
            if isinstance(event, TextDelta) and api.streams_finished == 0:
                deltas_while_streaming.append(event.text)
        first = await turn
        first_pid = runner.pid
        second = await runner.send("once more")
        second_pid = runner.pid
        requests = api.model_requests("openai")
        await runner.stop()

    assert first.outcome == "completed" and first.text == "".join(chunks)
    assert len(deltas_while_streaming) >= 2  # token deltas, as the model streams them
    assert [event.text for event in first.events if isinstance(event, ThinkingDelta)] == ["first thoughts"]
    [started] = [event for event in first.events if isinstance(event, AgentStarted)]
    assert started.session_id == runner.session_id and started.cli_version == codex.version
    assert first.usage["input_tokens"] == 100 and second.usage["input_tokens"] == 100  # per turn
    assert second.usage["thread_total"]["input_tokens"] == 200
    assert second.outcome == "completed" and second.text == "Again." and first_pid == second_pid
    assert "say words" in json.dumps(requests[1].body)  # the thread's history went with turn 2
    assert "mode=app-server" in repr(runner) and codex.version in repr(runner)
    check_recording(codex.version, "text_turns", lines, tmp_path)


async def test_a_permission_prompt_denied_then_allowed(codex, says_version, isolated_home, tmp_path):
    says_version(codex)
    workspace = plain_workspace(tmp_path)
    made = workspace / "made.txt"
    definition = agent_definition(tools=("Bash",), permission_mode="acceptEdits")
    script = [
        Reply.shell("touch made.txt"),
        Reply.say("It was refused."),
        Reply.shell("touch made.txt"),
        Reply.say("Done."),
    ]
    asked: list[PermissionRequest] = []
    async with FakeModelApi(script) as api:
        runner = make_runner(codex, api, workspace, isolated_home, definition, permission_prompts=True)
        lines = record_lines(runner)
        denied_turn = runner.send("make the file")
        async for event in denied_turn:
            if isinstance(event, PermissionRequest):
                asked.append(event)
                event.deny("Not now.")
        denied = await denied_turn
        existed_after_deny = made.exists()
        allowed_turn = runner.send("make it now")
        async for event in allowed_turn:
            if isinstance(event, PermissionRequest):
                asked.append(event)
                event.allow()
        allowed = await allowed_turn
        requests = api.model_requests("openai")
        await runner.stop()

    assert [request.tool_name for request in asked] == ["command_execution", "command_execution"]
    assert "touch made.txt" in asked[0].input["command"] and asked[0].tool_use_id
    assert denied.outcome == "completed" and denied.text == "It was refused." and not existed_after_deny
    [refused] = [event for event in denied.events if isinstance(event, ToolResult)]
    assert refused.is_error and "declined" in refused.text
    assert "declined" in json.dumps(requests[1].body) or "rejected" in json.dumps(requests[1].body)
    assert allowed.outcome == "completed" and allowed.text == "Done." and made.exists()
    [ran] = [event for event in allowed.events if isinstance(event, ToolResult)]
    assert not ran.is_error
    decisions = [
        event.decision for event in [*denied.events, *allowed.events] if event.kind == "permission_closed"
    ]
    assert decisions == ["denied", "allowed"]
    check_recording(codex.version, "approvals", lines, tmp_path)


async def test_an_unanswered_prompt_is_withdrawn_by_the_cancel(codex, says_version, isolated_home, tmp_path):
    says_version(codex)
    workspace = plain_workspace(tmp_path)
    definition = agent_definition(tools=("Bash",), permission_mode="acceptEdits")
    async with FakeModelApi([Reply.shell("touch never.txt")]) as api:
        runner = make_runner(codex, api, workspace, isolated_home, definition, permission_prompts=True)
        turn = runner.send("make the file")
        async for event in turn:
            if isinstance(event, PermissionRequest):
                break
        pid = runner.pid
        assert runner.pending_permissions
        cancelled = await turn.cancel()
        pending_after = list(runner.pending_permissions)
        pid_after = runner.pid
        api.reply(Reply.say("Next."))
        after = await runner.send("something else")
        await runner.stop()

    assert cancelled.outcome == "cancelled" and not pending_after
    assert [event.decision for event in cancelled.events if event.kind == "permission_closed"] == [
        "withdrawn"
    ]
    assert not (workspace / "never.txt").exists()
    assert pid_after == pid  # the interrupt kept the process
    assert after.outcome == "completed" and after.text == "Next."


async def test_resume_in_a_new_runner_and_an_unknown_thread_is_refused(
    codex, says_version, isolated_home, tmp_path
):
    says_version(codex)
    workspace = plain_workspace(tmp_path)
    async with FakeModelApi([Reply.say("Noted."), Reply.say("Tangerine.")]) as api:
        first_runner = make_runner(codex, api, workspace, isolated_home)
        async with first_runner:
            first = await first_runner.send("remember the word tangerine")
        resumed_runner = make_runner(codex, api, workspace, isolated_home, resume=first.session_id)
        async with resumed_runner:
            again = await resumed_runner.send("what was the word?")
        requests = api.model_requests("openai")
        stranger = make_runner(
            codex, api, workspace, isolated_home, resume="01a00000-0000-7000-8000-000000000000"
        )
        with pytest.raises(CliStartFailed, match="cannot resume"):
            await stranger.start()
        await stranger.stop()

    assert again.outcome == "completed" and again.session_id == first.session_id
    assert "tangerine" in json.dumps(requests[-1].body)
    assert not [event for event in again.events if isinstance(event, ToolUse)]
