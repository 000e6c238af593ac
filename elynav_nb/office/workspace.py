"""The office's files in a workspace: one lock, the canonical session ids, the history path.

Where it sits: opened by ``Office.start`` and closed by ``Office.stop``. Everything lives under
``<workspace>/.elynav/``:

- ``office.lock``: held with ``flock`` for the office's whole life. A second office on the same
  workspace (another kernel, another process, or this one) is refused with
  ``OFFICE_ALREADY_RUNNING``; the kernel releases the lock when the process dies, so a crashed
  kernel never blocks the next one. It names the holder's pid and socket folder: the next office
  removes the folder a killed one left in the temp dir.
- ``sessions.json``: ``{agent: session_id}``, the one canonical conversation of each employee,
  written atomically (``elynav_nb._files.write_atomically``: temp file + rename) so a crash
  leaves the old or the new file, never half.
- ``history.jsonl``: see ``office/history.py``.

Beside the socket, in the office's private socket folder (mode 0700): ``user.token`` (mode 0600),
the user token a process that is no agent of the office presents to be the user (``elynav ask``
from a terminal, a kernel attached to the office, ``elynav acp``): ``presented_user_token``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from pathlib import Path

from elynav_nb._files import write_atomically
from elynav_nb.errors import OfficeAlreadyRunning, OfficeUnreachable

__all__ = [
    "SOCKET_FOLDER_PREFIX",
    "USER_TOKEN_FILE",
    "OfficeFiles",
    "lock_or_find_host",
    "presented_user_token",
    "serving_office",
    "write_user_token",
]

SOCKET_FOLDER_PREFIX = "elynav-office-socket-"
USER_TOKEN_FILE = "user.token"
_AGENT_TOKEN_VARIABLE = "ELYNAV_OFFICE_TOKEN"  # peers.TOKEN_VARIABLE (not imported: elynav ask stays light)
_SOCKET_VARIABLE = "ELYNAV_OFFICE_SOCKET"  # wire.SOCKET_VARIABLE


class OfficeFiles:
    """The ``.elynav`` folder of one workspace, locked while an office runs on it."""

    def __init__(self, workspace: Path) -> None:
        self.folder = workspace / ".elynav"
        self.lock_path = self.folder / "office.lock"
        self.sessions_path = self.folder / "sessions.json"
        self.history_path = self.folder / "history.jsonl"
        self._lock_descriptor: int | None = None

    @property
    def locked(self) -> bool:
        return self._lock_descriptor is not None

    def lock(self) -> None:
        """Take the workspace's office lock, or raise ``OFFICE_ALREADY_RUNNING``."""
        if self._lock_descriptor is not None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(descriptor)
            os.close(descriptor)
            raise OfficeAlreadyRunning(
                f"another office already runs on {self.folder.parent}{holder}; stop it (await office.stop()) "
                "or use another workspace",
                details={"workspace": str(self.folder.parent)},
            ) from None
        _remove_socket_folder_left_by(descriptor)
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode())
        self._lock_descriptor = descriptor

    def record_socket_folder(self, folder: Path) -> None:
        """Write the socket's folder in the lock file, so the next office removes it if this one dies."""
        if self._lock_descriptor is not None:
            os.pwrite(self._lock_descriptor, f"{os.getpid()}\n{folder}\n".encode(), 0)

    def unlock(self) -> None:
        """Release the lock (idempotent)."""
        descriptor, self._lock_descriptor = self._lock_descriptor, None
        if descriptor is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(descriptor, 0)
        os.close(descriptor)  # closing the descriptor releases the flock

    def load_sessions(self) -> dict[str, str]:
        try:
            loaded = json.loads(self.sessions_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        if not isinstance(loaded, dict):
            return {}
        return {str(agent): str(session) for agent, session in loaded.items() if isinstance(session, str)}

    def save_sessions(self, sessions: dict[str, str]) -> None:
        text = json.dumps(dict(sorted(sessions.items())), indent=2)
        write_atomically(self.sessions_path, text, mode=0o600)  # 0o600, as the file always had


def serving_office(workspace: Path) -> tuple[Path, str] | None:
    """``(socket path, user token)`` of the office that serves ``workspace`` now, or None.

    An office serves while it holds ``office.lock`` (a test lock that succeeds means nobody does);
    the lock file names its socket folder once it listens.
    """
    lock_path = workspace / ".elynav" / "office.lock"
    try:
        descriptor = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # held: an office runs
        else:
            return None  # nobody holds it (released when this descriptor closes)
        lines = os.pread(descriptor, 4096, 0).decode("utf-8", "replace").splitlines()
    finally:
        os.close(descriptor)
    if len(lines) < 2:
        return None  # it has not listened yet (or runs with listen=False)
    folder = Path(lines[1])
    try:
        token = (folder / USER_TOKEN_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return folder / "office.sock", token


async def lock_or_find_host(
    files: OfficeFiles, workspace: Path, *, attach: bool, timeout: float
) -> tuple[Path, str] | None:
    """Take the workspace's lock (``None``: this office hosts), or find the office holding it (its
    socket and user token, to attach to).

    A host still starting names its socket once open: waited for, up to ``timeout`` seconds
    (``OFFICE_UNREACHABLE`` then). ``attach=False``: ``OFFICE_ALREADY_RUNNING`` instead.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        try:
            files.lock()
            return None
        except OfficeAlreadyRunning:
            if not attach:
                raise
            found = serving_office(workspace)
            if found is not None:
                return found
            if loop.time() >= deadline:
                raise OfficeUnreachable(
                    f"an office holds {workspace} but does not listen (listen=False, or it is stuck starting)",
                    details={"workspace": str(workspace)},
                ) from None
        await asyncio.sleep(0.1)


def write_user_token(socket_folder: Path, token: str) -> None:
    """Write the office's user token beside its socket (mode 0600, in the 0700 folder)."""
    write_atomically(socket_folder / USER_TOKEN_FILE, token, mode=0o600)


def presented_user_token(socket_path: str | os.PathLike[str] | None) -> str:
    """The user token a client presents to the office at ``socket_path`` (or ``$ELYNAV_OFFICE_SOCKET``).

    "" in an agent's process (it has its own ``ELYNAV_OFFICE_TOKEN``: the office knows it as that agent)
    and when the file cannot be read.
    """
    if os.environ.get(_AGENT_TOKEN_VARIABLE):
        return ""
    path = socket_path or os.environ.get(_SOCKET_VARIABLE)
    if not path:
        return ""
    try:
        return (Path(path).parent / USER_TOKEN_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _remove_socket_folder_left_by(descriptor: int) -> None:
    """A killed office leaves its private socket folder in the temp dir: its successor removes it."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        lines = os.pread(descriptor, 4096, 0).decode().splitlines()
        if len(lines) >= 2:
            folder = Path(lines[1])
            if folder.name.startswith(SOCKET_FOLDER_PREFIX) and folder.parent == Path(tempfile.gettempdir()):
                shutil.rmtree(folder, ignore_errors=True)


def _read_holder(descriptor: int) -> str:
    with contextlib.suppress(OSError, ValueError, IndexError):
        first_line = os.pread(descriptor, 64, 0).decode().splitlines()[0]
        return f" (process {int(first_line)})"
    return ""
