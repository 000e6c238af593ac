"""The pure stream-json codec on recorded lines of claude 2.1.197 and 2.1.332 (key order differs)."""

from __future__ import annotations

import json
from pathlib import Path

from elynav_nb.agents.events import (
    AgentError,
    AgentStarted,
    ControlCancel,
    ControlResponse,
    PermissionRequest,
    RawEvent,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.protocols.child_environment import build_child_environment
from elynav_nb.agents.protocols.claude.codec import (
    ClaudeStreamDecoder,
    encode_control_error,
    encode_control_request,
    encode_control_success,
    encode_user_message,
)
from elynav_nb.agents.protocols.claude.launch import ClaudeLaunch, build_claude_argv

FIXTURES = Path(__file__).with_name("fixtures")


def decode_file(name: str, *, partial_messages: bool = True) -> list:
    decoder = ClaudeStreamDecoder(partial_messages=partial_messages)
    items = []
    for line in (FIXTURES / name).read_bytes().splitlines():
        items.extend(decoder.decode_line(line))
    return items


def test_every_message_type_of_2_1_197_decodes_to_its_event():
    items = decode_file("wire_2_1_197.jsonl")
    started = items[0]
    assert isinstance(started, AgentStarted)
    assert started.session_id == "96d0f857-0d27-4bd7-9d0a-13d29e22575e"
    assert started.model == "claude-haiku-4-5-20251001"
    assert started.tools == ("Read", "Bash")
    assert [(server.name, server.status) for server in started.mcp_servers] == [
        ("mini", "connected"),
        ("broken", "failed"),
    ]
    assert started.cli_version == "2.1.197" and not started.is_standin
    assert isinstance(items[1], RawEvent) and items[1].subtype == "status"
    thinking = [item for item in items if isinstance(item, ThinkingDelta)]
    assert [item.text for item in thinking] == ["Let me think."]  # the assistant copy is not emitted twice
    texts = [item.text for item in items if isinstance(item, TextDelta)]
    assert texts == ["Hel", "lo."]  # deltas only; the assistant text block is the check
    tool_uses = [item for item in items if isinstance(item, ToolUse)]
    assert tool_uses == [
        ToolUse(id="toolu_02", name="Bash", input={"command": "touch created.txt", "description": "Say hi"})
    ]
    permission = next(item for item in items if isinstance(item, PermissionRequest))
    assert permission.request_id == "9056db1e-4db3-4f69-91f7-fad7d7bfefa1"
    assert permission.tool_name == "Bash" and permission.tool_use_id == "toolu_02"
    results = [item for item in items if isinstance(item, ToolResult)]
    assert results[0].is_error and results[0].text == "User said no"
    assert not results[1].is_error and results[1].text == "pong"
    ended = [item for item in items if isinstance(item, TurnEnded)]
    assert ended[0].subtype == "success" and not ended[0].is_error
    assert ended[0].result == "Tool finished." and ended[0].num_turns == 2
    assert ended[0].total_cost_usd == 0.000282
    assert ended[0].permission_denials[0]["tool_name"] == "Bash"
    assert ended[1].subtype == "error_max_turns" and ended[1].is_error
    assert ended[1].errors == ("Reached maximum number of turns (1)",)
    responses = [item for item in items if isinstance(item, ControlResponse)]
    assert responses[0].ok and responses[0].request_id == "req_int"
    assert not responses[1].ok and "Unsupported" in responses[1].error
    assert any(isinstance(item, ControlCancel) and item.request_id.startswith("0b0e29d3") for item in items)


def test_2_1_332_result_with_type_in_the_middle_is_still_a_result():
    items = decode_file("wire_2_1_332.jsonl")
    ended = [item for item in items if isinstance(item, TurnEnded)]
    assert ended[0].result == "Hello." and ended[0].subtype == "success" and not ended[0].is_error
    assert ended[0].usage["output_tokens"] == 7
    assert ended[1].terminal_reason == "aborted_streaming" and ended[1].stop_reason is None
    response = next(item for item in items if isinstance(item, ControlResponse))
    assert response.response == {"still_queued": []}


def test_synthetic_assistant_error_gives_text_and_an_api_error():
    items = decode_file("wire_2_1_332.jsonl")
    assert TextDelta(text="Not logged in · Please run /login") in items
    error = next(item for item in items if isinstance(item, AgentError))
    assert error.code == "API_ERROR" and "authentication_failed" in error.message


def test_unknown_types_are_kept_as_raw_events():
    items = decode_file("wire_2_1_332.jsonl")
    raw_types = [item.type for item in items if isinstance(item, RawEvent)]
    assert raw_types == [
        "system",
        "user",
        "rate_limit_event",
        "keep_alive",
        "tool_progress",
        "conversation_reset",
    ]


def test_without_partial_messages_text_comes_from_assistant_blocks():
    decoder = ClaudeStreamDecoder(partial_messages=False)
    line = json.dumps(
        {
            "type": "assistant",
            "message": {"id": "msg_9", "content": [{"type": "text", "text": "Whole."}]},
            "parent_tool_use_id": None,
        }
    )
    assert decoder.decode_line(line) == [TextDelta(text="Whole.")]


def test_subagent_lines_are_tagged_not_mixed():
    decoder = ClaudeStreamDecoder()
    line = json.dumps(
        {
            "type": "assistant",
            "message": {"id": "msg_s", "content": [{"type": "text", "text": "from sub"}]},
            "parent_tool_use_id": "toolu_sub1",
        }
    )
    assert decoder.decode_line(line) == [TextDelta(text="from sub", parent_tool_use_id="toolu_sub1")]


def test_bad_lines_become_one_agent_error_with_an_excerpt():
    decoder = ClaudeStreamDecoder()
    [not_json] = decoder.decode_line(b"{oops" + b"x" * 500)
    assert isinstance(not_json, AgentError) and not_json.code == "INVALID_JSON"
    assert not_json.excerpt.startswith("{oops") and len(not_json.excerpt) <= 121
    [not_object] = decoder.decode_line(b"[1, 2]")
    assert not_object.code == "INVALID_JSON"
    [not_utf8] = decoder.decode_line(b'{"type": "\xff"}')
    assert not_utf8.code == "INVALID_UTF8"
    assert decoder.decode_line(b"   ") == []


def test_dispatch_is_by_json_never_by_prefix():
    decoder = ClaudeStreamDecoder()
    [item] = decoder.decode_line(
        b'  {"zzz": 1, "type": "result", "subtype": "success", "is_error": true, "result": "API Error"}'
    )
    assert isinstance(item, TurnEnded) and item.is_error and item.subtype == "success"


def test_encoders_write_one_json_object_per_line():
    line = encode_user_message("two\nlines", session_id="default")
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {
        "type": "user",
        "message": {"role": "user", "content": "two\nlines"},
        "parent_tool_use_id": None,
        "session_id": "default",
    }
    assert json.loads(encode_control_request("req_1", "interrupt")) == {
        "type": "control_request",
        "request_id": "req_1",
        "request": {"subtype": "interrupt"},
    }
    assert json.loads(encode_control_success("abc", {"behavior": "deny", "message": "no"})) == {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": "abc",
            "response": {"behavior": "deny", "message": "no"},
        },
    }
    assert json.loads(encode_control_error("x", "nope"))["response"] == {
        "subtype": "error",
        "request_id": "x",
        "error": "nope",
    }


def test_command_line_is_the_seeds_plus_live_flags():
    argv = build_claude_argv(
        ["claude"],
        ClaudeLaunch(
            agent_name="elynav-sdr",
            mcp_config_path="/w/.mcp.json",
            permission_mode="acceptEdits",
            session_id="abc",
        ),
    )
    assert argv == [
        "claude",
        "--print",
        "--agent",
        "elynav-sdr",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--mcp-config",
        "/w/.mcp.json",
        "--permission-mode",
        "acceptEdits",
        "--session-id",
        "abc",
    ]
    resumed = build_claude_argv(["claude"], ClaudeLaunch(resume_session_id="old", session_id="ignored"))
    assert "--resume=old" in resumed and "--session-id" not in resumed


def test_child_environment_strips_nesting_variables():
    environment = build_child_environment(
        {"CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli", "PATH": "/bin"}, {"X": "y"}
    )
    assert environment == {"PATH": "/bin", "X": "y"}
