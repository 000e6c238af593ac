"""A run shown in its cell as it goes, without a server: the fewest output changes, the journal kept
small, and when ``RunDisplay`` writes (a quick run once; a longer one running, then its outputs
throttled; a failed one idle with what came); a ``[*]`` left by a process that died, ended."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import psutil
import pytest
from jupyter_ydoc import YNotebook
from pycrdt import Doc, Map

from elynav_nb._process_identity import ProcessIdentity
from elynav_nb.errors import CellNotFound
from elynav_nb.notebook import cells
from elynav_nb.notebook.journal import Journal, Write
from elynav_nb.notebook.kernel import RunResult
from elynav_nb.notebook.outputs import OutputCollector
from elynav_nb.notebook.run_display import RunDisplay, stale_runs

pytestmark = pytest.mark.anyio


def _stream(text: str) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": text}


def _notebook_with_a_code_cell() -> tuple[YNotebook, list[int]]:
    notebook = YNotebook(Doc())
    cells.insert_cell(notebook, 0, "code", "x", "c")
    sizes: list[int] = []
    notebook.ydoc.observe(lambda event: sizes.append(len(event.update)))
    return notebook, sizes


def _write(notebook: YNotebook, outputs: list[dict], count: int | None, state: str | None) -> None:
    with notebook.ydoc.transaction():
        cells.set_outputs(notebook, 0, outputs, count, state)


def test_outputs_already_there_are_kept_and_a_grown_stream_is_appended():
    notebook, sizes = _notebook_with_a_code_cell()
    _write(notebook, [_stream("a" * 1000)], None, "running")
    _write(notebook, [_stream("a" * 1000 + "b")], None, "running")
    result = {
        "output_type": "execute_result",
        "data": {"text/plain": "1"},
        "metadata": {},
        "execution_count": 3,
    }
    _write(notebook, [_stream("a" * 1000 + "b"), result], 3, "idle")
    _write(notebook, [_stream("a" * 1000 + "b"), result], 3, "idle")  # the same: no change at all
    assert len(sizes) == 3 and sizes[1] < 100 and sizes[2] < 400  # the 1,000 characters sent once
    cell = notebook.ycells[0].to_py()
    assert cell["outputs"] == [_stream("a" * 1000 + "b"), result]
    assert (cell["execution_count"], cell["execution_state"]) == (3, "idle")
    _write(notebook, [_stream("c")], 4, None)  # another text replaces; None leaves the state
    cell = notebook.ycells[0].to_py()
    assert cell["outputs"] == [_stream("c")] and cell["execution_state"] == "idle"
    assert notebook.get()["cells"][0]["outputs"] == [_stream("c")]  # saved without execution_state


def test_a_cells_outputs_write_supersedes_its_earlier_ones_in_the_journal():
    notebook, _ = _notebook_with_a_code_cell()
    journal = Journal()
    for write in (
        Write("outputs", "c", outputs=[_stream("1")], execution_state="running"),
        Write("source", "c", source="y"),
        Write("outputs", "c", outputs=[_stream("12")], execution_count=5, execution_state="idle"),
    ):
        journal.add(write)
    assert [(write.kind, write.execution_state) for write in journal.writes] == [
        ("source", None),
        ("outputs", "idle"),
    ]
    journal.replay(notebook, lambda: 1)
    cell = notebook.ycells[0].to_py()
    assert (cell["source"], cell["outputs"], cell["execution_count"]) == ("y", [_stream("12")], 5)


def _collector(*texts: str) -> OutputCollector:
    collector = OutputCollector()
    for text in texts:
        collector.add("stream", {"name": "stdout", "text": text})
    return collector


async def test_a_quick_run_is_one_write():
    shown: list[Write] = []
    display = RunDisplay("c", shown.append, first_show_after=0.2)
    display.sent()
    display.changed(_collector("1\n"))
    last = display.last_write(RunResult("ok", 7, [_stream("1\n")]))
    await asyncio.sleep(0.3)
    assert shown == [] and (last.outputs, last.execution_count, last.execution_state) == (
        [_stream("1\n")],
        7,
        "idle",
    )


async def test_a_longer_run_shows_running_then_its_outputs_at_most_every_interval():
    shown: list[Write] = []
    display = RunDisplay("c", shown.append, first_show_after=0.1, interval=0.2)
    display.sent()
    await asyncio.sleep(0.15)  # still running: cleared (nothing came yet) and running
    assert [(write.outputs, write.execution_state) for write in shown] == [([], "running")]
    await asyncio.sleep(0.25)
    display.changed(_collector("1\n"))  # the interval passed: at once
    assert shown[-1].outputs == [_stream("1\n")] and len(shown) == 2
    display.changed(_collector("1\n", "2\n"))
    display.changed(_collector("1\n", "2\n", "3\n"))  # within the interval: one write, later
    assert len(shown) == 2
    await asyncio.sleep(0.3)
    assert len(shown) == 3 and shown[-1].outputs == [_stream("1\n2\n3\n")]
    display.changed(_collector("1\n", "2\n", "3\n", "4\n"))  # due later...
    last = display.last_write(RunResult("ok", 7, [_stream("1\n2\n3\n4\n")]))
    await asyncio.sleep(0.4)  # ...but the last write came first: nothing more
    assert len(shown) == 3 and last.execution_count == 7
    assert all(write.execution_count is None and write.execution_state == "running" for write in shown)


async def test_a_failed_run_ends_idle_with_what_came_and_a_failed_write_stops_the_showing():
    attempts: list[Write] = []

    def show(write: Write) -> None:
        attempts.append(write)
        if len(attempts) == 2:
            raise CellNotFound("a person deleted the cell")

    display = RunDisplay("c", show, first_show_after=0, interval=0)
    display.sent()
    await asyncio.sleep(0.05)
    display.changed(_collector("1\n"))
    display.changed(_collector("1\n", "2\n"))
    assert len(attempts) == 2 and isinstance(display.failure, CellNotFound)  # no third attempt
    last = display.last_write()
    assert (last.outputs, last.execution_count, last.execution_state) == ([_stream("1\n2\n")], None, "idle")
    assert not RunDisplay("c", show).began  # a refused run writes nothing (``sent`` never came)


def _dead_process() -> dict:
    """The identity record of a process that ran on this host and exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    record = ProcessIdentity(
        child.pid, psutil.Process(child.pid).create_time(), ProcessIdentity.current().host
    )
    child.wait()
    return record.as_record()


async def test_a_running_cell_is_marked_by_its_process_and_the_mark_goes_with_its_end():
    notebook, _ = _notebook_with_a_code_cell()
    display = RunDisplay("c", lambda write: _apply(notebook, write), first_show_after=0)
    display.sent()
    await asyncio.sleep(0.02)
    assert notebook.ycells[0]["execution_state"] == "running"
    assert cells.runs_shown(notebook) == {"c": ProcessIdentity.current().as_record()}
    assert stale_runs(notebook) == []  # this process still runs
    _apply(notebook, display.last_write(RunResult("ok", 2, [])))
    assert cells.runs_shown(notebook) == {} and notebook.ycells[0]["execution_state"] == "idle"
    assert "elynav_runs" not in json.dumps(notebook.get())  # never saved


def _apply(notebook: YNotebook, write: Write) -> None:
    with notebook.ydoc.transaction():
        write.apply(notebook)


def test_a_run_left_running_by_a_dead_process_is_ended_and_nothing_else_is():
    notebook = YNotebook(Doc())
    for index, cell_id in enumerate(["dead", "alive", "elsewhere", "persons", "rerun"]):
        cells.insert_cell(notebook, index, "code", "x", cell_id)
    dead = _dead_process()
    marks = {
        "dead": dead,
        "alive": ProcessIdentity.current().as_record(),
        "elsewhere": {**dead, "host": "another-host"},  # cannot be told dead from here
        "rerun": dead,  # a person ran it again since: idle, only the mark goes
        "gone": dead,  # a person deleted the cell
    }
    with notebook.ydoc.transaction():
        for index, cell_id in enumerate(["dead", "alive", "elsewhere", "persons"]):
            outputs = [_stream(f"{cell_id}\n")]
            cells.set_outputs(notebook, index, outputs, None, "running", marks.get(cell_id))
        notebook.ydoc.get(cells.RUNS_ROOT, type=Map).update({"rerun": dead, "gone": dead})
    assert sorted(stale_runs(notebook)) == ["dead", "gone", "rerun"]
    for cell_id in stale_runs(notebook):
        write = Write("end_run", cell_id)
        _apply(notebook, write)
        assert write.holds(notebook)
        _apply(notebook, write)  # a replay after a reset: nothing more
    states = {cell["id"]: cell.get("execution_state") for cell in notebook.ycells.to_py()}
    assert states == {
        "dead": "idle",  # ended, with the outputs that came
        "alive": "running",
        "elsewhere": "running",
        "persons": "running",  # no mark: a person's run
        "rerun": "idle",
    }
    assert notebook.ycells[0].to_py()["outputs"] == [_stream("dead\n")]
    assert set(cells.runs_shown(notebook)) == {"alive", "elsewhere"}


def test_a_process_identity_tells_a_dead_a_live_and_a_reused_pid_apart():
    this = ProcessIdentity.current()
    assert this.running() is True and ProcessIdentity.from_record(this.as_record()) == this
    dead = ProcessIdentity.from_record(_dead_process())
    assert dead is not None and dead.running() is False
    assert ProcessIdentity(this.pid, this.create_time - 100, this.host).running() is False  # reused pid
    assert ProcessIdentity(1, 0.0, "another-host").running() is None
    assert ProcessIdentity.from_record({"pid": "1"}) is None and ProcessIdentity.from_record([]) is None
