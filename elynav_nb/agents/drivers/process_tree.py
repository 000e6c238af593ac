"""Every process a CLI or a terminal command started, found and ended by pid: the mark and the identities.

Where it sits: under ``process.py`` (a CLI and its tools) and ``protocols/acp/terminals.py`` (the commands an
ACP agent runs through us). I/O only (``/proc`` through psutil, signals); no protocol.

Why a mark: a process started in a session of its own (``setsid cmd &``, a double fork, the
everyday ``npm run dev &`` once its shell exits) is re-parented to PID 1 and no longer a descendant
of what started it, often before any snapshot of the tree can see it. Each supervised command is
started with ``ELYNAV_PROCESS_MARK=<random>`` in its environment, which every process it starts
inherits; ``marked_processes`` finds them all again by that mark (processes of this user started
since the command, whose ``/proc/<pid>/environ`` carries it). A process is known by its pid and its
start time (``ProcessIdentity``), so a pid reused by another program is never signalled.

How a set of processes is ended::

    identities -> still_alive -> SIGTERM to each pid (and to the group it leads, never ours)
      -> wait up to ``grace`` -> SIGKILL to those still alive -> wait up to ``grace``
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import time
from collections.abc import Iterable

import psutil

from elynav_nb._process_identity import ProcessIdentity

__all__ = [
    "MARK_VARIABLE",
    "ProcessIdentity",
    "end_processes",
    "end_processes_now",
    "identities_of",
    "marked_processes",
    "new_mark",
    "signal_processes",
    "still_alive",
]

MARK_VARIABLE = "ELYNAV_PROCESS_MARK"
_START_SLACK_SECONDS = 1.0  # create_time is rounded to clock ticks
_POLL_SECONDS = 0.02


def new_mark() -> str:
    """A fresh mark for one supervised command."""
    return secrets.token_hex(12)


def marked_processes(mark: str, since: float) -> list[psutil.Process]:
    """The live processes of this user started at ``since`` (a time.time()) or later, carrying ``mark``."""
    uid = os.getuid()
    own = os.getpid()
    found = []
    for candidate in psutil.process_iter(["create_time", "uids", "status"]):
        info = candidate.info
        if (
            candidate.pid == own
            or info.get("create_time") is None
            or info["create_time"] < since - _START_SLACK_SECONDS
        ):
            continue
        uids = info.get("uids")
        if uids is None or uids.real != uid or info.get("status") == psutil.STATUS_ZOMBIE:
            continue
        try:
            if candidate.environ().get(MARK_VARIABLE) == mark:
                found.append(candidate)
        except psutil.Error:
            continue
    return found


def identities_of(processes: Iterable[psutil.Process]) -> dict[int, ProcessIdentity]:
    identities = {}
    for process in processes:
        try:
            identities[process.pid] = ProcessIdentity(process.pid, process.create_time())
        except psutil.Error:
            continue
    return identities


def still_alive(identities: dict[int, ProcessIdentity]) -> list[psutil.Process]:
    """The processes of ``identities`` still running as themselves (gone ones are dropped from it)."""
    alive = []
    for identity in list(identities.values()):
        process = identity.process()
        if process is None:
            identities.pop(identity.pid, None)
        else:
            alive.append(process)
    return alive


def signal_processes(processes: Iterable[psutil.Process], signal_number: int) -> None:
    """``signal_number`` to each process by pid, and to the group of each that leads one (never ours)."""
    own_group = os.getpgrp()
    for process in processes:
        try:
            if os.getpgid(process.pid) == process.pid and process.pid != own_group:
                os.killpg(process.pid, signal_number)
            os.kill(process.pid, signal_number)
        except (ProcessLookupError, PermissionError):
            continue


async def end_processes(
    identities: dict[int, ProcessIdentity], grace: float = 1.0, *, first_signal: int = signal.SIGTERM
) -> int:
    """SIGTERM (or ``first_signal``), then SIGKILL after ``grace`` seconds, each process of
    ``identities``; how many were alive."""
    alive = still_alive(identities)
    if not alive:
        return 0
    signal_processes(alive, first_signal)
    for signal_number in (signal.SIGKILL, None):
        deadline = time.monotonic() + grace
        while still_alive(identities) and time.monotonic() < deadline:
            await asyncio.sleep(_POLL_SECONDS)
        left = still_alive(identities)
        if not left or signal_number is None:
            break
        signal_processes(left, signal_number)
    return len(alive)


def end_processes_now(identities: dict[int, ProcessIdentity], grace: float = 0.5) -> int:
    """``end_processes`` without an event loop (the reaper at interpreter exit)."""
    alive = still_alive(identities)
    if not alive:
        return 0
    signal_processes(alive, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while still_alive(identities) and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
    left = still_alive(identities)
    if left:
        signal_processes(left, signal.SIGKILL)
    return len(alive)
