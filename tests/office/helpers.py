"""Helpers for the office tests: a bounded wait, the processes an office's CLIs started, a reply's tool output."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import psutil


async def wait_until(condition: Callable[[], bool], timeout: float = 20.0) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` seconds pass (the event loop keeps running)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if condition():
            return True
        await asyncio.sleep(0.02)
    return condition()


def tool_processes(office: Any) -> list[psutil.Process]:
    """Every live descendant of every agent CLI of the office (tools, elynav ask, their children)."""
    found = []
    for employee in office.employees.values():
        pid = employee.runner.pid if employee.runner.is_running else None
        if pid is None:
            continue
        try:
            children = psutil.Process(pid).children(recursive=True)
        except psutil.NoSuchProcess:
            continue
        found.extend(child for child in children if _still_runs(child))
    return found


def _still_runs(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def tool_text(reply: Any) -> str:
    """What the reply's tools returned (the Bash output of an ``elynav ask``, say), joined."""
    return " ".join(str(getattr(event, "content", "")) for event in reply.events)
