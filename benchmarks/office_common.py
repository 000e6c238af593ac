"""What the three office benchmarks share: the test agent, a percentile, an isolated stand-in home,
the leftover-process check and the script entry point.

Where it sits: imported by ``office_cancel.py``, ``office_dispatch.py`` and ``office_queue.py`` (run as
``python benchmarks/<script>.py``, so this folder is on the import path). Each script measures; this
module only sets the stage and checks that nothing is left running.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:
    from elynav_nb.agents import AgentDefinition

__all__ = [
    "BenchmarkFailed",
    "isolated_standin_home",
    "percentile",
    "processes_left",
    "report_processes_left",
    "run_script",
    "worker",
]


class BenchmarkFailed(RuntimeError):
    """The office or the stand-in did not behave as the scenario needs (no reply, wrong order...)."""


def worker(name: str) -> AgentDefinition:
    """The test agent of ``tests/office/conftest.py``: may run ``elynav ask`` through its Bash tool."""
    from elynav_nb.agents import AgentDefinition
    from elynav_nb.office import ASK_RULE

    return AgentDefinition(
        name=name, description=f"test agent {name}", tools=("Read", ASK_RULE), prompt=f"You are {name}."
    )


def percentile(values: list[float], fraction: float) -> float:
    """Linear-interpolated percentile (``fraction`` 0..1); an infinite sample ("never") stays infinite."""
    if len(values) < 2:
        return values[0]
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    if ordered[high] == float("inf"):
        return float("inf") if position > low or ordered[low] == float("inf") else ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@contextlib.contextmanager
def isolated_standin_home(prefix: str) -> Iterator[Path]:
    """A throw-away folder whose ``standin-home`` holds the stand-in's sessions; no office variables inherited."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        os.environ["ELYNAV_STANDIN_HOME"] = str(Path(folder) / "standin-home")
        for variable in (
            "ELYNAV_OFFICE_SOCKET",
            "ELYNAV_OFFICE_TOKEN",
            "ELYNAV_STANDIN_VERSION",
            "CLAUDECODE",
        ):
            os.environ.pop(variable, None)
        yield Path(folder)


def processes_left() -> list[int]:
    """Our descendants still running (zombies excluded): there should be none after every stop()."""
    left = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.status() != psutil.STATUS_ZOMBIE:
                left.append(child.pid)
    return left


def report_processes_left(left: list[int]) -> None:
    print(f"\nprocesses left after office.stop() / runner.stop(): {len(left)} {left if left else ''}")


def run_script(main: Callable[[], int]) -> None:
    """Exit with ``main()``'s status; a ``BenchmarkFailed`` is one line on stderr and status 1."""
    try:
        sys.exit(main())
    except BenchmarkFailed as failure:
        print(f"BENCHMARK FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
