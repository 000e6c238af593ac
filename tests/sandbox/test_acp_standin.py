"""The ACP stand-in on the wire: handshake, sessions, text directives, faults, load after kill -9.

Each test spawns ``python -m elynav_nb.sandbox.acp.acp_standin`` and drives it with the raw JSON-RPC
peer of ``tests/sandbox/acp_peer.py``. Tools (shell, files, MCP) and cancelling are in
``test_acp_standin_tools.py``.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.sandbox.acp_peer import StartPeer, choose, is_update, ready, settle
from tests.sandbox.acp_peer import start_peer as start_peer  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio


async def test_initialize_says_it_is_a_stand_in(start_peer: StartPeer) -> None:
    peer = await start_peer()
    result = await peer.initialize()
    assert result["protocolVersion"] == 1
    assert result["agentInfo"] == {
        "name": "elynav-acp-standin",
        "title": "Elynav ACP stand-in (not a model)",
        "version": "0.1.0",
    }
    assert result["agentCapabilities"] == {
        "loadSession": True,
        "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": False},
    }
    assert result["authMethods"] == []
    await peer.close_stdin()
    assert await peer.wait_exit() == 0
    assert b"not a model" in peer.stderr
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in peer.raw_lines)


async def test_new_session_modes_and_available_commands(start_peer: StartPeer, tmp_path: Path) -> None:
    peer = await start_peer()
    await peer.initialize()
    answer = await peer.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
    modes = answer["result"]["modes"]
    assert modes["currentModeId"] == "default"
    assert [mode["id"] for mode in modes["availableModes"]] == [
        "default",
        "acceptEdits",
        "bypassPermissions",
        "plan",
    ]
    update = await peer.wait_for(is_update("available_commands_update"))
    assert update["params"]["sessionId"] == answer["result"]["sessionId"]
    assert update["params"]["update"]["availableCommands"][0]["name"] == "standin"


async def test_errors_of_the_protocol(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    assert (await peer.request("nope/nothing", {}))["error"]["code"] == -32601
    assert (await peer.request("session/new", {"cwd": "relative", "mcpServers": []}))["error"][
        "code"
    ] == -32602
    assert (await peer.request("session/new", {"cwd": str(tmp_path)}))["error"]["code"] == -32602
    assert (await peer.request("initialize", {}))["error"]["code"] == -32602
    unknown = await peer.request("session/prompt", {"sessionId": "sess_nope", "prompt": []})
    assert unknown["error"]["code"] == -32002
    assert unknown["error"]["data"] == "sess_nope"
    bad_prompt = await peer.request("session/prompt", {"sessionId": session_id, "prompt": "hi"})
    assert bad_prompt["error"]["code"] == -32602
    await peer.send(b"this is not json\n")
    parse_error = await peer.wait_for(lambda message: message.get("error", {}).get("code") == -32700)
    assert parse_error["id"] is None
    await peer.send({"id": 99, "method": "initialize"})  # no "jsonrpc": "2.0"
    invalid = await peer.wait_for(lambda message: message.get("id") == 99)
    assert invalid["error"]["code"] == -32600


async def test_no_directive_echoes_the_first_line_in_several_chunks(
    start_peer: StartPeer, tmp_path: Path
) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    answer = await peer.prompt(session_id, "Please summarise the quarterly report for me\nsecond line")
    assert answer["result"] == {"stopReason": "end_turn"}
    chunks = peer.updates(session_id, "agent_message_chunk")
    assert len(chunks) > 1
    assert peer.said(session_id) == "Stand-in reply to: Please summarise the quarterly report for me"


async def test_say_think_plan_json_delay(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    text = (
        "hello\n@standin think weighing the options\n@standin plan\n@standin delay 0.01\n"
        '@standin say first answer\n@standin json {"a": [1, 2]}'
    )
    answer = await peer.prompt(session_id, text)
    assert answer["result"]["stopReason"] == "end_turn"
    assert peer.said(session_id, "agent_thought_chunk") == "weighing the options"
    assert peer.said(session_id) == 'first answer{"a": [1, 2]}'
    (plan,) = peer.updates(session_id, "plan")
    assert [entry["status"] for entry in plan["entries"]] == ["completed", "in_progress"]
    assert {entry["priority"] for entry in plan["entries"]} <= {"high", "medium", "low"}


async def test_unknown_directive_is_said_and_the_turn_goes_on(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    answer = await peer.prompt(session_id, "@standin levitate\n@standin say still here")
    assert answer["result"]["stopReason"] == "end_turn"
    assert "unknown directive 'levitate'" in peer.said(session_id)
    assert peer.said(session_id).endswith("still here")


async def test_stop_and_error(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    stopped = await peer.prompt(
        session_id, "@standin say partial\n@standin stop max_tokens\n@standin say never"
    )
    assert stopped["result"] == {"stopReason": "max_tokens"}
    assert "never" not in peer.said(session_id)
    failed = await peer.prompt(session_id, "@standin say before\n@standin error the model fell over")
    assert failed["error"] == {"code": -32603, "message": "the model fell over"}
    assert peer.said(session_id).endswith("before")
    again = await peer.prompt(session_id, "@standin stop refusal")
    assert again["result"] == {"stopReason": "refusal"}


async def test_set_mode(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    answer = await peer.request("session/set_mode", {"sessionId": session_id, "modeId": "plan"})
    assert answer["result"] == {}
    assert peer.updates(session_id, "current_mode_update") == [
        {"sessionUpdate": "current_mode_update", "currentModeId": "plan"}
    ]
    wrong = await peer.request("session/set_mode", {"sessionId": session_id, "modeId": "yolo"})
    assert wrong["error"]["code"] == -32602


async def test_malformed_and_unknown_update(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    answer = await peer.prompt(session_id, "@standin malformed\n@standin unknown-update\n@standin say after")
    assert answer["result"]["stopReason"] == "end_turn"
    assert b"this line is not JSON {\n" in peer.raw_lines
    assert {"hello": 1} in peer.messages
    (unknown,) = peer.updates(session_id, "elynav_unknown_kind")
    assert "payload" in unknown
    assert peer.said(session_id) == "after"


async def test_unknown_method_and_permission_for_an_unknown_tool(
    start_peer: StartPeer, tmp_path: Path
) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    peer.handlers["session/request_permission"] = choose("allow")
    answer = await peer.prompt(session_id, "@standin unknown-method\n@standin permission-unknown-tool")
    assert answer["result"]["stopReason"] == "end_turn"
    (unknown,) = [request for request in peer.agent_requests if request["method"] == "elynav/unknown"]
    assert isinstance(unknown["id"], int)
    (permission,) = [r for r in peer.agent_requests if r["method"] == "session/request_permission"]
    announced = {update["toolCallId"] for update in peer.updates(session_id, "tool_call")}
    assert permission["params"]["toolCall"]["toolCallId"] not in announced
    assert peer.said(session_id) == "The client answered -32601The permission outcome was selected allow"


async def test_second_prompt_while_one_runs(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    first = await peer.send_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "@standin hang"}]}
    )
    second = await peer.prompt(session_id, "hello")
    assert second["error"] == {"code": -32000, "message": "a prompt is already running"}
    assert not first.done()
    await peer.notify("session/cancel", {"sessionId": session_id})
    assert (await settle(first))["result"] == {"stopReason": "cancelled"}


async def test_hang_answers_only_when_cancelled(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    pending = await peer.send_request(
        "session/prompt",
        {
            "sessionId": session_id,
            "prompt": [{"type": "text", "text": "@standin say waiting\n@standin hang"}],
        },
    )
    await peer.wait_for(is_update("agent_message_chunk"))
    # set_mode is still answered while the prompt hangs
    assert (await peer.request("session/set_mode", {"sessionId": session_id, "modeId": "plan"}))[
        "result"
    ] == {}
    assert not pending.done()
    await peer.notify("session/cancel", {"sessionId": session_id})
    assert (await settle(pending))["result"] == {"stopReason": "cancelled"}


async def test_crash_exits_3_mid_turn(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    pending = await peer.send_request(
        "session/prompt",
        {
            "sessionId": session_id,
            "prompt": [{"type": "text", "text": "@standin say going down\n@standin crash"}],
        },
    )
    assert await peer.wait_exit() == 3
    assert peer.said(session_id) == "going down"
    assert not pending.done()


async def test_ignore_cancel_keeps_going_and_survives_eof(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    text = "@standin ignore-cancel\n@standin delay 0.05\n@standin say one two three four five six seven"
    pending = await peer.send_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
    )
    await peer.wait_for(is_update("agent_message_chunk"))
    await peer.notify("session/cancel", {"sessionId": session_id})
    assert (await settle(pending))["result"] == {"stopReason": "end_turn"}
    assert peer.said(session_id) == "one two three four five six seven"


async def test_ignore_cancel_with_hang_stops_only_when_killed(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    pending = await peer.send_request(
        "session/prompt",
        {
            "sessionId": session_id,
            "prompt": [{"type": "text", "text": "@standin ignore-cancel\n@standin say x\n@standin hang"}],
        },
    )
    await peer.wait_for(is_update("agent_message_chunk"))
    await peer.notify("session/cancel", {"sessionId": session_id})
    await peer.close_stdin()
    # still alive after cancel and EOF: only a signal ends it
    assert (
        await peer.request("session/set_mode", {"sessionId": session_id, "modeId": "plan"}, wait=False)
    ) == {}
    assert peer.process.returncode is None
    peer.process.send_signal(signal.SIGTERM)
    assert await peer.wait_exit() == 143
    assert not pending.done()


async def test_eof_cancels_and_exits_0(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    await peer.send_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "@standin hang"}]}
    )
    await peer.close_stdin()
    assert await peer.wait_exit() == 0


async def test_sigterm_exits_143(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, _ = await ready(start_peer, tmp_path)
    peer.process.send_signal(signal.SIGTERM)
    assert await peer.wait_exit() == 143


async def test_load_after_kill_9_replays_history(start_peer: StartPeer, tmp_path: Path) -> None:
    home = tmp_path / "shared-home"
    first = await start_peer(home=home)
    await first.initialize()
    session_id = await first.new_session(tmp_path)
    await first.prompt(session_id, "remember the apples")
    await first.prompt(session_id, "@standin say noted twice")
    first.process.kill()  # SIGKILL
    await first.wait_exit()

    second = await start_peer(home=home)
    await second.initialize()
    answer = await second.request(
        "session/load", {"sessionId": session_id, "cwd": str(tmp_path), "mcpServers": []}
    )
    assert answer["result"] is None
    replay = [
        (update["sessionUpdate"], update["content"]["text"])
        for update in second.updates(session_id)
        if update["sessionUpdate"] in ("user_message_chunk", "agent_message_chunk")
    ]
    assert replay == [
        ("user_message_chunk", "remember the apples"),
        ("agent_message_chunk", "Stand-in reply to: remember the apples"),
        ("user_message_chunk", "@standin say noted twice"),
        ("agent_message_chunk", "noted twice"),
    ]
    # the replay comes before the answer
    answer_index = next(
        i for i, m in enumerate(second.messages) if m.get("id") == answer["id"] and "result" in m
    )
    last_replay = max(i for i, m in enumerate(second.messages) if is_update("agent_message_chunk")(m))
    assert last_replay < answer_index
    assert (await second.prompt(session_id, "and now?"))["result"]["stopReason"] == "end_turn"
    missing = await second.request(
        "session/load", {"sessionId": "sess_missing", "cwd": str(tmp_path), "mcpServers": []}
    )
    assert missing["error"]["code"] == -32002
    assert missing["error"]["data"] == "sess_missing"


async def test_fault_no_initialize(start_peer: StartPeer) -> None:
    peer = await start_peer({"ELYNAV_ACP_STANDIN_FAULT": "no-initialize"})
    pending = await peer.send_request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    other = await peer.request("nope", {})  # it still reads: other requests are answered
    assert other["error"]["code"] == -32601
    assert not pending.done()


async def test_fault_no_load_session(start_peer: StartPeer, tmp_path: Path) -> None:
    peer = await start_peer({"ELYNAV_ACP_STANDIN_FAULT": "no-load-session"})
    result = await peer.initialize()
    assert result["agentCapabilities"]["loadSession"] is False
    answer = await peer.request(
        "session/load", {"sessionId": "sess_x", "cwd": str(tmp_path), "mcpServers": []}
    )
    assert answer["error"]["code"] == -32601


async def test_fault_exit_at_start(start_peer: StartPeer) -> None:
    peer = await start_peer({"ELYNAV_ACP_STANDIN_FAULT": "exit-at-start"})
    assert await peer.wait_exit() == 2
    await peer.kill()
    assert b"exit-at-start" in peer.stderr
    assert peer.raw_lines == []
