"""Set-up for the real-binary tests that drive codex and gemini through ``AgentRunner`` (phase 2).

``per_turn_cli`` (in ``conftest.py``) is a parametrised fixture: the pinned codex, then gemini.
``make_runner`` builds ``AgentRunner(definition, workspace, cli=..., executable=...)`` pointed at
the fake model API by ``api.cli_environment()`` in a scratch HOME, with the CLI's model pinned (no
router request, no model-metadata warning) and, for codex, no provider retries (an API error or a
cut stream ends the turn at once instead of being retried against the next scripted reply).
``process_tree`` and ``wait_gone`` check the process table with psutil.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import psutil

from elynav_nb.agents import AgentDefinition, AgentRunner
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi

from .conftest import RealCli
from .setups import CODEX_MODEL, GEMINI_MODEL, TEST_AGENT_PROMPT

MODELS = {"codex": CODEX_MODEL, "gemini": GEMINI_MODEL}
NO_RETRIES: Mapping[str, Mapping[str, Any]] = {
    "codex": {
        "model_providers.elynav.request_max_retries": 0,
        "model_providers.elynav.stream_max_retries": 0,
    },
    "gemini": {},
}


def agent_definition(tools: Sequence[str] = (), permission_mode: str | None = None) -> AgentDefinition:
    return AgentDefinition(
        name="elynav-test",
        description="A test agent.",
        prompt=TEST_AGENT_PROMPT,
        tools=tuple(tools),
        permission_mode=permission_mode,
    )


def make_runner(
    cli: RealCli,
    api: FakeModelApi,
    workspace: Path,
    home: Mapping[str, str],
    definition: AgentDefinition | None = None,
    **options: Any,
) -> AgentRunner:
    """A runner of ``cli`` on the fake API (options go to ``AgentRunner``)."""
    environment = {**api.cli_environment(), **home, **options.pop("environment", {})}
    options.setdefault("model", MODELS[cli.name])
    options.setdefault("cli_config", dict(NO_RETRIES[cli.name]))
    if cli.mode:
        options.setdefault("cli_mode", cli.mode)
    return AgentRunner(
        definition or agent_definition(),
        workspace,
        cli=cli.name,
        executable=cli.argv[0],
        environment=environment,
        **options,
    )


def process_tree(pid: int | None) -> list[psutil.Process]:
    """The process ``pid`` and its descendants (empty when it is gone)."""
    if pid is None:
        return []
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def command_of(process: psutil.Process) -> str:
    """The command line of ``process`` ("" once it is gone or a zombie)."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def alive(processes: Sequence[psutil.Process]) -> list[psutil.Process]:
    """Those still running (zombies and reused pids count as gone)."""
    living = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                living.append(process)
        except psutil.Error:
            continue
    return living


async def wait_gone(processes: Sequence[psutil.Process], timeout: float = 15.0) -> list[psutil.Process]:
    """Wait (bounded) until none of ``processes`` runs; returns those still alive then."""
    deadline = time.monotonic() + timeout
    while alive(processes) and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    return alive(processes)


async def wait_for(condition: Any, timeout: float = 60.0) -> None:
    """Wait (bounded) until ``condition()`` is true; fail the test otherwise."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await anyio.sleep(0.02)
