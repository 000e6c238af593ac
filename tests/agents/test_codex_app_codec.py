"""The codex app-server codec on JSON-RPC lines recorded from the real codex-cli, and on edge lines.

The recordings (``tests/fixtures/codex_real/codex-<version>-app-server-*.jsonl``) are written by
``tests/real_cli`` with ``ELYNAV_RECORD_CLI_FIXTURES=1``: a new codex whose lines changed shape
fails there, and what it means for the events shows here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elynav_nb.agents.events import (
    AgentError,
    AgentStarted,
    ControlCancel,
    ControlRequest,
    ControlResponse,
    PermissionRequest,
    RawEvent,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.protocols.codex.app_codec import CodexAppServerCodec

RECORDED = Path(__file__).parents[1] / "fixtures" / "codex_real"
RECORDINGS = sorted(RECORDED.glob("codex-*-app-server-*.jsonl"))


def replay(path: Path) -> tuple[list, CodexAppServerCodec]:
    """Decode a recording as the runner does: the thread id comes from the thread/start answer."""
    codec = CodexAppServerCodec(model="gpt-5.5", cli_version="0.171.0")
    decoded = []
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        thread = json.loads(line).get("result", {}).get("thread", {})
        if thread.get("id") and not codec.thread_id:
            codec.thread_id = thread["id"]
        decoded.extend(codec.decode_line(line))
    return decoded, codec


def of_type(decoded: list, kind: type) -> list:
    return [item for item in decoded if isinstance(item, kind)]


def recording(scenario: str) -> Path:
    [path] = [path for path in RECORDINGS if path.stem.endswith(f"app-server-{scenario}")]
    return path


def test_every_scenario_is_recorded():
    assert {path.stem.split("app-server-")[1] for path in RECORDINGS} >= {
        "text_turns",
        "approvals",
        "mcp_turn",
        "interrupt",
        "errors",
    }


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda path: path.stem)
def test_every_recorded_line_decodes_and_every_turn_starts_and_ends_once(path):
    decoded, codec = replay(path)
    assert not [item for item in of_type(decoded, AgentError) if item.code.startswith("INVALID")]
    started, ended = of_type(decoded, AgentStarted), of_type(decoded, TurnEnded)
    assert started and len(started) == len(ended)
    assert {event.session_id for event in started} == {codec.thread_id}
    assert all(response.ok or response.error for response in of_type(decoded, ControlResponse))


def test_text_turns_stream_deltas_and_count_usage_per_turn():
    decoded, _ = replay(recording("text_turns"))
    first, second = of_type(decoded, TurnEnded)
    assert not first.is_error and first.result == "".join(f"word{index} " for index in range(8))
    deltas = [event.text for event in of_type(decoded, TextDelta)]
    assert len(deltas) == 9 and "".join(deltas) == first.result + "Again."  # no repeat on item/completed
    assert [event.text for event in of_type(decoded, ThinkingDelta)] == ["first thoughts"]
    assert first.usage["input_tokens"] == 100 and second.usage["input_tokens"] == 100
    assert second.usage["thread_total"]["input_tokens"] == 200


def test_approvals_become_permission_requests_answered_with_the_raw_id():
    decoded, codec = replay(recording("approvals"))
    asked = of_type(decoded, PermissionRequest)
    assert [request.tool_name for request in asked] == ["command_execution", "command_execution"]
    assert "touch made.txt" in asked[0].input["command"] and asked[0].tool_use_id.startswith("call_")
    assert [cancel.request_id for cancel in of_type(decoded, ControlCancel)] == [
        request.request_id for request in asked
    ]
    declined, ran = of_type(decoded, ToolResult)
    assert declined.is_error and declined.text == "the command was declined" and not ran.is_error
    # Fresh ids (the replay above consumed them): codex's ids are integers, echoed as integers.
    codec.decode_line(json.dumps({"id": 7, "method": "item/commandExecution/requestApproval", "params": {}}))
    assert json.loads(codec.permission_answer("7", False)) == {"id": 7, "result": {"decision": "decline"}}
    codec.decode_line(json.dumps({"id": 8, "method": "item/fileChange/requestApproval", "params": {}}))
    assert json.loads(codec.permission_answer("8", True)) == {"id": 8, "result": {"decision": "accept"}}


def test_an_mcp_call_is_a_tool_use_named_like_claude_s():
    decoded, _ = replay(recording("mcp_turn"))
    [tool_use] = of_type(decoded, ToolUse)
    assert tool_use.name == "mcp__crm__search_accounts" and tool_use.input == {"query": "Girard"}
    [result] = of_type(decoded, ToolResult)
    assert result.tool_use_id == tool_use.id and "Atelier Girard" in result.text and not result.is_error


def test_an_interrupted_turn_ends_as_an_error_without_text():
    decoded, _ = replay(recording("interrupt"))
    interrupted, after = of_type(decoded, TurnEnded)
    assert interrupted.is_error and interrupted.subtype == "interrupted" and interrupted.result == ""
    assert interrupted.errors == ("the turn was interrupted",)
    assert not after.is_error and after.result == "Still here."


def test_an_api_error_and_a_cut_stream_end_the_turn_as_errors():
    decoded, _ = replay(recording("errors"))
    api_error, cut = of_type(decoded, TurnEnded)
    assert api_error.is_error and "fake 400 error" in api_error.result
    assert cut.is_error and "stream disconnected" in cut.result
    assert {error.code for error in of_type(decoded, AgentError)} <= {"CLI_ERROR", "CLI_WARNING"}


def _notification(method: str, **params) -> str:
    return json.dumps({"method": method, "params": params})


def test_other_threads_never_start_or_end_ours_and_unknown_lines_are_kept():
    codec = CodexAppServerCodec()
    codec.thread_id = "ours"
    assert isinstance(
        codec.decode_line(_notification("turn/completed", threadId="sub-agent", turn={}))[0], RawEvent
    )
    assert isinstance(
        codec.decode_line(_notification("turn/started", threadId="sub-agent", turn={}))[0], RawEvent
    )
    assert isinstance(
        codec.decode_line(_notification("item/agentMessage/delta", threadId="sub-agent", delta="x"))[0],
        RawEvent,
    )
    [raw] = codec.decode_line(_notification("thread/newThing", value=1))
    assert isinstance(raw, RawEvent) and raw.type == "thread/newThing"
    [bad] = codec.decode_line(b"{not json")
    assert isinstance(bad, AgentError) and bad.code.startswith("INVALID")
    assert codec.decode_line(b"   ") == []


def test_retries_warnings_and_unsupported_requests():
    codec = CodexAppServerCodec()
    codec.thread_id = "ours"
    retry = {"message": "Reconnecting... 1/5"}
    [retrying] = codec.decode_line(_notification("error", threadId="ours", error=retry, willRetry=True))
    assert retrying.code == "CLI_RETRY" and "Reconnecting" in retrying.message
    [final] = codec.decode_line(
        _notification("error", threadId="ours", error={"message": "no"}, willRetry=False)
    )
    assert final.code == "CLI_ERROR"
    [warning] = codec.decode_line(_notification("configWarning", summary="no bubblewrap"))
    assert warning.code == "CLI_WARNING" and warning.message == "no bubblewrap"
    [request] = codec.decode_line(json.dumps({"id": 3, "method": "item/tool/requestUserInput", "params": {}}))
    assert isinstance(request, ControlRequest) and request.subtype == "item/tool/requestUserInput"
    assert json.loads(codec.error(request.request_id, "Unsupported"))["id"] == 3
    [answer] = codec.decode_line(
        json.dumps({"id": "turn_4", "error": {"code": -32600, "message": "no turn"}})
    )
    assert isinstance(answer, ControlResponse) and not answer.ok and answer.error == "no turn"
    assert json.loads(
        CodexAppServerCodec.request("r1", "turn/interrupt", {"threadId": "t", "turnId": "u"})
    ) == {
        "id": "r1",
        "method": "turn/interrupt",
        "params": {"threadId": "t", "turnId": "u"},
    }
