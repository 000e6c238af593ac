"""Turn latency of each agent CLI mode, offline against the fake model API: the figures behind phase 2's choice.

Where it sits: a plain benchmark script (not a test). Every CLI talks to ``elynav_nb.sandbox.model_api.fake_model_api``
on loopback, which answers each turn with three text chunks, so the figures are the CLIs' own costs
(start-up, per-turn overhead), not a model's. codex and gemini come from ``tests/real_cli/node_modules``
(run the real-CLI tests once, or ``npm ci`` there); claude from ``ELYNAV_CLAUDE_BIN`` or PATH.

Rows (each runs ``--turns`` turns of one conversation, after one warm-up run of the whole row):
  claude stream-json   today's ``AgentRunner`` (one persistent process): start = ``runner.start()``
  codex exec --json    one process per turn (``resume <thread_id>`` after the first), the phase-1 builder
  codex app-server     one persistent JSON-RPC process: start = spawn + ``initialize`` + ``thread/start``
  codex AgentRunner    ``AgentRunner(cli="codex")`` (app-server, its default mode) and
                       ``cli_mode="exec"``: the protocol rows above through our runner
  gemini -p stream     one process per turn (``--resume <id>`` after the first), the phase-1 builder
  gemini --acp         one persistent ACP process: start = spawn + ``initialize`` + ``session/new``

Columns: "start" is paid once per conversation; "turn" is what each turn costs (per-turn modes: spawn to
exit, the process start included); "first text" runs from sending the prompt (per-turn: from the spawn)
to the first text event; "vs claude" is the turn median over claude's. Medians over all turns of all
repetitions; the spread is the min-max of the per-repetition medians.

ACP rows (``--rows acp``, or ``acp-claude`` / ``acp-codex`` / ``acp-gemini``): the three real ACP agents of
``tests/real_cli`` (claude-agent-acp, codex-acp, ``gemini --acp``), set up by ``tests/real_cli/acp_setups.py``,
against a fake model API in a child process of its own (``real_cli_turns.py --serve``: its work is not
in this process; ``flood N`` is answered with N text chunks, anything else with 3). Per agent and per
repetition, in alternating order, one conversation each through:
  minimal  a raw JSON-RPC client over stdio (``initialize``, ``session/new``, ``session/prompt``; each line
           ``json.loads``-ed, the prompt's answer ends the turn; an agent request gets -32601): the floor
  ours     ``AgentRunner(None, workspace, cli="acp", executable=argv, environment=...)``, every event of
           ``async for event in turn`` counted, then ``await turn``
  native   (claude only) ``AgentRunner(None, workspace, cli="claude", executable=<the same claude binary
           claude-agent-acp runs>)``: claude's own stream-json against claude over ACP, one claude version
Each conversation: ``--turns`` 3-chunk turns, then ``--turns`` turns of ``--chunks`` chunks (default 200).
"share of the floor" = minimal turn median / ours turn median (1.0: we add nothing; below 1: we cost);
"events/s" = events (ours: runner events; minimal: lines read) of a flood turn / its time.

Run:  python benchmarks/cli_modes.py [--turns 5] [--repeat 3] [--rows modes|acp|ROW ...] [--chunks 200]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from elynav_nb.agents import AgentRunner
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.events import TextDelta
from elynav_nb.agents.protocols.codex.exec_codec import CodexEventDecoder
from elynav_nb.agents.protocols.codex.launch import build_codex_turn, plan_codex_runner
from elynav_nb.agents.protocols.gemini.codec import GeminiEventDecoder
from elynav_nb.agents.protocols.gemini.launch import build_gemini_turn, plan_gemini_runner
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply

REPOSITORY = Path(__file__).resolve().parents[1]
BIN = REPOSITORY / "tests" / "real_cli" / "node_modules" / ".bin"
REPLY = Reply.say("Hello ", "from ", "fake.")
PROMPT = "say hello"
# the claude that claude-agent-acp 0.48.0 runs (its claude-agent-sdk's native binary): the native row's too
CLAUDE_OF_ACP = (
    REPOSITORY
    / "tests"
    / "real_cli"
    / "node_modules"
    / "@anthropic-ai"
    / "claude-agent-sdk-linux-x64"
    / "claude"
)
# what our runner's ACP wire advertises (it serves fs and terminal): the minimal client says the same
ACP_CLIENT_CAPABILITIES: dict[str, Any] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
}

Timings = dict[str, list[float]]  # "start", "turn", "first_text"


def _write(files: Any) -> None:
    for config_file in files:
        config_file.path.parent.mkdir(parents=True, exist_ok=True)
        config_file.path.write_text(config_file.text, encoding="utf-8")


async def _per_turn_process(
    argv: tuple[str, ...], env: dict[str, str], cwd: Path, decoder: Any
) -> tuple[float, float]:
    """Spawn one turn's process; (spawn to exit, spawn to first text)."""
    started = time.perf_counter()
    first_text = 0.0
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
        limit=1 << 26,
    )
    assert process.stdout is not None
    while line := await process.stdout.readline():
        for event in decoder.decode_line(line):
            if isinstance(event, TextDelta) and not first_text:
                first_text = time.perf_counter() - started
    await process.wait()
    if decoder.verdict(process.returncode).outcome != "completed":
        raise SystemExit(f"{argv[0]}: a benchmark turn did not complete")
    return time.perf_counter() - started, first_text


async def codex_exec(api: FakeModelApi, scratch: Path, turns: int) -> Timings:
    plan = plan_codex_runner(
        workspace=scratch,
        codex_home=scratch / "codex",
        model="gpt-5.5",
        provider_base_url=api.openai_base_url,
        request_max_retries=0,
        stream_max_retries=0,
    )
    _write(plan.config_files)
    timings: Timings = {"start": [0.0], "turn": [], "first_text": []}
    thread_id = None
    for _ in range(turns):
        api.reply(REPLY)
        command = build_codex_turn(
            (str(BIN / "codex"),),
            plan,
            PROMPT,
            resume_thread_id=thread_id,
            parent_environment=os.environ,
            environment={"HOME": str(scratch), "CODEX_API_KEY": "sk-bench"},
        )
        decoder = CodexEventDecoder()
        turn, first = await _per_turn_process(command.argv, dict(command.environment), command.cwd, decoder)
        thread_id = decoder.thread_id
        timings["turn"].append(turn)
        timings["first_text"].append(first)
    return timings


async def gemini_print(api: FakeModelApi, scratch: Path, turns: int) -> Timings:
    plan = plan_gemini_runner(
        workspace=scratch,
        gemini_home=scratch / "gemini",
        model="gemini-2.5-flash",
        base_url=api.url,
        api_key="bench",
    )
    _write(plan.config_files)
    timings: Timings = {"start": [0.0], "turn": [], "first_text": []}
    session_id = None
    for _ in range(turns):
        api.reply(REPLY)
        command = build_gemini_turn(
            (str(BIN / "gemini"),),
            plan,
            PROMPT,
            resume_session_id=session_id,
            parent_environment=os.environ,
            environment={"HOME": str(scratch), "TMPDIR": str(scratch)},
        )
        decoder = GeminiEventDecoder()
        turn, first = await _per_turn_process(command.argv, dict(command.environment), command.cwd, decoder)
        session_id = decoder.session_id
        timings["turn"].append(turn)
        timings["first_text"].append(first)
    return timings


class _JsonRpc:
    """A minimal JSON-RPC client over a child's stdio (codex app-server, gemini --acp)."""

    def __init__(self, process: asyncio.subprocess.Process, *, jsonrpc_field: bool) -> None:
        self.process = process
        self.jsonrpc_field = jsonrpc_field
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.on_notification: Callable[[dict[str, Any]], None] = lambda message: None
        self.counter = 0
        self.lines = 0  # every line read
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            self.lines += 1
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.pending.pop(message["id"]).set_result(message)
            elif "method" in message and "id" not in message:
                self.on_notification(message)
            elif "method" in message:  # a request of the agent's: this client serves none
                refusal = {"id": message["id"], "error": {"code": -32601, "message": "not served"}}
                if self.jsonrpc_field:
                    refusal = {"jsonrpc": "2.0", **refusal}
                assert self.process.stdin is not None
                self.process.stdin.write((json.dumps(refusal) + "\n").encode())

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        if self.jsonrpc_field:
            message = {"jsonrpc": "2.0", **message}
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        await self.process.stdin.drain()

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.counter += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.counter] = future
        await self.send({"id": self.counter, "method": method, "params": params})
        answer = await asyncio.wait_for(future, 120)
        if "error" in answer:
            raise SystemExit(f"{method}: {answer['error']}")
        return answer["result"]

    async def close(self, grace: float = 10) -> None:
        """Close stdin, give the process ``grace`` seconds, then kill its whole group (its own session).

        The group: a wrapper's child can outlive it holding the pipes (``.bin/codex-acp``'s native binary,
        which does not exit when stdin closes; claude-agent-acp's claude).
        """
        assert self.process.stdin is not None
        self.process.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), grace)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        await self.process.wait()
        self.reader.cancel()


async def _spawn_rpc(argv: list[str], env: dict[str, str], cwd: Path, *, jsonrpc_field: bool) -> _JsonRpc:
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
        limit=1 << 26,
    )
    return _JsonRpc(process, jsonrpc_field=jsonrpc_field)


async def _rpc_turns(
    rpc: _JsonRpc,
    turns: int,
    api: FakeModelApi,
    is_text: Callable[[dict[str, Any]], bool],
    one_turn: Callable[[], Awaitable[None]],
    timings: Timings,
) -> None:
    first_text_at: list[float] = []
    rpc.on_notification = lambda message: (
        first_text_at.append(time.perf_counter()) if is_text(message) else None
    )
    for _ in range(turns):
        api.reply(REPLY)
        first_text_at.clear()
        started = time.perf_counter()
        await one_turn()
        timings["turn"].append(time.perf_counter() - started)
        timings["first_text"].append(first_text_at[0] - started if first_text_at else 0.0)


async def codex_app_server(api: FakeModelApi, scratch: Path, turns: int) -> Timings:
    plan = plan_codex_runner(
        workspace=scratch,
        codex_home=scratch / "codex",
        model="gpt-5.5",
        provider_base_url=api.openai_base_url,
        request_max_retries=0,
        stream_max_retries=0,
    )
    _write(plan.config_files)
    env = {**os.environ, **plan.environment_overrides, "HOME": str(scratch), "CODEX_API_KEY": "sk-bench"}
    started = time.perf_counter()
    rpc = await _spawn_rpc([str(BIN / "codex"), "app-server"], env, scratch, jsonrpc_field=False)
    await rpc.call("initialize", {"clientInfo": {"name": "elynav-bench", "version": "0"}})
    await rpc.send({"method": "initialized"})
    thread = (await rpc.call("thread/start", {"cwd": str(scratch), "approvalPolicy": "never"}))["thread"][
        "id"
    ]
    timings: Timings = {"start": [time.perf_counter() - started], "turn": [], "first_text": []}
    completed = asyncio.Event()
    text_method = "item/agentMessage/delta"

    def is_text(message: dict[str, Any]) -> bool:
        if message["method"] == "turn/completed":
            completed.set()
        return bool(message["method"] == text_method)

    async def one_turn() -> None:
        completed.clear()
        await rpc.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": PROMPT}]})
        await asyncio.wait_for(completed.wait(), 120)

    await _rpc_turns(rpc, turns, api, is_text, one_turn, timings)
    await rpc.close()
    return timings


async def gemini_acp(api: FakeModelApi, scratch: Path, turns: int) -> Timings:
    plan = plan_gemini_runner(
        workspace=scratch,
        gemini_home=scratch / "gemini",
        model="gemini-2.5-flash",
        base_url=api.url,
        api_key="bench",
    )
    _write(plan.config_files)
    env = {**os.environ, **plan.environment_overrides, "HOME": str(scratch), "TMPDIR": str(scratch)}
    started = time.perf_counter()
    argv = [str(BIN / "gemini"), "--acp", "--model", "gemini-2.5-flash"]
    rpc = await _spawn_rpc(argv, env, scratch, jsonrpc_field=True)
    session = await _acp_open(rpc, scratch, {})
    timings: Timings = {"start": [time.perf_counter() - started], "turn": [], "first_text": []}

    async def one_turn() -> None:
        await _acp_prompt(rpc, session, PROMPT)

    await _rpc_turns(rpc, turns, api, _is_acp_text, one_turn, timings)
    await rpc.close()
    return timings


async def _acp_open(rpc: _JsonRpc, cwd: Path, capabilities: dict[str, Any]) -> str:
    """The minimal ACP handshake: ``initialize``, then ``session/new``; the session id."""
    await rpc.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})
    return str((await rpc.call("session/new", {"cwd": str(cwd), "mcpServers": []}))["sessionId"])


async def _acp_prompt(rpc: _JsonRpc, session: str, prompt: str) -> None:
    """One ACP turn: ``session/prompt``, whose answer ends it."""
    answer = await rpc.call(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}
    )
    if answer.get("stopReason") != "end_turn":
        raise SystemExit(f"an ACP benchmark turn ended {answer.get('stopReason')!r}")


def _is_acp_text(message: dict[str, Any]) -> bool:
    update = message.get("params", {}).get("update", {})
    return bool(update.get("sessionUpdate") == "agent_message_chunk")


async def runner_turns(runner: AgentRunner, api: FakeModelApi | None, turns: int, chunks: int = 0) -> Timings:
    """Start ``runner`` (timed), then ``turns`` turns: each from ``send()`` to the ``TurnResult``.

    ``api``: the in-process fake API, given a 3-chunk reply per turn (None: a served one that chooses by
    prompt). ``chunks``: then ``turns`` more turns of ``flood <chunks>`` ("flood", "flood_events").
    """
    started = time.perf_counter()
    await runner.start()
    timings: Timings = {"start": [time.perf_counter() - started], "turn": [], "first_text": []}
    timings.update({"flood": [], "flood_events": []} if chunks else {})
    for prompt, key in [(PROMPT, "turn")] * turns + [(f"flood {chunks}", "flood")] * (turns if chunks else 0):
        if api is not None:
            api.reply(REPLY)
        began = time.perf_counter()
        first = 0.0
        events = 0
        turn = runner.send(prompt)
        async for event in turn:
            events += 1
            if isinstance(event, TextDelta) and not first:
                first = time.perf_counter() - began
        result = await turn
        elapsed = time.perf_counter() - began
        if result.outcome != "completed":
            raise SystemExit(f"{runner.cli_name}: a benchmark turn did not complete ({result.error})")
        timings[key].append(elapsed)
        if key == "turn":
            timings["first_text"].append(first)
        else:
            timings["flood_events"].append(float(events))
    await runner.stop()
    return timings


def find_claude() -> str | None:
    """``ELYNAV_CLAUDE_BIN``, else ``claude`` on PATH, else the claude-agent-sdk wheel's binary."""
    candidates = [os.environ.get("ELYNAV_CLAUDE_BIN"), shutil.which("claude")]
    try:
        import claude_agent_sdk

        candidates.append(str(Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"))
    except ImportError:
        pass
    return next((path for path in candidates if path and os.access(path, os.X_OK)), None)


async def claude_runner(api: FakeModelApi, scratch: Path, turns: int) -> Timings:
    binary = find_claude()
    assert binary is not None
    definition = AgentDefinition(
        name="bench", description="A benchmark agent.", prompt="Answer briefly.", tools=("Read",)
    )
    environment = {
        "HOME": str(scratch),
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-bench",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    runner = AgentRunner(
        definition, scratch, executable=binary, fallback_to_standin=False, environment=environment
    )
    return await runner_turns(runner, api, turns)


def codex_runner(mode: str) -> Callable[[FakeModelApi, Path, int], Awaitable[Timings]]:
    async def row(api: FakeModelApi, scratch: Path, turns: int) -> Timings:
        definition = AgentDefinition(name="bench", description="A benchmark agent.", prompt="Answer briefly.")
        runner = AgentRunner(
            definition,
            scratch,
            cli="codex",
            cli_mode=mode,
            executable=str(BIN / "codex"),
            model="gpt-5.5",
            config_home=scratch / "codex-home",
            environment={**api.cli_environment(), "HOME": str(scratch)},
            cli_config={
                "model_providers.elynav.request_max_retries": 0,
                "model_providers.elynav.stream_max_retries": 0,
            },
        )
        return await runner_turns(runner, api, turns)

    return row


ROWS: list[tuple[str, str, Callable[[FakeModelApi, Path, int], Awaitable[Timings]]]] = [
    ("claude", "claude stream-json (persistent)", claude_runner),
    ("codex-exec", "codex exec --json (per turn)", codex_exec),
    ("codex-app-server", "codex app-server (persistent)", codex_app_server),
    ("codex-runner", "codex AgentRunner, app-server", codex_runner("app-server")),
    ("codex-runner-exec", "codex AgentRunner, exec", codex_runner("exec")),
    ("gemini-p", "gemini -p stream-json (per turn)", gemini_print),
    ("gemini-acp", "gemini --acp (persistent)", gemini_acp),
]


async def run_modes(keys: list[str], turns: int, repeat: int) -> None:
    """The CLI-mode rows (``keys``), in-process fake API, one reply queued per turn."""
    rows = [row for row in ROWS if row[0] in keys]
    needed = {"claude" if key == "claude" else key.split("-")[0] for key, _, _ in rows}
    missing = [name for name in ("codex", "gemini") if name in needed and not (BIN / name).exists()]
    if "claude" in needed and not find_claude():
        missing.append("claude")
    if missing:
        raise SystemExit(
            f"missing CLIs ({', '.join(missing)}): run `npm ci` in tests/real_cli, set ELYNAV_CLAUDE_BIN"
        )
    results: dict[str, list[Timings]] = {name: [] for _, name, _ in rows}
    async with FakeModelApi() as api:
        for repetition in range(repeat + 1):  # the first round warms the disk caches and is dropped
            for _, name, row in rows:
                with tempfile.TemporaryDirectory(prefix="elynav-bench-") as scratch:
                    timings = await row(api, Path(scratch), turns)
                if repetition:
                    results[name].append(timings)
    claude_name = ROWS[0][1]
    claude_turn = (
        statistics.median(t for r in results[claude_name] for t in r["turn"])
        if claude_name in results
        else 0.0
    )
    print(f"{turns} turns x {repeat} repetitions, fake model API answering 3 text chunks per turn")
    print(f"{'mode':34} {'start s':>8} {'turn s (spread)':>22} {'first text s':>13} {'vs claude':>10}")
    for _, name, _ in rows:
        runs = results[name]
        per_run = [statistics.median(r["turn"]) for r in runs]
        turn = statistics.median(t for r in runs for t in r["turn"])
        first = statistics.median(t for r in runs for t in r["first_text"])
        start = statistics.median(r["start"][0] for r in runs)
        spread = f"{turn:.3f} ({min(per_run):.3f}-{max(per_run):.3f})"
        versus = f"{turn / claude_turn:9.1f}x" if claude_turn else f"{'-':>10}"
        print(f"{name:34} {start:8.3f} {spread:>22} {first:13.3f} {versus}")


# -- the ACP rows: three real ACP agents, our runner against a minimal client ------------------------------

ACP_ROWS = {"acp-claude": "claude-agent-acp", "acp-codex": "codex-acp", "acp-gemini": "gemini"}
ACP_CLIENTS = {
    "minimal": "minimal ACP client (floor)",
    "ours": 'AgentRunner(cli="acp")',
    "native": 'AgentRunner(cli="claude"), stream-json',
}


async def acp_minimal(launch: Any, workspace: Path, turns: int, chunks: int) -> Timings:
    """The floor: a raw JSON-RPC client on the agent's stdio, the same turns as ours."""
    started = time.perf_counter()
    rpc = await _spawn_rpc(
        list(launch.argv), {**os.environ, **launch.environment}, workspace, jsonrpc_field=True
    )
    session = await _acp_open(rpc, workspace, ACP_CLIENT_CAPABILITIES)
    timings: Timings = {
        "start": [time.perf_counter() - started],
        "turn": [],
        "first_text": [],
        "flood": [],
        "flood_events": [],
    }
    first_text_at: list[float] = []
    rpc.on_notification = lambda message: (
        first_text_at.append(time.perf_counter()) if _is_acp_text(message) else None
    )
    for prompt, key in [(PROMPT, "turn")] * turns + [(f"flood {chunks}", "flood")] * turns:
        first_text_at.clear()
        lines_before = rpc.lines
        began = time.perf_counter()
        await _acp_prompt(rpc, session, prompt)
        timings[key].append(time.perf_counter() - began)
        if key == "turn":
            timings["first_text"].append(first_text_at[0] - began if first_text_at else 0.0)
        else:
            timings["flood_events"].append(float(rpc.lines - lines_before))
    await rpc.close(grace=2)
    return timings


async def acp_ours(launch: Any, workspace: Path, turns: int, chunks: int) -> Timings:
    runner = AgentRunner(
        None, workspace, cli="acp", executable=list(launch.argv), environment=dict(launch.environment)
    )
    return await runner_turns(runner, None, turns, chunks)


async def claude_native(launch: Any, workspace: Path, turns: int, chunks: int) -> Timings:
    """claude's own stream-json through our runner: the very binary and environment claude-agent-acp gets."""
    runner = AgentRunner(
        None,
        workspace,
        cli="claude",
        executable=str(CLAUDE_OF_ACP),
        environment=dict(launch.environment),
        fallback_to_standin=False,
    )
    return await runner_turns(runner, None, turns, chunks)


ACP_MEASURES: dict[str, Callable[[Any, Path, int, int], Awaitable[Timings]]] = {
    "minimal": acp_minimal,
    "ours": acp_ours,
    "native": claude_native,
}


def _median(runs: list[Timings], key: str) -> float:
    return statistics.median(value for run in runs for value in run[key])


def _ratio_range(floor: list[Timings], ours: list[Timings], key: str) -> str:
    """The ratio of the two medians over all runs, and its range over the repetitions."""
    per_run = [
        statistics.median(a[key]) / statistics.median(b[key]) for a, b in zip(floor, ours, strict=True)
    ]
    return (
        f"{_median(floor, key) / _median(ours, key):.2f} (repetitions {min(per_run):.2f}-{max(per_run):.2f})"
    )


async def run_acp(agents: list[str], turns: int, repeat: int, chunks: int) -> None:
    """The ACP rows: per agent and repetition, each client's conversation, in alternating order."""
    sys.path.insert(0, str(REPOSITORY))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from real_cli_turns import FakeApiProcess

    from tests.real_cli.acp_setups import SETUPS, VERSIONS, claude_acp_setup, package_version

    missing = [agent for agent in agents if not (VERSIONS[agent] / "package.json").exists()]
    if missing or ("claude-agent-acp" in agents and not CLAUDE_OF_ACP.exists()):
        raise SystemExit(
            f"missing ACP agents ({', '.join(missing) or 'claude'}): run `npm ci` in tests/real_cli"
        )
    clients = {
        agent: ["minimal", "ours"] + (["native"] if agent == "claude-agent-acp" else []) for agent in agents
    }
    results: dict[str, dict[str, list[Timings]]] = {
        agent: {client: [] for client in clients[agent]} for agent in agents
    }
    with FakeApiProcess() as served:
        api = cast(
            FakeModelApi,
            SimpleNamespace(
                url=served.environment["ANTHROPIC_BASE_URL"],
                openai_base_url=served.environment["OPENAI_BASE_URL"],
            ),
        )
        for repetition in range(repeat + 1):  # the first round warms the disk caches and is dropped
            for agent in agents:
                order = clients[agent] if repetition % 2 else clients[agent][::-1]
                for client in order:
                    with tempfile.TemporaryDirectory(prefix=f"elynav-bench-{agent}-") as scratch:
                        workspace = Path(scratch) / "workspace"
                        workspace.mkdir()
                        home = Path(scratch) / "home"
                        if agent == "claude-agent-acp":  # the same claude for the native row, said so
                            launch = claude_acp_setup(
                                api, workspace, home, claude_executable=str(CLAUDE_OF_ACP)
                            )
                        else:
                            launch = SETUPS[agent](api, workspace, home)
                        timings = await ACP_MEASURES[client](launch, workspace, turns, chunks)
                    if repetition:
                        results[agent][client].append(timings)
    print(
        f"\nACP agents: {turns} turns of 3 chunks, then {turns} of {chunks} chunks, per conversation; "
        f"{repeat} repetitions; fake model API in its own process"
    )
    header = f"{'agent / client':44} {'start s':>8} {'turn s (spread)':>22} {'first text s':>13}"
    print(f"{header} {'flood turn s (spread)':>22} {'events':>7} {'events/s':>9}")
    for agent in agents:
        print(f"{agent} {package_version(VERSIONS[agent])}")
        for client in clients[agent]:
            runs = results[agent][client]
            turn_runs = [statistics.median(run["turn"]) for run in runs]
            flood_runs = [statistics.median(run["flood"]) for run in runs]
            turn, flood = _median(runs, "turn"), _median(runs, "flood")
            events = _median(runs, "flood_events")
            rate = statistics.median(
                events / elapsed for run in runs for events, elapsed in zip(run["flood_events"], run["flood"])
            )
            print(
                f"  {ACP_CLIENTS[client]:42} {statistics.median(run['start'][0] for run in runs):8.3f} "
                f"{f'{turn:.3f} ({min(turn_runs):.3f}-{max(turn_runs):.3f})':>22} "
                f"{_median(runs, 'first_text'):13.3f} "
                f"{f'{flood:.3f} ({min(flood_runs):.3f}-{max(flood_runs):.3f})':>22} {events:7.0f} {rate:9,.0f}"
            )
        floor, ours = results[agent]["minimal"], results[agent]["ours"]
        print(f"  share of the floor (minimal / ours): 3-chunk turn {_ratio_range(floor, ours, 'turn')}")
        print(f"  {'':36}{chunks}-chunk turn {_ratio_range(floor, ours, 'flood')}")
    if "claude-agent-acp" in agents:
        version = subprocess.run(
            [str(CLAUDE_OF_ACP), "--version"], capture_output=True, text=True, timeout=60, check=False
        ).stdout.split()
        runs = results["claude-agent-acp"]
        print(
            f"claude {version[0] if version else '?'} (one binary): over ACP / native stream-json, both through "
            f"AgentRunner: 3-chunk turn {_ratio_range(runs['ours'], runs['native'], 'turn')}"
        )
        print(f"{'':80}{chunks}-chunk turn {_ratio_range(runs['ours'], runs['native'], 'flood')}")


async def main(turns: int, repeat: int, rows: list[str], chunks: int) -> None:
    modes = [key for key, _, _ in ROWS if key in rows]
    agents = [agent for key, agent in ACP_ROWS.items() if key in rows]
    if modes:
        await run_modes(modes, turns, repeat)
    if agents:
        await run_acp(agents, turns, repeat, chunks)


def _rows(words: list[str] | None) -> list[str]:
    """``--rows``: row keys, ``modes`` (the CLI-mode rows), ``acp`` (the ACP rows); none: all."""
    keys: list[str] = []
    for word in words or ["modes", "acp"]:
        group = {"modes": [key for key, _, _ in ROWS], "acp": list(ACP_ROWS)}.get(word, [word])
        keys.extend(key for key in group if key not in keys)
    return keys


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--rows",
        nargs="+",
        choices=["modes", "acp", *(key for key, _, _ in ROWS), *ACP_ROWS],
        help="only these rows or groups (default: all)",
    )
    parser.add_argument("--chunks", type=int, default=200, help="text chunks of the ACP rows' flood turns")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.turns, arguments.repeat, _rows(arguments.rows), arguments.chunks))
    sys.exit(0)
