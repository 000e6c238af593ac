"""Which agent CLI a runner starts, and its version: ``locate_cli`` by CLI name (the public entry point).

Where it sits: above the protocol registry. The rules are each protocol's ``CliLocation`` (its
registry entry; ``protocols/command.py`` applies them): an explicit ``executable`` wins (``"standin"``
names the embedded stand-in of claude or of ACP); then the CLI's environment variable
(``ELYNAV_AGENT_CLI``, ``ELYNAV_CODEX_CLI``, ``ELYNAV_GEMINI_CLI``, ``ELYNAV_ACP_AGENT``: a command line);
then the CLI on ``PATH`` (no default ACP agent); then, for claude, the stand-in unless
``fallback_to_standin`` is false; else ``CLI_NOT_FOUND`` with an install hint. codex and gemini have
no stand-in: tests run the real binaries against ``elynav_nb.sandbox.model_api.fake_model_api``.

Which CLI a runner uses (``cli=``, else the definition's ``cli`` field, else claude) and its mode are
decided once, by the registry's ``plan_runner``. ``cli_version`` tells the version of a located codex
or gemini: read from its npm package's ``package.json`` (no process), else from ``<cli> --version``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from elynav_nb.agents.protocols.command import STANDIN, CliCommand, CliName, locate_command, standin_of
from elynav_nb.agents.protocols.command import cli_version as _cli_version
from elynav_nb.agents.protocols.registry import DEFAULT_CLI, check_cli_name, choose_cli_mode, location_of

__all__ = [
    "STANDIN",
    "CliCommand",
    "CliName",
    "check_cli_name",
    "choose_cli_mode",
    "cli_version",
    "locate_cli",
    "standin_command",
]


def locate_cli(
    executable: str | Sequence[str] | None = None,
    *,
    fallback_to_standin: bool = True,
    environment: Mapping[str, str] | None = None,
    cli: CliName = DEFAULT_CLI,
) -> CliCommand:
    """The CLI to start (see the module docstring for the rules)."""
    return locate_command(
        executable, location_of(cli), fallback_to_standin=fallback_to_standin, environment=environment
    )


def cli_version(command: CliCommand) -> str:
    """The version of a located codex or gemini ("" when it cannot be told; claude says it itself)."""
    return _cli_version(command, location_of(command.name))


def standin_command() -> CliCommand:
    """claude's embedded stand-in, run by the current Python."""
    return standin_of(location_of("claude"))
