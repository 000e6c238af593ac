"""Which agent CLI a runner starts: the real ``claude`` when installed, the stand-in otherwise.

Where it sits: called by the runner before it spawns (off the event loop: ``shutil.which`` walks
the disk). Rules, in order: an explicit ``executable`` wins ("standin" names the embedded
stand-in); then the ``ELYNAV_AGENT_CLI`` environment variable (same values); then ``claude`` on
PATH; then the stand-in, unless ``fallback_to_standin`` is false, which gives ``CLI_NOT_FOUND``
with an install hint.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from elynav_nb.errors import CliNotFound

__all__ = ["INSTALL_HINT", "STANDIN", "CliCommand", "locate_cli", "standin_command"]

STANDIN = "standin"
STANDIN_MODULE = "elynav_nb.sandbox.claude_standin"
INSTALL_HINT = (
    "install Claude Code with `npm install -g @anthropic-ai/claude-code` and log in with `claude`, "
    "or run on the embedded stand-in with executable='standin'"
)


@dataclass(frozen=True)
class CliCommand:
    """The words that start the CLI, and whether they start the stand-in."""

    argv: tuple[str, ...]
    is_standin: bool

    @property
    def label(self) -> str:
        return "stand-in (elynav-claude-standin)" if self.is_standin else f"claude ({self.argv[0]})"


def standin_command() -> CliCommand:
    """The embedded stand-in, run by the current Python."""
    return CliCommand(argv=(sys.executable, "-m", STANDIN_MODULE), is_standin=True)


def _resolve(executable: str | Sequence[str]) -> CliCommand:
    words = [executable] if isinstance(executable, str) else list(executable)
    if not words:
        raise CliNotFound(f"an empty command was given for the agent CLI; {INSTALL_HINT}")
    if words == [STANDIN]:
        return standin_command()
    first = words[0]
    found = shutil.which(first) if os.sep not in first else (first if os.access(first, os.X_OK) else None)
    if found is None:
        raise CliNotFound(f"agent CLI {first!r} not found; {INSTALL_HINT}", details={"executable": first})
    is_standin = "elynav-claude-standin" in Path(found).name or STANDIN_MODULE in words
    return CliCommand(argv=(found, *words[1:]), is_standin=is_standin)


def locate_cli(
    executable: str | Sequence[str] | None = None,
    *,
    fallback_to_standin: bool = True,
    environment: Mapping[str, str] | None = None,
) -> CliCommand:
    """The CLI to start (see the module docstring for the rules)."""
    if executable is not None:
        return _resolve(executable)
    environment = os.environ if environment is None else environment
    chosen = environment.get("ELYNAV_AGENT_CLI", "").strip()
    if chosen:
        return _resolve(chosen)
    real = shutil.which("claude")
    if real is not None:
        return CliCommand(argv=(real,), is_standin=False)
    if fallback_to_standin:
        return standin_command()
    raise CliNotFound(f"the claude CLI is not on PATH; {INSTALL_HINT}")
