"""The real gemini CLI (pinned in package.json), offline against the fake Gemini API.

Each test builds the runner plan phase 2 will use (``plan_gemini_runner``), runs ``gemini -o
stream-json`` turns through the test driver and the gemini codec, checks what the fake API
received (system instruction, tools, history) and compares the lines with the recording of this
gemini version.
"""

from __future__ import annotations

import json

import pytest

from elynav_nb.agents.events import (
    AgentError,
    AgentStarted,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply

from .recordings import check_against_recording
from .setups import GEMINI_MODEL, TEST_AGENT_PROMPT, crm_workspace, gemini_plan, gemini_turn, plain_workspace

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]


async def test_a_streamed_text_turn_then_a_resumed_one(gemini_cli, says_version, isolated_home, tmp_path):
    says_version(gemini_cli)
    chunks = ("Hello ", "from ", "the ", "fake ", "model", ".")
    deltas_before_stream_end: list[str] = []
    script = [Reply(text=chunks, thinking="private thoughts", chunk_delay=0.4), Reply.say("Again.")]
    async with FakeModelApi(script) as api:
        plan = gemini_plan(api, plain_workspace(tmp_path), tmp_path)

        def note(event, run):
            if isinstance(event, TextDelta) and api.streams_finished == 0:
                deltas_before_stream_end.append(event.text)

        first, decoder = await gemini_turn(gemini_cli, plan, "say hello", isolated_home, on_event=note)
        second, _ = await gemini_turn(
            gemini_cli, plan, "once more", isolated_home, resume_session_id=decoder.session_id
        )
        requests = api.model_requests("gemini")

    assert first.exit_code == 0 and first.verdict is not None and first.verdict.outcome == "completed"
    started = first.of_type(AgentStarted)
    assert (
        len(started) == 1 and started[0].model == GEMINI_MODEL and started[0].session_id == decoder.session_id
    )
    assert tuple(event.text for event in first.of_type(TextDelta)) == chunks  # one event per model chunk
    assert deltas_before_stream_end[:1] == ["Hello "]  # streamed while the model was still answering
    assert not first.of_type(ThinkingDelta)  # gemini's stream-json leaves thoughts out
    ended = first.of_type(TurnEnded)[-1]
    assert (
        not ended.is_error
        and ended.result == "Hello from the fake model."
        and ended.usage["input_tokens"] == 100
    )

    assert second.verdict is not None and second.verdict.outcome == "completed" and second.text == "Again."
    assert second.of_type(AgentStarted)[0].session_id == decoder.session_id
    assert second.of_type(TurnEnded)[-1].usage["input_tokens"] == 100  # per process, not cumulative

    assert [request.last_user_text for request in requests] == ["say hello", "once more"]
    assert TEST_AGENT_PROMPT in requests[0].system_prompt  # GEMINI.md of the runner home
    assert requests[0].headers["x-goog-api-key"] == "[redacted]"
    assert "Hello from the fake model." in json.dumps(requests[1].body["contents"])
    check_against_recording("gemini", gemini_cli.version, "text_turn", first.lines, tmp_path)
    check_against_recording("gemini", gemini_cli.version, "resumed_turn", second.lines, tmp_path)


async def test_a_turn_that_runs_a_shell_command(gemini_cli, says_version, isolated_home, tmp_path):
    says_version(gemini_cli)
    async with FakeModelApi([Reply.shell("echo hi"), Reply.say("Tool done.")]) as api:
        plan = gemini_plan(api, plain_workspace(tmp_path), tmp_path, permission_mode="bypassPermissions")
        run, _ = await gemini_turn(gemini_cli, plan, "run it", isolated_home)
        requests = api.model_requests("gemini")

    assert plan.approval_mode == "yolo"
    assert run.verdict is not None and run.verdict.outcome == "completed"
    [tool_use] = run.of_type(ToolUse)
    assert tool_use.name == "run_shell_command" and tool_use.input["command"] == "echo hi"
    [tool_result] = run.of_type(ToolResult)
    assert tool_result.tool_use_id == tool_use.id and tool_result.text == "hi" and not tool_result.is_error
    assert run.text == "Tool done."
    assert "run_shell_command" in requests[0].tool_names
    assert "functionResponse" in json.dumps(requests[1].body["contents"][-1])
    check_against_recording("gemini", gemini_cli.version, "shell_turn", run.lines, tmp_path)


async def test_a_turn_that_calls_the_crm_mcp_server(gemini_cli, says_version, isolated_home, tmp_path):
    says_version(gemini_cli)
    workspace, servers = crm_workspace(tmp_path)
    tools = ("Read", "mcp__crm__search_accounts", "mcp__crm__get_account")
    script = [
        Reply.mcp("crm", "search_accounts", {"query": "Girard"}),
        Reply.mcp("crm", "create_account", {"name": "Not Allowed SA"}),  # not in the definition's tools
        Reply.say("Found it."),
    ]
    async with FakeModelApi(script) as api:
        plan = gemini_plan(api, workspace, tmp_path, tools=tools, mcp_servers=servers)
        run, _ = await gemini_turn(gemini_cli, plan, "find Girard in the CRM", isolated_home)
        requests = api.model_requests("gemini")

    assert run.verdict is not None and run.verdict.outcome == "completed", run.stderr[-2000:]
    search, refused = run.of_type(ToolUse)
    assert search.name == "mcp__crm__search_accounts" and search.input == {"query": "Girard"}
    assert refused.name == "mcp__crm__create_account"
    search_result, refused_result = run.of_type(ToolResult)
    assert not search_result.is_error and "Atelier Girard" in search_result.text
    assert refused_result.is_error and refused_result.tool_use_id == refused.id
    assert run.text == "Found it."
    offered = set(requests[0].tool_names)
    assert {
        "mcp_crm_search_accounts",
        "mcp_crm_get_account",
        "read_file",
    } <= offered  # includeTools, tools.core
    assert "mcp_crm_create_account" not in offered and "run_shell_command" not in offered
    check_against_recording("gemini", gemini_cli.version, "mcp_turn", run.lines, tmp_path)


async def test_an_api_error_fails_the_turn(gemini_cli, says_version, isolated_home, tmp_path):
    says_version(gemini_cli)
    async with FakeModelApi([Reply.http_error(400, "fake 400 error")]) as api:
        plan = gemini_plan(api, plain_workspace(tmp_path), tmp_path)
        run, _ = await gemini_turn(gemini_cli, plan, "fail please", isolated_home)

    assert run.exit_code == 144  # the HTTP status modulo 256
    assert (
        run.verdict is not None and run.verdict.outcome == "error" and "fake 400 error" in run.verdict.reason
    )
    [ended] = run.of_type(TurnEnded)
    assert ended.is_error and ended.subtype == "error"
    check_against_recording("gemini", gemini_cli.version, "api_error", run.lines, tmp_path)


async def test_a_cut_stream_fails_the_turn(gemini_cli, says_version, isolated_home, tmp_path):
    says_version(gemini_cli)
    async with FakeModelApi([Reply.cut("Hello ", "from ", "fake.", after_frames=1)]) as api:
        plan = gemini_plan(api, plain_workspace(tmp_path), tmp_path)
        run, _ = await gemini_turn(gemini_cli, plan, "cut me off", isolated_home)
        requests = api.model_requests("gemini")

    assert len(requests) == 1  # no retry of a stream that broke after data
    assert run.verdict is not None and run.verdict.outcome == "error"
    assert run.text == "Hello "  # what streamed before the cut stays shown
    [ended] = run.of_type(TurnEnded)
    assert ended.is_error and "terminated" in ended.result
    assert not [error for error in run.of_type(AgentError) if error.code in ("INVALID_JSON", "INVALID_UTF8")]
    check_against_recording("gemini", gemini_cli.version, "cut_stream", run.lines, tmp_path)
