"""The protocol registry: each (CLI, mode) is one entry, read by everyone; a new protocol is one folder and one entry.

``echo_protocol/`` (in the tests only) is a whole protocol: a tiny CLI with a line protocol of its own,
its wire, its launcher, and ``ENTRY``. The library knows nothing of it; registering ``ENTRY`` is all it
takes for ``AgentRunner(cli="echo")`` to plan, start, stream, cancel and stop it like the built-in ones.
"""

from __future__ import annotations

import ast
import asyncio
import sys
import time
from pathlib import Path

import pytest

import elynav_nb
from elynav_nb.agents import AgentRunner, TextDelta
from elynav_nb.agents.locate import locate_cli
from elynav_nb.agents.protocols.registry import (
    capabilities_of,
    cli_modes,
    cli_names,
    protocol_entries,
    register_protocol,
    unregister_protocol,
)
from elynav_nb.errors import CliNotFound, InvalidInput

from .echo_protocol import ECHO_NOTE, ENTRY
from .helpers import our_zombies, process_alive

pytestmark = pytest.mark.anyio

ECHO_FOLDER = Path(__file__).with_name("echo_protocol")
ECHO_CLI = [sys.executable, str(ECHO_FOLDER / "cli.py")]
# what a protocol folder may use of the library: the contracts, not the drivers or the runner
CONTRACT_MODULES = {
    "elynav_nb.agents.protocols.wire",
    "elynav_nb.agents.context",
    "elynav_nb.agents.events",
    "elynav_nb.agents.protocols.launcher",
    "elynav_nb.agents.plan",
    "elynav_nb.agents.protocols.command",
    "elynav_nb.agents.protocols.registry",
}


@pytest.fixture
def echo_registered():
    register_protocol(ENTRY)
    try:
        yield ENTRY
    finally:
        unregister_protocol("echo", "lines")


async def until(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def test_the_built_in_protocols_are_entries_of_one_table():
    assert [(entry.cli, entry.mode) for entry in protocol_entries()] == [
        ("claude", "stream-json"),
        ("codex", "app-server"),
        ("codex", "exec"),
        ("gemini", "print"),
        ("acp", "stdio"),
    ]
    assert cli_names() == ("claude", "codex", "gemini", "acp") and cli_modes("codex") == (
        "app-server",
        "exec",
    )
    assert capabilities_of("codex", "exec") == entry_of("codex", "exec").traits.capabilities
    with pytest.raises(InvalidInput, match="registered already"):
        register_protocol(entry_of("gemini", "print"))


def entry_of(cli: str, mode: str):
    return next(entry for entry in protocol_entries() if (entry.cli, entry.mode) == (cli, mode))


def test_the_library_knows_nothing_of_echo(tmp_path):
    assert "echo" not in cli_names()
    with pytest.raises(InvalidInput, match="unknown agent CLI 'echo'"):
        AgentRunner(None, tmp_path, cli="echo")
    package = Path(elynav_nb.__file__).parent
    assert not [path for path in package.rglob("*.py") if "echo_protocol" in path.read_text(encoding="utf-8")]


def test_the_echo_folder_uses_the_contracts_only():
    used: set[str] = set()
    for path in ECHO_FOLDER.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("elynav_nb"):
                used.add(node.module)
    assert used and used <= CONTRACT_MODULES, used - CONTRACT_MODULES


async def test_a_registered_protocol_runs_like_the_built_in_ones(echo_registered, tmp_path):
    with pytest.raises(InvalidInput, match="echo names its conversations itself"):
        AgentRunner(None, tmp_path, cli="echo", session_id="mine")
    with pytest.raises(CliNotFound, match="give the echo CLI's command"):
        locate_cli(cli="echo", environment={})
    runner = AgentRunner(None, tmp_path, cli="echo", executable=ECHO_CLI)
    assert runner.plan.driver == "persistent" and runner.cli_mode == "lines"
    assert ECHO_NOTE in runner.limitations and runner.session_id == ""
    try:
        first = await asyncio.wait_for(runner.send("hello little world"), timeout=30)
        assert first.outcome == "completed" and first.text == "hello little world "
        assert runner.session_id == first.session_id != "" and runner.status == "idle"
        pid = runner.pid

        slow = runner.send("slow " + "word " * 100)
        await until(lambda: any(isinstance(event, TextDelta) for event in slow.events))
        cancelled = await asyncio.wait_for(slow.cancel(), timeout=30)
        assert cancelled.outcome == "cancelled" and len(cancelled.text.split()) < 100

        again = await asyncio.wait_for(runner.send("again"), timeout=30)
        assert again.text == "again " and runner.pid == pid  # the interrupt kept the process
        assert [result.outcome for result in runner.history] == ["completed", "cancelled", "completed"]
    finally:
        await runner.stop()
    assert runner.status == "closed" and pid is not None and not process_alive(pid)
    assert our_zombies() == []
