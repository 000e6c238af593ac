"""The command lines of the elynav magics, as argparse parsers: what they accept and their help (pure).

Where it sits: ``elynav_nb.magics.extension`` parses each magic's line with these parsers, and
``%elynav help`` / ``%agent --help`` print their help, so the help is the parser itself and cannot
drift from what a line accepts. Nothing here runs a turn or touches IPython.

How data flows::

    "%%agent sdr -o r"  -> parser_for("agent", cell=True).parse_args(["sdr", "-o", "r"]) -> Namespace
    "%agent --help"     -> the parser prints its help on stdout -> ``HelpShown`` (the magic ends quietly)
    a bad line          -> ``INVALID_INPUT`` with the usage (never ``SystemExit``: the kernel goes on)

The cell form (``%%agent NAME``) takes its message from the cell body; the line form
(``%agent NAME message...``) from the rest of the line: each has its own usage line. ``--cli`` takes
the protocol registry's CLI names as they are when the line is parsed (a protocol registered later
is a choice too).
"""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from elynav_nb.agents.protocols.registry import cli_names
from elynav_nb.errors import InvalidInput
from elynav_nb.office.ask_command import positive_seconds

__all__ = ["HELP_TOPICS", "HelpShown", "MagicParser", "magics_help", "parser_for"]


class HelpShown(Exception):
    """``--help`` printed the help: the magic has nothing else to do (not an error)."""


class MagicParser(argparse.ArgumentParser):
    """argparse that raises ``INVALID_INPUT`` with the usage instead of exiting the kernel."""

    def error(self, message: str) -> NoReturn:
        raise InvalidInput(f"{message}\n{self.format_usage().strip()}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status == 0:
            raise HelpShown()
        raise InvalidInput(message or self.format_usage().strip())


_SCHEMA_HELP = (
    "a variable holding the answer's schema (JSON Schema dict, pydantic model, TypedDict): "
    "the result's .data and .to_frame()"
)
_NAME_HELP = "the agent: a name of the workspace's .claude/agents or a built-in one (sdr finds elynav-sdr)"


def _agent_parser(cell: bool) -> MagicParser:
    prefix = "%%" if cell else "%"
    parser = MagicParser(
        prog=f"{prefix}agent",
        description=(
            "Send the cell's body to an agent; the turn streams below the cell."
            if cell
            else "Send the rest of the line to an agent; the turn streams below the cell."
        ),
        epilog=(
            "{name} in the message is filled from the kernel ({{ for a brace). The TurnResult goes to -o VAR "
            "and to _; a turn that does not complete fails the cell (CODE: message). "
            "Defaults: %config ElynavMagics (workspace, executable, cli, cli_mode, timeout)."
        ),
    )
    parser.add_argument("name", help=_NAME_HELP)
    parser.add_argument(
        "--cli",
        choices=cli_names(),
        default=None,
        help="the agent CLI (default: ElynavMagics.cli, else the agent's own)",
    )
    parser.add_argument("-o", "--output", dest="variable", default=None, help="store the TurnResult here")
    parser.add_argument(
        "--timeout", type=positive_seconds, default=None, help="seconds (default: ElynavMagics.timeout)"
    )
    parser.add_argument("--schema", dest="schema_variable", default=None, help=_SCHEMA_HELP)
    if not cell:
        parser.add_argument("message", nargs="+", help="the message (after -- if it starts with -)")
    return parser


def _ask_parser(cell: bool) -> MagicParser:
    prefix = "%%" if cell else "%"
    parser = MagicParser(
        prog=f"{prefix}ask",
        description="Ask an employee of the running office (its queue, rights and history).",
        epilog="The Reply goes to -o VAR and to _; an ask that does not end done fails the cell.",
    )
    parser.add_argument("name", help="the employee (sdr finds elynav-sdr)")
    parser.add_argument("--office", dest="office_variable", default=None, help="the Office's variable")
    parser.add_argument("-o", "--output", dest="variable", default=None, help="store the Reply here")
    parser.add_argument("--timeout", type=positive_seconds, default=None, help="seconds the ask may take")
    parser.add_argument("--schema", dest="schema_variable", default=None, help=_SCHEMA_HELP)
    if not cell:
        parser.add_argument("message", nargs="+", help="the message (after -- if it starts with -)")
    return parser


def _elynav_parser() -> MagicParser:
    parser = MagicParser(
        prog="%elynav",
        description="About the elynav magics: their help, the agent CLIs and models, the last error.",
    )
    parser.add_argument(
        "topic",
        choices=HELP_TOPICS,
        nargs="?",
        default="help",
        help="help: every magic's help; list: the agent CLIs found here and how to pick a model; "
        "error: the last error of a magic in this kernel",
    )
    return parser


HELP_TOPICS = ("help", "list", "error")

_PARSERS: dict[str, Any] = {"agent": _agent_parser, "ask": _ask_parser}

_OTHER_MAGICS = (
    ("%agents", "the agents of the workspace, their CLI and state in this kernel (a DataFrame)"),
    ("%office [VAR]", "the board of the running office"),
    ("%elynav_history", "the office's history, else this kernel's turns (a DataFrame)"),
    ("%elynav_stop", "stop the runners the magics started (bounded)"),
)


def parser_for(name: str, *, cell: bool) -> MagicParser:
    """The parser of ``%%name`` (``cell``) or ``%name``; ``elynav`` for ``%elynav``."""
    if name == "elynav":
        return _elynav_parser()
    return _PARSERS[name](cell)  # type: ignore[no-any-return]


def magics_help() -> str:
    """Every magic's help, as ``%elynav help`` prints it."""
    parts = [
        parser_for("agent", cell=True).format_help(),
        parser_for("agent", cell=False).format_usage(),
        parser_for("ask", cell=True).format_help(),
        parser_for("ask", cell=False).format_usage(),
        _elynav_parser().format_help(),
        "other magics:\n" + "\n".join(f"  {usage:<18} {what}" for usage, what in _OTHER_MAGICS) + "\n",
    ]
    return "\n".join(part.rstrip("\n") + "\n" for part in parts)
