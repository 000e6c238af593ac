"""Decoding recorded ACP lines: our ``AcpCodec`` against the official Python SDK's schema models.

Where it sits: a plain benchmark script (not a test). Input: every ``in`` line (agent -> client) of
``tests/fixtures/acp_real/*.jsonl``, the real wire of claude-agent-acp 0.48.0, codex-acp 0.16.0 and
``gemini --acp`` 0.61.0 (format: that folder's README). Each pass replays every file, many passes:

  ours  ``AcpCodec.decode_line(line)`` -> our events, a fresh codec per file, the id of each of our
        ``session/prompt`` requests given to it (the ``out`` lines) as the wire does
  sdk   PyPI ``agent-client-protocol`` (``import acp``): ``json.loads(line)`` as its ``NdjsonTransport``
        does, then each message into its typed pydantic model as its ``ClientSideConnection`` would:
        ``session/update`` -> ``SessionNotification``, the agent's requests (permission, fs, terminal) ->
        their ``*Request`` models (its router's ``model_validate(params)``), the answers to our requests ->
        the response model of the method asked (``InitializeResponse``, ``NewSessionResponse``,
        ``LoadSessionResponse``, ``PromptResponse``, ...), an error answer -> ``RequestError``

Both start from the same line bytes. The SDK is not a dependency of the project: install it to run this
(``pip install agent-client-protocol``). Printed: µs per message by kind and overall, the ratio in the
same run; the messages the SDK refuses; import times (``python -X importtime``, fresh processes).

Run:  python benchmarks/acp_codec.py [--passes 200] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from elynav_nb.agents.protocols.acp.codec import AcpCodec

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "acp_real"

# (line, kind) of one file's ``in`` messages, ``kind`` naming the SDK model; a ``None`` line: our prompt id
Replay = list[tuple[bytes | None, str]]


def load_replays() -> list[Replay]:
    """Every recording as the client saw it, with the method of the request each answer answers."""
    replays: list[Replay] = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        asked: dict[Any, str] = {}
        replay: Replay = []
        prompting = False
        for raw in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(raw)
            message = entry["msg"]
            if entry["dir"] == "out":
                if "method" in message and "id" in message:
                    asked[message["id"]] = message["method"]
                    if message["method"] == "session/prompt" and not prompting:
                        replay.append((None, str(message["id"])))  # the wire's prompt_request_id
                        prompting = True
                continue
            line = json.dumps(message).encode()
            if "method" in message:
                kind = message["method"] if "id" in message else f"notification {message['method']}"
            else:
                method = asked.get(message.get("id"), "?")
                kind = f"error of {method}" if "error" in message else f"result of {method}"
                if method == "session/prompt":
                    prompting = False
            replay.append((line, kind))
        replays.append(replay)
    return replays


def ours_pass(replays: list[Replay]) -> int:
    events = 0
    for replay in replays:
        codec = AcpCodec()
        for line, kind in replay:
            if line is None:
                codec.prompt_request_id = kind
                codec.started()
                continue
            events += len(codec.decode_line(line))
    return events


def sdk_models() -> dict[str, Callable[[dict[str, Any]], Any]]:
    """Per message kind, what the SDK's client does with it (the model it validates into)."""
    from acp import schema
    from acp.exceptions import RequestError

    def params_of(model: Any) -> Callable[[dict[str, Any]], Any]:
        return lambda message: model.model_validate(message.get("params"))

    def result_of(model: Any) -> Callable[[dict[str, Any]], Any]:
        return lambda message: model.model_validate(message.get("result"))

    def error(message: dict[str, Any]) -> Any:
        body = message.get("error") or {}
        return RequestError(body.get("code", -32603), body.get("message", "Error"), body.get("data"))

    table: dict[str, Callable[[dict[str, Any]], Any]] = {
        "notification session/update": params_of(schema.SessionNotification),
        "session/request_permission": params_of(schema.RequestPermissionRequest),
        "fs/read_text_file": params_of(schema.ReadTextFileRequest),
        "fs/write_text_file": params_of(schema.WriteTextFileRequest),
        "terminal/create": params_of(schema.CreateTerminalRequest),
        "result of initialize": result_of(schema.InitializeResponse),
        "result of authenticate": result_of(schema.AuthenticateResponse),
        "result of session/new": result_of(schema.NewSessionResponse),
        "result of session/load": result_of(schema.LoadSessionResponse),
        "result of session/prompt": result_of(schema.PromptResponse),
        "result of session/set_mode": result_of(schema.SetSessionModeResponse),
    }
    for method in ("initialize", "session/new", "session/load", "session/prompt", "session/set_mode"):
        table[f"error of {method}"] = error
    return table


def sdk_pass(replays: list[Replay], models: dict[str, Callable[[dict[str, Any]], Any]]) -> int:
    parsed = 0
    for replay in replays:
        for line, kind in replay:
            if line is None:
                continue
            models[kind](json.loads(line))
            parsed += 1
    return parsed


def check_sdk(replays: list[Replay], models: dict[str, Callable[[dict[str, Any]], Any]]) -> list[str]:
    """The messages the SDK's models refuse (a ``ValidationError``: its client would answer or drop them)."""
    refused: list[str] = []
    for replay in replays:
        for line, kind in replay:
            if line is None:
                continue
            if kind not in models:
                refused.append(f"{kind}: no model here")
                continue
            try:
                models[kind](json.loads(line))
            except Exception as error:  # noqa: BLE001 - reported, not raised
                refused.append(f"{kind}: {type(error).__name__}: {str(error).splitlines()[0][:120]}")
    return refused


def per_kind(
    replays: list[Replay], models: dict[str, Callable[[dict[str, Any]], Any]], passes: int
) -> dict[str, tuple[int, float, float]]:
    """µs per message by kind (ours: a codec in the state of the replay, decode_line of that one line)."""
    kinds: dict[str, list[tuple[bytes, AcpCodec]]] = {}
    for replay in replays:
        codec = AcpCodec()
        for line, kind in replay:
            if line is None:
                codec.prompt_request_id = kind
                continue
            kinds.setdefault(_group(kind), []).append((line, codec))
            codec.decode_line(line)
    table: dict[str, tuple[int, float, float]] = {}
    for group, lines in kinds.items():
        started = time.perf_counter()
        for _ in range(passes):
            for line, codec in lines:
                codec.decode_line(line)
        ours = (time.perf_counter() - started) / (passes * len(lines)) * 1e6
        sdk_lines = [
            (line, kind)
            for replay in replays
            for line, kind in replay
            if line is not None and _group(kind) == group
        ]
        started = time.perf_counter()
        for _ in range(passes):
            for line, kind in sdk_lines:
                models[kind](json.loads(line))
        sdk = (time.perf_counter() - started) / (passes * len(sdk_lines)) * 1e6
        table[group] = (len(lines), ours, sdk)
    return table


def _group(kind: str) -> str:
    if kind == "notification session/update":
        return "session/update"
    head = kind.split(" of ")[0]
    return head if head in ("result", "error") else "agent request"


def import_ms(module: str, runs: int = 5) -> tuple[float, float]:
    """(``-X importtime`` cumulative of the modules ``import module`` adds, wall of the process) in ms, medians."""
    cumulative: list[float] = []
    walls: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True,
            text=True,
            check=True,
        )
        walls.append((time.perf_counter() - started) * 1000)
        baseline = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True, check=True
        )
        cumulative.append(_top_level_us(done.stderr) / 1000 - _top_level_us(baseline.stderr) / 1000)
    return statistics.median(cumulative), statistics.median(walls)


def _top_level_us(report: str) -> int:
    """The sum of the top-level lines' cumulative µs of an ``-X importtime`` report."""
    total = 0
    for line in report.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
        if match and not match.group(2).startswith(" "):
            total += int(match.group(1))
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=200, help="replays of every file per repetition")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (alternating order)")
    arguments = parser.parse_args()
    try:
        from importlib.metadata import version

        import acp
    except ImportError:
        raise SystemExit("the SDK is not installed: pip install agent-client-protocol") from None
    del acp
    replays = load_replays()
    models = sdk_models()
    messages = sum(1 for replay in replays for line, _ in replay if line is not None)
    refused = check_sdk(replays, models)
    safe = {kind: _tolerant(models.get(kind)) for kind in _kinds(replays)}
    ours_pass(replays)  # warm-up
    sdk_pass(replays, safe)
    ours_runs: list[float] = []
    sdk_runs: list[float] = []
    for repetition in range(arguments.repeat):
        order = ("ours", "sdk") if repetition % 2 == 0 else ("sdk", "ours")
        for side in order:
            started = time.perf_counter()
            for _ in range(arguments.passes):
                if side == "ours":
                    ours_pass(replays)
                else:
                    sdk_pass(replays, safe)
            elapsed = (time.perf_counter() - started) / (arguments.passes * messages) * 1e6
            (ours_runs if side == "ours" else sdk_runs).append(elapsed)
    print(
        f"{len(replays)} recordings, {messages} agent -> client messages, {arguments.passes} passes x "
        f"{arguments.repeat} repetitions; agent-client-protocol {version('agent-client-protocol')}"
    )
    print(f"{'':34} {'µs/message':>11} {'spread':>13} {'ratio sdk/ours':>15}")
    ours, sdk = statistics.median(ours_runs), statistics.median(sdk_runs)
    print(f"{'ours: AcpCodec.decode_line':34} {ours:11.1f} {min(ours_runs):6.1f}-{max(ours_runs):<6.1f}")
    print(
        f"{'sdk: json.loads + typed model':34} {sdk:11.1f} {min(sdk_runs):6.1f}-{max(sdk_runs):<6.1f} {sdk / ours:14.2f}x"
    )
    print("by message kind (one repetition):")
    for group, (count, ours_us, sdk_us) in sorted(per_kind(replays, safe, arguments.passes).items()):
        print(
            f"  {group:18} {count:4} messages  ours {ours_us:6.1f} µs  sdk {sdk_us:6.1f} µs  {sdk_us / ours_us:5.2f}x"
        )
    print(f"messages the SDK's models refuse: {len(refused)}")
    for problem in sorted(set(refused)):
        print(f"  {refused.count(problem)} x {problem}")
    print("import, fresh interpreter, medians of 5 (-X importtime, over `pass`; process wall):")
    for module in ("elynav_nb.agents.protocols.acp.codec", "acp", "acp.schema"):
        cumulative, wall = import_ms(module)
        print(f"  import {module:34} {cumulative:7.1f} ms   process {wall:6.0f} ms")
    return 0


def _kinds(replays: list[Replay]) -> set[str]:
    return {kind for replay in replays for line, kind in replay if line is not None}


def _tolerant(model: Callable[[dict[str, Any]], Any] | None) -> Callable[[dict[str, Any]], Any]:
    """The model, its refusals swallowed (the SDK's client answers them as errors; the work is done)."""
    if model is None:
        return lambda message: None

    def parse(message: dict[str, Any]) -> Any:
        try:
            return model(message)
        except Exception:  # noqa: BLE001 - a refused message costs its validation all the same
            return None

    return parse


if __name__ == "__main__":
    sys.exit(main())
