"""The office's own commands an employee may run without a prompt: ``elynav ask`` / ``elynav cancel`` (pure).

Where it sits: ``staffing.runner_for`` gives an employee whose CLI takes no tool rules but asks
permission (an ACP agent: its tools are its own, no ``--allowedTools``) a permission handler made
here, when its definition lists ``ASK_RULE``. The handler allows a shell call that is exactly one
``elynav ask`` or ``elynav cancel`` command (no other command chained, piped or substituted in) and
leaves every other prompt to the user (the board's Allow / Deny, denied after the timeout).

How data flows::

    PermissionRequest (its input's ``command``: a string, or argv words) -> is_office_command
      -> True (allowed) or None (the prompt stays for the user)
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from elynav_nb.agents.events import PermissionRequest

__all__ = ["allow_office_commands", "is_office_command"]

_OFFICE_VERBS = ("ask", "cancel")
_SHELL_OPERATORS = (";", "&", "|", "`", "$(", "<", ">", "\n", "\r")


def is_office_command(command: Any) -> bool:
    """Whether ``command`` (a command line, or its words) is one ``elynav ask|cancel ...`` and nothing else."""
    if isinstance(command, list) and all(isinstance(word, str) for word in command):
        words = list(command)
        if len(words) >= 3 and words[0].endswith(("sh", "bash")) and words[1] in ("-c", "-lc"):
            return is_office_command(words[2])  # codex sends ["bash", "-lc", "<command line>"]
    elif isinstance(command, str):
        if any(operator in command for operator in _SHELL_OPERATORS):
            return False
        try:
            words = shlex.split(command)
        except ValueError:
            return False
    else:
        return False
    return len(words) >= 2 and words[0] in ("elynav", "elynav.exe") and words[1] in _OFFICE_VERBS


def allow_office_commands() -> Callable[[PermissionRequest], bool | None]:
    """A permission handler: True for an office command, None (ask the user) for anything else."""

    def decide(request: PermissionRequest) -> bool | None:
        return True if is_office_command(request.input.get("command")) else None

    return decide
