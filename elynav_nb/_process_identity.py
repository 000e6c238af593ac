"""A process known by its pid and its start time (a reused pid has another), and whether it still runs.

Where it sits: a package-level private module, because capabilities do not import each other. The agent
drivers (``agents/drivers/process_tree.py``) end the processes a CLI started by their identities; the
live notebook (``notebook/live.py``) marks a run it shows as ``[*]`` with its own, so a later client can
end a ``[*]`` whose process died. I/O only (``/proc`` through psutil).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any

import psutil

__all__ = ["ProcessIdentity"]

_SAME_START = 0.01  # s: two reads of one process's create_time agree to the clock tick


@dataclass(frozen=True)
class ProcessIdentity:
    """A process as it was seen: its pid, its start time and (when it travels) where that pid means it."""

    pid: int
    create_time: float
    host: str = ""

    @classmethod
    def current(cls) -> ProcessIdentity:
        """This process, on this host."""
        return cls(os.getpid(), psutil.Process().create_time(), _host())

    def process(self) -> psutil.Process | None:
        """The process, if it still runs as itself on this machine (not a zombie, not a reused pid)."""
        try:
            candidate = psutil.Process(self.pid)
            if (
                abs(candidate.create_time() - self.create_time) < _SAME_START
                and candidate.status() != psutil.STATUS_ZOMBIE
            ):
                return candidate
        except psutil.Error:
            pass
        return None

    def running(self) -> bool | None:
        """Whether it still runs; ``None`` when it ran on another host (nothing here can tell)."""
        if self.host and self.host != _host():
            return None
        return self.process() is not None

    def as_record(self) -> dict[str, Any]:
        return {"pid": self.pid, "create_time": self.create_time, "host": self.host}

    @classmethod
    def from_record(cls, record: Any) -> ProcessIdentity | None:
        """The identity a record holds; ``None`` for anything else (a record written by another tool)."""
        if not isinstance(record, dict):
            return None
        pid, create_time, host = record.get("pid"), record.get("create_time"), record.get("host", "")
        if (
            not isinstance(pid, int | float)
            or not isinstance(create_time, int | float)
            or not isinstance(host, str)
        ):
            return None
        return cls(int(pid), float(create_time), host)


def _host() -> str:
    """Where a pid means this process: the host name, and on Linux the PID namespace (two containers of one
    pod share a host name, not their pids)."""
    try:
        return f"{socket.gethostname()}/pidns:{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return socket.gethostname()
