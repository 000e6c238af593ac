"""The ``elynav`` console script: one entry point, one sub-command per capability.

Where it sits: at the edge. Each capability owns its commands in ``<capability>/command.py``,
which offers ``configure(parser)`` (adds arguments, imports nothing heavy) and ``run(args) -> int``.
This module only builds the argparse tree from ``COMMANDS`` and dispatches; typed errors are
printed as one line ``CODE: message`` with exit status 2.

Usage errors speak for the command they are about: ``elynav mcp`` alone prints the help of the
``mcp`` group, ``elynav demo --bogus`` the usage of ``demo`` (each parser in the tree is stored in
the parsed arguments as ``help_parser``, the deepest one named on the command line winning).
``elynav --version`` prints ``elynav-nb <version>`` (the installed distribution's version, else
``elynav_nb.__version__``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import sys
from collections.abc import Sequence
from types import ModuleType

from elynav_nb.errors import ElynavError

__all__ = ["COMMANDS", "GROUPS", "build_parser", "main", "package_version"]

DISTRIBUTION_NAME = "elynav-nb"

# (words after `elynav`, module, one-line help)
COMMANDS: list[tuple[tuple[str, ...], str, str]] = [
    (("demo",), "elynav_nb.demo", "run one streamed agent turn on the embedded defaults"),
    (("lab",), "elynav_nb.lab_command", "open the walkthrough notebooks in JupyterLab (installs nothing)"),
    (("ask",), "elynav_nb.office.ask_command", "ask another agent of the office and wait for its reply"),
    (("cancel",), "elynav_nb.office.cancel_command", "cancel an ask (the user: any; an agent: its own)"),
    (("office", "serve"), "elynav_nb.office.serve_command", "run the office of a workspace, headless"),
    (("acp",), "elynav_nb.office.acp_command", "an employee of the office as an ACP agent (stdio)"),
    (
        ("agents", "install"),
        "elynav_nb.agents.definitions.install_command",
        "copy the Elynav agents into a workspace",
    ),
    (
        ("agents", "list"),
        "elynav_nb.agents.definitions.list_command",
        "list the built-in agents and a workspace's own",
    ),
    (("mcp", "crm"), "elynav_nb.crm.command", "serve the CRM over MCP (stdio)"),
    (("crm", "demo"), "elynav_nb.crm.demo_command", "create a deterministic demo CRM database"),
    (("mcp", "templates"), "elynav_nb.templates.command", "serve agent-template admin over MCP (stdio)"),
    (("mcp", "docs"), "elynav_nb.docs.command", "serve La Suite Docs live editing over MCP (stdio)"),
    (
        ("mcp", "notebook"),
        "elynav_nb.notebook.command",
        "serve a live Jupyter notebook's cells over MCP (stdio)",
    ),
    (("sandbox", "docs"), "elynav_nb.sandbox.docs.command", "run the local La Suite Docs stand-in"),
]

# what each group of commands is for (its line in `elynav --help`)
GROUPS: dict[str, str] = {
    "office": "the office of a workspace: serve it headless for kernels, chat and terminals",
    "agents": "the agent definitions: list them, install them into a workspace",
    "mcp": "serve a capability to agents over MCP (stdio): crm, templates, docs, notebook",
    "crm": "the CRM's data: a deterministic demo database",
    "sandbox": "local stand-ins of remote services: La Suite Docs",
}


def _load_command_module(module_name: str) -> ModuleType | None:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if module_name == missing or module_name.startswith(missing + "."):
            return None  # a capability not built yet: its command is simply absent

        raise


def build_parser(commands: Sequence[tuple[tuple[str, ...], str, str]] = COMMANDS) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="elynav", description="Elynav agent platform from Python.")
    parser.add_argument("--version", action="version", version=f"{DISTRIBUTION_NAME} {package_version()}")
    groups: dict[tuple[str, ...], argparse._SubParsersAction[argparse.ArgumentParser]] = {
        (): parser.add_subparsers(dest="command", metavar="COMMAND")
    }
    group_parsers: dict[tuple[str, ...], argparse.ArgumentParser] = {(): parser}
    for words, module_name, help_text in commands:
        module = _load_command_module(module_name)
        if module is None:
            continue
        for depth in range(1, len(words)):
            prefix = words[:depth]
            if prefix not in groups:
                group_help = GROUPS.get(prefix[-1], f"{prefix[-1]} commands")
                group_parser = groups[words[: depth - 1]].add_parser(
                    prefix[-1], help=group_help, description=group_help
                )
                group_parser.set_defaults(help_parser=group_parser)
                group_parsers[prefix] = group_parser
                groups[prefix] = group_parser.add_subparsers(dest=f"command_{depth}", metavar="COMMAND")
        command_parser = groups[words[:-1]].add_parser(words[-1], help=help_text, description=help_text)
        module.configure(command_parser)
        command_parser.set_defaults(run_command=module.run, help_parser=command_parser)
    return parser


def package_version() -> str:
    """The installed ``elynav-nb`` version; ``elynav_nb.__version__`` when it is not installed."""
    try:
        return importlib.metadata.version(DISTRIBUTION_NAME)
    except importlib.metadata.PackageNotFoundError:
        from elynav_nb import __version__

        return __version__


def _commands_named_by(argv: Sequence[str]) -> list[tuple[tuple[str, ...], str, str]]:
    """The one command that ``argv`` starts with (so ``elynav ask`` imports only its own module), else all."""
    chosen = [command for command in COMMANDS if tuple(argv[: len(command[0])]) == command[0]]
    return chosen or COMMANDS


def main(argv: Sequence[str] | None = None) -> int:
    arguments_given = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_commands_named_by(arguments_given))
    arguments, unrecognized = parser.parse_known_args(arguments_given)
    help_parser: argparse.ArgumentParser = getattr(arguments, "help_parser", parser)
    if unrecognized:  # exits 2 with the usage of the command they were given to
        help_parser.error(f"unrecognized arguments: {' '.join(unrecognized)}")
    run_command = getattr(arguments, "run_command", None)
    if run_command is None:  # `elynav` or a group (`elynav mcp`) alone: its own help
        help_parser.print_help()
        return 2
    try:
        return int(run_command(arguments) or 0)
    except ElynavError as error:
        print(f"{error.code}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
