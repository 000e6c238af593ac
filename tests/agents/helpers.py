"""Helpers for runner tests: the fake CLI's command line and process-table checks (/proc, psutil)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import psutil

FAKE_CLI = str(Path(__file__).with_name("fake_cli.py"))


def fake_cli_command() -> list[str]:
    return [sys.executable, FAKE_CLI]


def process_alive(pid: int) -> bool:
    """True when ``pid`` exists and is not a zombie (read from /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X")


def our_zombies() -> list[int]:
    """Zombie children of this test process (left un-reaped)."""
    zombies = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        state, parent_pid = fields[0], int(fields[1])
        if parent_pid == os.getpid() and state == "Z":
            zombies.append(int(entry.name))
    return zombies


def wait_until_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not process_alive(pid):
            return True
        time.sleep(0.05)
    return not process_alive(pid)


async def wait_until_gone_async(pid: int, timeout: float = 5.0) -> bool:
    """``wait_until_gone`` for async tests: lets the event loop run while waiting."""
    import asyncio

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not process_alive(pid):
            return True
        await asyncio.sleep(0.05)
    return not process_alive(pid)


def running_commands(marker: str) -> list[psutil.Process]:
    """The live (not zombie) processes whose command line holds ``marker``."""
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        try:
            alive = process.info["status"] != psutil.STATUS_ZOMBIE
            if alive and marker in " ".join(process.info["cmdline"] or []):
                found.append(process)
        except psutil.Error:
            continue
    return found
