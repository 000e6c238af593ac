"""The codec on lines recorded from the real claude 2.1.332 binary (tests/fixtures/claude_real)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elynav_nb.agents.events import (
    AgentError,
    AgentStarted,
    ControlCancel,
    PermissionRequest,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.protocols.claude.codec import ClaudeStreamDecoder
from elynav_nb.agents.results import main_text

REAL_LINES = Path(__file__).parents[1] / "fixtures" / "claude_real"
RECORDINGS = sorted(REAL_LINES.glob("*.jsonl"))


def decode(path: Path, *, partial_messages: bool = True) -> tuple[list, list[dict]]:
    decoder = ClaudeStreamDecoder(partial_messages=partial_messages)
    items, messages = [], []
    for line in path.read_bytes().splitlines():
        if line.strip():
            messages.append(json.loads(line))
            items.extend(decoder.decode_line(line))
    return items, messages


def test_recordings_are_present():
    assert len(RECORDINGS) >= 20


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda path: path.stem)
def test_every_real_line_decodes_and_every_result_becomes_turn_ended(path):
    items, messages = decode(path)
    assert not [
        item
        for item in items
        if isinstance(item, AgentError) and item.code in ("INVALID_JSON", "INVALID_UTF8")
    ]
    results = [message for message in messages if message.get("type") == "result"]
    ended = [item for item in items if isinstance(item, TurnEnded)]
    assert len(ended) == len(results)
    for event, message in zip(ended, results, strict=True):
        assert event.is_error == message["is_error"] and event.subtype == message["subtype"]
    inits = [
        message
        for message in messages
        if message.get("type") == "system" and message.get("subtype") == "init"
    ]
    assert len([item for item in items if isinstance(item, AgentStarted)]) == len(inits)


@pytest.mark.parametrize("name", ["plain_turn_partial", "plain_turn_no_partial", "thinking_turn"])
def test_answer_text_is_counted_once(name):
    items, messages = decode(REAL_LINES / f"{name}.jsonl", partial_messages="no_partial" not in name)
    results = [message["result"] for message in messages if message.get("type") == "result"]
    texts_per_turn, current_turn = [], []
    for item in items:
        if isinstance(item, TurnEnded):
            texts_per_turn.append(main_text(current_turn))
            current_turn = []
        else:
            current_turn.append(item)
    assert results and texts_per_turn == results


def test_thinking_is_streamed_once():
    items, messages = decode(REAL_LINES / "thinking_turn.jsonl")
    streamed = "".join(
        message["event"]["delta"]["thinking"]
        for message in messages
        if message.get("type") == "stream_event"
        and message["event"].get("delta", {}).get("type") == "thinking_delta"
    )
    assert streamed and "".join(item.text for item in items if isinstance(item, ThinkingDelta)) == streamed


def test_tool_turn_gives_tool_use_with_full_input_then_result():
    items, _ = decode(REAL_LINES / "bash_tool_turn.jsonl")
    [tool_use] = [item for item in items if isinstance(item, ToolUse)]
    [tool_result] = [item for item in items if isinstance(item, ToolResult)]
    assert tool_use.name == "Bash" and tool_use.input.get("command")
    assert tool_result.tool_use_id == tool_use.id
    assert items.index(tool_use) < items.index(tool_result)


def test_permission_prompt_and_its_withdrawal_on_interrupt():
    items, _ = decode(REAL_LINES / "interrupt_pending_permission.jsonl")
    [request] = [item for item in items if isinstance(item, PermissionRequest)]
    cancels = [item for item in items if isinstance(item, ControlCancel)]
    assert request.tool_name and [cancel.request_id for cancel in cancels] == [request.request_id]
    ended = [item for item in items if isinstance(item, TurnEnded)]
    assert ended[-1].terminal_reason == "aborted_tools" and ended[-1].is_error


@pytest.mark.parametrize(
    ("name", "reason"),
    [("interrupt_streaming", "aborted_streaming"), ("interrupt_running_tool", "aborted_tools")],
)
def test_interrupted_turns_end_with_their_terminal_reason(name, reason):
    items, _ = decode(REAL_LINES / f"{name}.jsonl")
    ended = [item for item in items if isinstance(item, TurnEnded)]
    assert any(event.terminal_reason == reason and event.is_error for event in ended)


def test_subagent_events_are_tagged_with_their_parent():
    items, _ = decode(REAL_LINES / "task_subagent.jsonl")
    tagged = [item for item in items if getattr(item, "parent_tool_use_id", None)]
    task_uses = [item for item in items if isinstance(item, ToolUse) and item.parent_tool_use_id is None]
    assert tagged and task_uses
    assert {item.parent_tool_use_id for item in tagged} <= {item.id for item in task_uses}


def test_no_login_turn_is_an_error_with_the_login_hint():
    items, _ = decode(REAL_LINES / "no_login_turn.jsonl")
    [ended] = [item for item in items if isinstance(item, TurnEnded)]
    assert ended.subtype == "success" and ended.is_error
    assert any(isinstance(item, AgentError) and "authentication_failed" in item.message for item in items)
    assert "Not logged in" in main_text(items)
