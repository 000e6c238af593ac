"""``RunnerView`` follows a runner's turns; views made without a loop show or follow a turn."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from pathlib import Path

import pytest

from elynav_nb.agents.runner import AgentRunner, Turn
from elynav_nb.widgets import RunnerView, TurnView

from .conftest import FAST_STOP
from .helpers import fake_stream_cli_command, segment_text, wait_until

RunnerFactory = Callable[..., AgentRunner]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.mark.anyio
async def test_each_new_turn_gets_a_view_and_earlier_ones_collapse(make_runner: RunnerFactory) -> None:
    runner = make_runner("stream", environment={"FAKE_DELTAS": "20"})
    view = RunnerView(runner)
    assert view.turns.children == ()
    assert view.status_text().startswith("new · agent default")

    first = await runner.send("one")
    assert await wait_until(lambda: len(view.turn_views) == 1 and view.turn_views[0].finished)
    second_turn = runner.send("two")
    assert len(view.turn_views) == 2 and view.turn_views[1].turn is second_turn
    assert view.turns.selected_index == 1  # the newest is open, the first collapsed
    second = await view.turn_views[1].wait()

    assert first.outcome == "completed" and second is not None and second.outcome == "completed"
    assert view.turns.children == (view.turn_views[0].widget, view.turn_views[1].widget)
    assert view.turns.titles == ("completed: one", "completed: two")
    assert view.turns.selected_index == 1
    status = view.status_line.value
    assert "2 turns" in status and "cost $0.2500" in status and "idle" in status
    assert segment_text(view.turn_views[1].transcript.widget.value) == second.text

    view.close()
    await runner.send("three")
    assert len(view.turn_views) == 2


@pytest.mark.anyio
async def test_view_made_during_a_turn_shows_it_and_lists_earlier_turns(make_runner: RunnerFactory) -> None:
    runner = make_runner("slow")
    first = runner.send("first")
    assert await wait_until(lambda: len(first.events) >= 2)
    await first.cancel()
    second = runner.send("second")
    view = RunnerView(runner)
    assert [each.turn for each in view.turn_views] == [second]
    assert "1 earlier turn(s)" in view.earlier_turns.value
    view.turn_views[0].cancel_button.click()
    result = await asyncio.wait_for(view.turn_views[0].wait(), timeout=30)
    assert result is not None and result.outcome == "cancelled"
    assert view.turns.titles == ("cancelled: second",)
    view.close()


def _sync_runner(tmp_path: Path, mode: str) -> AgentRunner:
    return AgentRunner(
        None,
        tmp_path,
        executable=fake_stream_cli_command(),
        environment={"FAKE_CLI_MODE": mode, "FAKE_DELTAS": "50"},
        stop_bounds=FAST_STOP,
    )


def test_finished_turn_renders_without_a_loop(tmp_path: Path) -> None:
    runner = _sync_runner(tmp_path, "stream")
    turns: list[Turn] = []
    runner.add_turn_listener(turns.append)
    try:
        result = runner.send_sync("hello")  # runs on the private loop; no loop in this thread
        view = TurnView(turns[0])
        assert view.consumer is None
        assert view.finished and view.cancel_button.disabled
        assert segment_text(view.transcript.widget.value) == result.text
        assert "completed" in view.status_line.value and "cost $0.1250" in view.status_line.value
    finally:
        runner.stop_sync()


def test_view_in_a_plain_thread_follows_a_turn_on_the_private_loop(tmp_path: Path) -> None:
    runner = _sync_runner(tmp_path, "slow")
    runner.start_sync()
    loop = runner._driver.loop
    assert loop is not None

    async def send() -> Turn:
        return runner.send("go slowly")

    try:
        turn = asyncio.run_coroutine_threadsafe(send(), loop).result(timeout=30)
        view = TurnView(turn, min_interval=0.05)
        consumer = view.consumer
        assert isinstance(consumer, concurrent.futures.Future) and not view.finished
        asyncio.run_coroutine_threadsafe(wait_until(lambda: view.events_shown >= 3), loop).result(timeout=30)
        view.cancel_button.click()  # from this thread: the turn's loop does the cancel
        consumer.result(timeout=30)
        assert turn.status == "cancelled" and view.finished
        assert segment_text(view.transcript.widget.value) == turn.text
    finally:
        runner.stop_sync()


@pytest.mark.anyio
async def test_displaying_a_runner_again_reuses_its_view(
    make_runner: RunnerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import elynav_nb._display as display

    monkeypatch.setattr(display, "in_notebook_kernel", lambda: True)
    runner = make_runner("stream", environment={"FAKE_DELTAS": "5"})
    first = runner._repr_mimebundle_()[WIDGET_MIME]["model_id"]
    second = runner._repr_mimebundle_()[WIDGET_MIME]["model_id"]
    assert first == second
    assert len(runner._turn_listeners) == 1  # one view, subscribed once

    view = display.view_for(runner)
    assert isinstance(view, RunnerView)
    view.close()
    third = runner._repr_mimebundle_()[WIDGET_MIME]["model_id"]
    assert third != first and len(runner._turn_listeners) == 1  # a closed view is replaced
