"""The pure ACP codec: JSON-RPC lines of an agent in, events and control frames out, and our answers."""

from __future__ import annotations

import json
from typing import Any

from elynav_nb.agents.events import (
    AgentError,
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
from elynav_nb.agents.protocols.acp.codec import INTERNAL_ERROR, METHOD_NOT_FOUND, AcpCodec, tool_result_text

OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "always", "name": "Always", "kind": "allow_always"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]


def line(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


def update(session_update: str, **fields: Any) -> bytes:
    return line(
        {
            "method": "session/update",
            "params": {"sessionId": "s1", "update": {"sessionUpdate": session_update, **fields}},
        }
    )


def codec_in_turn() -> AcpCodec:
    codec = AcpCodec(agent_name="agent", agent_version="1.2.3")
    codec.session_id = "s1"
    codec.started()
    codec.prompt_request_id = "prompt_1"
    return codec


def test_message_and_thought_chunks_become_deltas() -> None:
    codec = codec_in_turn()
    assert codec.decode_line(update("agent_message_chunk", content={"type": "text", "text": "Hel"})) == [
        TextDelta("Hel")
    ]
    assert codec.decode_line(update("agent_thought_chunk", content={"type": "text", "text": "hmm"})) == [
        ThinkingDelta("hmm")
    ]
    image = codec.decode_line(update("agent_message_chunk", content={"type": "image", "data": "..."}))
    assert isinstance(image[0], RawEvent) and image[0].subtype == "agent_message_chunk"


def test_prompt_answer_ends_the_turn_with_the_text_streamed() -> None:
    codec = codec_in_turn()
    codec.decode_line(update("agent_message_chunk", content={"type": "text", "text": "Hello "}))
    codec.decode_line(update("agent_message_chunk", content={"type": "text", "text": "there"}))
    items = codec.decode_line(line({"id": "prompt_1", "result": {"stopReason": "end_turn"}}))
    assert isinstance(items[0], ControlResponse) and items[0].ok
    ended = items[1]
    assert isinstance(ended, TurnEnded)
    assert (ended.subtype, ended.is_error, ended.result, ended.session_id) == (
        "success",
        False,
        "Hello there",
        "s1",
    )
    assert codec.prompt_request_id == ""


def test_stop_reasons_map_to_typed_ends() -> None:
    for reason, subtype, terminal in [
        ("cancelled", "interrupted", "cancelled"),
        ("max_tokens", "error", "max_tokens"),
        ("max_turn_requests", "error_max_turns", "max_turns"),
        ("refusal", "error", "refusal"),
        ("something_new", "error", "something_new"),
    ]:
        codec = codec_in_turn()
        ended = codec.decode_line(line({"id": "prompt_1", "result": {"stopReason": reason}}))[1]
        assert isinstance(ended, TurnEnded)
        assert (ended.subtype, ended.is_error, ended.terminal_reason) == (subtype, True, terminal), reason


def test_a_cancelled_stop_says_whether_the_client_asked_for_it() -> None:
    asked = codec_in_turn()
    asked.cancel_asked = True  # the wire sent session/cancel
    ended = asked.decode_line(line({"id": "prompt_1", "result": {"stopReason": "cancelled"}}))[1]
    assert isinstance(ended, TurnEnded) and ended.error_code == "CANCELLED"
    assert "as the client asked" in ended.errors[0] and not asked.cancel_asked  # for this turn only
    own = codec_in_turn()
    ended = own.decode_line(line({"id": "prompt_1", "result": {"stopReason": "cancelled"}}))[1]
    assert isinstance(ended, TurnEnded) and ended.error_code == "CANCELLED_BY_AGENT"


def test_an_error_answer_to_the_prompt_is_a_typed_failure() -> None:
    codec = codec_in_turn()
    items = codec.decode_line(
        line(
            {
                "id": "prompt_1",
                "error": {"code": -32603, "message": "Internal error", "data": {"details": "boom"}},
            }
        )
    )
    assert isinstance(items[0], ControlResponse) and not items[0].ok
    assert isinstance(items[1], AgentError) and items[1].code == "CLI_ERROR" and "boom" in items[1].message
    assert isinstance(items[2], TurnEnded) and items[2].is_error and "boom" in items[2].errors[0]


def test_answers_to_other_requests_do_not_end_the_turn() -> None:
    codec = codec_in_turn()
    items = codec.decode_line(line({"id": "req_7", "result": None}))
    assert items == [ControlResponse(request_id="req_7", ok=True, response={})]


def test_tool_call_and_its_updates() -> None:
    codec = codec_in_turn()
    started = codec.decode_line(
        update(
            "tool_call",
            toolCallId="t1",
            title="ls -la",
            kind="execute",
            status="pending",
            rawInput={"command": "ls"},
        )
    )
    assert started == [ToolUse(id="t1", name="ls -la", input={"command": "ls"})]
    progress = codec.decode_line(update("tool_call_update", toolCallId="t1", status="in_progress"))
    assert isinstance(progress[0], RawEvent)
    done = codec.decode_line(
        update(
            "tool_call_update",
            toolCallId="t1",
            status="completed",
            content=[{"type": "content", "content": {"type": "text", "text": "a.txt"}}],
        )
    )
    assert done == [ToolResult(tool_use_id="t1", content="a.txt", is_error=False)]
    failed = codec.decode_line(
        update("tool_call_update", toolCallId="t2", status="failed", rawOutput="denied")
    )
    assert isinstance(failed[0], ToolUse) and failed[0].id == "t2"  # never announced: a ToolUse first
    assert failed[1] == ToolResult(tool_use_id="t2", content="denied", is_error=True)


def test_claude_tool_names_come_from_its_meta() -> None:
    codec = codec_in_turn()
    items = codec.decode_line(
        update(
            "tool_call",
            toolCallId="t",
            title="`ls`",
            kind="execute",
            status="pending",
            rawInput={"command": "ls"},
            _meta={"claudeCode": {"toolName": "Bash"}},
        )
    )
    assert isinstance(items[0], ToolUse) and items[0].name == "Bash"


def test_tool_result_text_reads_content_then_raw_output() -> None:
    assert tool_result_text({"content": [{"type": "diff", "path": "/w/a.py"}]}) == "diff of /w/a.py"
    assert tool_result_text({"rawOutput": {"output": "hi"}}) == "hi"
    assert tool_result_text({"rawOutput": {"code": 3}}) == '{"code": 3}'
    assert tool_result_text({}) == ""


def test_unknown_updates_and_notifications_are_kept_raw() -> None:
    codec = codec_in_turn()
    for kind in ("plan", "user_message_chunk", "available_commands_update", "elynav_unknown_kind"):
        items = codec.decode_line(update(kind, payload=1))
        assert isinstance(items[0], RawEvent) and items[0].subtype == kind
    other = codec.decode_line(line({"method": "x/notice", "params": {}}))
    assert isinstance(other[0], RawEvent) and other[0].type == "x/notice"


def test_usage_update_cost_reaches_the_turn_end() -> None:
    codec = codec_in_turn()
    codec.decode_line(update("usage_update", used=10, size=100, cost={"amount": 0.25, "currency": "USD"}))
    ended = codec.decode_line(
        line({"id": "prompt_1", "result": {"stopReason": "end_turn", "usage": {"inputTokens": 5}}})
    )[1]
    assert (
        isinstance(ended, TurnEnded) and ended.total_cost_usd == 0.25 and ended.usage == {"input_tokens": 5}
    )


def test_malformed_lines_are_typed_errors() -> None:
    codec = codec_in_turn()
    not_json = codec.decode_line(b"this is not json")
    assert isinstance(not_json[0], AgentError) and not_json[0].code == "INVALID_JSON"
    not_rpc = codec.decode_line(b'{"hello": 1}')
    assert isinstance(not_rpc[0], AgentError) and not_rpc[0].code == "INVALID_JSON_RPC"
    assert codec.decode_line(b"   ") == []


def test_agent_requests_keep_their_ids_and_method() -> None:
    codec = codec_in_turn()
    items = codec.decode_line(
        line({"id": 4, "method": "fs/read_text_file", "params": {"sessionId": "s1", "path": "/w/a"}})
    )
    assert items == [
        ControlRequest(
            request_id="4", subtype="fs/read_text_file", request={"sessionId": "s1", "path": "/w/a"}
        )
    ]
    assert codec.method_of("4") == "fs/read_text_file"
    answer = json.loads(codec.result("4", {"content": "x"}))
    assert answer == {"jsonrpc": "2.0", "id": 4, "result": {"content": "x"}}  # an integer id stays one
    refused = json.loads(codec.error("5", "nope", INTERNAL_ERROR))
    assert refused["error"] == {"code": INTERNAL_ERROR, "message": "nope"} and refused["id"] == "5"


def permission(
    codec: AcpCodec, request_id: int = 9, options: list[dict[str, Any]] = OPTIONS
) -> PermissionRequest:
    items = codec.decode_line(
        line(
            {
                "id": request_id,
                "method": "session/request_permission",
                "params": {
                    "sessionId": "s1",
                    "toolCall": {"toolCallId": "t1", "title": "rm x", "rawInput": {"command": "rm x"}},
                    "options": options,
                },
            }
        )
    )
    request = items[-1]
    assert isinstance(request, PermissionRequest)
    return request


def test_permission_prompt_and_its_three_answers() -> None:
    codec = codec_in_turn()
    request = permission(codec)
    assert (request.request_id, request.tool_name, request.input, request.tool_use_id) == (
        "9",
        "rm x",
        {"command": "rm x"},
        "t1",
    )
    assert [option["kind"] for option in request.options] == ["allow_once", "allow_always", "reject_once"]
    assert codec.pending_permissions() == ["9"]
    assert json.loads(codec.permission_answer("9", True))["result"] == {
        "outcome": {"outcome": "selected", "optionId": "yes"}
    }
    assert codec.pending_permissions() == []
    permission(codec, 10)
    assert (
        json.loads(codec.permission_answer("10", True, always=True))["result"]["outcome"]["optionId"]
        == "always"
    )
    permission(codec, 11)
    assert json.loads(codec.permission_answer("11", False))["result"]["outcome"]["optionId"] == "no"


def test_a_permission_without_a_matching_option_is_cancelled_never_allowed() -> None:
    codec = codec_in_turn()
    permission(codec, 12, options=[{"optionId": "ok", "name": "OK", "kind": "allow_once"}])
    assert json.loads(codec.permission_answer("12", False))["result"] == {"outcome": {"outcome": "cancelled"}}
    permission(codec, 13, options=[{"optionId": "a", "name": "Always", "kind": "allow_always"}])
    assert json.loads(codec.permission_answer("13", True))["result"]["outcome"]["optionId"] == "a"


def test_a_permission_for_an_unknown_tool_still_asks() -> None:
    codec = codec_in_turn()
    items = codec.decode_line(
        line(
            {
                "id": 3,
                "method": "session/request_permission",
                "params": {"sessionId": "s1", "toolCall": {"toolCallId": "ghost"}, "options": OPTIONS},
            }
        )
    )
    request = items[0]
    assert (
        isinstance(request, PermissionRequest) and request.tool_name == "unknown tool" and request.input == {}
    )


def test_our_requests_carry_jsonrpc_and_string_ids() -> None:
    sent = json.loads(AcpCodec.request("req_1", "session/new", {"cwd": "/w", "mcpServers": []}))
    assert sent == {
        "jsonrpc": "2.0",
        "id": "req_1",
        "method": "session/new",
        "params": {"cwd": "/w", "mcpServers": []},
    }
    cancel = json.loads(AcpCodec.notification("session/cancel", {"sessionId": "s1"}))
    assert cancel == {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}
    assert METHOD_NOT_FOUND == -32601


def test_a_call_announced_without_input_waits_for_it() -> None:
    """claude-agent-acp: tool_call {rawInput: {}} first, then an update with the input."""
    codec = codec_in_turn()
    first = codec.decode_line(
        update("tool_call", toolCallId="c", title="Terminal", kind="execute", status="pending", rawInput={})
    )
    assert isinstance(first[0], RawEvent)
    filled = codec.decode_line(
        update(
            "tool_call_update",
            toolCallId="c",
            title="`ls`",
            rawInput={"command": "ls"},
            _meta={"claudeCode": {"toolName": "Bash"}},
        )
    )
    assert filled == [ToolUse(id="c", name="Bash", input={"command": "ls"})]
    done = codec.decode_line(update("tool_call_update", toolCallId="c", status="completed", rawOutput="x"))
    assert done == [ToolResult(tool_use_id="c", content="x")]


def test_a_call_announced_running_without_input_is_a_tool_use_at_once() -> None:
    """gemini in a mode that approves the call (yolo): tool_call in_progress, no rawInput ever."""
    codec = codec_in_turn()
    running = codec.decode_line(
        update(
            "tool_call",
            toolCallId="run_1",
            title="sleep 60",
            kind="execute",
            status="in_progress",
            content=[],
        )
    )
    assert running == [ToolUse(id="run_1", name="sleep 60", input={})]
    done = codec.decode_line(
        update("tool_call_update", toolCallId="run_1", status="completed", title="sleep 60", content=[])
    )
    assert done == [ToolResult(tool_use_id="run_1", content="")]


def test_a_permission_prompt_makes_its_call_known_first() -> None:
    """gemini: no tool_call before its permission prompt; the prompt's toolCall is the call."""
    codec = codec_in_turn()
    items = codec.decode_line(
        line(
            {
                "id": 0,
                "method": "session/request_permission",
                "params": {
                    "sessionId": "s1",
                    "options": OPTIONS,
                    "toolCall": {
                        "toolCallId": "run_1",
                        "title": "echo hi",
                        "kind": "execute",
                        "status": "pending",
                    },
                },
            }
        )
    )
    assert isinstance(items[0], ToolUse) and items[0].id == "run_1" and items[0].name == "echo hi"
    assert isinstance(items[1], PermissionRequest) and items[1].tool_use_id == "run_1"
    done = codec.decode_line(update("tool_call_update", toolCallId="run_1", status="completed", content=[]))
    assert done == [ToolResult(tool_use_id="run_1", content="")]
