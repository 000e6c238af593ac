"""``ToolThreads``: the daemon threads plain (non-``async``) kernel tools run on, reused between calls.

Where it sits: under ``kernel_tool._run_in_thread``. A plain function must not run on the kernel's
event loop (the widgets and the turn's stream would freeze), so each call runs on a thread of its
own; starting a fresh thread per call costs about a millisecond on a loaded machine, most of a
trivial tool's round trip. Here a finished call's thread waits ``IDLE_SECONDS`` for the next call
before it ends.

The rule that matters is kept: a call never waits for another one. A call takes an idle thread or,
when every thread is busy (a slow or hung tool holds its own), starts a new one. Threads are daemons,
so a tool that never returns does not keep the kernel from exiting.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

__all__ = ["IDLE_SECONDS", "ToolThreads", "tool_threads"]

IDLE_SECONDS = 30.0

Job = Callable[[], None]


class _Worker:
    """One daemon thread running the jobs handed to it, one at a time."""

    def __init__(self, pool: ToolThreads) -> None:
        self.pool = pool
        self.jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name="elynav-kernel-tool", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                job = self.jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                if self.pool.retire(self):
                    return
                continue  # handed a job just as it timed out: take it
            try:
                job()
            finally:
                self.thread.name = "elynav-kernel-tool"
                self.pool.rest(self)


class ToolThreads:
    """Idle threads first, a new thread when none is idle (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []

    def run(self, job: Job) -> None:
        """Run ``job`` on a thread now (``job`` handles its own exceptions)."""
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self)
        worker.jobs.put(job)

    @property
    def idle_count(self) -> int:
        with self._lock:
            return len(self._idle)

    def rest(self, worker: _Worker) -> None:
        with self._lock:
            self._idle.append(worker)

    def retire(self, worker: _Worker) -> bool:
        """True when ``worker`` was idle and may end (False: a job was just handed to it)."""
        with self._lock:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False


tool_threads = ToolThreads()
"""The process's threads for plain kernel tools."""
