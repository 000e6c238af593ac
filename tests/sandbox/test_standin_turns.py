"""Conversation behaviour of the stand-in, driven with raw stream-json lines: order, tools, permissions,
interrupts, queueing, exit codes and signals."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.sandbox.standin_driver import BASE_FLAGS, StandinProcess, control_request, is_result, line_kind

PARTIAL = [*BASE_FLAGS, "--include-partial-messages"]
Start = Callable[..., StandinProcess]


def kinds(messages: list[dict[str, Any]]) -> list[str]:
    return [line_kind(message) for message in messages]


def compress_deltas(sequence: list[str]) -> list[str]:
    """Collapse runs of identical delta lines into one, so orders read like the design note."""
    compressed: list[str] = []
    for kind in sequence:
        if compressed and kind == compressed[-1] and kind == "stream_event/content_block_delta":
            continue
        compressed.append(kind)
    return compressed


def test_plain_turn_with_partial_messages_has_the_real_order(standin: Start) -> None:
    process = standin(PARTIAL)
    process.say("hello there")
    turn = process.read_turn()
    assert compress_deltas(kinds(turn)) == [
        "system/init",
        "system/status",
        "stream_event/message_start",
        "stream_event/content_block_start",
        "stream_event/content_block_delta",
        "assistant",
        "stream_event/content_block_stop",
        "stream_event/message_delta",
        "stream_event/message_stop",
        "result",
    ]
    deltas = [m["event"]["delta"]["text"] for m in turn if line_kind(m) == "stream_event/content_block_delta"]
    assert len(deltas) > 2
    result = turn[-1]
    assert result["result"] == "".join(deltas)
    assert result["result"].startswith("[elynav stand-in] I am not Claude")
    assert result["result"].endswith("You said: hello there")
    assert (result["is_error"], result["num_turns"], result["terminal_reason"], result["total_cost_usd"]) == (
        False,
        1,
        "completed",
        0,
    )
    assert turn[0]["elynav_standin"] is True and turn[0]["model"] == "elynav-standin"
    assert "ttft_ms" in turn[2]


def test_without_partial_messages_only_init_status_assistant_result(standin: Start) -> None:
    process = standin(BASE_FLAGS)
    process.say("hello")
    assert kinds(process.read_turn()) == ["system/init", "system/status", "assistant", "result"]
    process.say("again")
    second = process.read_turn()
    assert kinds(second) == ["system/init", "system/status", "assistant", "result"]
    assert second[-1]["result_index"] == 1
    assert "I remember 1 earlier turn" in second[-1]["result"]


def test_replies_are_deterministic(standin: Start) -> None:
    first = standin(BASE_FLAGS)
    second = standin(BASE_FLAGS)
    for process in (first, second):
        process.say("same words")
    assert first.read_turn()[-1]["result"] == second.read_turn()[-1]["result"]


def test_bash_tool_turn_runs_the_command(standin: Start) -> None:
    process = standin(PARTIAL)
    process.say("@standin bash echo out; echo err >&2")
    turn = process.read_turn()
    sequence = compress_deltas(kinds(turn))
    assert sequence[:9] == [
        "system/init",
        "system/status",
        "stream_event/message_start",
        "stream_event/content_block_start",
        "stream_event/content_block_delta",
        "assistant",
        "stream_event/content_block_stop",
        "stream_event/message_delta",
        "stream_event/message_stop",
    ]
    assert sequence[9:11] == ["user", "system/status"]
    tool_use = next(m for m in turn if m["type"] == "assistant")["message"]["content"][0]
    assert tool_use["name"] == "Bash" and tool_use["id"].startswith("toolu_")
    assert tool_use["input"]["command"] == "echo out; echo err >&2"
    tool_result = next(m for m in turn if m["type"] == "user")
    block = tool_result["message"]["content"][0]
    assert (block["tool_use_id"], block["content"], block["is_error"]) == (tool_use["id"], "out\nerr", False)
    assert tool_result["tool_use_result"]["stdout"] == "out\nerr"
    message_ids = {m["message"]["id"] for m in turn if m["type"] == "assistant"}
    assert len(message_ids) == 2
    assert turn[-1]["num_turns"] == 2 and turn[-1]["stop_reason"] == "end_turn"


def test_bash_failure_is_an_error_tool_result(standin: Start) -> None:
    process = standin(BASE_FLAGS)
    process.say("@standin bash ls /nonexistent_dir_for_standin")
    tool_result = next(m for m in process.read_turn() if m["type"] == "user")
    block = tool_result["message"]["content"][0]
    assert block["is_error"] is True and block["content"].startswith("Exit code 2\n")
    assert tool_result["tool_use_result"].startswith("Error: Exit code 2")


def test_permission_prompt_allow_then_deny(standin: Start, home: Path) -> None:
    process = standin([*BASE_FLAGS, "--permission-prompt-tool", "stdio"])
    process.say("@standin bash touch created.txt")
    before = process.read_until(lambda m: m.get("type") == "control_request")
    request = before[-1]
    assert request["request"]["subtype"] == "can_use_tool"
    assert request["request"]["tool_name"] == "Bash"
    assert (
        request["request"]["tool_use_id"]
        == next(m for m in before if m["type"] == "assistant")["message"]["content"][0]["id"]
    )
    assert set(request["request"]) >= {"display_name", "input", "description", "permission_suggestions"}
    allowed_input = dict(request["request"]["input"], command="touch allowed.txt")
    process.send(
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": request["request_id"],
                "response": {"behavior": "allow", "updatedInput": allowed_input},
            },
        }
    )
    turn = process.read_turn()
    assert (home / "allowed.txt").exists() and not (home / "created.txt").exists()
    assert turn[-1]["permission_denials"] == [] and turn[-1]["is_error"] is False

    process.say("@standin bash touch denied.txt")
    request = process.read_until(lambda m: m.get("type") == "control_request")[-1]
    process.send(
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": request["request_id"],
                "response": {"behavior": "deny", "message": "User said no"},
            },
        }
    )
    turn = process.read_turn()
    tool_result = next(m for m in turn if m["type"] == "user")
    assert tool_result["message"]["content"][0] == {
        "type": "tool_result",
        "content": "User said no",
        "is_error": True,
        "tool_use_id": request["request"]["tool_use_id"],
    }
    assert turn[-1]["permission_denials"][0]["tool_name"] == "Bash"
    assert not (home / "denied.txt").exists()


def test_write_command_without_prompt_tool_is_denied_automatically(standin: Start, home: Path) -> None:
    process = standin(BASE_FLAGS)
    process.say("@standin bash touch nope.txt")
    turn = process.read_turn()
    assert "system/permission_denied" in kinds(turn)
    assert turn[-1]["permission_denials"][0]["tool_input"]["command"] == "touch nope.txt"
    assert not (home / "nope.txt").exists()


def test_plan_mode_denies_bash(standin: Start) -> None:
    process = standin([*BASE_FLAGS, "--permission-mode", "plan"])
    process.say("@standin bash echo hi")
    assert process.read_turn()[-1]["permission_denials"]


def test_interrupt_while_streaming(standin: Start) -> None:
    process = standin(PARTIAL)
    process.say("@standin slow 6\none two three four five six seven eight nine ten")
    process.read_until(lambda m: line_kind(m) == "stream_event/content_block_delta")
    process.send(control_request("req_int", "interrupt"))
    after = process.read_turn()
    assert kinds(after)[0] == "control_response"
    assert after[0]["response"] == {
        "subtype": "success",
        "request_id": "req_int",
        "response": {"still_queued": []},
    }
    partial = after[1]
    assert partial["type"] == "assistant" and partial["aborted"] is True
    assert after[2]["message"]["content"] == [{"type": "text", "text": "[Request interrupted by user]"}]
    result = after[-1]
    assert (result["subtype"], result["is_error"], result["stop_reason"], result["terminal_reason"]) == (
        "error_during_execution",
        True,
        None,
        "aborted_streaming",
    )
    process.say("still there?")
    assert process.read_turn()[-1]["is_error"] is False


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:  # reaped between the two checks (ENOENT on open, ESRCH on read)
        return False


def children_of(pid: int) -> list[int]:
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry))
    return found


def session_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[3])


def has_exec_ed(pid: int, parent: int) -> bool:
    """True once a forked child runs its own program: before exec it may not have left the parent's session."""
    try:
        return os.readlink(f"/proc/{pid}/exe") != os.readlink(f"/proc/{parent}/exe")
    except OSError:
        return False


def wait_for_tool_child(process: StandinProcess) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        children = [child for child in children_of(process.pid) if has_exec_ed(child, process.pid)]
        if children:
            return children[0]
        time.sleep(0.05)
    raise AssertionError("the Bash tool never started")


def test_bash_tool_runs_in_its_own_session(standin: Start) -> None:
    process = standin(BASE_FLAGS)
    process.say("@standin sleep-tool 30")
    process.read_until(lambda m: m.get("type") == "assistant")
    tool_pid = wait_for_tool_child(process)
    assert session_of(tool_pid) == tool_pid
    assert session_of(tool_pid) != session_of(process.pid)
    process.send(control_request("i1", "interrupt"))
    process.read_turn()


def test_interrupt_during_a_tool_kills_its_process_group(standin: Start) -> None:
    process = standin(BASE_FLAGS)
    process.say("@standin bash sleep 30; echo never")
    process.read_until(lambda m: m.get("type") == "assistant")
    tool_pid = wait_for_tool_child(process)
    process.send(control_request("i2", "interrupt"))
    after = process.read_turn()
    assert kinds(after) == ["control_response", "user", "user", "result"]
    assert after[1]["message"]["content"][0]["is_error"] is True
    assert after[1]["tool_use_result"] == "User rejected tool use"
    assert after[2]["message"]["content"][0]["text"] == "[Request interrupted by user for tool use]"
    assert (after[-1]["terminal_reason"], after[-1]["stop_reason"]) == ("aborted_tools", "tool_use")
    deadline = time.monotonic() + 5
    while process_exists(tool_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_exists(tool_pid)
    process.say("next")
    assert process.read_turn()[-1]["is_error"] is False


def test_interrupt_with_a_pending_permission_prompt(standin: Start) -> None:
    process = standin([*BASE_FLAGS, "--permission-prompt-tool", "stdio"])
    process.say("@standin bash touch pending.txt")
    request = process.read_until(lambda m: m.get("type") == "control_request")[-1]
    process.send(control_request("req_int", "interrupt"))
    after = process.read_turn()
    assert kinds(after) == ["control_cancel_request", "control_response", "user", "user", "result"]
    assert after[0]["request_id"] == request["request_id"]
    assert after[-1]["terminal_reason"] == "aborted_tools"
    assert after[-1]["permission_denials"][0]["tool_use_id"] == request["request"]["tool_use_id"]


FAKE_ELYNAV = """#!/bin/sh
printf '%s\\n' "$*" >> "$(dirname "$0")/calls.log"
for argument in "$@"; do printf '[%s]\\n' "$argument"; done
if [ "$ELYNAV_FAKE_SLEEP" ]; then sleep "$ELYNAV_FAKE_SLEEP"; fi
"""


def fake_elynav(directory: Path, **extra: str) -> dict[str, str]:
    """An ``elynav`` script that prints its arguments, first on the PATH of the stand-in."""
    directory.mkdir()
    script = directory / "elynav"
    script.write_text(FAKE_ELYNAV)
    script.chmod(0o755)
    return {"PATH": f"{directory}{os.pathsep}{os.environ.get('PATH', '')}", **extra}


ASK_ALLOWED = [*BASE_FLAGS, "--permission-mode", "default", "--allowedTools", "Bash(elynav ask:*)"]


def test_ask_runs_elynav_ask_under_an_allow_rule(standin: Start, tmp_path: Path) -> None:
    process = standin(ASK_ALLOWED, env=fake_elynav(tmp_path / "bin"))
    process.say("@standin ask someone hello")
    turn = process.read_turn()
    tool_use = next(m for m in turn if m["type"] == "assistant")["message"]["content"][0]
    assert (tool_use["name"], tool_use["input"]["command"]) == ("Bash", "elynav ask someone hello")
    tool_result = next(m for m in turn if m["type"] == "user")
    block = tool_result["message"]["content"][0]
    assert (block["tool_use_id"], block["content"], block["is_error"]) == (
        tool_use["id"],
        "[ask]\n[someone]\n[hello]",
        False,
    )
    assert tool_result["tool_use_result"]["stdout"] == "[ask]\n[someone]\n[hello]"
    assert turn[-1]["permission_denials"] == [] and turn[-1]["num_turns"] == 2

    process.say("@standin ask B @standin ask C @standin sleep-tool 30")
    turn = process.read_turn()
    tool_uses = [
        m for m in turn if m["type"] == "assistant" and m["message"]["content"][0]["type"] == "tool_use"
    ]
    assert len(tool_uses) == 1
    nested = "@standin ask C @standin sleep-tool 30"
    assert tool_uses[0]["message"]["content"][0]["input"]["command"] == f"elynav ask B '{nested}'"
    block = next(m for m in turn if m["type"] == "user")["message"]["content"][0]
    assert block["content"] == f"[ask]\n[B]\n[{nested}]"


def test_ask_without_a_rule_is_denied(standin: Start, tmp_path: Path) -> None:
    process = standin([*BASE_FLAGS, "--permission-mode", "default"], env=fake_elynav(tmp_path / "bin"))
    process.say("@standin ask someone hello")
    turn = process.read_turn()
    assert "system/permission_denied" in kinds(turn)
    assert turn[-1]["permission_denials"][0]["tool_input"]["command"] == "elynav ask someone hello"
    assert next(m for m in turn if m["type"] == "user")["message"]["content"][0]["is_error"] is True
    assert not (tmp_path / "bin" / "calls.log").exists()


def test_interrupt_during_ask_kills_its_process_group(standin: Start, tmp_path: Path) -> None:
    process = standin(ASK_ALLOWED, env=fake_elynav(tmp_path / "bin", ELYNAV_FAKE_SLEEP="30"))
    process.say("@standin ask someone hello")
    process.read_until(lambda m: m.get("type") == "assistant")
    tool_pid = wait_for_tool_child(process)
    assert session_of(tool_pid) == tool_pid
    process.send(control_request("i3", "interrupt"))
    after = process.read_turn()
    assert kinds(after) == ["control_response", "user", "user", "result"]
    assert after[-1]["terminal_reason"] == "aborted_tools"
    deadline = time.monotonic() + 5
    while process_exists(tool_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_exists(tool_pid)


def test_a_message_written_during_a_turn_is_queued(standin: Start) -> None:
    process = standin(PARTIAL)
    process.say("@standin slow 0.5\nfirst")
    process.read_until(lambda m: line_kind(m) == "stream_event/content_block_delta")
    process.say("second")
    first = process.read_turn()
    second = process.read_turn()
    assert first[-1]["result"].endswith("You said: first")
    assert kinds(second)[0] == "system/init"
    assert second[-1]["result"].endswith("You said: second")


def test_control_requests_are_answered_during_a_turn(standin: Start) -> None:
    process = standin(PARTIAL)
    process.say("@standin slow 1\nlong reply for control requests")
    process.read_until(lambda m: line_kind(m) == "stream_event/content_block_delta")
    process.send(control_request("c1", "mcp_status"))
    process.send(control_request("c2", "set_permission_mode", mode="acceptEdits"))
    process.send(control_request("c3", "no_such_thing"))
    process.send(control_request("c4", "set_model", model="haiku"))
    lines = process.read_until(
        lambda m: m.get("type") == "control_response" and m["response"]["request_id"] == "c4"
    )
    responses = {m["response"]["request_id"]: m["response"] for m in lines if m["type"] == "control_response"}
    assert responses["c1"]["response"] == {"mcpServers": []}
    assert responses["c2"]["response"] == {"mode": "acceptEdits"}
    assert responses["c3"] == {
        "subtype": "error",
        "request_id": "c3",
        "error": "Unsupported control request subtype: no_such_thing",
        "error_code": "unsupported_request",
    }
    assert responses["c4"]["response"] == {"model": "elynav-standin:haiku"}
    assert any(m.get("permissionMode") == "acceptEdits" for m in lines if line_kind(m) == "system/status")
    assert not any(m["type"] == "result" for m in lines)
    process.read_turn()
    process.say("after")
    init = process.read_turn()[0]
    assert (init["model"], init["permissionMode"]) == ("elynav-standin:haiku", "acceptEdits")


def test_initialize_answers_before_any_user_message(standin: Start) -> None:
    process = standin(BASE_FLAGS)
    process.send(control_request("req_1", "initialize", hooks=None))
    response = process.read_until(lambda m: m.get("type") == "control_response")[0]["response"]
    assert response["request_id"] == "req_1"
    assert response["response"]["pid"] == process.pid
    assert {agent["name"] for agent in response["response"]["agents"]} >= {"claude", "Explore", "Plan"}


@pytest.mark.parametrize(("text", "expected_code"), [("hello", 0), ("@standin no-login", 1)])
def test_eof_while_idle_exits_with_the_last_result(standin: Start, text: str, expected_code: int) -> None:
    process = standin(BASE_FLAGS)
    process.say(text)
    process.read_turn()
    process.close_stdin()
    assert process.wait() == expected_code


def test_eof_mid_turn_finishes_the_turn_then_exits(standin: Start) -> None:
    process = standin(BASE_FLAGS)
    process.say("@standin slow 0.5\nfinish me")
    process.read_until(lambda m: line_kind(m) == "system/status")
    process.close_stdin()
    assert process.wait() == 0
    rest = process.remaining_messages()
    assert rest[-1]["type"] == "result" and rest[-1]["result"].endswith("You said: finish me")


def test_sigint_aborts_the_turn_writes_a_result_and_exits_0(standin: Start) -> None:
    process = standin(PARTIAL)
    process.say("@standin slow 5\na b c d e f g h i j k l")
    process.read_until(lambda m: line_kind(m) == "stream_event/content_block_delta")
    os.kill(process.pid, signal.SIGINT)
    assert process.wait() == 0
    rest = process.remaining_messages()
    assert rest[-1]["type"] == "result" and rest[-1]["terminal_reason"] == "aborted_streaming"


@pytest.mark.parametrize(("version", "tool_survives"), [("2.1.197", True), ("2.1.332", False)])
def test_sigterm_exits_143_without_result(standin: Start, version: str, tool_survives: bool) -> None:
    process = standin(BASE_FLAGS, env={"ELYNAV_STANDIN_VERSION": version})
    process.say("@standin sleep-tool 60")
    process.read_until(lambda m: m.get("type") == "assistant")
    tool_pid = wait_for_tool_child(process)
    try:
        os.kill(process.pid, signal.SIGTERM)
        assert process.wait() == 143
        assert not any(m["type"] == "result" for m in process.remaining_messages())
        time.sleep(0.2)
        assert process_exists(tool_pid) is tool_survives
    finally:
        try:
            os.killpg(tool_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_scripted_error_turns(standin: Start) -> None:
    process = standin(BASE_FLAGS)
    process.say("@standin api-error")
    api_error = process.read_turn()
    assert kinds(api_error) == ["system/init", "system/status", "assistant", "result"]
    assert api_error[2]["message"]["model"] == "<synthetic>" and api_error[2]["error"] == "invalid_request"
    result = api_error[-1]
    assert (result["subtype"], result["is_error"], result["api_error_status"], result["terminal_reason"]) == (
        "success",
        True,
        400,
        "api_error",
    )
    assert "errors" not in result and result["result"].startswith("API Error: 400")
    process.say("@standin api-error 529")
    assert kinds(process.read_turn()).count("system/api_retry") == 2
    process.say("@standin no-login")
    no_login = process.read_turn()
    assert no_login[2]["error"] == "authentication_failed"
    assert no_login[2]["message"]["content"][0]["text"] == "Not logged in · Please run /login"
    process.say("@standin max-turns")
    max_turns = process.read_turn()[-1]
    assert (max_turns["subtype"], max_turns["errors"], max_turns["num_turns"]) == (
        "error_max_turns",
        ["Reached maximum number of turns (1)"],
        2,
    )


def test_max_turns_flag_limits_round_trips(standin: Start) -> None:
    process = standin([*BASE_FLAGS, "--max-turns", "1"])
    process.say("@standin bash echo one")
    result = process.read_turn()[-1]
    assert result["subtype"] == "error_max_turns" and result["terminal_reason"] == "max_turns"


def test_thinking_block_comes_before_the_text(standin: Start) -> None:
    process = standin(PARTIAL)
    process.say("@standin think\nponder")
    turn = process.read_turn()
    delta_types = [
        m["event"]["delta"]["type"] for m in turn if line_kind(m) == "stream_event/content_block_delta"
    ]
    assert delta_types[:2] == ["thinking_delta", "signature_delta"]
    blocks = [m["message"]["content"][0]["type"] for m in turn if m["type"] == "assistant"]
    assert blocks == ["thinking", "text"]


def test_subagent_prompt_is_tagged_with_the_tool_use_id(standin: Start) -> None:
    process = standin(BASE_FLAGS)
    process.say("@standin subagent count to three")
    turn = process.read_turn()
    tool_use = next(m for m in turn if m["type"] == "assistant")["message"]["content"][0]
    assert tool_use["name"] == "Task"
    prompt_line = next(m for m in turn if m["type"] == "user" and m["parent_tool_use_id"] == tool_use["id"])
    assert prompt_line["message"]["content"][0]["text"] == "count to three"
    assert {"system/task_started", "system/task_notification"} <= set(kinds(turn))


def test_flood_writes_one_hundred_thousand_deltas(standin: Start) -> None:
    process = standin(PARTIAL)
    started = time.monotonic()
    process.say("@standin flood 100000")
    turn = process.read_turn(timeout=60)
    deltas = [m for m in turn if line_kind(m) == "stream_event/content_block_delta"]
    assert len(deltas) == 100000
    assert deltas[-1]["event"]["delta"]["text"] == "t99999 "
    assert turn[-1]["result"].startswith("t0 t1 ")
    assert time.monotonic() - started < 60  # a guard, not a speed claim


def test_big_result_line_is_larger_than_asked(standin: Start) -> None:
    process = standin(BASE_FLAGS)
    process.say("@standin big-result 1100000")
    process.read_turn()
    tool_result_lines = [raw for raw in process.raw_lines if b'"tool_result"' in raw]
    assert len(tool_result_lines[0]) > 1100000


def test_bad_directive_is_reported_in_the_reply(standin: Start) -> None:
    process = standin(BASE_FLAGS)
    process.say("@standin nonsense\nhi")
    result = process.read_turn()[-1]
    assert "unknown directive @standin nonsense" in result["result"]
    assert result["result"].endswith("You said: hi")


def test_replay_user_messages_echoes_the_input(standin: Start) -> None:
    process = standin([*BASE_FLAGS, "--replay-user-messages"])
    process.say("echo me")
    turn = process.read_turn()
    replay = next(m for m in turn if m["type"] == "user")
    assert replay["isReplay"] is True and replay["message"]["content"] == "echo me"


def test_legacy_version_orders_result_keys_type_first(standin: Start) -> None:
    process = standin(BASE_FLAGS, env={"ELYNAV_STANDIN_VERSION": "2.1.197"})
    process.say("hi")
    turn = process.read_turn()
    assert next(iter(turn[-1])) == "type"
    assert turn[0]["claude_code_version"] == "2.1.197"
    assert "timestamp" not in turn[2]
    process.send(control_request("i", "interrupt"))
    response = process.read_until(lambda m: m.get("type") == "control_response")[-1]
    assert response["response"] == {"subtype": "success", "request_id": "i"}
    assert is_result(turn[-1])
