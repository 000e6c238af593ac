"""The command-hook bridge (gemini): the hook command reaches the runner's socket; no token, no answer."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys

import pytest

from elynav_nb.agents.hooks import deny, normalise_hooks, rewrite
from elynav_nb.agents.hooks.runner import HookRunner
from elynav_nb.agents.hooks.server import HookCommandServer
from elynav_nb.agents.protocols.gemini.hooks import (
    GEMINI_HOOKS,
    gemini_hook_output,
    gemini_hook_settings,
    hook_call_from_gemini,
)

pytestmark = pytest.mark.anyio

BEFORE = {
    "session_id": "s1",
    "cwd": "/w",
    "hook_event_name": "BeforeTool",
    "tool_name": "run_shell_command",
    "tool_input": {"command": "rm -rf /"},
}


async def _run_command(command: list[str], stdin: dict) -> dict:
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(json.dumps(stdin).encode()), timeout=30)
    assert process.returncode == 0
    return json.loads(out)


def serving(runner: HookRunner):
    """What the per-turn driver gives the hook server for a gemini runner: its hooks in gemini's dialect."""

    async def serve(cli: str, hook_input: dict) -> dict:
        return await runner.serve(GEMINI_HOOKS, hook_input)

    return serve


async def test_a_hook_command_gets_the_runners_decision():
    def policy(call):
        if "rm " in call.tool_input["command"]:
            return deny("not here")
        return rewrite({**call.tool_input, "command": call.tool_input["command"] + " --dry-run"})

    runner = HookRunner(normalise_hooks({"PreToolUse": policy}))
    server = HookCommandServer(serving(runner))
    await server.start()
    try:
        folder = server.folder
        assert folder is not None
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(folder / "token").st_mode) == 0o600
        denied = await _run_command(server.command("gemini"), BEFORE)
        rewritten = await _run_command(
            server.command("gemini"), {**BEFORE, "tool_input": {"command": "make"}}
        )
    finally:
        await server.stop()
    assert denied == {"decision": "deny", "reason": "not here"}
    assert rewritten == {
        "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "make --dry-run"}}
    }
    assert not folder.exists()  # stop() leaves nothing behind


async def test_another_process_without_the_token_is_refused():
    called = []
    runner = HookRunner(normalise_hooks({"PreToolUse": lambda call: called.append(call)}))
    server = HookCommandServer(serving(runner))
    await server.start()
    try:
        assert server.folder is not None
        socket_path = str(server.folder / "socket")
        script = (
            "import json, socket, sys\n"
            "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
            "s.sendall(json.dumps({'token': 'guess', 'cli': 'gemini', 'input': %r}).encode() + b'\\n')\n"
            "print(s.makefile().readline())\n" % (BEFORE,)
        )
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", script, socket_path, stdout=asyncio.subprocess.PIPE
        )
        out, _ = await asyncio.wait_for(process.communicate(), timeout=30)
    finally:
        await server.stop()
    answer = json.loads(out)
    assert answer["decision"] == "deny" and "token" in answer["reason"]
    assert called == []  # the callback never saw it


async def test_the_hook_command_fails_closed_when_the_runner_is_gone(tmp_path):
    server = HookCommandServer(serving(HookRunner(normalise_hooks({}))))
    await server.start()
    command = server.command("gemini")
    await server.stop()
    answer = await _run_command(command, BEFORE)
    assert answer["decision"] == "deny" and "could not be reached" in answer["reason"]


def test_gemini_mapping_is_pure():
    hooks = normalise_hooks({"PreToolUse": lambda call: None, "PostToolUse": lambda call: None})
    settings = gemini_hook_settings(
        hooks, ["python", "hook command.py", "/f", "gemini"], {"BeforeTool": [{"x": 1}]}
    )
    assert settings["BeforeTool"][0] == {"x": 1}  # the user's own hooks stay first
    [ours] = settings["BeforeTool"][1]["hooks"]
    assert ours["type"] == "command" and ours["command"] == "python 'hook command.py' /f gemini"
    assert ours["timeout"] == 10_000 and "AfterTool" in settings
    call = hook_call_from_gemini(
        {**BEFORE, "hook_event_name": "AfterTool", "tool_response": {"llmContent": "x"}}
    )
    assert (
        call.event == "PostToolUse" and call.tool_response == {"llmContent": "x"} and call.tool_use_id == ""
    )
    assert gemini_hook_output("PreToolUse", None) == {}
    assert gemini_hook_output("PostToolUse", deny("no")) == {"decision": "deny", "reason": "no"}


async def _raw_exchange(server: HookCommandServer, data: bytes, *, then_wait: bool = False) -> dict:
    """Send ``data`` on the hook socket as a hostile local process would; the one answer line."""
    assert server.folder is not None
    reader, writer = await asyncio.open_unix_connection(str(server.folder / "socket"), limit=2**24)
    try:
        writer.write(data)
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), timeout=15)
    finally:
        writer.close()
    return json.loads(line)


@pytest.mark.parametrize(
    "data",
    [
        b"[" * 200_000 + b"]" * 200_000 + b"\n",  # deep JSON: RecursionError, once a dropped connection
        b'{"token": ' + b"[" * 100_000 + b"\n",
        b"\xff\xfe not text\n",
    ],
    ids=["deep-array", "deep-token", "not-utf8"],
)
async def test_a_request_that_is_not_json_text_gets_a_typed_deny(data):
    server = HookCommandServer(serving(HookRunner(normalise_hooks({"PreToolUse": lambda call: None}))))
    await server.start()
    try:
        answer = await _raw_exchange(server, data)
    finally:
        await server.stop()
    assert answer["decision"] == "deny" and "PROTOCOL_ERROR" in answer["reason"]


@pytest.mark.parametrize("token", ["é" * 64, "\ud800", "x"])
async def test_a_token_that_is_not_ascii_is_refused_not_a_type_error(token):
    server = HookCommandServer(serving(HookRunner(normalise_hooks({"PreToolUse": lambda call: None}))))
    await server.start()
    try:
        line = json.dumps({"token": token, "cli": "gemini", "input": BEFORE}).encode() + b"\n"
        answer = await _raw_exchange(server, line)
    finally:
        await server.stop()
    assert answer == {
        "decision": "deny",
        "reason": "Denied: the hook request did not carry the runner's token.",
    }


async def test_a_connection_that_never_sends_its_line_is_answered_and_closed(monkeypatch):
    from elynav_nb.agents.hooks import server as hook_server

    monkeypatch.setattr(hook_server, "FIRST_LINE_SECONDS", 0.3)
    server = HookCommandServer(serving(HookRunner(normalise_hooks({"PreToolUse": lambda call: None}))))
    await server.start()
    try:
        answer = await _raw_exchange(server, b'{"token": "no newline ever')
    finally:
        await server.stop()
    assert (
        answer["decision"] == "deny" and "PROTOCOL_ERROR" in answer["reason"] and "0.3 s" in answer["reason"]
    )
