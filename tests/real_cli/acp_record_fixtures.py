"""Record the real ACP agents' wire lines into ``tests/fixtures/acp_real`` (run by hand, not a test).

    PYTHONPATH=. python -m tests.real_cli.acp_record_fixtures [AGENT ...] [--scenario NAME ...]

Each scenario starts a ``FakeModelApi`` with its script, sets the agent up in a scratch folder
(``acp_setups``), drives it with ``acp_recorder.AcpRecorder`` and writes
``<agent>-<version>-<scenario>.jsonl``. A one-line summary per file goes to stdout (stop reason,
``session/update`` kinds, client methods the agent called); the agent's stderr stays in the scratch
folder (``--keep`` prints where). Every wait is bounded and every process tree is killed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elynav_nb.crm.demo_database import create_demo_database
from elynav_nb.crm.workspace import crm_server_entry
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import NativeToolCall, Reply

from .acp_recorder import ALLOW, CLIENT_CAPABILITIES, REJECT, AcpRecorder, PermissionPolicy, Recording
from .acp_setups import SETUPS, VERSIONS, AcpLaunch, package_version

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "acp_real"
PROMPT_TIMEOUT = 90.0
SHELL_COMMAND = "echo hello-from-shell > shell-proof.txt && echo done"

Message = dict[str, Any]


@dataclass
class Scratch:
    """The folders of one recording and the paths hidden when it is saved."""

    root: Path
    workspace: Path
    home: Path

    @classmethod
    def make(cls, root: Path) -> Scratch:
        workspace = root / "workspace"
        home = root / "home"
        workspace.mkdir(parents=True)
        home.mkdir()
        return cls(root, workspace, home)

    def recording(self) -> Recording:
        return Recording(
            replacements={
                str(self.workspace.resolve()): "$WORKSPACE",
                str(self.workspace): "$WORKSPACE",
                str(self.home.resolve()): "$HOME",
                str(self.home): "$HOME",
                str(self.root.resolve()): "$TMP",
                str(self.root): "$TMP",
            }
        )


@dataclass
class Opened:
    recorder: AcpRecorder
    launch: AcpLaunch
    session_id: str | None
    new_answer: Message


def text_prompt(session_id: str | None, text: str) -> Message:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def start_agent(
    agent: str,
    api: FakeModelApi,
    scratch: Scratch,
    recording: Recording,
    permission: PermissionPolicy = REJECT,
) -> tuple[AcpRecorder, AcpLaunch]:
    launch = SETUPS[agent](api, scratch.workspace, scratch.home)
    recorder = AcpRecorder(
        launch.argv,
        environment=launch.environment,
        workspace=scratch.workspace,
        recording=recording,
        stderr_path=scratch.root / "agent-stderr.log",
        permission=permission,
    )
    await recorder.start()
    await recorder.request(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": CLIENT_CAPABILITIES,
            "clientInfo": {"name": "elynav-acp-recorder", "version": "0.1.0"},
        },
        timeout=60,
    )
    if launch.authenticate_method:
        await recorder.request("authenticate", {"methodId": launch.authenticate_method}, timeout=30)
    return recorder, launch


async def open_session(
    agent: str,
    api: FakeModelApi,
    scratch: Scratch,
    recording: Recording,
    permission: PermissionPolicy = REJECT,
    mcp_servers: list[Message] | None = None,
) -> Opened:
    recorder, launch = await start_agent(agent, api, scratch, recording, permission)
    answer = await recorder.request(
        "session/new", {"cwd": str(scratch.workspace), "mcpServers": mcp_servers or []}, timeout=90
    )
    session_id = (answer.get("result") or {}).get("sessionId")
    return Opened(recorder, launch, session_id, answer)


async def settle(recorder: AcpRecorder, seconds: float = 1.0) -> None:
    """Let trailing notifications (usage, commands) arrive before the end."""
    await asyncio.sleep(seconds)


# -- scenarios ------------------------------------------------------------------------------------


async def scenario_text(agent: str, scratch: Scratch, recording: Recording) -> str:
    async with FakeModelApi([Reply.say("Hello", " from the", " fake model.")]) as api:
        opened = await open_session(agent, api, scratch, recording)
        try:
            answer = await opened.recorder.request(
                "session/prompt", text_prompt(opened.session_id, "Say hello."), PROMPT_TIMEOUT
            )
            await settle(opened.recorder)
            return f"prompt answer={json.dumps(answer)[:200]} api_requests={len(api.requests)}"
        finally:
            await opened.recorder.kill()


def shell_reply(agent: str, escalate: bool) -> Reply:
    """The shell call; for codex-acp with ``sandbox_permissions: require_escalated`` (else it never asks)."""
    if agent == "codex-acp" and escalate:
        arguments = {
            "cmd": SHELL_COMMAND,
            "sandbox_permissions": "require_escalated",
            "justification": "write the proof file",
        }
        return Reply(text=("Running it.",), tool_calls=(NativeToolCall("exec_command", arguments),))
    return Reply.shell(SHELL_COMMAND, text="Running it.")


async def _shell(
    agent: str, scratch: Scratch, recording: Recording, permission: PermissionPolicy, escalate: bool = True
) -> str:
    replies = [shell_reply(agent, escalate), Reply.say("Done.")]
    async with FakeModelApi(replies) as api:
        opened = await open_session(agent, api, scratch, recording, permission)
        try:
            answer = await opened.recorder.request(
                "session/prompt", text_prompt(opened.session_id, "Run the shell command."), PROMPT_TIMEOUT
            )
            await settle(opened.recorder)
            proof = (scratch.workspace / "shell-proof.txt").exists()
            return (
                f"prompt answer={json.dumps(answer)[:200]} proof_file={proof} "
                f"client_calls={opened.recorder.client_requests} api_requests={len(api.model_requests())}"
            )
        finally:
            await opened.recorder.kill()


async def scenario_shell_denied(agent: str, scratch: Scratch, recording: Recording) -> str:
    return await _shell(agent, scratch, recording, REJECT)


async def scenario_shell_allowed(agent: str, scratch: Scratch, recording: Recording) -> str:
    return await _shell(agent, scratch, recording, ALLOW)


async def scenario_shell_sandboxed(agent: str, scratch: Scratch, recording: Recording) -> str:
    """codex-acp only: the plain exec_command in the default read-only mode (no permission asked)."""
    return await _shell(agent, scratch, recording, REJECT, escalate=False)


FS_CALLS: dict[str, tuple[str, str]] = {
    "claude-agent-acp": ("Write", "Read"),
    "gemini": ("write_file", "read_file"),
}


async def scenario_fs(agent: str, scratch: Scratch, recording: Recording) -> str:
    """claude and gemini: the model writes then reads a file (are fs/* client methods used?)."""
    write, read = FS_CALLS[agent]
    target = str(scratch.workspace / "note.txt")
    # It exists already: gemini 0.61.0 checks a file through fs/read_text_file before writing it and
    # fails the write of a new one whatever error the client answers (fs-new-file.jsonl).
    (scratch.workspace / "note.txt").write_text("old content\n")
    replies = [
        Reply(
            tool_calls=(NativeToolCall(write, {"file_path": target, "content": "written by the model\n"}),)
        ),
        Reply(tool_calls=(NativeToolCall(read, {"file_path": target}),)),
        Reply.say("Done."),
    ]
    async with FakeModelApi(replies) as api:
        opened = await open_session(agent, api, scratch, recording, ALLOW)
        try:
            answer = await opened.recorder.request(
                "session/prompt", text_prompt(opened.session_id, "Write then read note.txt."), PROMPT_TIMEOUT
            )
            await settle(opened.recorder)
            exists = (scratch.workspace / "note.txt").exists()
            return f"prompt answer={json.dumps(answer)[:200]} file={exists} client_calls={opened.recorder.client_requests}"
        finally:
            await opened.recorder.kill()


async def scenario_mcp(agent: str, scratch: Scratch, recording: Recording) -> str:
    database = scratch.root / "crm.sqlite"
    create_demo_database(database, accounts=20)
    entry = crm_server_entry(database)
    server = {"name": "crm", "command": entry["command"], "args": entry["args"], "env": []}
    replies = [Reply.mcp("crm", "search_accounts", {"query": "Girard"}), Reply.say("Found it.")]
    async with FakeModelApi(replies) as api:
        opened = await open_session(agent, api, scratch, recording, ALLOW, mcp_servers=[server])
        try:
            answer = await opened.recorder.request(
                "session/prompt", text_prompt(opened.session_id, "Search the CRM for Girard."), PROMPT_TIMEOUT
            )
            await settle(opened.recorder)
            tools = [request.tool_names for request in api.model_requests()][:1]
            return f"prompt answer={json.dumps(answer)[:200]} tools_offered={tools}"
        finally:
            await opened.recorder.kill()


async def _wait_for_chunk(recording: Recording, timeout: float) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if any(update.get("sessionUpdate") == "agent_message_chunk" for update in recording.updates()):
            return True
        await asyncio.sleep(0.05)
    return False


async def scenario_cancel(agent: str, scratch: Scratch, recording: Recording) -> str:
    slow = Reply.slow(*[f"chunk {index} " for index in range(12)], chunk_delay=1.0)
    async with FakeModelApi([slow, Reply.say("After cancel.")]) as api:
        opened = await open_session(agent, api, scratch, recording)
        try:
            pending = opened.recorder.send_request(
                "session/prompt", text_prompt(opened.session_id, "Tell a long story.")
            )
            streamed = await _wait_for_chunk(recording, 30)
            # A second prompt while the first runs: allowed, queued or refused?
            overlapping = opened.recorder.send_request(
                "session/prompt", text_prompt(opened.session_id, "And another one.")
            )
            await asyncio.sleep(0.5)
            await opened.recorder.notify("session/cancel", {"sessionId": opened.session_id})
            answer = await opened.recorder.wait(pending, 60)
            second = await opened.recorder.wait(overlapping, 60)
            await settle(opened.recorder)
            return (
                f"streamed_before_cancel={streamed} first={json.dumps(answer)[:200]} "
                f"overlapping={json.dumps(second)[:200]}"
            )
        finally:
            await opened.recorder.kill()


async def _failing(agent: str, scratch: Scratch, recording: Recording, failing: Reply) -> str:
    async with FakeModelApi([failing, Reply.say("Recovered.")]) as api:
        opened = await open_session(agent, api, scratch, recording)
        try:
            first = await opened.recorder.request(
                "session/prompt", text_prompt(opened.session_id, "Say something."), PROMPT_TIMEOUT
            )
            second = await opened.recorder.request(
                "session/prompt", text_prompt(opened.session_id, "Try again."), PROMPT_TIMEOUT
            )
            await settle(opened.recorder)
            return (
                f"first={json.dumps(first)[:300]} second={json.dumps(second)[:200]} "
                f"api_requests={len(api.model_requests())}"
            )
        finally:
            await opened.recorder.kill()


async def scenario_api_error(agent: str, scratch: Scratch, recording: Recording) -> str:
    return await _failing(agent, scratch, recording, Reply.http_error(400, "fake bad request"))


async def scenario_cut_stream(agent: str, scratch: Scratch, recording: Recording) -> str:
    return await _failing(
        agent, scratch, recording, Reply.cut("Partial", " answer", " never ends.", after_frames=2)
    )


async def scenario_load(agent: str, scratch: Scratch, recording: Recording) -> str:
    async with FakeModelApi([Reply.say("First answer."), Reply.say("Second answer.")]) as api:
        opened = await open_session(agent, api, scratch, recording)
        try:
            await opened.recorder.request(
                "session/prompt", text_prompt(opened.session_id, "Remember the word ananas."), PROMPT_TIMEOUT
            )
            await settle(opened.recorder, 2.0)
        finally:
            await opened.recorder.kill()
        before = len(api.model_requests())
        recorder, _ = await start_agent(agent, api, scratch, recording)
        try:
            loaded = await recorder.request(
                "session/load",
                {"sessionId": opened.session_id, "cwd": str(scratch.workspace), "mcpServers": []},
                timeout=60,
            )
            after = await recorder.request(
                "session/prompt", text_prompt(opened.session_id, "Which word?"), PROMPT_TIMEOUT
            )
            await settle(recorder)
            later = api.model_requests()[before:]
            remembered = bool(later) and "ananas" in json.dumps(later[-1].body)
            return (
                f"load={json.dumps(loaded)[:300]} prompt_after={json.dumps(after)[:200]} "
                f"requests_after_load={len(later)} history_sent_with_ananas={remembered}"
            )
        finally:
            await recorder.kill()


SCENARIOS: dict[str, Callable[[str, Scratch, Recording], Awaitable[str]]] = {
    "text": scenario_text,
    "shell-denied": scenario_shell_denied,
    "shell-allowed": scenario_shell_allowed,
    "shell-sandboxed": scenario_shell_sandboxed,
    "mcp": scenario_mcp,
    "fs": scenario_fs,
    "cancel": scenario_cancel,
    "api-error": scenario_api_error,
    "cut-stream": scenario_cut_stream,
    "load": scenario_load,
}


def summarize(recording: Recording) -> str:
    kinds: list[str] = []
    for update in recording.updates():
        kind = str(update.get("sessionUpdate"))
        if kind not in kinds:
            kinds.append(kind)
    requests = sorted({str(m.get("method")) for m in recording.incoming() if "method" in m and "id" in m})
    return f"updates={kinds} agent_requests={requests}"


async def record(agent: str, scenario: str, keep: bool) -> None:
    version = package_version(VERSIONS[agent])
    root = Path(tempfile.mkdtemp(prefix=f"acp-{agent}-{scenario}-"))
    scratch = Scratch.make(root)
    recording = scratch.recording()
    try:
        outcome = await asyncio.wait_for(SCENARIOS[scenario](agent, scratch, recording), timeout=300)
    except (TimeoutError, asyncio.TimeoutError):
        outcome = "SCENARIO TIMEOUT"
    target = FIXTURES / f"{agent}-{version}-{scenario}.jsonl"
    recording.save(target)
    print(f"== {target.name}: {outcome}\n   {summarize(recording)}", flush=True)
    if keep:
        print(f"   scratch kept: {root}", flush=True)
    else:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", nargs="*", default=list(SETUPS))
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS))
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (agent stderr)")
    options = parser.parse_args(argv)
    for agent in options.agents:
        for scenario in options.scenario or list(SCENARIOS):
            if (scenario == "shell-sandboxed" and agent != "codex-acp") or (
                scenario == "fs" and agent not in FS_CALLS
            ):
                continue
            asyncio.run(record(agent, scenario, options.keep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
