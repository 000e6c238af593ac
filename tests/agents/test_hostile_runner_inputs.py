"""Hostile inputs to a runner: prompts that are not Unicode text, and who may list the CLI homes."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import stat
import time
from pathlib import Path

import psutil
import pytest

from elynav_nb.agents import AgentDefinition, AgentRunner
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.locate import CliCommand
from elynav_nb.agents.protocols.adapter_settings import adapter_settings
from elynav_nb.agents.protocols.codex.adapter import CodexAdapter
from elynav_nb.agents.protocols.gemini.adapter import GeminiAdapter
from elynav_nb.errors import InvalidInput
from tests.widgets.helpers import wait_until

from .helpers import running_commands

pytestmark = pytest.mark.anyio

FAST_STOP = StopBounds(close_stdin=2.0, sigint=2.0, sigterm=1.0, sigkill=1.0, orphans=1.0)
DEFINITION = AgentDefinition(name="elynav-tester", description="A test agent.", prompt="You are the tester.")


@pytest.mark.parametrize("prompt", ["a lone \ud800 surrogate", [{"type": "text", "text": "x\udfff"}]])
async def test_a_prompt_with_a_lone_surrogate_is_refused_before_anything_is_sent(tmp_path, prompt):
    runner = AgentRunner(DEFINITION, tmp_path, executable="standin")
    with pytest.raises(InvalidInput) as raised:
        runner.send(prompt)
    assert raised.value.code == "INVALID_INPUT" and "nothing was sent" in str(raised.value)
    assert runner.process is None and runner.status == "new" and runner.history == []
    assert runner.current_turn is None  # the runner is free for the next, valid, prompt


@pytest.mark.parametrize("adapter_class", [CodexAdapter, GeminiAdapter], ids=["codex", "gemini"])
def test_cli_homes_are_private_from_the_root_down(tmp_path, monkeypatch, adapter_class):
    root = tmp_path / "state" / "cli-homes"
    monkeypatch.setenv("ELYNAV_CLI_HOMES", str(root))
    root.mkdir(parents=True, mode=0o755)  # made earlier, wider: narrowed
    cli = "codex" if adapter_class is CodexAdapter else "gemini"
    runner = AgentRunner(
        DEFINITION, tmp_path / "workspace", cli=cli, cli_mode="exec" if cli == "codex" else None
    )
    settings = adapter_settings(runner._driver.context, DEFINITION)
    adapter_class(settings).prepare(CliCommand(argv=(cli,), is_standin=False, name=cli), "0.0")
    folders = [root, *(parent for parent in settings.home.parents if root in parent.parents), settings.home]
    assert settings.home.is_dir() and len(folders) >= 3
    for folder in folders:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    config_files = [path for path in settings.home.rglob("*") if path.is_file() and not path.is_symlink()]
    assert config_files and all(stat.S_IMODE(path.stat().st_mode) == 0o600 for path in config_files)


def test_a_home_given_by_the_caller_is_private_too(tmp_path, monkeypatch):
    monkeypatch.setenv("ELYNAV_CLI_HOMES", str(tmp_path / "elsewhere"))
    home = tmp_path / "my-codex-home"
    runner = AgentRunner(DEFINITION, tmp_path / "workspace", cli="codex", config_home=home)
    CodexAdapter(adapter_settings(runner._driver.context, DEFINITION)).prepare(
        CliCommand(argv=("codex",), is_standin=False, name="codex"), "0.0"
    )
    assert stat.S_IMODE(Path(home).stat().st_mode) == 0o700


async def _gone(marker: str) -> bool:
    return await wait_until(lambda: not running_commands(marker), 15)


def _kill_leftovers(*markers: str) -> None:
    for marker in markers:
        for process in running_commands(marker):
            with contextlib.suppress(psutil.Error):
                process.kill()


@pytest.mark.parametrize("ending", ["the turn", "stop()"])
async def test_a_bash_tools_background_children_end_with_the_turn_and_with_stop(
    tmp_path, monkeypatch, ending
):
    """Issue 28 item 6c: ``cmd &`` and ``setsid cmd &`` of a Bash tool outlived runner.stop() on the claude path."""
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    tag = f"{secrets.randbelow(10**6):06d}"
    in_group, own_session = f"3000.{tag}1", f"3000.{tag}2"
    command = f"sleep {in_group} >/dev/null 2>&1 & setsid sleep {own_session} >/dev/null 2>&1 & echo started"
    runner = AgentRunner(
        DEFINITION, tmp_path, executable="standin", permission_mode="acceptEdits", stop_bounds=FAST_STOP
    )
    try:
        await runner.start()
        result = await asyncio.wait_for(runner.send(f"@standin bash {command}"), timeout=60)
        assert result.outcome == "completed", result.error
        started = time.monotonic()
        while not running_commands(own_session) and time.monotonic() - started < 5:
            await asyncio.sleep(0.05)  # setsid forks: the daemon may come a moment after the shell exits
        if ending == "stop()":
            await asyncio.wait_for(runner.stop(), timeout=30)
        else:
            assert runner.process is not None and runner.process.is_running  # the CLI stays up
        assert await _gone(in_group) and await _gone(own_session), "a background child outlived " + ending
    finally:
        await asyncio.wait_for(runner.stop(), timeout=30)
        _kill_leftovers(in_group, own_session)
