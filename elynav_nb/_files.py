"""Crash-safe file writing: replace one file atomically and durably, and make a rename durable.

Where it sits: a package-level private module, below every capability. The agent installer
(``agents/definitions/``), the template store and workspace manifest (``templates/``), the
workspace's ``.mcp.json`` (``crm/workspace.py``), the office's ``sessions.json``
(``office/workspace.py``) and the per-turn CLIs' config files all write through
``write_atomically``. No parsing here: bytes (or text, written as UTF-8) in, one file out.

Data flow of ``write_atomically(path, data)``:

1. a temporary file ``.<name>.<random>.tmp`` is created in the target's own folder (same file
   system, so the rename below is atomic; the ``.tmp`` suffix keeps loaders that look for
   ``*.md`` or ``*.json`` from ever seeing it);
2. its permission bits are set (the ``mode`` given, else the old file's, else ``0o644``), the
   data is written, flushed and fsynced;
3. ``os.replace`` renames it over the target: a reader, or a process killed at any instant,
   sees either the old file or the new one, never a mix;
4. the folder is fsynced, so the rename itself survives a power cut.

On any error before the rename the temporary file is removed and the error goes up unchanged:
no half-written file is ever left behind, under the target's name or any other.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["NEW_FILE_MODE", "fsync_folder", "write_atomically"]

NEW_FILE_MODE = 0o644
"""The permission bits of a new file when the caller gives no ``mode``: owner writes, all read."""


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


def write_atomically(path: Path | str, data: bytes | str, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically and durably; create its folder if missing.

    ``data`` given as text is written as UTF-8, exactly as given (no newline translation).
    ``mode``: the permission bits of the written file; ``None`` keeps the old file's bits, or
    gives ``NEW_FILE_MODE`` to a new file. The umask does not apply: the bits are set as asked.
    """
    target = Path(path)
    content = data.encode("utf-8") if isinstance(data, str) else data
    permission_bits = mode if mode is not None else _permission_bits_of(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as temporary_file:
            _set_permission_bits(temporary_file.fileno(), temporary_name, permission_bits)
            temporary_file.write(content)
            temporary_file.flush()
            os.fsync(temporary_file.fileno())
        os.replace(temporary_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary_name)
        raise
    fsync_folder(target.parent)


def _permission_bits_of(target: Path) -> int:
    """The permission bits of the file at ``target``, or ``NEW_FILE_MODE`` when there is none yet."""
    try:
        return stat.S_IMODE(target.stat().st_mode) & 0o777
    except FileNotFoundError:
        return NEW_FILE_MODE


def _set_permission_bits(descriptor: int, temporary_name: str, permission_bits: int) -> None:
    if hasattr(os, "fchmod"):
        os.fchmod(descriptor, permission_bits)
    else:  # pragma: no cover - Windows has no fchmod
        os.chmod(temporary_name, permission_bits)
