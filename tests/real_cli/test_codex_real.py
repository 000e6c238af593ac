"""The real codex CLI (pinned in package.json), offline against the fake Responses API.

Each test builds the runner plan phase 2 will use (``plan_codex_runner``), runs ``codex exec
--json`` turns through the test driver and the codex codec, checks what the fake API received
(system prompt, tools, history) and compares the lines with the recording of this codex version.
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
from .setups import CODEX_MODEL, TEST_AGENT_PROMPT, codex_plan, codex_turn, crm_workspace, plain_workspace

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]


def _input_items(request_body: dict, item_type: str) -> list[dict]:
    return [
        item
        for item in request_body.get("input") or []
        if isinstance(item, dict) and item.get("type") == item_type
    ]


async def test_a_text_turn_then_a_resumed_one(codex_cli, says_version, isolated_home, tmp_path):
    says_version(codex_cli)
    async with FakeModelApi(
        [Reply.say("Hello ", "from fake.", thinking="Thinking about the answer"), Reply.say("Again.")]
    ) as api:
        plan = codex_plan(api, plain_workspace(tmp_path), tmp_path)
        first, decoder = await codex_turn(codex_cli, plan, "say hello", isolated_home)
        second, _ = await codex_turn(
            codex_cli,
            plan,
            "once more",
            isolated_home,
            resume_thread_id=decoder.thread_id,
            previous_thread_usage=decoder.thread_usage,
        )
        requests = api.model_requests("openai")

    assert first.exit_code == 0 and first.verdict is not None and first.verdict.outcome == "completed"
    started = first.of_type(AgentStarted)
    assert (
        len(started) == 1
        and started[0].session_id == decoder.thread_id
        and started[0].cli_version == codex_cli.version
    )
    assert [event.text for event in first.of_type(ThinkingDelta)] == ["Thinking about the answer"]
    assert [event.text for event in first.of_type(TextDelta)] == [
        "Hello from fake."
    ]  # exec --json: no token deltas
    ended = first.of_type(TurnEnded)[-1]
    assert ended.result == "Hello from fake." and ended.usage["input_tokens"] == 100
    assert not first.of_type(AgentError)

    # The resumed turn: same thread, the history sent again, usage made per turn.
    assert second.verdict is not None and second.verdict.outcome == "completed"
    assert second.of_type(AgentStarted)[0].session_id == decoder.thread_id
    assert second.text == "Again."
    second_ended = second.of_type(TurnEnded)[-1]
    assert (
        second_ended.usage["input_tokens"] == 100
        and second_ended.usage["thread_total"]["input_tokens"] == 200
    )

    assert [request.last_user_text for request in requests] == ["say hello", "once more"]
    assert all(request.model == CODEX_MODEL for request in requests)
    assert TEST_AGENT_PROMPT in requests[0].system_prompt  # developer_instructions from the definition
    assert (
        requests[0].headers["authorization"] == "[redacted]"
    )  # the key was sent (CODEX_API_KEY), never recorded
    assert "Hello from fake." in json.dumps(requests[1].body["input"])
    check_against_recording("codex", codex_cli.version, "text_turn", first.lines, tmp_path)
    check_against_recording("codex", codex_cli.version, "resumed_turn", second.lines, tmp_path)


async def test_items_arrive_while_the_model_still_streams(codex_cli, says_version, isolated_home, tmp_path):
    says_version(codex_cli)
    seen_before_stream_end: list[str] = []
    async with FakeModelApi(
        [Reply(text=("a", "b", "c", "d", "e", "f"), thinking="first thoughts", chunk_delay=0.5)]
    ) as api:
        plan = codex_plan(api, plain_workspace(tmp_path), tmp_path)

        def note(event, run):
            if api.streams_finished == 0:
                seen_before_stream_end.append(event.kind)

        run, _ = await codex_turn(codex_cli, plan, "think slowly", isolated_home, on_event=note)
    assert run.verdict is not None and run.verdict.outcome == "completed" and run.text == "abcdef"
    # codex streams per item (each as soon as the model finished it), not per token: one text event.
    assert "started" in seen_before_stream_end and "thinking" in seen_before_stream_end
    assert [event.text for event in run.of_type(TextDelta)] == ["abcdef"]


async def test_a_turn_that_runs_a_shell_command(codex_cli, says_version, isolated_home, tmp_path):
    says_version(codex_cli)
    async with FakeModelApi([Reply.shell("echo hi"), Reply.say("Tool done.")]) as api:
        plan = codex_plan(api, plain_workspace(tmp_path), tmp_path)
        run, _ = await codex_turn(codex_cli, plan, "run it", isolated_home)
        requests = api.model_requests("openai")

    assert run.verdict is not None and run.verdict.outcome == "completed"
    [tool_use] = run.of_type(ToolUse)
    assert tool_use.name == "command_execution" and "echo hi" in tool_use.input["command"]
    [tool_result] = run.of_type(ToolResult)
    assert tool_result.tool_use_id == tool_use.id and tool_result.text == "hi\n" and not tool_result.is_error
    assert run.text == "Tool done."
    assert "exec_command" in requests[0].tool_names
    [output] = _input_items(requests[1].body, "function_call_output")
    assert "hi" in output["output"]
    check_against_recording("codex", codex_cli.version, "shell_turn", run.lines, tmp_path)


async def test_a_turn_that_calls_the_crm_mcp_server(codex_cli, says_version, isolated_home, tmp_path):
    says_version(codex_cli)
    workspace, servers = crm_workspace(tmp_path)
    tools = ("Read", "mcp__crm__search_accounts", "mcp__crm__get_account")
    script = [
        Reply.mcp("crm", "search_accounts", {"query": "Girard"}),
        Reply.mcp("crm", "create_account", {"name": "Not Allowed SA"}),  # not in the definition's tools
        Reply.say("Found it."),
    ]
    async with FakeModelApi(script) as api:
        plan = codex_plan(api, workspace, tmp_path, tools=tools, mcp_servers=servers)
        run, _ = await codex_turn(codex_cli, plan, "find Girard in the CRM", isolated_home)
        requests = api.model_requests("openai")

    assert run.verdict is not None and run.verdict.outcome == "completed", run.stderr[-2000:]
    [tool_use] = run.of_type(ToolUse)  # the filtered-out call leaves no item at all
    assert tool_use.name == "mcp__crm__search_accounts" and tool_use.input == {"query": "Girard"}
    [tool_result] = run.of_type(ToolResult)
    assert not tool_result.is_error and "Atelier Girard" in tool_result.text
    assert run.text == "Found it."
    # MCP tools are deferred behind codex's tool search: search, call, refused call, answer.
    assert len(requests) == 4
    assert "mcp__crm__search_accounts" in requests[1].tool_names
    assert not any("create_account" in name for request in requests for name in request.tool_names)
    refused = _input_items(requests[3].body, "function_call_output")[-1]
    assert "unsupported call" in refused["output"]  # enabled_tools from the definition held
    check_against_recording("codex", codex_cli.version, "mcp_turn", run.lines, tmp_path)


async def test_an_api_error_fails_the_turn(codex_cli, says_version, isolated_home, tmp_path):
    says_version(codex_cli)
    async with FakeModelApi([Reply.http_error(400, "Invalid request (fake 400)")]) as api:
        plan = codex_plan(api, plain_workspace(tmp_path), tmp_path)
        run, _ = await codex_turn(codex_cli, plan, "fail please", isolated_home)

    assert run.exit_code == 1
    assert run.verdict is not None and run.verdict.outcome == "error" and "fake 400" in run.verdict.reason
    [ended] = run.of_type(TurnEnded)
    assert ended.is_error and ended.terminal_reason == "turn_failed"
    assert [error.code for error in run.of_type(AgentError)] == [
        "CLI_ERROR"
    ]  # the non-fatal line before turn.failed
    check_against_recording("codex", codex_cli.version, "api_error", run.lines, tmp_path)


async def test_a_cut_stream_fails_the_turn(codex_cli, says_version, isolated_home, tmp_path):
    says_version(codex_cli)
    async with FakeModelApi([Reply.cut("Hello ", "from ", "fake.", after_frames=3)]) as api:
        plan = codex_plan(api, plain_workspace(tmp_path), tmp_path)
        run, _ = await codex_turn(codex_cli, plan, "cut me off", isolated_home)

    assert run.exit_code == 1
    assert run.verdict is not None and run.verdict.outcome == "error"
    assert "stream disconnected" in run.verdict.reason
    assert not run.of_type(TextDelta)  # the half-sent message is not shown
    check_against_recording("codex", codex_cli.version, "cut_stream", run.lines, tmp_path)
