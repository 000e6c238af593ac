"""Fixtures for widget tests: runners on the fake streaming CLI, stopped after each test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.runner import AgentRunner

from .helpers import fake_stream_cli_command

FAST_STOP = StopBounds(close_stdin=1.0, sigint=1.0, sigterm=1.0, sigkill=1.0, orphans=1.0)


@pytest.fixture
async def make_runner(tmp_path: Path) -> AsyncIterator[Callable[..., AgentRunner]]:
    """``make_runner(mode, **options)``: an ``AgentRunner`` on the fake CLI in ``FAKE_CLI_MODE=mode``."""
    runners: list[AgentRunner] = []

    def factory(mode: str, *, environment: dict[str, str] | None = None, **options: Any) -> AgentRunner:
        options.setdefault("stop_bounds", FAST_STOP)
        options.setdefault("interrupt_timeout", 5.0)
        runner = AgentRunner(
            None,
            tmp_path,
            executable=fake_stream_cli_command(),
            environment={"FAKE_CLI_MODE": mode, **(environment or {})},
            **options,
        )
        runners.append(runner)
        return runner

    yield factory
    for runner in runners:
        await runner.stop()
