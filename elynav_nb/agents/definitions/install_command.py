"""``elynav agents install``: copy the Elynav agent files into a workspace's ``.claude/agents/``.

Where it sits: at the edge, dispatched by ``elynav_nb.cli``. It parses the arguments, calls
``install_agents`` (or ``builtin_agents`` for ``--list``) from ``elynav_nb.agents.definitions`` and prints
one line per agent: name, number of tools, permission mode, path. Typed errors go back to ``cli.main``,
which prints ``CODE: message`` and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from elynav_nb.agents.definitions import AgentDefinition, builtin_agents, install_agents

__all__ = ["add_workspace_argument", "agent_line", "configure", "run"]

_CRM_TOOL_PREFIX = "mcp__crm__"


def add_workspace_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--workspace DIR`` (default: the current folder), shared by ``agents install`` and ``agents list``."""
    parser.add_argument("--workspace", type=Path, default=Path("."), metavar="DIR", help=help_text)


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_argument(
        parser,
        "folder where the agent CLI runs; the files go to DIR/.claude/agents/ (default: current folder)",
    )
    parser.add_argument(
        "--agent",
        action="append",
        dest="agent_names",
        metavar="NAME",
        help="install only this agent (repeat for several); default: all six",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        dest="list_only",
        help="list the built-in agents and install nothing",
    )


def run(args: argparse.Namespace) -> int:
    if args.list_only:
        for definition in builtin_agents().values():
            print(agent_line(definition, definition.source_path))
        return 0

    workspace: Path = args.workspace
    installed_paths = install_agents(workspace, args.agent_names)
    uses_crm = False
    for path in installed_paths:
        definition = AgentDefinition.load(path)
        print(agent_line(definition, path))
        for tool in definition.tools:
            if tool.startswith(_CRM_TOOL_PREFIX):
                uses_crm = True
    print(f"{len(installed_paths)} agent(s) installed in {workspace / '.claude' / 'agents'}")
    if uses_crm and not (workspace / ".mcp.json").exists():
        print(
            f"note: these agents use the CRM tools (mcp__crm__*); declare a server named 'crm' in "
            f"{workspace / '.mcp.json'} so the CLI can reach them",
            file=sys.stderr,
        )
    return 0


def agent_line(definition: AgentDefinition, path: Path | str | None) -> str:
    """One agent as a line: name, number of tools, permission mode, where it is."""
    tool_count = str(len(definition.tools)) if definition.tools else "all"
    permission_mode = definition.permission_mode or "(inherited)"
    return f"{definition.name:<22} tools={tool_count:<4} permission={permission_mode:<18} {path}"
