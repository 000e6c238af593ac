"""Real claude, codex and gemini binaries against the fake model API: what each delivers, and what we add.

Where it sits: the real-binary rows of ``runner_throughput.py`` (``--real-clis``); runnable alone too.
The fake model API (``elynav_nb.sandbox.model_api.fake_model_api``) runs in a child process of its own (``--serve``),
so its work is never counted as ours; it answers the prompt ``flood N`` with N text chunks, as fast as
it can write them. codex and gemini come from ``tests/real_cli/node_modules`` (run the real-CLI tests
once, or ``npm ci`` there); claude from ``ELYNAV_CLAUDE_BIN``, PATH or the claude-agent-sdk wheel.

Per CLI and per run, alternating, on the same prompt:
  alone  the CLI with the very command line and config home our runner uses, its stdout read by a
         trivial reader (big ``read`` calls, newlines counted, no parsing): the floor the CLI sets
         (claude: one stream-json user line written, read up to the ``result`` line; codex app-server:
         ``initialize``, ``initialized``, ``thread/start`` written at once, ``turn/start`` once the
         thread's id is read, read up to ``turn/completed``; codex exec and gemini: one process, read
         to its exit)
  ours   ``AgentRunner(definition, workspace, cli=..., executable=...)``, ``turn = runner.send(prompt)``,
         every event of ``async for event in turn`` counted, then ``await turn``

Times run from the spawn (alone) or ``send()`` (ours; claude's runner spawns inside it) to: the first
line / event, the last line / event, and the end (alone: the terminal line read, ``result`` or
``turn.completed``; ours: the ``TurnResult`` in hand). "tail" = end - last: what a turn costs after its
last event. "exit" (alone, codex and gemini): the process gone; ours does not wait for it (the
terminal line settles the turn, the process is reaped in the background).

Run:  python benchmarks/real_cli_turns.py [--chunks 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Self

REPOSITORY = Path(__file__).resolve().parents[1]
PINNED_BIN = REPOSITORY / "tests" / "real_cli" / "node_modules" / ".bin"
MODELS = {"claude": None, "codex": "gpt-5.5", "gemini": "gemini-2.5-flash"}
CLIS = (
    "claude",
    "codex",
    "codex-exec",
    "gemini",
)  # codex: app-server (the default mode), codex-exec: per turn
SHORT_CHUNKS = 3
TERMINAL_MARKERS = {
    "claude": b'"type":"result"',
    "codex": b'"method":"turn/completed"',
    "codex-exec": b'"type":"turn.completed"',
    "gemini": b'"type":"result"',
}
PERSISTENT = ("claude", "codex")  # one process that lives on after the turn


# -- the fake model API, in a process of its own ------------------------------------------------------------


def serve() -> None:
    """``--serve``: the fake API; answers ``flood N`` with N chunks; prints its URL; ends when stdin closes."""
    from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
    from elynav_nb.sandbox.model_api.fake_model_script import Reply

    def choose(request: Any) -> Any:
        words = request.last_user_text.split()
        count = int(words[-1]) if len(words) >= 2 and words[-2] == "flood" else SHORT_CHUNKS
        return Reply(text=tuple(f"w{index} " for index in range(count)))

    with FakeModelApi(chooser=choose) as api:
        print(json.dumps(api.cli_environment()), flush=True)
        sys.stdin.read()


class FakeApiProcess:
    """The ``--serve`` child: ``environment`` points the CLIs at it."""

    def __enter__(self) -> Self:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.environment: dict[str, str] = json.loads(self.process.stdout.readline())
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


# -- finding the binaries ------------------------------------------------------------------------------------


def find_binary(cli: str) -> str | None:
    candidates = [os.environ.get(f"ELYNAV_{cli.upper()}_BIN"), shutil.which(cli), str(PINNED_BIN / cli)]
    if cli == "claude":
        try:
            import claude_agent_sdk

            candidates.append(str(Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"))
        except ImportError:
            pass
    return next((path for path in candidates if path and os.access(path, os.X_OK)), None)


# -- one measurement -----------------------------------------------------------------------------------------


def cpu_seconds() -> float:
    """CPU time of this process (user + sys): ours or the trivial reader, never the CLI's or the server's."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def make_runner(cli: str, binary: str, workspace: Path, environment: dict[str, str]) -> Any:
    from elynav_nb.agents import AgentDefinition, AgentRunner

    name, _, mode = cli.partition("-")
    definition = AgentDefinition(name="bench", description="A benchmark agent.", prompt="Answer as told.")
    return AgentRunner(
        definition,
        workspace,
        cli=name,
        cli_mode=mode or None,
        executable=binary,
        environment=environment,
        model=MODELS[name],
    )


def _rpc(request_id: str, method: str, params: dict[str, Any]) -> bytes:
    return (json.dumps({"id": request_id, "method": method, "params": params}) + "\n").encode()


async def measure_ours(
    cli: str, binary: str, prompt: str, workspace: Path, environment: dict[str, str]
) -> dict[str, Any]:
    runner = make_runner(cli, binary, workspace, environment)
    if cli not in PERSISTENT:
        await (
            runner.start()
        )  # writes the config home; a persistent CLI's start (the spawn) stays in the timing
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    first = last = 0.0
    events = 0
    turn = runner.send(prompt)
    async for _ in turn:
        last = time.perf_counter()
        first = first or last
        events += 1
    result = await turn
    ended = time.perf_counter()
    cpu = cpu_seconds() - cpu_before
    await runner.stop()
    if result.outcome != "completed":
        raise SystemExit(f"ours on {cli}: {result.outcome} {result.error}")
    return {
        "events": events,
        "first": first - started,
        "last": last - started,
        "end": ended - started,
        "cpu": cpu,
    }


async def measure_alone(
    cli: str, binary: str, prompt: str, workspace: Path, environment: dict[str, str]
) -> dict[str, Any]:
    """The same command line and environment as the runner's, read by a trivial reader."""
    runner = make_runner(cli, binary, workspace, environment)
    if cli == "claude":
        from elynav_nb.agents.protocols.claude.launch import (
            ClaudeLaunch,
            build_child_environment,
            build_claude_argv,
        )

        argv = build_claude_argv((binary,), ClaudeLaunch(model=MODELS[cli]))
        child_environment = build_child_environment(os.environ, environment)
        stdin_line = (
            json.dumps(
                {
                    "type": "user",
                    "session_id": "",
                    "message": {"role": "user", "content": prompt},
                    "parent_tool_use_id": None,
                }
            )
            + "\n"
        ).encode()
    elif cli == "codex":  # app-server: the runner's config home, command line and environment
        from elynav_nb.agents.protocols.codex.launch import build_codex_app_server

        await runner.start()
        await runner.stop()
        adapter = runner._driver.adapter
        command = build_codex_app_server(
            runner.cli.argv,
            adapter.plan,
            parent_environment=adapter.settings.parent_environment,
            environment=adapter.settings.environment_overrides,
        )
        argv, child_environment = list(command.argv), dict(command.environment)
        stdin_line = (
            _rpc("b1", "initialize", {"clientInfo": {"name": "bench", "version": "0"}})
            + b'{"method":"initialized"}\n'
            + _rpc("b2", "thread/start", {"cwd": str(workspace), "approvalPolicy": "never"})
        )
    else:
        await runner.start()
        command = runner._driver.adapter.turn_command(
            prompt, conversation_id=runner.session_id, resuming=False
        )
        argv, child_environment, stdin_line = list(command.argv), dict(command.environment), b""
    cpu_before = cpu_seconds()
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=workspace,
        env=child_environment,
        stdin=asyncio.subprocess.PIPE if stdin_line else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    assert process.stdout is not None
    if stdin_line:
        assert process.stdin is not None
        process.stdin.write(stdin_line)
        await process.stdin.drain()
    first = last = terminal = 0.0
    lines = 0
    carry = b""
    waiting_for_thread = cli == "codex"
    while chunk := await process.stdout.read(1 << 20):
        last = time.perf_counter()
        if waiting_for_thread:  # the handshake's answers are not the turn's output
            carry += chunk
            if b'"id":"b2"' not in carry:
                continue
            answer = next(line for line in carry.split(b"\n") if b'"id":"b2"' in line)
            thread_id = json.loads(answer)["result"]["thread"]["id"]
            assert process.stdin is not None
            process.stdin.write(
                _rpc("b3", "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": prompt}]})
            )
            await process.stdin.drain()
            waiting_for_thread, carry = False, b""
            continue
        first = first or last
        lines += chunk.count(b"\n")
        if not terminal and TERMINAL_MARKERS[cli] in carry + chunk:
            terminal = last
            if stdin_line:
                break  # claude's process lives on for the next turn
        carry = chunk[-40:]
    cpu = cpu_seconds() - cpu_before
    if process.stdin is not None:
        process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 30)
    except TimeoutError:
        process.kill()
        await process.wait()
    exited = time.perf_counter()
    await runner.stop()
    if not terminal:
        raise SystemExit(f"{cli} alone: no terminal line")
    return {
        "events": lines,
        "first": first - started,
        "last": last - started,
        "end": terminal - started,
        "exit": exited - started,
        "cpu": cpu,
    }


# -- orchestration -------------------------------------------------------------------------------------------


async def measure_cli(
    cli: str, binary: str, chunks: int, repeat: int, environment: dict[str, str]
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {
        "flood": {"alone": [], "ours": []},
        "short": {"alone": [], "ours": []},
    }
    for repetition in range(repeat):
        for shape, prompt in (("flood", f"flood {chunks}"), ("short", "say hello")):
            for client in ("alone", "ours") if repetition % 2 == 0 else ("ours", "alone"):
                with tempfile.TemporaryDirectory(prefix=f"elynav-bench-{cli}-") as scratch:
                    workspace = Path(scratch) / "workspace"
                    workspace.mkdir()
                    home = Path(scratch) / "home"
                    home.mkdir()
                    os.environ["ELYNAV_CLI_HOMES"] = str(Path(scratch) / "cli-homes")
                    child_environment = {**environment, "HOME": str(home), "TMPDIR": scratch}
                    measure = measure_alone if client == "alone" else measure_ours
                    runs[shape][client].append(
                        await measure(cli, binary, prompt, workspace, child_environment)
                    )
    return runs


def median(values: list[float]) -> float:
    return statistics.median(values)


def spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


def report(cli: str, version: str, runs: dict[str, dict[str, list[dict[str, Any]]]], chunks: int) -> None:
    flood_alone, flood_ours = runs["flood"]["alone"], runs["flood"]["ours"]
    print(
        f"\n{cli} {version}: one turn of {chunks:,} streamed text chunks (medians over {len(flood_ours)} runs; spread min-max)"
    )
    print(f"  {'client':<6} {'events':>7} {'end s':>7} {'spread':>11} {'events/s':>9}")
    for client, measured in (("alone", flood_alone), ("ours", flood_ours)):
        ends = [run["end"] for run in measured]
        rates = [run["events"] / run["end"] for run in measured]
        print(
            f"  {client:<6} {median([run['events'] for run in measured]):>7,.0f} {median(ends):>7.2f} {spread(ends):>11} {median(rates):>9,.0f}"
        )
    shares = [alone["end"] / ours["end"] for alone, ours in zip(flood_alone, flood_ours, strict=True)]
    print(f"  our share of the floor (alone end / ours end): {median(shares):.2f} (runs {spread(shares)})")
    for client, measured in (("alone", flood_alone), ("ours", flood_ours)):
        cpu = [run["cpu"] * 1000 for run in measured]
        print(
            f"  {client:<6} CPU of this process: {median(cpu):.0f} ms ({min(cpu):.0f}-{max(cpu):.0f}) for the turn"
        )
    short_alone, short_ours = runs["short"]["alone"], runs["short"]["ours"]
    print(
        f"  latency of a {SHORT_CHUNKS}-chunk turn, seconds: first event / last event / end / tail (end - last)"
    )
    for client, measured in (("alone", short_alone), ("ours", short_ours)):
        first = [run["first"] for run in measured]
        last = [run["last"] for run in measured]
        end = [run["end"] for run in measured]
        tail = [run["end"] - run["last"] for run in measured]
        exits = [run["exit"] for run in measured if "exit" in run]
        exit_note = f"  exit {median(exits):.3f}" if exits and cli not in PERSISTENT else ""
        print(
            f"  {client:<6} first {median(first):.3f} ({spread(first)})  last {median(last):.3f}  end {median(end):.3f} ({spread(end)})  "
            f"tail {median(tail) * 1000:.2f} ms ({min(tail) * 1000:.2f}-{max(tail) * 1000:.2f}){exit_note}"
        )
    first_overhead = [
        ours["first"] - alone["first"] for alone, ours in zip(short_alone, short_ours, strict=True)
    ]
    print(
        f"  ours - alone, first event: {median(first_overhead) * 1000:+.0f} ms (runs {min(first_overhead) * 1000:+.0f} to {max(first_overhead) * 1000:+.0f})"
    )


def cli_version(cli: str, binary: str) -> str:
    from elynav_nb.agents.locate import cli_version as version_of
    from elynav_nb.agents.locate import locate_cli

    if cli != "claude":
        return version_of(locate_cli(binary, cli=cli.partition("-")[0]))  # type: ignore[arg-type]
    completed = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60, check=False)
    return completed.stdout.split()[0] if completed.stdout else "?"


def run(chunks: int, repeat: int, clis: tuple[str, ...] = CLIS) -> None:
    with FakeApiProcess() as api:
        for cli in clis:
            binary = find_binary(cli.partition("-")[0])
            if binary is None:
                print(f"\n{cli}: not installed here, row skipped")
                continue
            runs = asyncio.run(measure_cli(cli, binary, chunks, repeat, api.environment))
            report(cli, cli_version(cli, binary), runs, chunks)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--chunks", type=int, default=2000, help="text chunks of the flood turn (default 2000)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per client (default 3)")
    parser.add_argument("--cli", choices=CLIS, action="append", help="only this CLI (repeatable)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    run(args.chunks, args.repeat, tuple(args.cli or CLIS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
