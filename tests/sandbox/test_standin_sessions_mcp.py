"""Sessions (resume, fork, continue, persistence) and a real MCP call through the stand-in."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from tests.sandbox.standin_driver import BASE_FLAGS, StandinProcess, run_once, user_message

Start = Callable[..., StandinProcess]
TINY_SERVER = Path(__file__).with_name("tiny_mcp_server.py")
KNOWN_ID = "11111111-1111-4111-8111-111111111111"


def one_turn(home: Path, arguments: list[str], text: str) -> list[dict[str, object]]:
    completed = run_once(
        [*BASE_FLAGS, *arguments], home=home, stdin=(json.dumps(user_message(text)) + "\n").encode()
    )
    assert completed.returncode == 0, completed.stderr
    return [json.loads(raw) for raw in completed.stdout.splitlines()]


def test_session_id_resume_and_memory(home: Path) -> None:
    first = one_turn(home, ["--session-id", KNOWN_ID], "remember the colour blue")
    assert first[0]["session_id"] == KNOWN_ID
    assert (home / "standin" / "sessions" / f"{KNOWN_ID}.jsonl").is_file()
    resumed = one_turn(home, [f"--resume={KNOWN_ID}"], "what did I say?")
    assert resumed[0]["session_id"] == KNOWN_ID
    assert "I remember 1 earlier turn" in str(resumed[-1]["result"])
    continued = one_turn(home, ["--continue"], "and now?")
    assert continued[0]["session_id"] == KNOWN_ID
    assert "I remember 2 earlier turns" in str(continued[-1]["result"])


def test_fork_session_keeps_history_under_a_new_id(home: Path) -> None:
    one_turn(home, ["--session-id", KNOWN_ID], "original")
    fork_id = "22222222-2222-4222-8222-222222222222"
    forked = one_turn(home, ["--resume", KNOWN_ID, "--fork-session", "--session-id", fork_id], "forked")
    assert forked[0]["session_id"] == fork_id
    assert "I remember 1 earlier turn" in str(forked[-1]["result"])


def test_session_id_already_in_use_is_refused(home: Path) -> None:
    one_turn(home, ["--session-id", KNOWN_ID], "first")
    completed = run_once([*BASE_FLAGS, "--session-id", KNOWN_ID], home=home)
    assert completed.returncode == 1
    assert completed.stderr == f"Error: Session ID {KNOWN_ID} is already in use.\n".encode()


def test_no_session_persistence_writes_nothing(home: Path) -> None:
    one_turn(home, ["--session-id", KNOWN_ID, "--no-session-persistence"], "ephemeral")
    assert not (home / "standin" / "sessions" / f"{KNOWN_ID}.jsonl").exists()


def test_resume_of_an_unknown_id_writes_a_result_and_exits_1(home: Path) -> None:
    unknown = "00000000-0000-4000-8000-000000000000"
    completed = run_once([*BASE_FLAGS, "--resume", unknown], home=home)
    assert completed.returncode == 1
    assert completed.stderr == f"No conversation found with session ID: {unknown}\n".encode()
    lines = completed.stdout.splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert (result["type"], result["subtype"], result["session_id"]) == (
        "result",
        "error_during_execution",
        unknown,
    )
    assert result["errors"] == [f"No conversation found with session ID: {unknown}"]


def mcp_config(extra_env: dict[str, str] | None = None) -> str:
    servers = {
        "tiny": {
            "command": "${STANDIN_TEST_PYTHON:-python3}",
            "args": [str(TINY_SERVER)],
            "env": {"TINY_GREETING": "${STANDIN_TEST_GREETING:-hello-default}", **(extra_env or {})},
        },
        "broken": {"command": "/nonexistent/mcp-binary", "args": []},
    }
    return json.dumps({"mcpServers": servers})


def test_mcp_tool_call_to_a_real_stdio_server(standin: Start) -> None:
    process = standin(
        [*BASE_FLAGS, "--mcp-config", mcp_config(), "--allowedTools", "mcp__tiny__whoami", "mcp__tiny__add"],
        env={"STANDIN_TEST_PYTHON": sys.executable},
    )
    process.say("@standin mcp tiny whoami")
    turn = process.read_turn(timeout=40)
    init = turn[0]
    assert init["mcp_servers"] == [
        {"name": "tiny", "status": "connected", "source": "dynamic"},
        {"name": "broken", "status": "failed", "source": "dynamic"},
    ]
    assert {"mcp__tiny__ping", "mcp__tiny__add", "mcp__tiny__whoami"} <= set(init["tools"])
    tool_use = next(m for m in turn if m["type"] == "assistant")
    assert tool_use["message"]["content"][0]["name"] == "mcp__tiny__whoami"
    tool_result = next(m for m in turn if m["type"] == "user")
    answer = tool_result["tool_use_result"]["structuredContent"]["result"]
    fields = dict(part.split("=", 1) for part in answer.split())
    assert fields["greeting"] == "hello-default"
    assert int(fields["pgid"]) == os.getpgid(process.pid)  # the server shares the stand-in's process group
    assert int(fields["sid"]) == os.getsid(process.pid)
    assert turn[-1]["is_error"] is False and turn[-1]["num_turns"] == 2

    process.say('@standin mcp tiny add {"left": 2, "right": 3}')
    added = next(m for m in process.read_turn() if m["type"] == "user")
    assert added["message"]["content"][0]["content"] == '{"result":5}'

    process.say(
        "@standin mcp tiny ping"
    )  # not in --allowedTools: denied without a prompt, as in default mode
    denied = next(m for m in process.read_turn() if m["type"] == "user")["message"]["content"][0]
    assert denied["is_error"] is True
    assert (
        denied["content"]
        == "Claude requested permissions to use mcp__tiny__ping, but you haven't granted it yet."
    )

    process.send({"type": "control_request", "request_id": "s1", "request": {"subtype": "mcp_status"}})
    status = process.read_until(lambda m: m.get("type") == "control_response")[-1]["response"]["response"]
    by_name = {entry["name"]: entry for entry in status["mcpServers"]}
    assert by_name["tiny"]["serverInfo"] == {"name": "tiny", "version": "0.1.0"}
    assert by_name["broken"]["status"] == "failed" and "ENOENT" in by_name["broken"]["error"]
    process.close_stdin()
    assert process.wait() == 0
