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

Run:  python benchmarks/cli_modes.py [--turns 5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from elynav_nb.agents import AgentRunner
from elynav_nb.agents.cli.codex_codec import CodexEventDecoder
from elynav_nb.agents.cli.codex_launch import build_codex_turn, plan_codex_runner
from elynav_nb.agents.cli.gemini_codec import GeminiEventDecoder
from elynav_nb.agents.cli.gemini_launch import build_gemini_turn, plan_gemini_runner
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.events import TextDelta
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply

BIN = Path(__file__).parents[1] / "tests" / "real_cli" / "node_modules" / ".bin"
REPLY = Reply.say("Hello ", "from ", "fake.")
PROMPT = "say hello"

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
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.pending.pop(message["id"]).set_result(message)
            elif "method" in message and "id" not in message:
                self.on_notification(message)

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

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


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
    await rpc.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    session = (await rpc.call("session/new", {"cwd": str(scratch), "mcpServers": []}))["sessionId"]
    timings: Timings = {"start": [time.perf_counter() - started], "turn": [], "first_text": []}

    def is_text(message: dict[str, Any]) -> bool:
        update = message.get("params", {}).get("update", {})
        return bool(update.get("sessionUpdate") == "agent_message_chunk")

    async def one_turn() -> None:
        await rpc.call("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": PROMPT}]})

    await _rpc_turns(rpc, turns, api, is_text, one_turn, timings)
    await rpc.close()
    return timings


async def runner_turns(runner: AgentRunner, api: FakeModelApi, turns: int) -> Timings:
    """Start ``runner`` (timed), then ``turns`` turns: each from ``send()`` to the ``TurnResult``."""
    started = time.perf_counter()
    await runner.start()
    timings: Timings = {"start": [time.perf_counter() - started], "turn": [], "first_text": []}
    for _ in range(turns):
        api.reply(REPLY)
        began = time.perf_counter()
        first = 0.0
        turn = runner.send(PROMPT)
        async for event in turn:
            if isinstance(event, TextDelta) and not first:
                first = time.perf_counter() - began
        if (await turn).outcome != "completed":
            raise SystemExit(f"{runner.cli_name}: a benchmark turn did not complete")
        timings["turn"].append(time.perf_counter() - began)
        timings["first_text"].append(first)
    await runner.stop()
    return timings


async def claude_runner(api: FakeModelApi, scratch: Path, turns: int) -> Timings:
    binary = os.environ.get("ELYNAV_CLAUDE_BIN") or shutil.which("claude")
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


ROWS: list[tuple[str, Callable[[FakeModelApi, Path, int], Awaitable[Timings]]]] = [
    ("claude stream-json (persistent)", claude_runner),
    ("codex exec --json (per turn)", codex_exec),
    ("codex app-server (persistent)", codex_app_server),
    ("codex AgentRunner, app-server", codex_runner("app-server")),
    ("codex AgentRunner, exec", codex_runner("exec")),
    ("gemini -p stream-json (per turn)", gemini_print),
    ("gemini --acp (persistent)", gemini_acp),
]


async def main(turns: int, repeat: int) -> None:
    missing = [name for name in ("codex", "gemini") if not (BIN / name).exists()]
    if missing or not (os.environ.get("ELYNAV_CLAUDE_BIN") or shutil.which("claude")):
        raise SystemExit(
            f"missing CLIs ({', '.join(missing) or 'claude'}): run the real-CLI tests once, set ELYNAV_CLAUDE_BIN"
        )
    results: dict[str, list[Timings]] = {name: [] for name, _ in ROWS}
    async with FakeModelApi() as api:
        for repetition in range(repeat + 1):  # the first round warms the disk caches and is dropped
            for name, row in ROWS:
                with tempfile.TemporaryDirectory(prefix="elynav-bench-") as scratch:
                    timings = await row(api, Path(scratch), turns)
                if repetition:
                    results[name].append(timings)
    claude_turn = statistics.median(t for r in results[ROWS[0][0]] for t in r["turn"])
    print(f"{turns} turns x {repeat} repetitions, fake model API answering 3 text chunks per turn")
    print(f"{'mode':34} {'start s':>8} {'turn s (spread)':>22} {'first text s':>13} {'vs claude':>10}")
    for name, _ in ROWS:
        runs = results[name]
        per_run = [statistics.median(r["turn"]) for r in runs]
        turn = statistics.median(t for r in runs for t in r["turn"])
        first = statistics.median(t for r in runs for t in r["first_text"])
        start = statistics.median(r["start"][0] for r in runs)
        spread = f"{turn:.3f} ({min(per_run):.3f}-{max(per_run):.3f})"
        print(f"{name:34} {start:8.3f} {spread:>22} {first:13.3f} {turn / claude_turn:9.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.turns, arguments.repeat))
    sys.exit(0)
