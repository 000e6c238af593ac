"""What the ``AgentRunner(cli="acp")`` tests on the ACP stand-in share (``test_acp_runner*.py``).

``acp_standin_home`` (autouse where imported) gives each test a stand-in home of its own and no
start-up fault; ``make_runner(**options)`` makes runners on the stand-in in ``tmp_path/workspace`` with
short stop bounds and stops them after the test; ``ask`` runs one turn, bounded; ``of_type`` picks a
result's events of one type.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.runner import AgentRunner

FAST_STOP = StopBounds(close_stdin=1.0, sigint=1.0, sigterm=1.0, sigkill=1.0, orphans=1.0)
TURN_BOUND = 15.0


@pytest.fixture(autouse=True)
def acp_standin_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELYNAV_ACP_STANDIN_HOME", str(tmp_path / "acp-standin-home"))
    monkeypatch.delenv("ELYNAV_ACP_STANDIN_FAULT", raising=False)


@pytest.fixture
async def make_runner(tmp_path: Path) -> AsyncIterator:
    """``make_runner(**options)`` -> an ACP runner on the stand-in in ``tmp_path/workspace`` (stopped after)."""
    runners: list[AgentRunner] = []

    def make(**options: object) -> AgentRunner:
        workspace = tmp_path / "workspace"
        workspace.mkdir(exist_ok=True)
        options.setdefault("stop_bounds", FAST_STOP)
        options.setdefault("interrupt_timeout", 1.5)
        options.setdefault("settle_timeout", 0.5)
        runner = AgentRunner(None, workspace, cli="acp", executable="standin", **options)
        runners.append(runner)
        return runner

    yield make
    for runner in runners:
        await runner.stop()


async def ask(runner: AgentRunner, prompt: str):
    return await asyncio.wait_for(runner.send(prompt), TURN_BOUND)


def of_type(result, kind) -> list:
    return [event for event in result.events if isinstance(event, kind)]
