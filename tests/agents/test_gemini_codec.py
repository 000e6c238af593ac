"""The gemini codec on lines recorded from the real gemini-cli (tests/fixtures/gemini_real) and on edge lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elynav_nb.agents.events import (
    AgentError,
    AgentStarted,
    RawEvent,
    TextDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.protocols.gemini.codec import GeminiEventDecoder, canonical_tool_name

RECORDED = Path(__file__).parents[1] / "fixtures" / "gemini_real"
RECORDINGS = sorted(RECORDED.glob("gemini-*.jsonl"))


def decode(lines: list[bytes] | list[str], **options) -> tuple[list, GeminiEventDecoder]:
    decoder = GeminiEventDecoder(**options)
    events = []
    for line in lines:
        events.extend(decoder.decode_line(line))
    return events, decoder


def recording(scenario: str) -> list[bytes]:
    [path] = RECORDED.glob(f"gemini-*-{scenario}.jsonl")
    return [line for line in path.read_bytes().splitlines() if line.strip()]


def test_recordings_of_every_scenario_are_present():
    scenarios = {path.stem.split("-", 2)[2] for path in RECORDINGS}
    assert {"text_turn", "resumed_turn", "shell_turn", "mcp_turn", "api_error", "cut_stream"} <= scenarios


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda path: path.stem)
def test_every_recorded_line_decodes_and_the_result_line_ends_the_turn(path):
    lines = [line for line in path.read_bytes().splitlines() if line.strip()]
    events, _decoder = decode(lines, mcp_server_names=("crm",))
    assert not [
        event for event in events if isinstance(event, AgentError) and event.code.startswith("INVALID")
    ]
    assert [type(event) for event in events].count(AgentStarted) == 1
    results = [json.loads(line) for line in lines if json.loads(line)["type"] == "result"]
    [ended] = [event for event in events if isinstance(event, TurnEnded)]
    assert ended.is_error == (results[0]["status"] != "success")
    assert [event.subtype for event in events if isinstance(event, RawEvent)] == [
        "user"
    ]  # only the echoed prompt


def test_a_streamed_text_turn():
    events, decoder = decode(recording("text_turn"), cli_version="0.61.0")
    started = events[0]
    assert (
        isinstance(started, AgentStarted)
        and started.model == "gemini-2.5-flash"
        and started.cli_version == "0.61.0"
    )
    deltas = [event.text for event in events if isinstance(event, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "Hello from the fake model."
    ended = events[-1]
    assert isinstance(ended, TurnEnded) and not ended.is_error and ended.result == "".join(deltas)
    assert ended.usage["input_tokens"] == 100 and ended.duration_ms > 0
    assert ended.session_id == decoder.session_id == started.session_id
    assert decoder.verdict(0).outcome == "completed"


def test_a_shell_command_is_one_tool_use_and_its_result():
    events, _ = decode(recording("shell_turn"))
    [tool_use] = [event for event in events if isinstance(event, ToolUse)]
    [tool_result] = [event for event in events if isinstance(event, ToolResult)]
    assert tool_use.name == "run_shell_command" and tool_use.input["command"] == "echo hi"
    assert tool_result.tool_use_id == tool_use.id and tool_result.content == "hi" and not tool_result.is_error


def test_mcp_tools_get_claude_names_for_known_servers_only():
    events, _ = decode(recording("mcp_turn"), mcp_server_names=("crm",))
    names = [event.name for event in events if isinstance(event, ToolUse)]
    assert names == ["mcp__crm__search_accounts", "mcp__crm__create_account"]
    search, refused = [event for event in events if isinstance(event, ToolResult)]
    assert not search.is_error and "Atelier Girard" in search.text
    assert refused.is_error and "not found" in refused.text
    native, _ = decode(recording("mcp_turn"))
    assert next(event.name for event in native if isinstance(event, ToolUse)) == "mcp_crm_search_accounts"


def test_canonical_names_prefer_the_longest_server_name():
    assert canonical_tool_name("mcp_crm_eu_search", ["crm", "crm_eu"]) == "mcp__crm_eu__search"
    assert canonical_tool_name("mcp_crm_search", ["crm", "crm_eu"]) == "mcp__crm__search"
    assert canonical_tool_name("read_file", ["crm"]) == "read_file"
    assert canonical_tool_name("mcp_crm_", ["crm"]) == "mcp_crm_"


@pytest.mark.parametrize("scenario", ["api_error", "cut_stream"])
def test_an_error_result_fails_the_turn_whatever_the_exit_code(scenario):
    events, decoder = decode(recording(scenario))
    ended = events[-1]
    assert isinstance(ended, TurnEnded) and ended.is_error and ended.errors == (ended.result,)
    for exit_code in (0, 1, 144):
        assert decoder.verdict(exit_code).outcome == "error"


def test_warnings_and_error_events_are_not_turn_failures():
    lines = [
        '{"type":"init","timestamp":"t","session_id":"s1","model":"m"}',
        '{"type":"error","timestamp":"t","severity":"warning","message":"Loop detected"}',
        '{"type":"error","timestamp":"t","severity":"error","message":"Model stream ended without a finish reason."}',
    ]
    events, decoder = decode(lines)
    assert [event.code for event in events if isinstance(event, AgentError)] == ["CLI_WARNING", "CLI_ERROR"]
    assert decoder.ended is None
    assert decoder.verdict(0, cancel_requested=True).outcome == "cancelled"  # signalled: exit 0, no result
    assert decoder.verdict(0).outcome == "failed"
    assert decoder.verdict(41).outcome == "failed"


def test_a_result_without_error_details_still_fails_with_a_message():
    line = '{"type":"result","timestamp":"t","status":"error","stats":{"total_tokens":0}}'
    [ended], _ = decode([line])
    assert (
        isinstance(ended, TurnEnded) and ended.is_error and ended.result and ended.terminal_reason == "error"
    )


def test_unknown_lines_are_kept_and_bad_lines_reported():
    events, _ = decode(['{"type":"thought","timestamp":"t","content":"x"}', "oops", ""])
    assert (
        isinstance(events[0], RawEvent) and events[0].type == "thought" and events[0].data["content"] == "x"
    )
    assert isinstance(events[1], AgentError) and events[1].code == "INVALID_JSON"
    assert len(events) == 2
