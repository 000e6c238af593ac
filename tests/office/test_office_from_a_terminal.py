"""The office as terminal IPython uses it: its loop runs only during ``await`` lines, and cancels read as turns'.

Terminal IPython keeps one event loop and runs it only while a line with ``await`` runs; a line without
``await`` runs with no loop at all. There, ``office.submit(...)`` raised a raw ``RuntimeError: no
running event loop``; it is a typed error naming the fix, and the office goes on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from elynav_nb.errors import InvalidInput, NoRunningLoop
from elynav_nb.office import Office

from .conftest import FAST_STOP, worker

SLOW = "@standin slow 20\n"


def test_submit_outside_the_offices_running_loop_is_a_typed_error_and_the_office_goes_on(
    tmp_path: Path,
) -> None:
    loop = asyncio.new_event_loop()  # what terminal IPython keeps between lines
    office = Office(tmp_path / "workspace", [worker("w-a")], executable="standin", stop_bounds=FAST_STOP)
    try:
        loop.run_until_complete(office.start())  # an `await` line
        with pytest.raises(NoRunningLoop) as caught:  # a line without `await`: no loop runs
            office.submit("w-a", "Bonjour")
        assert isinstance(caught.value, InvalidInput) and caught.value.code == "NO_RUNNING_LOOP"
        assert "await office.ask(" in str(caught.value)
        assert office.history().empty  # nothing was queued
        reply = loop.run_until_complete(office.ask("w-a", "Bonjour"))
        assert reply.outcome == "done"
    finally:
        loop.run_until_complete(office.stop())
        loop.close()


@pytest.mark.anyio
async def test_ask_cancel_gives_an_awaitable_reply_as_turn_cancel_gives_a_result(make_office):
    office = await make_office([worker("w-a")])
    running = office.submit("w-a", SLOW + "long")
    queued = office.submit("w-a", "waits")
    for _ in range(200):
        if running.turn is not None:
            break
        await asyncio.sleep(0.05)
    queued_reply = await queued.cancel(by="user")  # a queued ask ends at once
    stopping = running.cancel(by="user")  # a running one once its turn has stopped
    assert isinstance(stopping, asyncio.Future) and "cancelling" in repr(running)  # not "running"
    running_reply = await stopping
    assert queued_reply.outcome == running_reply.outcome == "cancelled"
    assert running.status == "cancelled" and "cancelled" in repr(running)
    assert (await running.cancel()) is running_reply  # idempotent
