"""The last line of defence: no agent CLI outlives the Python process that started it.

Where it sits: the runner registers each ``CliProcess`` it spawns and attaches a finalizer to
itself. At interpreter exit (a closed kernel, the end of a script) and when a runner is garbage
collected without ``stop()``, the forced stop steps run synchronously (``CliProcess.kill_now``):
SIGTERM then SIGKILL to the CLI's group and to every recorded descendant's group.
"""

from __future__ import annotations

import atexit
import weakref

from elynav_nb.agents.drivers.process import CliProcess

__all__ = ["live_process_count", "reap_all", "register_process"]

_live_processes: weakref.WeakSet[CliProcess] = weakref.WeakSet()
_atexit_registered = False


def register_process(owner: object, process: CliProcess) -> weakref.finalize[[], object]:
    """Reap ``process`` at exit, or when ``owner`` is garbage collected.

    Returns the finalizer: a runner that starts a process per turn detaches it once that process
    is stopped, so finished turns do not pile up finalizers.
    """
    global _atexit_registered
    _live_processes.add(process)
    finalizer = weakref.finalize(owner, process.kill_now)
    if not _atexit_registered:
        atexit.register(reap_all)
        _atexit_registered = True
    return finalizer


def reap_all() -> None:
    """Force-stop every registered CLI still running (synchronous)."""
    for process in list(_live_processes):
        try:
            process.kill_now()
        except Exception:  # at exit, keep reaping the others
            continue


def live_process_count() -> int:
    return sum(1 for process in list(_live_processes) if process.is_running)
