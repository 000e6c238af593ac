"""What a turn stores (deltas coalesced, or every delta with ``keep_deltas``) against what its readers get.

Driven by the stand-in's ``@standin flood N`` (N text deltas written as fast as possible).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.events import AgentEvent, AgentStarted, RawEvent, TextDelta, TurnEnded
from elynav_nb.agents.results import main_text
from elynav_nb.agents.runner import AgentRunner, Turn

FAST_STOP = StopBounds(close_stdin=2.0, sigint=2.0, sigterm=1.0, sigkill=1.0, orphans=1.0)
DELTAS = 5000


@pytest.fixture(autouse=True)
def isolated_standin_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    monkeypatch.delenv("ELYNAV_STANDIN_VERSION", raising=False)


@pytest.fixture
async def make_runner(tmp_path) -> AsyncIterator:
    runners: list[AgentRunner] = []

    def factory(**options) -> AgentRunner:
        runner = AgentRunner(None, tmp_path, executable="standin", stop_bounds=FAST_STOP, **options)
        runners.append(runner)
        return runner

    yield factory
    for runner in runners:
        await runner.stop()


async def read_all(turn: Turn) -> list[AgentEvent]:
    return [event async for event in turn]


def text_deltas(events: list[AgentEvent] | tuple[AgentEvent, ...]) -> list[TextDelta]:
    return [event for event in events if isinstance(event, TextDelta)]


@pytest.mark.anyio
async def test_a_flood_is_stored_as_one_text_event_while_readers_get_every_delta(make_runner) -> None:
    runner = make_runner()
    turn = runner.send(f"@standin flood {DELTAS}")
    live: list[AgentEvent] = []
    joined_mid_turn: list[AgentEvent] = []
    async for event in turn:
        live.append(event)
        if isinstance(event, TextDelta) and not joined_mid_turn:
            # a second reader, from the first delta on: the stored events so far, then live
            async for late_event in turn:
                joined_mid_turn.append(late_event)
    result = await turn

    assert result.outcome == "completed"
    assert len(text_deltas(live)) == DELTAS
    assert "".join(delta.text for delta in text_deltas(live)) == result.text
    assert main_text(joined_mid_turn) == result.text
    [stored_text] = text_deltas(result.events)
    assert stored_text.text == result.text and result.text.startswith("t0 t1 ")
    assert [type(event) for event in result.events] == [AgentStarted, RawEvent, TextDelta, TurnEnded]
    assert turn.events == list(result.events) == list(runner.history[-1].events)
    assert len(result.to_frame()) == 4
    assert await read_all(turn) == list(result.events)  # a reader after the end gets the stored events


@pytest.mark.anyio
async def test_keep_deltas_stores_every_delta(make_runner) -> None:
    runner = make_runner(keep_deltas=True)
    turn = runner.send(f"@standin flood {DELTAS}")
    live = await read_all(turn)
    result = await turn

    assert result.outcome == "completed"
    assert len(text_deltas(result.events)) == DELTAS
    assert list(result.events) == live == turn.events
    assert main_text(result.events) == result.text
