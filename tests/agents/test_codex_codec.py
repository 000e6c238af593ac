"""The codex codec on lines recorded from the real codex-cli (tests/fixtures/codex_real) and on edge lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elynav_nb.agents.events import (
    AgentError,
    AgentStarted,
    RawEvent,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.protocols.codex.exec_codec import CodexEventDecoder

RECORDED = Path(__file__).parents[1] / "fixtures" / "codex_real"
RECORDINGS = sorted(path for path in RECORDED.glob("codex-*.jsonl") if "-app-server-" not in path.name)


def decode(lines: list[bytes] | list[str], **options) -> tuple[list, CodexEventDecoder]:
    decoder = CodexEventDecoder(**options)
    events = []
    for line in lines:
        events.extend(decoder.decode_line(line))
    return events, decoder


def recording(scenario: str) -> list[bytes]:
    [path] = [path for path in RECORDINGS if path.stem.endswith(f"-{scenario}")]
    return [line for line in path.read_bytes().splitlines() if line.strip()]


def test_recordings_of_every_scenario_are_present():
    scenarios = {path.stem.split("-", 2)[2] for path in RECORDINGS}
    assert {"text_turn", "resumed_turn", "shell_turn", "mcp_turn", "api_error", "cut_stream"} <= scenarios


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda path: path.stem)
def test_every_recorded_line_decodes_to_known_events_and_one_turn_end(path):
    lines = [line for line in path.read_bytes().splitlines() if line.strip()]
    events, decoder = decode(lines)
    assert not [
        event for event in events if isinstance(event, AgentError) and event.code.startswith("INVALID")
    ]
    assert [type(event) for event in events].count(AgentStarted) == 1
    ended = [event for event in events if isinstance(event, TurnEnded)]
    assert len(ended) == 1 and decoder.ended is ended[0]
    types = [json.loads(line)["type"] for line in lines]
    assert ended[0].is_error == ("turn.failed" in types)
    raw = [event for event in events if isinstance(event, RawEvent)]
    assert [event.type for event in raw] == ["turn.started"]  # every other line maps to a typed event


def test_a_text_turn():
    events, decoder = decode(recording("text_turn"), model="gpt-5.5", cli_version="0.171.0")
    started = events[0]
    assert isinstance(started, AgentStarted) and started.session_id == decoder.thread_id != ""
    assert started.model == "gpt-5.5" and started.cli_version == "0.171.0"
    assert [event.text for event in events if isinstance(event, ThinkingDelta)] == [
        "Thinking about the answer"
    ]
    assert [event.text for event in events if isinstance(event, TextDelta)] == ["Hello from fake."]
    ended = events[-1]
    assert isinstance(ended, TurnEnded) and ended.subtype == "success" and not ended.is_error
    assert ended.result == "Hello from fake." and ended.session_id == decoder.thread_id
    assert decoder.verdict(0).outcome == "completed"


def test_usage_is_made_per_turn_from_the_thread_totals():
    _, first = decode(recording("text_turn"))
    events, second = decode(recording("resumed_turn"), previous_thread_usage=first.thread_usage)
    ended = events[-1]
    assert isinstance(ended, TurnEnded)
    assert ended.usage["input_tokens"] == 100 and ended.usage["output_tokens"] == 10
    assert ended.usage["thread_total"]["input_tokens"] == 200
    assert second.thread_usage["input_tokens"] == 200


def test_a_shell_command_is_one_tool_use_and_its_result():
    events, _ = decode(recording("shell_turn"))
    [tool_use] = [event for event in events if isinstance(event, ToolUse)]
    [tool_result] = [event for event in events if isinstance(event, ToolResult)]
    assert tool_use.name == "command_execution" and tool_use.input == {"command": "/bin/bash -lc 'echo hi'"}
    assert (
        tool_result.tool_use_id == tool_use.id and tool_result.content == "hi\n" and not tool_result.is_error
    )
    assert events.index(tool_use) < events.index(tool_result)


def test_an_mcp_call_is_named_like_claude_names_it():
    events, _ = decode(recording("mcp_turn"))
    [tool_use] = [event for event in events if isinstance(event, ToolUse)]
    [tool_result] = [event for event in events if isinstance(event, ToolResult)]
    assert tool_use.name == "mcp__crm__search_accounts" and tool_use.input == {"query": "Girard"}
    assert not tool_result.is_error and "Atelier Girard" in tool_result.text


@pytest.mark.parametrize("scenario", ["api_error", "cut_stream"])
def test_errors_before_turn_failed_are_not_the_failure_itself(scenario):
    events, decoder = decode(recording(scenario))
    errors = [event for event in events if isinstance(event, AgentError)]
    assert [error.code for error in errors] == ["CLI_ERROR"]
    ended = events[-1]
    assert isinstance(ended, TurnEnded) and ended.is_error and ended.terminal_reason == "turn_failed"
    assert ended.errors == (ended.result,)
    verdict = decoder.verdict(1)
    assert verdict.outcome == "error" and verdict.reason == ended.result


def test_retries_alone_never_end_a_turn():
    lines = [
        '{"type":"thread.started","thread_id":"t1"}',
        '{"type":"turn.started"}',
        '{"type":"error","message":"Reconnecting... 2/5 (stream disconnected before completion)"}',
        '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Falling back from WebSockets to HTTPS transport."}}',
    ]
    events, decoder = decode(lines)
    assert [event.code for event in events if isinstance(event, AgentError)] == ["CLI_ERROR", "CLI_WARNING"]
    assert decoder.ended is None
    assert decoder.verdict(None, cancel_requested=True).outcome == "cancelled"  # our bound ended it
    assert decoder.verdict(1).outcome == "failed"  # it died by itself
    assert decoder.verdict(101).outcome == "failed"  # stdout closed early


def test_a_tool_item_completed_without_a_start_still_gives_the_tool_use_first():
    line = json.dumps(
        {
            "type": "item.completed",
            "item": {
                "id": "item_0",
                "type": "mcp_tool_call",
                "server": "mini",
                "tool": "echo",
                "arguments": {"text": "ping"},
                "result": None,
                "error": {"message": "MCP tool call requires approval, but approval policy is never"},
                "status": "failed",
            },
        }
    )
    events, _ = decode([line])
    tool_use, tool_result = events
    assert isinstance(tool_use, ToolUse) and tool_use.name == "mcp__mini__echo"
    assert isinstance(tool_result, ToolResult) and tool_result.is_error and "approval" in tool_result.text


def test_declined_and_failing_commands_and_file_changes():
    declined = {
        "id": "item_1",
        "type": "command_execution",
        "command": "rm -rf x",
        "aggregated_output": "",
        "exit_code": None,
        "status": "declined",
    }
    failing = {
        "id": "item_2",
        "type": "command_execution",
        "command": "false",
        "aggregated_output": "",
        "exit_code": 1,
        "status": "completed",
    }
    patch = {
        "id": "item_3",
        "type": "file_change",
        "changes": [{"path": "a.txt", "kind": "add"}],
        "status": "completed",
    }
    lines = [json.dumps({"type": "item.completed", "item": item}) for item in (declined, failing, patch)]
    events, _ = decode(lines)
    results = [event for event in events if isinstance(event, ToolResult)]
    assert [result.is_error for result in results] == [True, True, False]
    assert results[2].content == "add a.txt"
    assert [event.name for event in events if isinstance(event, ToolUse)] == [
        "command_execution",
        "command_execution",
        "file_change",
    ]


def test_unknown_and_unmodelled_lines_are_kept_as_raw_events():
    lines = [
        '{"type":"item.updated","item":{"id":"item_0","type":"todo_list","items":[{"text":"a","completed":false}]}}',
        '{"type":"item.completed","item":{"id":"item_1","type":"todo_list","items":[]}}',
        '{"type":"item.started","item":{"id":"item_2","type":"collab_tool_call"}}',
        '{"type":"thread.renamed","name":"x"}',
    ]
    events, _ = decode(lines)
    assert [(event.type, event.subtype) for event in events] == [
        ("item.updated", ""),
        ("item.completed", "todo_list"),
        ("item.started", "collab_tool_call"),
        ("thread.renamed", ""),
    ]
    assert all(isinstance(event, RawEvent) and event.data for event in events)


def test_bad_lines_become_one_error_each_and_blank_lines_nothing():
    events, _ = decode([b"not json", b"[1, 2]", b"\xff\xfe", b"   "])
    assert [event.code for event in events] == ["INVALID_JSON", "INVALID_JSON", "INVALID_UTF8"]
