"""Crash-safe file primitives: atomic replace of one file, and an inter-process lock.

Where it sits: the lowest I/O layer of ``elynav_nb.templates``, used by the template store and
by the workspace manifest. No parsing here: bytes in, bytes out.

``atomic_write_bytes`` writes a temp file in the target's folder, fsyncs it, ``os.replace``s it
over the target and fsyncs the folder, so a reader (or a process killed at any instant) sees
either the old file or the new one, never a mix. ``file_lock`` holds an ``fcntl.flock`` on a
lock file (shared for readers, exclusive for writers); the OS drops it when the process dies,
so a ``kill -9`` never leaves a stale lock.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_write_bytes", "file_lock", "fsync_folder"]


def fsync_folder(folder: Path) -> None:
    """Make a rename or unlink in ``folder`` durable (no-op where folders cannot be opened)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def atomic_write_bytes(target: Path, data: bytes) -> None:
    """Replace ``target`` with ``data`` atomically and durably (mode: the old file's, else 0o644)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o644
    descriptor, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(descriptor, mode)
        with os.fdopen(descriptor, "wb") as temp_file:
            temp_file.write(data)
            temp_file.flush()
            os.fsync(temp_file.fileno())
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise
    fsync_folder(target.parent)


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
