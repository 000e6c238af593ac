"""The ACP codec on lines recorded from the three real ACP agents (``tests/fixtures/acp_real``).

Each recording is replayed as our client saw it: the ids of our ``session/prompt`` requests (the
``out`` lines) tell the codec which answer ends a turn; every ``in`` line is decoded. The file names
carry the agents' versions: claude-agent-acp 0.48.0, codex-acp 0.16.0, gemini 0.61.0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    ControlFrame,
    PermissionRequest,
    RawEvent,
    TextDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.protocols.acp.codec import AcpCodec

FIXTURES = Path(__file__).parents[1] / "fixtures" / "acp_real"
AGENTS = ("claude-agent-acp-0.48.0", "codex-acp-0.16.0", "gemini-0.61.0")


def replay(name: str) -> list[AgentEvent | ControlFrame]:
    codec = AcpCodec()
    decoded: list[AgentEvent | ControlFrame] = []
    for raw in (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        entry = json.loads(raw)
        message = entry["msg"]
        if entry["dir"] == "out":
            if message.get("method") == "session/prompt" and not codec.prompt_request_id:
                # the recorder overlaps a second prompt in ``cancel``: our runner never does
                codec.session_id = message["params"]["sessionId"]
                codec.prompt_request_id = str(message["id"])
                codec.started()
            continue
        decoded.extend(codec.decode_line(json.dumps(message)))
    return decoded


def ends(items: list[AgentEvent | ControlFrame]) -> list[TurnEnded]:
    return [item for item in items if isinstance(item, TurnEnded)]


def test_every_recorded_line_decodes_without_a_protocol_error() -> None:
    files = sorted(FIXTURES.glob("*.jsonl"))
    assert len(files) >= 27
    for path in files:
        items = replay(path.stem)
        problems = [
            item for item in items if isinstance(item, AgentError) and item.code.startswith("INVALID")
        ]
        assert problems == [], path.name


@pytest.mark.parametrize("agent", AGENTS)
def test_a_streamed_text_turn(agent: str) -> None:
    items = replay(f"{agent}-text")
    [ended] = ends(items)
    text = "".join(item.text for item in items if isinstance(item, TextDelta))
    assert ended.subtype == "success" and not ended.is_error
    assert text and ended.result == text
    assert sum(isinstance(item, TextDelta) for item in items) >= 2  # streamed, not one piece


@pytest.mark.parametrize("agent", AGENTS)
def test_a_shell_call_allowed_then_its_result(agent: str) -> None:
    items = replay(f"{agent}-shell-allowed")
    [request] = [item for item in items if isinstance(item, PermissionRequest)]
    kinds = {option["kind"] for option in request.options}
    assert {"allow_once", "allow_always", "reject_once"} <= kinds
    uses = [item for item in items if isinstance(item, ToolUse)]
    results = [item for item in items if isinstance(item, ToolResult)]
    assert [use.id for use in uses] == [request.tool_use_id]  # one ToolUse per call, before its prompt
    assert items.index(uses[0]) < items.index(request)
    assert [result.tool_use_id for result in results] == [request.tool_use_id] and not results[0].is_error
    assert not ends(items)[0].is_error


def test_claude_names_its_tools_and_gives_their_input() -> None:
    items = replay("claude-agent-acp-0.48.0-shell-allowed")
    [use] = [item for item in items if isinstance(item, ToolUse)]
    assert use.name == "Bash" and "hello-from-shell" in use.input["command"]


def test_codex_asks_only_for_an_escalated_command_and_a_refusal_cancels() -> None:
    items = replay("codex-acp-0.16.0-shell-allowed")
    [request] = [item for item in items if isinstance(item, PermissionRequest)]
    assert request.request_id and {option["kind"] for option in request.options} >= {
        "allow_once",
        "reject_once",
    }
    denied = replay("codex-acp-0.16.0-shell-denied")
    assert ends(denied)[-1].subtype in ("interrupted", "success")


@pytest.mark.parametrize("agent", AGENTS)
def test_an_mcp_tool_of_the_workspace(agent: str) -> None:
    items = replay(f"{agent}-mcp")
    uses = [item for item in items if isinstance(item, ToolUse)]
    assert any("search_accounts" in use.name or "search_accounts" in json.dumps(use.input) for use in uses)
    assert any(isinstance(item, ToolResult) and not item.is_error for item in items)


@pytest.mark.parametrize("agent", AGENTS)
def test_a_cancel_ends_the_turn_interrupted(agent: str) -> None:
    first = ends(replay(f"{agent}-cancel"))[0]
    assert first.subtype == "interrupted" and first.stop_reason == "cancelled"


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("scenario", ["api-error", "cut-stream"])
def test_api_errors_and_cut_streams_end_typed_and_the_next_turn_works(agent: str, scenario: str) -> None:
    items = replay(f"{agent}-{scenario}")
    failed, after = ends(items)[:2]
    assert failed.is_error and failed.subtype == "error" and failed.errors
    assert any(isinstance(item, AgentError) and item.code == "CLI_ERROR" for item in items)
    assert not after.is_error


def test_a_load_replays_history_as_raw_events_outside_any_turn() -> None:
    items = replay("claude-agent-acp-0.48.0-load")
    replayed = [item for item in items if isinstance(item, RawEvent) and item.subtype == "user_message_chunk"]
    assert replayed
    for name in ("claude-agent-acp-0.48.0-load", "codex-acp-0.16.0-load"):
        loaded = replay(name)
        # the replayed answer is a RawEvent: the text deltas are those of the two prompts only
        texts = "".join(item.text for item in loaded if isinstance(item, TextDelta))
        assert texts == "First answer.Second answer.", name
        assert any(isinstance(item, RawEvent) and item.subtype == "agent_message_chunk" for item in loaded)
    gemini = replay("gemini-0.61.0-load")
    assert not any(isinstance(item, RawEvent) and item.subtype == "user_message_chunk" for item in gemini)
