"""Which agent CLI a runner starts: claude (or its stand-in), codex or gemini, and its version.

Where it sits: called by the runners before they spawn (off the event loop: ``shutil.which`` walks
the disk). Rules for ``claude``, in order: an explicit ``executable`` wins ("standin" names the
embedded stand-in); then the ``ELYNAV_AGENT_CLI`` environment variable (same values); then
``claude`` on PATH; then the stand-in, unless ``fallback_to_standin`` is false, which gives
``CLI_NOT_FOUND`` with an install hint.

For ``codex`` and ``gemini`` (no stand-in: tests run the real binaries against
``elynav_nb.sandbox.model_api.fake_model_api``): an explicit ``executable``; then ``ELYNAV_CODEX_CLI`` /
``ELYNAV_GEMINI_CLI``; then ``codex`` / ``gemini`` on PATH; else ``CLI_NOT_FOUND`` with the npm
command that installs it.

For ``acp`` (any Agent Client Protocol agent): an explicit ``executable`` (its whole command, as
a list: ``["gemini", "--acp"]``), ``"standin"`` for the embedded ACP stand-in, else
``ELYNAV_ACP_AGENT`` (a command line, split as a shell would); no default agent: ``CLI_NOT_FOUND``.

Which CLI a runner uses (the ``cli=`` argument, else the definition's ``cli`` field, else claude)
is decided once, by ``plan.py``; ``choose_cli_mode`` gives the mode.

``cli_version`` tells the version of a located codex or gemini: read from the ``package.json`` of
the npm package the command belongs to (no process), else from ``<cli> --version`` (bounded).
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
    "CLI_NAMES",
    "INSTALL_HINT",
    "STANDIN",
    "CliCommand",
    "CLI_MODES",
    "CliName",
    "choose_cli_mode",
    "check_cli_name",
    "cli_version",
    "locate_cli",
    "standin_command",
]

CliName = Literal["claude", "codex", "gemini", "acp"]
CLI_NAMES: tuple[CliName, ...] = ("claude", "codex", "gemini", "acp")

STANDIN = "standin"
STANDIN_MODULE = "elynav_nb.sandbox.claude.claude_standin"
ACP_STANDIN_MODULE = "elynav_nb.sandbox.acp.acp_standin"
INSTALL_HINT = (
    "install Claude Code with `npm install -g @anthropic-ai/claude-code` and log in with `claude`, "
    "or run on the embedded stand-in with executable='standin'"
)
_INSTALL_HINTS: dict[str, str] = {
    "claude": INSTALL_HINT,
    "codex": "install it with `npm install -g @openai/codex` (or set ELYNAV_CODEX_CLI, or pass executable=)",
    "gemini": "install it with `npm install -g @google/gemini-cli` (or set ELYNAV_GEMINI_CLI, or pass executable=)",
    "acp": (
        "pass the ACP agent's command as executable=[...] (for example ['gemini', '--acp'] or "
        "['npx', '@zed-industries/codex-acp']), or set ELYNAV_ACP_AGENT; executable='standin' runs the "
        "embedded ACP stand-in (not a model)"
    ),
}
_ENVIRONMENT_VARIABLES: dict[str, str] = {
    "claude": "ELYNAV_AGENT_CLI",
    "codex": "ELYNAV_CODEX_CLI",
    "gemini": "ELYNAV_GEMINI_CLI",
    "acp": "ELYNAV_ACP_AGENT",
}
_NPM_PACKAGES: dict[str, str] = {"codex": "@openai/codex", "gemini": "@google/gemini-cli"}
VERSION_TIMEOUT_SECONDS = 30.0


def check_cli_name(name: str) -> CliName:
    """``name`` as a ``CliName``; ``INVALID_INPUT`` for anything but claude, codex and gemini."""
    for known in CLI_NAMES:
        if name == known:
            return known
    raise InvalidInput(
        f"unknown agent CLI {name!r}: choose one of {', '.join(CLI_NAMES)}", details={"cli": name}
    )


CLI_MODES: dict[CliName, tuple[str, ...]] = {  # the first is the default
    "claude": ("stream-json",),
    "codex": ("app-server", "exec"),
    "gemini": ("print",),
    "acp": ("stdio",),
}


def choose_cli_mode(cli: CliName, mode: str | None, environment: Mapping[str, str] | None = None) -> str:
    """How a runner drives ``cli``: ``mode``, else ``$ELYNAV_CODEX_MODE`` for codex, else the default.

    claude: ``stream-json`` (one persistent process); codex: ``app-server`` (one persistent
    JSON-RPC process, deltas and approvals) or ``exec`` (a process per turn); gemini: ``print``
    (a process per turn). ``INVALID_INPUT`` for a mode the CLI has not.
    """
    environment = os.environ if environment is None else environment
    chosen = mode or (environment.get("ELYNAV_CODEX_MODE") if cli == "codex" else None) or CLI_MODES[cli][0]
    if chosen not in CLI_MODES[cli]:
        raise InvalidInput(
            f"{cli} has no mode {chosen!r}: choose one of {', '.join(CLI_MODES[cli])}",
            details={"cli": cli, "cli_mode": chosen},
        )
    return chosen


@dataclass(frozen=True)
class CliCommand:
    """The words that start the CLI, whether they start the stand-in, and which CLI it is."""

    argv: tuple[str, ...]
    is_standin: bool
    name: CliName = "claude"

    @property
    def label(self) -> str:
        if self.is_standin:
            return (
                "stand-in (elynav-acp-standin)" if self.name == "acp" else "stand-in (elynav-claude-standin)"
            )
        return f"{self.name} ({self.argv[0]})"


def standin_command() -> CliCommand:
    """The embedded stand-in, run by the current Python."""
    return CliCommand(argv=(sys.executable, "-m", STANDIN_MODULE), is_standin=True)


def _resolve(executable: str | Sequence[str], name: CliName) -> CliCommand:
    words = [executable] if isinstance(executable, str) else list(executable)
    if not words:
        raise CliNotFound(f"an empty command was given for the agent CLI; {_INSTALL_HINTS[name]}")
    if words == [STANDIN]:
        if name == "acp":
            return CliCommand(argv=(sys.executable, "-m", ACP_STANDIN_MODULE), is_standin=True, name="acp")
        if name != "claude":
            raise InvalidInput(
                f"there is no stand-in for {name}: run the real CLI (tests point it at FakeModelApi)"
            )
        return standin_command()
    first = words[0]
    found = shutil.which(first) if os.sep not in first else (first if os.access(first, os.X_OK) else None)
    if found is None:
        raise CliNotFound(
            f"agent CLI {first!r} not found; {_INSTALL_HINTS[name]}", details={"executable": first}
        )
    found = os.path.abspath(found)  # the CLI runs in the workspace: a relative path would not be found there
    is_standin = (
        name == "claude" and ("elynav-claude-standin" in Path(found).name or STANDIN_MODULE in words)
    ) or (name == "acp" and ("elynav-acp-standin" in Path(found).name or ACP_STANDIN_MODULE in words))
    return CliCommand(argv=(found, *words[1:]), is_standin=is_standin, name=name)


def locate_cli(
    executable: str | Sequence[str] | None = None,
    *,
    fallback_to_standin: bool = True,
    environment: Mapping[str, str] | None = None,
    cli: CliName = "claude",
) -> CliCommand:
    """The CLI to start (see the module docstring for the rules)."""
    if executable is not None:
        return _resolve(executable, cli)
    environment = os.environ if environment is None else environment
    chosen = environment.get(_ENVIRONMENT_VARIABLES[cli], "").strip()
    if chosen:
        return _resolve(
            chosen if cli == "claude" else shlex.split(chosen) if cli == "acp" else chosen.split(), cli
        )
    if cli == "acp":
        raise CliNotFound(f"no ACP agent was named; {_INSTALL_HINTS[cli]}", details={"cli": cli})
    real = shutil.which(cli)
    if real is not None:
        return CliCommand(argv=(real,), is_standin=False, name=cli)
    if cli == "claude" and fallback_to_standin:
        return standin_command()
    raise CliNotFound(f"the {cli} CLI is not on PATH; {_INSTALL_HINTS[cli]}", details={"cli": cli})


def cli_version(command: CliCommand) -> str:
    """The version of a located codex or gemini ("" when it cannot be told; claude says it itself)."""
    if command.name == "claude":
        return ""
    return _version_of(command.name, command.argv)


@lru_cache(maxsize=32)
def _version_of(name: str, argv: tuple[str, ...]) -> str:
    from_package = _version_from_package(name, argv)
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


def _version_from_package(name: str, argv: tuple[str, ...]) -> str:
    """The ``version`` of the npm package (``@openai/codex``...) the command's script lives in."""
    package_name = _NPM_PACKAGES.get(name)
    if package_name is None:
        return ""
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
