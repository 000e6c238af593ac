"""A run shown in its cell while it runs, as JupyterLab shows a person's run.

Where it sits: between ``kernel.py`` (which calls ``sent`` and ``changed`` as the run's iopub messages
come) and ``live.py`` (whose ``_show`` applies and sends a write without waiting for its
acknowledgement). It decides what the cell shows and when; it reads no socket.

How a run shows::

    execute_request sent   -> ``FIRST_SHOW_AFTER`` s later, if still running: the outputs so far (none:
                              cleared), count empty, execution_state "running" (JupyterLab's [*])
    the outputs changed    -> after that, written at once, then at most every ``OUTPUT_INTERVAL`` s (a
                              chatty cell costs the room ~20 updates a second; a grown stream is appended)
    the run ended          -> ``last_write(result)``: the outputs, the count, "idle" (``live.py`` awaits
                              its acknowledgement, which covers the writes before it)
    the run failed         -> ``last_write()``: the outputs that came, no count, "idle"

Why the first show waits: most cells end within a few milliseconds, and then one write says it all.
Each write costs the server time on the very path that relays the kernel's messages (jupyter-collaboration
stores every update as it broadcasts it): measured, showing a 7 ms cell as it ran (cleared, then its output,
then its end) put its end ~2 ms later at a third peer than one write did. A person sees no difference
below ~50 ms.

A write that fails (the cell deleted by a person, the room gone) stops the showing; the run's last
write then says why.

A ``[*]`` a process leaves when it dies mid-run (a person restarts the kernel the agent runs in, the
agent's process is killed) would stay in every peer's view: only its writer ends it. So each ``running``
write marks the run with this process's identity (``cells.RUNS_ROOT``, never saved), the last write
drops the mark, and a client opening the notebook ends the runs whose process no longer runs
(``stale_runs``: a process on another host cannot be told dead, and its mark is left).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable
from typing import Any, Final

from jupyter_ydoc import YNotebook

from elynav_nb._process_identity import ProcessIdentity
from elynav_nb.errors import ElynavError
from elynav_nb.notebook import cells
from elynav_nb.notebook.journal import Write
from elynav_nb.notebook.kernel import RunResult
from elynav_nb.notebook.outputs import OutputCollector

__all__ = ["FIRST_SHOW_AFTER", "OUTPUT_INTERVAL", "RunDisplay", "stale_runs"]

FIRST_SHOW_AFTER: Final = 0.03
OUTPUT_INTERVAL: Final = 0.05


class RunDisplay:
    """The ``kernel.RunWatcher`` of one run of the cell ``cell_id``; ``show`` applies and sends a write."""

    def __init__(
        self,
        cell_id: str,
        show: Callable[[Write], Any],
        *,
        first_show_after: float = FIRST_SHOW_AFTER,
        interval: float = OUTPUT_INTERVAL,
    ) -> None:
        self.cell_id = cell_id
        self.first_show_after = first_show_after
        self.interval = interval
        self.began = False
        self.failure: ElynavError | None = None
        self._show = show
        self._collector: OutputCollector | None = None
        self._last_shown: float | None = None
        self._due: asyncio.TimerHandle | None = None
        self._runner = _process_record(os.getpid())  # by pid: a forked process is another

    def sent(self) -> None:
        self.began = True
        self._due = asyncio.get_running_loop().call_later(self.first_show_after, self._show_outputs)

    def changed(self, collector: OutputCollector) -> None:
        self._collector = collector
        if self._due is not None or self._last_shown is None:
            return  # a write is due (the first show, or a throttled one): it takes the outputs then
        loop = asyncio.get_running_loop()
        if loop.time() - self._last_shown >= self.interval:
            self._show_outputs()
        else:
            self._due = loop.call_at(self._last_shown + self.interval, self._show_outputs)

    def _show_outputs(self) -> None:
        self._due = None
        self._last_shown = asyncio.get_running_loop().time()
        self._write(self.outputs(), "running")

    def outputs(self) -> list[dict[str, Any]]:
        return self._collector.notebook_outputs() if self._collector is not None else []

    def _write(self, outputs: list[dict[str, Any]], state: str) -> None:
        if self.failure is not None:
            return
        try:
            self._show(
                Write("outputs", self.cell_id, outputs=outputs, execution_state=state, runner=self._runner)
            )
        except ElynavError as error:
            self.failure = error

    def last_write(self, result: RunResult | None = None) -> Write:
        """The run's last write: its outputs and count, or (``result`` None: it failed) the outputs that
        came; the cell idle again. No write is due after it."""
        if self._due is not None:
            self._due.cancel()
            self._due = None
        if result is None:
            return Write("outputs", self.cell_id, outputs=self.outputs(), execution_state="idle")
        return Write(
            "outputs",
            self.cell_id,
            outputs=result.outputs,
            execution_count=result.execution_count,
            execution_state="idle",
        )


@functools.cache
def _process_record(pid: int) -> dict[str, Any]:
    return ProcessIdentity.current().as_record()


def stale_runs(notebook: YNotebook) -> list[str]:
    """The cells whose run mark names a process that no longer runs (``Write("end_run", ...)`` ends each)."""
    return [
        cell_id
        for cell_id, record in cells.runs_shown(notebook).items()
        if (identity := ProcessIdentity.from_record(record)) is None or identity.running() is False
    ]
