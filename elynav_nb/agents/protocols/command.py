"""How a protocol's CLI is found: ``CliLocation`` (its rules, as data) and ``locate_command`` (the search).

Where it sits: each protocol's registry entry carries a ``CliLocation``; its launcher calls
``locate_command`` before it spawns (off the event loop: ``shutil.which`` walks the disk), and
``agents/locate.py`` (the public ``locate_cli``) looks the location up by CLI name. The rules, in
order: an explicit ``executable`` wins (``"standin"`` names the embedded stand-in, where the protocol
has one); then the location's environment variable (a command line, split as the location says);
then the CLI's name on ``PATH`` (where the location looks there); then the stand-in, when the caller
allows it; else ``CLI_NOT_FOUND`` with the location's install hint.

``cli_version`` tells the version of a located CLI from the ``package.json`` of the npm package its
command belongs to (no process), else from ``<cli> --version`` (bounded); "" for a CLI that says it
itself (claude, in its ``init`` line).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from elynav_nb.errors import CliNotFound, InvalidInput

__all__ = [
    "STANDIN",
    "CliCommand",
    "CliLocation",
    "CliName",
    "cli_version",
    "locate_command",
]

CliName = str
"""A protocol's CLI name as the registry knows it (``claude``, ``codex``, ``gemini``, ``acp``...)."""

STANDIN = "standin"
VERSION_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class CliLocation:
    """Where one CLI is looked for, and what a user is told when it is not found."""

    name: CliName
    environment_variable: str  # the command a user sets instead of ``executable=``
    install_hint: str
    split: Literal["whole", "words", "shell"] = "words"  # how the variable's value becomes argv
    on_path: bool = True  # look for ``name`` on PATH (an ACP agent has no default command)
    standin_module: str = ""  # the embedded stand-in (``python -m <module>``); "" when there is none
    standin_script: str = (
        ""  # its console script (``elynav-claude-standin``): a path to it is the stand-in too
    )
    npm_package: str = ""  # the package whose ``package.json`` tells the version
    reports_version: bool = True  # False: the CLI tells its version itself (claude's ``init`` line)


@dataclass(frozen=True)
class CliCommand:
    """The words that start the CLI, whether they start the stand-in, and which CLI it is."""

    argv: tuple[str, ...]
    is_standin: bool
    name: CliName = "claude"
    standin_label: str = "stand-in (elynav-claude-standin)"

    @property
    def label(self) -> str:
        if self.is_standin:
            return self.standin_label
        return f"{self.name} ({self.argv[0]})"


def standin_of(location: CliLocation) -> CliCommand:
    """The location's embedded stand-in, run by the current Python."""
    return CliCommand(
        argv=(sys.executable, "-m", location.standin_module),
        is_standin=True,
        name=location.name,
        standin_label=f"stand-in ({location.standin_script})",
    )


def _resolve(executable: str | Sequence[str], location: CliLocation) -> CliCommand:
    words = [executable] if isinstance(executable, str) else list(executable)
    if not words:
        raise CliNotFound(f"an empty command was given for the agent CLI; {location.install_hint}")
    if words == [STANDIN]:
        if not location.standin_module:
            raise InvalidInput(
                f"there is no stand-in for {location.name}: run the real CLI (tests point it at FakeModelApi)"
            )
        return standin_of(location)
    first = words[0]
    found = shutil.which(first) if os.sep not in first else (first if os.access(first, os.X_OK) else None)
    if found is None:
        raise CliNotFound(
            f"agent CLI {first!r} not found; {location.install_hint}", details={"executable": first}
        )
    found = os.path.abspath(found)  # the CLI runs in the workspace: a relative path would not be found there
    is_standin = bool(location.standin_module) and (
        location.standin_script in Path(found).name or location.standin_module in words
    )
    label = f"stand-in ({location.standin_script})"
    return CliCommand(
        argv=(found, *words[1:]), is_standin=is_standin, name=location.name, standin_label=label
    )


def _split(value: str, how: Literal["whole", "words", "shell"]) -> str | list[str]:
    if how == "whole":
        return value
    return shlex.split(value) if how == "shell" else value.split()


def locate_command(
    executable: str | Sequence[str] | None,
    location: CliLocation,
    *,
    fallback_to_standin: bool = False,
    environment: Mapping[str, str] | None = None,
) -> CliCommand:
    """The CLI to start (see the module docstring for the rules)."""
    if executable is not None:
        return _resolve(executable, location)
    environment = os.environ if environment is None else environment
    chosen = environment.get(location.environment_variable, "").strip()
    if chosen:
        return _resolve(_split(chosen, location.split), location)
    if not location.on_path:
        raise CliNotFound(
            f"no {location.name} agent was named; {location.install_hint}", details={"cli": location.name}
        )
    real = shutil.which(location.name)
    if real is not None:
        return CliCommand(argv=(real,), is_standin=False, name=location.name)
    if fallback_to_standin and location.standin_module:
        return standin_of(location)
    raise CliNotFound(
        f"the {location.name} CLI is not on PATH; {location.install_hint}", details={"cli": location.name}
    )


def cli_version(command: CliCommand, location: CliLocation) -> str:
    """The version of a located CLI ("" when it cannot be told, or when the CLI says it itself)."""
    if not location.reports_version:
        return ""
    return _version_of(location.npm_package, command.argv)


@lru_cache(maxsize=32)
def _version_of(npm_package: str, argv: tuple[str, ...]) -> str:
    from_package = _version_from_package(npm_package, argv) if npm_package else ""
    if from_package:
        return from_package
    try:
        completed = subprocess.run(
            [*argv, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    words = completed.stdout.strip().split()
    return words[-1] if completed.returncode == 0 and words else ""


def _version_from_package(package_name: str, argv: tuple[str, ...]) -> str:
    """The ``version`` of the npm package (``@openai/codex``...) the command's script lives in."""
    script = next((word for word in reversed(argv) if word.endswith((".js", ".mjs", ".cjs"))), argv[0])
    try:
        folder = Path(script).resolve().parent
    except OSError:
        return ""
    for candidate in (folder, *folder.parents[:3]):
        manifest = candidate / "package.json"
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if (
            isinstance(data, dict)
            and data.get("name") == package_name
            and isinstance(data.get("version"), str)
        ):
            return str(data["version"])
    return ""
