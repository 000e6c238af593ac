"""Helpers for the office tests: a bounded wait (the widget tests' one), the processes an office's CLIs started, a reply's tool output."""

from __future__ import annotations

from typing import Any

import psutil

from tests.widgets.helpers import wait_until

__all__ = ["tool_processes", "tool_text", "wait_until"]


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
