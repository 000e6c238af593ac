"""The ACP stand-in's tool calls: shell and files through the client or by itself, permission, MCP, cancel.

Each test spawns the stand-in and drives it with the raw peer of ``tests/sandbox/acp_peer.py``; the
peer serves ``terminal/*`` and ``fs/*`` when a test says the client has them (``initialize`` with
``terminal=True`` / ``fs=True``), else the stand-in does the work itself. MCP calls go to
``tests/sandbox/tiny_mcp_server.py`` over stdio.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.sandbox.acp_peer import AcpPeer, PeerError, StartPeer, choose, is_update, ready, settle
from tests.sandbox.acp_peer import start_peer as start_peer  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio
TINY_SERVER = Path(__file__).resolve().parent / "tiny_mcp_server.py"


def tool_updates(peer: AcpPeer, session_id: str) -> list[dict[str, Any]]:
    return [u for u in peer.updates(session_id) if u["sessionUpdate"] in ("tool_call", "tool_call_update")]


def final_update(peer: AcpPeer, session_id: str) -> dict[str, Any]:
    return peer.updates(session_id, "tool_call_update")[-1]


def update_text(update: dict[str, Any]) -> str:
    return str(update["content"][0]["content"]["text"])


def _named(process: psutil.Process, name: str) -> bool:
    try:
        return process.name() == name
    except psutil.Error:
        return False


def requests_of(peer: AcpPeer, method: str) -> list[dict[str, Any]]:
    return [request for request in peer.agent_requests if request["method"] == method]


# -- shell, run by the stand-in ----------------------------------------------------------------------
async def test_shell_allowed_runs_locally(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    peer.handlers["session/request_permission"] = choose("allow")
    answer = await peer.prompt(session_id, "@standin shell echo hello-from-sh; pwd")
    assert answer["result"]["stopReason"] == "end_turn"
    announced = peer.updates(session_id, "tool_call")[0]
    assert announced["kind"] == "execute"
    assert announced["status"] == "pending"
    assert announced["title"] == "echo hello-from-sh; pwd"
    assert announced["rawInput"] == {"command": "echo hello-from-sh; pwd"}
    (permission,) = requests_of(peer, "session/request_permission")
    assert permission["params"]["toolCall"]["toolCallId"] == announced["toolCallId"]
    assert [option["kind"] for option in permission["params"]["options"]] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    done = final_update(peer, session_id)
    assert done["status"] == "completed"
    assert update_text(done) == f"hello-from-sh\n{tmp_path}\n"
    assert done["rawOutput"]["exitCode"] == 0
    assert peer.said(session_id) == "The command printed: hello-from-sh"
    assert requests_of(peer, "terminal/create") == []


async def test_shell_rejected(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    peer.handlers["session/request_permission"] = choose("reject")
    marker = tmp_path / "ran"
    answer = await peer.prompt(session_id, f"@standin shell touch {marker}")
    assert answer["result"]["stopReason"] == "end_turn"
    done = final_update(peer, session_id)
    assert done["status"] == "failed"
    assert update_text(done) == "denied by the user"
    assert peer.said(session_id) == "The command was denied."
    assert not marker.exists()


async def test_allow_always_is_remembered_for_the_session(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    peer.handlers["session/request_permission"] = choose("allow_always")
    await peer.prompt(session_id, "@standin shell echo one")
    await peer.prompt(session_id, "@standin shell echo two")
    assert len(requests_of(peer, "session/request_permission")) == 1
    assert peer.said(session_id).endswith("The command printed: two")


async def test_bypass_permissions_never_asks(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    await peer.request("session/set_mode", {"sessionId": session_id, "modeId": "bypassPermissions"})
    answer = await peer.prompt(session_id, f"@standin shell echo free\n@standin write {tmp_path}/f.txt body")
    assert answer["result"]["stopReason"] == "end_turn"
    assert requests_of(peer, "session/request_permission") == []
    assert (tmp_path / "f.txt").read_text() == "body"


async def test_cancelled_permission_outcome_ends_the_turn_cancelled(
    start_peer: StartPeer, tmp_path: Path
) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    peer.handlers["session/request_permission"] = choose("cancelled")
    answer = await peer.prompt(session_id, "@standin shell echo no\n@standin say never")
    assert answer["result"] == {"stopReason": "cancelled"}
    assert "never" not in peer.said(session_id)


async def test_permission_error_answer_fails_the_tool(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)  # no permission handler: the peer answers -32601
    answer = await peer.prompt(session_id, "@standin shell echo no")
    assert answer["result"]["stopReason"] == "end_turn"
    done = final_update(peer, session_id)
    assert done["status"] == "failed"
    assert "-32601" in update_text(done)


async def _hold_permission_until_cancel(peer: AcpPeer) -> asyncio.Event:
    asked = asyncio.Event()
    release = asyncio.Event()

    async def answer(params: dict[str, Any]) -> Any:
        asked.set()
        await release.wait()
        return {"outcome": {"outcome": "cancelled"}}

    peer.handlers["session/request_permission"] = answer
    peer.release_permission = release  # type: ignore[attr-defined]
    return asked


async def test_cancel_while_permission_is_pending(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    asked = await _hold_permission_until_cancel(peer)
    pending = await peer.send_request(
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": "@standin shell echo x"}]},
    )
    await asyncio.wait_for(asked.wait(), 20)
    await peer.notify("session/cancel", {"sessionId": session_id})
    assert (await settle(pending))["result"] == {"stopReason": "cancelled"}
    peer.release_permission.set()  # type: ignore[attr-defined]
    # the late answer is ignored; the stand-in still serves the session
    assert (await peer.prompt(session_id, "still there?"))["result"]["stopReason"] == "end_turn"


async def test_cancel_mid_shell_kills_the_command(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    peer.handlers["session/request_permission"] = choose("allow")
    pending = await peer.send_request(
        "session/prompt",
        {
            "sessionId": session_id,
            "prompt": [{"type": "text", "text": "@standin shell sleep 300; echo late"}],
        },
    )
    await peer.wait_for(
        lambda m: is_update("tool_call_update")(m) and m["params"]["update"]["status"] == "in_progress"
    )
    standin = psutil.Process(peer.process.pid)
    children: list[psutil.Process] = []
    for _ in range(200):
        children = standin.children(recursive=True)
        if any(_named(child, "sleep") for child in children):
            break
        await asyncio.sleep(0.05)
    assert children
    await peer.notify("session/cancel", {"sessionId": session_id})
    assert (await settle(pending))["result"] == {"stopReason": "cancelled"}
    gone, alive = psutil.wait_procs(children, timeout=10)
    assert [p for p in alive if p.status() != psutil.STATUS_ZOMBIE] == []
    assert peer.process.returncode is None


# -- shell through the client's terminal -------------------------------------------------------------
def serve_terminal(
    peer: AcpPeer, *, output: str = "client terminal says hi\nmore\n", hang: bool = False
) -> None:
    async def create(params: dict[str, Any]) -> Any:
        return {"terminalId": "term_1"}

    async def wait_for_exit(params: dict[str, Any]) -> Any:
        if hang:
            await asyncio.get_running_loop().create_future()
        return {"exitCode": 0, "signal": None}

    async def show(params: dict[str, Any]) -> Any:
        return {"output": output, "truncated": False, "exitStatus": {"exitCode": 0, "signal": None}}

    async def nothing(params: dict[str, Any]) -> Any:
        return None

    peer.handlers.update(
        {
            "session/request_permission": choose("allow"),
            "terminal/create": create,
            "terminal/wait_for_exit": wait_for_exit,
            "terminal/output": show,
            "terminal/kill": nothing,
            "terminal/release": nothing,
        }
    )


async def test_shell_uses_the_client_terminal_when_offered(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path, terminal=True)
    serve_terminal(peer)
    answer = await peer.prompt(session_id, "@standin shell ls -l")
    assert answer["result"]["stopReason"] == "end_turn"
    (create,) = requests_of(peer, "terminal/create")
    assert create["params"]["command"] == "sh"
    assert create["params"]["args"] == ["-c", "ls -l"]
    assert create["params"]["cwd"] == str(tmp_path)
    assert create["params"]["sessionId"] == session_id
    methods = [r["method"] for r in peer.agent_requests if r["method"].startswith("terminal/")]
    assert methods == ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"]
    assert update_text(final_update(peer, session_id)) == "client terminal says hi\nmore\n"
    assert peer.said(session_id) == "The command printed: client terminal says hi"


async def test_client_terminal_error(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path, terminal=True)
    serve_terminal(peer)

    async def refuse(params: dict[str, Any]) -> Any:
        raise PeerError(-32603, "no terminals today")

    peer.handlers["terminal/create"] = refuse
    answer = await peer.prompt(session_id, "@standin shell ls")
    assert answer["result"]["stopReason"] == "end_turn"
    done = final_update(peer, session_id)
    assert done["status"] == "failed"
    assert update_text(done) == "no terminals today"
    assert peer.said(session_id) == "The terminal failed: no terminals today"


async def test_cancel_mid_client_terminal_kills_and_releases(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path, terminal=True)
    serve_terminal(peer, hang=True)
    pending = await peer.send_request(
        "session/prompt",
        {"sessionId": session_id, "prompt": [{"type": "text", "text": "@standin shell sleep 300"}]},
    )
    await peer.wait_for(lambda m: m.get("method") == "terminal/wait_for_exit")
    await peer.notify("session/cancel", {"sessionId": session_id})
    assert (await settle(pending))["result"] == {"stopReason": "cancelled"}
    methods = [r["method"] for r in peer.agent_requests if r["method"].startswith("terminal/")]
    assert methods[-2:] == ["terminal/kill", "terminal/release"]


# -- files ---------------------------------------------------------------------------------------------
async def test_read_and_write_locally(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    peer.handlers["session/request_permission"] = choose("allow")
    (tmp_path / "notes.txt").write_text("first line\nsecond\n")
    answer = await peer.prompt(session_id, "@standin read notes.txt\n@standin write out/new.txt fresh text")
    assert answer["result"]["stopReason"] == "end_turn"
    read_call, write_call = peer.updates(session_id, "tool_call")
    assert read_call["kind"] == "read"
    assert read_call["locations"] == [{"path": str(tmp_path / "notes.txt")}]
    assert write_call["kind"] == "edit"
    assert (tmp_path / "out" / "new.txt").read_text() == "fresh text"
    assert peer.said(session_id) == "first lineWrote out/new.txt"
    assert len(requests_of(peer, "session/request_permission")) == 1  # the write only


async def test_read_missing_file_fails(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path)
    await peer.prompt(session_id, "@standin read missing.txt")
    assert final_update(peer, session_id)["status"] == "failed"
    assert peer.said(session_id).startswith("The file tool failed: FileNotFoundError")


async def test_files_through_the_client_and_accept_edits(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path, fs=True)
    written: list[dict[str, Any]] = []

    async def read(params: dict[str, Any]) -> Any:
        return {"content": f"client copy of {Path(params['path']).name}\nrest"}

    async def write(params: dict[str, Any]) -> Any:
        written.append(params)
        return None

    peer.handlers.update({"fs/read_text_file": read, "fs/write_text_file": write})
    await peer.request("session/set_mode", {"sessionId": session_id, "modeId": "acceptEdits"})
    answer = await peer.prompt(session_id, "@standin read a.txt\n@standin write b.txt hello")
    assert answer["result"]["stopReason"] == "end_turn"
    assert requests_of(peer, "session/request_permission") == []
    assert written == [{"sessionId": session_id, "path": str(tmp_path / "b.txt"), "content": "hello"}]
    assert not (tmp_path / "b.txt").exists()
    assert peer.said(session_id) == "client copy of a.txtWrote b.txt"


async def test_client_fs_error(start_peer: StartPeer, tmp_path: Path) -> None:
    peer, session_id = await ready(start_peer, tmp_path, fs=True)

    async def refuse(params: dict[str, Any]) -> Any:
        raise PeerError(-32002, "no such file in the editor")

    peer.handlers["fs/read_text_file"] = refuse
    await peer.prompt(session_id, "@standin read a.txt")
    done = final_update(peer, session_id)
    assert done["status"] == "failed"
    assert update_text(done) == "no such file in the editor"
    assert peer.said(session_id) == "The file tool failed: no such file in the editor"


# -- MCP -----------------------------------------------------------------------------------------------
async def test_mcp_tool_over_stdio(start_peer: StartPeer, tmp_path: Path) -> None:
    peer = await start_peer()
    await peer.initialize()
    server = {
        "name": "tiny",
        "command": sys.executable,
        "args": [str(TINY_SERVER)],
        "env": [{"name": "TINY_GREETING", "value": "bonjour"}],
    }
    session_id = await peer.new_session(tmp_path, [server])
    answer = await peer.prompt(
        session_id,
        '@standin mcp tiny add {"left": 2, "right": 40}\n@standin mcp tiny whoami\n@standin mcp nowhere ping',
    )
    assert answer["result"]["stopReason"] == "end_turn"
    calls = peer.updates(session_id, "tool_call")
    assert [call["title"] for call in calls] == ["mcp__tiny__add", "mcp__tiny__whoami", "mcp__nowhere__ping"]
    assert calls[0]["kind"] == "other"
    assert calls[0]["rawInput"] == {"left": 2, "right": 40}
    finals = [u for u in peer.updates(session_id, "tool_call_update") if u["status"] != "in_progress"]
    assert [u["status"] for u in finals] == ["completed", "completed", "failed"]
    assert update_text(finals[0]) == "42"
    assert "greeting=bonjour" in update_text(finals[1])
    said = peer.said(session_id)
    assert said.startswith("The tool answered: 42")
    assert "The tool failed: MCP server nowhere is not configured" in said


async def test_mcp_unknown_tool_is_a_failed_call(start_peer: StartPeer, tmp_path: Path) -> None:
    peer = await start_peer()
    await peer.initialize()
    server = {"name": "tiny", "command": sys.executable, "args": [str(TINY_SERVER)], "env": []}
    session_id = await peer.new_session(tmp_path, [server])
    await peer.prompt(session_id, "@standin mcp tiny no_such_tool {}")
    assert final_update(peer, session_id)["status"] == "failed"
    assert peer.said(session_id).startswith("The tool failed: ")


async def test_bad_mcp_servers_are_invalid_params(start_peer: StartPeer, tmp_path: Path) -> None:
    peer = await start_peer()
    await peer.initialize()
    answer = await peer.request(
        "session/new", {"cwd": str(tmp_path), "mcpServers": [{"name": "x", "command": 3}]}
    )
    assert answer["error"]["code"] == -32602
