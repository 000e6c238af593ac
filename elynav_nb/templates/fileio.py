"""The inter-process lock of the template store and of the workspace manifest.

Where it sits: the lowest I/O layer of ``elynav_nb.templates``, used by the template store and
by the workspace manifest. Their crash-safe writes come from ``elynav_nb._files``
(``write_atomically``, ``fsync_folder``), shared by the whole package.

``file_lock`` holds an ``fcntl.flock`` on a lock file (shared for readers, exclusive for
writers); the OS drops it when the process dies, so a ``kill -9`` never leaves a stale lock.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["file_lock"]


@contextlib.contextmanager
def file_lock(lock_path: Path, *, shared: bool = False) -> Iterator[None]:
    """Hold an inter-process lock on ``lock_path`` (created if missing) for the ``with`` block."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+b") as lock_file:
        _lock(lock_file.fileno(), shared)
        try:
            yield
        finally:
            _unlock(lock_file.fileno())


try:
    import fcntl

    def _lock(descriptor: int, shared: bool) -> None:
        fcntl.flock(descriptor, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)

    def _unlock(descriptor: int) -> None:
        fcntl.flock(descriptor, fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows: msvcrt locks are exclusive only
    import msvcrt

    def _lock(descriptor: int, shared: bool) -> None:
        os.lseek(descriptor, 0, os.SEEK_SET)
        msvcrt.locking(descriptor, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]

    def _unlock(descriptor: int) -> None:
        os.lseek(descriptor, 0, os.SEEK_SET)
        msvcrt.locking(descriptor, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
