"""Recorded real lines of each CLI: sanitize, store under tests/fixtures/<cli>_real/, compare shapes.

A live test calls ``check_against_recording(cli, scenario, lines)``: with
``ELYNAV_RECORD_CLI_FIXTURES=1`` it (re)writes ``tests/fixtures/<cli>_real/<cli>-<version>-<scenario>.jsonl``;
otherwise it compares the live lines' *shape* (line types, their keys and key order, item types
and their keys) with the recording of the same version, so a CLI whose output drifted fails
here, and a CLI version without recordings fails with the command that records them.

Sanitizing keeps key order and value types: UUID-like ids become ``00000000-0000-4000-8000-0000000000NN``
(numbered per file), timestamps ``2026-01-01T00:00:00.000Z``, gemini's millisecond tool ids a fixed
number, and the test's scratch paths ``<tmp>``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parents[1] / "fixtures"
RECORD_VARIABLE = "ELYNAV_RECORD_CLI_FIXTURES"

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
_GEMINI_TOOL_ID = re.compile(r"(__[a-z_]+_)\d{10,}(_\d+)")
_PORT = re.compile(r"127\.0\.0\.1:\d+")


def recording_path(cli: str, version: str, scenario: str) -> Path:
    return FIXTURES / f"{cli}_real" / f"{cli}-{version}-{scenario}.jsonl"


def sanitize(lines: list[bytes], scratch: Path) -> list[str]:
    """The lines with run-specific values replaced (see the module docstring)."""
    numbering: dict[str, str] = {}

    def renumber(match: re.Match[str]) -> str:
        found = match.group(0)
        if found not in numbering:
            numbering[found] = f"00000000-0000-4000-8000-{len(numbering) + 1:012d}"
        return numbering[found]

    sanitized = []
    for raw in lines:
        text = raw.decode("utf-8")
        text = text.replace(str(scratch), "<tmp>")
        text = _UUID.sub(renumber, text)
        text = _TIMESTAMP.sub("2026-01-01T00:00:00.000Z", text)
        text = _GEMINI_TOOL_ID.sub(r"\g<1>1700000000000\g<2>", text)
        text = _PORT.sub("127.0.0.1:PORT", text)
        sanitized.append(text)
    return sanitized


def _shape_of(value: Any) -> Any:
    if isinstance(value, dict):
        shape: dict[str, Any] = {"keys": list(value)}
        for discriminating_key in ("type", "status", "role", "severity", "method"):
            if isinstance(value.get(discriminating_key), str):
                shape[discriminating_key] = value[discriminating_key]
        for key in ("item", "error", "params", "turn"):
            if isinstance(value.get(key), dict):
                shape[key] = _shape_of(value[key])
        return shape
    return type(value).__name__


def shapes(lines: list[str] | list[bytes]) -> list[Any]:
    return [_shape_of(json.loads(line)) for line in lines]


def check_against_recording(
    cli: str, version: str, scenario: str, lines: list[bytes], scratch: Path, *, unordered: bool = False
) -> None:
    """Record (``ELYNAV_RECORD_CLI_FIXTURES=1``) or compare with the recording of this version.

    ``unordered``: compare the set of shapes (codex app-server interleaves status notifications
    with the turn's own at its own pace; a drifted format still shows as a new or lost shape).
    """
    path = recording_path(cli, version, scenario)
    sanitized = sanitize(lines, scratch)
    if os.environ.get(RECORD_VARIABLE) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(sanitized) + "\n", encoding="utf-8")
        return
    if not path.exists():
        raise AssertionError(
            f"no recorded lines of {cli} {version} for {scenario!r} ({path.name}); record them with "
            f"{RECORD_VARIABLE}=1 python -m pytest tests/real_cli -m real_cli -p no:nbval"
        )
    recorded = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if unordered:
        live_shapes = {json.dumps(shape) for shape in shapes(sanitized)}
        recorded_shapes = {json.dumps(shape) for shape in shapes(recorded)}
        assert live_shapes == recorded_shapes, (
            f"{cli} {version} {scenario}: the output format changed: new {sorted(live_shapes - recorded_shapes)}, "
            f"gone {sorted(recorded_shapes - live_shapes)}"
        )
        return
    assert shapes(sanitized) == shapes(recorded), f"{cli} {version} {scenario}: the output format changed"


_TURN_METHODS = (
    "turn/started",
    "turn/completed",
    "item/started",
    "item/completed",
    "item/agentMessage/delta",
    "thread/tokenUsage/updated",
    "error",
    "serverRequest/resolved",
    "item/commandExecution/requestApproval",
)


def record_lines(runner: Any) -> list[bytes]:
    """Every stdout line the runner's app-server writes from now on (kept beside normal routing)."""
    lines: list[bytes] = []
    if runner.plan.driver != "persistent":
        return lines  # a process per turn: nothing to record here (its lines are checked by its codec tests)
    driver = runner._driver  # the persistent driver: the process it spawns next reads this attribute
    route = driver._handle_line

    def capture(line: bytes) -> None:
        lines.append(line)
        route(line)

    driver._handle_line = capture
    return lines


def turn_lines(lines: list[bytes]) -> list[bytes]:
    """The lines the codec turns into events (start-up warnings and status chatter vary by machine)."""
    kept = []
    for line in lines:
        message = json.loads(line)
        if message.get("method") in _TURN_METHODS or "method" not in message:
            kept.append(line)
    return kept


def check_app_server_recording(version: str, scenario: str, lines: list[bytes], scratch: Path) -> None:
    """``check_against_recording`` for codex app-server: its turn lines, as a set of shapes."""
    check_against_recording(
        "codex", version, f"app-server-{scenario}", turn_lines(lines), scratch, unordered=True
    )
