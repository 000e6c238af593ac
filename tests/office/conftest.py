"""Fixtures for the office tests: an isolated stand-in home and offices that are always stopped."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from elynav_nb.agents import AgentDefinition
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.office import ASK_RULE, Office

FAST_STOP = StopBounds(close_stdin=2.0, sigint=2.0, sigterm=1.0, sigkill=1.0, orphans=1.0)


def worker(name: str, *, delegates: bool = True) -> AgentDefinition:
    """A small test agent; with ``delegates`` it may run ``elynav ask`` through its Bash tool."""
    tools = ("Read", ASK_RULE) if delegates else ("Read",)
    return AgentDefinition(
        name=name, description=f"test agent {name}", tools=tools, prompt=f"You are {name}."
    )


@pytest.fixture(autouse=True)
def isolated_standin_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    monkeypatch.delenv("ELYNAV_STANDIN_VERSION", raising=False)
    monkeypatch.delenv("ELYNAV_OFFICE_SOCKET", raising=False)
    monkeypatch.delenv("ELYNAV_OFFICE_TOKEN", raising=False)


@pytest.fixture
async def make_office(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """``await make_office(agents, **options)`` -> a started office on a fresh workspace (stopped after)."""
    offices: list[Office] = []

    async def start(
        agents: list[Any] | None = None, *, workspace: Path | None = None, **options: Any
    ) -> Office:
        options.setdefault("stop_bounds", FAST_STOP)
        options.setdefault("interrupt_timeout", 3.0)
        office = Office(workspace or tmp_path / "workspace", agents, executable="standin", **options)
        offices.append(office)
        return await office.start()

    yield start
    for office in offices:
        await office.stop()
