"""``TurnView`` on the embedded stand-in CLI: flood, cancel, permission buttons, thinking and subagents."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from elynav_nb.agents.events import ToolResult
from elynav_nb.agents.runner import AgentRunner
from elynav_nb.widgets import TurnView

from .conftest import FAST_STOP
from .helpers import segment_text, wait_until


@pytest.fixture
async def make_standin_runner(tmp_path: Path) -> AsyncIterator[Callable[..., AgentRunner]]:
    runners: list[AgentRunner] = []

    def factory(**options: Any) -> AgentRunner:
        runner = AgentRunner(None, tmp_path, executable="standin", stop_bounds=FAST_STOP, **options)
        runners.append(runner)
        return runner

    yield factory
    for runner in runners:
        await runner.stop()


@pytest.mark.anyio
async def test_flood_streams_through_the_throttle(make_standin_runner: Callable[..., AgentRunner]) -> None:
    runner = make_standin_runner(keep_deltas=True)  # turn.events counts every delta the view was sent
    turn = runner.send("@standin flood 2000")
    view = TurnView(turn)
    result = await asyncio.wait_for(view.wait(), timeout=60)
    assert result is not None and result.outcome == "completed"
    text_deltas = sum(1 for event in turn.events if type(event).__name__ == "TextDelta")
    assert text_deltas >= 2000
    assert segment_text(view.transcript.widget.value) == result.text
    assert view.transcript.flush_count <= text_deltas // 20
    assert "stand-in" in view.status_line.value and "completed" in view.status_line.value
    assert "cost $" in view.status_line.value


@pytest.mark.anyio
async def test_cancel_click_on_a_slow_standin_turn(make_standin_runner: Callable[..., AgentRunner]) -> None:
    runner = make_standin_runner()
    turn = runner.send("@standin slow 20")
    view = TurnView(turn, min_interval=0.05)
    assert await wait_until(lambda: view.events_shown >= 3, timeout=30)
    view.cancel_button.click()
    result = await asyncio.wait_for(view.wait(), timeout=30)
    assert result is not None and result.outcome == "cancelled"
    assert view.cancel_button.disabled
    assert "cancelled" in view.status_line.value


@pytest.mark.anyio
@pytest.mark.parametrize("allow", [True, False], ids=["allow", "deny"])
async def test_permission_buttons_reach_the_standin(
    make_standin_runner: Callable[..., AgentRunner], tmp_path: Path, allow: bool
) -> None:
    runner = make_standin_runner(permission_prompts=True)
    turn = runner.send("@standin bash touch written.txt")
    view = TurnView(turn, min_interval=0.05)
    assert await wait_until(lambda: len(view.prompts) == 1, timeout=30)
    prompt = next(iter(view.prompts.values()))
    if allow:
        prompt.allow_button.click()
    else:
        prompt.deny_button.click()
    result = await asyncio.wait_for(view.wait(), timeout=30)
    assert result is not None
    tool_results = [event for event in result.events if isinstance(event, ToolResult)]
    assert len(tool_results) == 1
    assert tool_results[0].is_error is (not allow)
    assert (tmp_path / "written.txt").exists() is allow
    assert prompt.decision == ("allowed" if allow else "denied")
    assert view.permissions_box.children == ()
    assert segment_text(view.transcript.widget.value) == result.text


@pytest.mark.anyio
async def test_thinking_and_subagent_text_are_kept_apart(
    make_standin_runner: Callable[..., AgentRunner],
) -> None:
    runner = make_standin_runner()
    for prompt in ("@standin think", "@standin subagent"):
        turn = runner.send(prompt)
        view = TurnView(turn)
        result = await asyncio.wait_for(view.wait(), timeout=30)
        assert result is not None and result.outcome == "completed"
        assert segment_text(view.transcript.widget.value) == result.text
        if prompt.endswith("think"):
            assert segment_text(view.transcript.widget.value, "elynav-thinking")
