"""The event-loop edges of the runner, the office and ``_sync.run_sync``: typed errors, never a hang.

Before, these gave a raw ``RuntimeError`` ("no running event loop", "Event loop is closed", "attached
to a different loop") or waited for ever: ``runner.send()`` in plain Python, ``send_sync`` after the
``asyncio.run`` that started the runner had returned, ``send_sync`` on a runner whose loop exists but
does not run, ``runner.send()`` on a loop other than the runner's, ``await runner.stop()`` there, a
blocking call whose loop closed under it. Each is now ``NO_RUNNING_LOOP``, ``LOOP_ENDED`` or
``LOOP_MISMATCH`` (all ``InvalidInput``), or simply works.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elynav_nb._sync import run_sync
from elynav_nb.agents import AgentRunner
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.errors import InvalidInput, LoopEnded, LoopMismatch, NoRunningLoop, SyncCallInsideLoop
from elynav_nb.office import Office
from tests.agents.helpers import process_alive
from tests.office.conftest import isolated_standin_home, worker  # noqa: F401 (an autouse fixture)

FAST_STOP = StopBounds(close_stdin=2.0, sigint=2.0, sigterm=1.0, sigkill=1.0, orphans=1.0)


class Hung(Exception):
    """The call under test did not return in time (it would have waited for ever)."""


@contextlib.contextmanager
def fails_after(seconds: float) -> Iterator[None]:
    """Interrupt a blocking wait of the main thread with ``Hung`` after ``seconds``."""

    def interrupt(_signal: int, _frame: object) -> None:
        raise Hung(f"still waiting after {seconds} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def make_runner(workspace: Path) -> AgentRunner:
    return AgentRunner(None, workspace, executable="standin", stop_bounds=FAST_STOP)


def test_send_in_plain_python_is_no_running_loop_naming_await_and_send_sync(tmp_path: Path) -> None:
    runner = make_runner(tmp_path)
    with pytest.raises(NoRunningLoop) as caught:
        runner.send("Bonjour")
    assert isinstance(caught.value, InvalidInput) and caught.value.code == "NO_RUNNING_LOOP"
    assert "await runner.send(" in str(caught.value) and "runner.send_sync(" in str(caught.value)
    assert runner.status == "new" and runner.history == []  # nothing started


def test_a_runner_whose_asyncio_run_ended_is_loop_ended_and_its_stop_is_quiet(tmp_path: Path) -> None:
    async def started_and_used() -> AgentRunner:
        runner = await make_runner(tmp_path).start()
        assert (await runner.send("first")).outcome == "completed"
        return runner  # no stop: asyncio.run's end stops the CLI

    runner = asyncio.run(started_and_used())
    with fails_after(20):
        with pytest.raises(LoopEnded) as caught:
            runner.send_sync("after the loop")
        assert caught.value.code == "LOOP_ENDED" and "this runner" in str(caught.value)
        with pytest.raises(LoopEnded):
            runner.start_sync()
        with pytest.raises(LoopEnded):
            runner.send("after the loop")
        runner.stop_sync()  # the CLI is gone already: nothing to do, no error

    async def in_a_new_loop() -> None:
        with pytest.raises(LoopEnded):
            runner.send("in a new loop")
        with pytest.raises(LoopEnded):
            await runner.start()
        await runner.stop()  # quiet as well

    asyncio.run(in_a_new_loop())
    assert len(runner.history) == 1


def test_send_sync_on_a_runner_whose_loop_exists_but_does_not_run_runs_that_loop(tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()  # a script's loop, run only by run_until_complete
    runner = make_runner(tmp_path)
    try:
        loop.run_until_complete(runner.start())
        with fails_after(30):
            result = runner.send_sync("Bonjour")
            assert result.outcome == "completed" and "Bonjour" in result.text
            runner.stop_sync()
        assert runner.status == "closed" and not loop.is_running()
    finally:
        loop.run_until_complete(runner.stop())
        loop.close()


def test_on_another_loop_send_is_loop_mismatch_and_stop_runs_on_the_runners_loop(tmp_path: Path) -> None:
    runner = make_runner(tmp_path)
    with fails_after(30):
        runner.start_sync()  # the runner lives on the private loop
    pid = runner.pid

    async def from_a_notebook_cell() -> None:
        with pytest.raises(LoopMismatch) as caught:
            runner.send("from the wrong loop")
        assert caught.value.code == "LOOP_MISMATCH"
        with pytest.raises(LoopMismatch):
            await runner.start()
        assert runner.send_sync("blocking is fine").outcome == "completed"  # the private loop runs it
        await runner.stop()  # handed over to the runner's loop

    try:
        asyncio.run(asyncio.wait_for(from_a_notebook_cell(), timeout=30))
    finally:
        runner.stop_sync()
    assert runner.status == "closed" and pid is not None and not process_alive(pid)


def test_send_sync_inside_the_runners_own_running_loop_is_refused_not_deadlocked(tmp_path: Path) -> None:
    async def a_cell() -> None:
        runner = await make_runner(tmp_path).start()
        try:
            with pytest.raises(SyncCallInsideLoop):
                runner.send_sync("would deadlock")
            assert (await runner.send("awaited")).outcome == "completed"
        finally:
            await runner.stop()

    with fails_after(30):
        asyncio.run(a_cell())


def test_a_blocking_call_whose_loop_closes_under_it_is_loop_ended() -> None:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    never = threading.Event()

    async def blocked_then_stopped() -> None:
        loop.call_soon(loop.stop)  # the loop stops and is closed with this call still pending
        await asyncio.sleep(3600)

    def close_once_stopped() -> None:
        thread.join()
        loop.close()
        never.set()

    threading.Thread(target=close_once_stopped, daemon=True).start()
    with fails_after(20):
        with pytest.raises(LoopEnded):
            run_sync(blocked_then_stopped(), owner_loop=loop)
    assert never.is_set()


def test_office_submit_from_another_running_loop_is_loop_mismatch(tmp_path: Path) -> None:
    loop = asyncio.new_event_loop()  # the office's loop (terminal IPython keeps one like it)
    office = Office(tmp_path / "workspace", [worker("w-a")], executable="standin", stop_bounds=FAST_STOP)
    try:
        loop.run_until_complete(office.start())

        async def on_another_loop() -> None:
            with pytest.raises(LoopMismatch) as caught:
                office.submit("w-a", "Bonjour")
            assert "this office" in str(caught.value)

        asyncio.run(on_another_loop())
        assert office.history().empty  # nothing was queued
    finally:
        loop.run_until_complete(office.stop())
        loop.close()


def test_an_attached_offices_cancel_outside_its_loop_goes_out_when_the_loop_runs_again(
    tmp_path: Path,
) -> None:
    loop = asyncio.new_event_loop()  # terminal IPython's loop: it runs only during `await` lines
    workspace = tmp_path / "workspace"
    host = Office(workspace, [worker("w-a")], executable="standin", stop_bounds=FAST_STOP)
    guest = Office(workspace, [worker("w-a")], executable="standin", stop_bounds=FAST_STOP)
    try:
        loop.run_until_complete(host.start())
        loop.run_until_complete(guest.start())  # finds the host: attaches to it
        assert guest.attachment is not None

        async def submitted() -> Any:
            ask = guest.submit("w-a", "@standin slow 20\nlong")
            while ask.remote is None:  # accepted by the host
                await asyncio.sleep(0.05)
            return ask

        ask = loop.run_until_complete(asyncio.wait_for(submitted(), 30))
        guest.cancel(ask)  # a line without `await`: no loop runs
        reply = loop.run_until_complete(asyncio.wait_for(asyncio.shield(ask.settled()), 30))
        assert reply.outcome == "cancelled"
    finally:
        loop.run_until_complete(guest.stop())
        loop.run_until_complete(host.stop())
        loop.close()
