"""``elynav agents list``: the agents a runner can run from a workspace, built-in and the workspace's own.

Where it sits: at the edge, dispatched by ``elynav_nb.cli``. It reads the six built-in Elynav agents
(``builtin_agents``) and the agent files of ``--workspace``'s ``.claude/agents`` (``load_agents``),
and prints one line per agent: name, number of tools, permission mode, where it is defined. A
built-in agent not yet in the workspace runs anyway (its file is written there when a runner starts).
Typed errors (a broken agent file) go back to ``cli.main``: one line ``CODE: message``, status 2.
"""

from __future__ import annotations

import argparse

from elynav_nb.agents.definitions import builtin_agents, load_agents
from elynav_nb.agents.definitions.install_command import add_workspace_argument, agent_line

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    add_workspace_argument(parser, "folder whose DIR/.claude/agents/ is listed too (default: current folder)")


def run(args: argparse.Namespace) -> int:
    folder = args.workspace / ".claude" / "agents"
    own = load_agents(folder) if folder.is_dir() else {}
    for definition in own.values():
        print(agent_line(definition, definition.source_path))
    for name, definition in builtin_agents().items():
        if name not in own:
            print(agent_line(definition, "(built-in; written to the workspace when it first runs)"))
    return 0
