"""``elynav mcp templates --agent NAME``: serve the template tools to one agent over MCP stdio.

Where it sits: the console edge, dispatched by ``elynav_nb/cli.py``. It only reads options,
builds the server (``server.build_server``) and runs it on stdio; nothing is printed on stdout,
which belongs to the MCP protocol.

Grants: durable ones come from ``<ELYNAV_HOME>/templates/policy.json``; ``--grant TOOL`` adds
one write tool for this run only (repeatable). Without grants the agent can only read.
"""

from __future__ import annotations

import argparse

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agent", required=True, help="the agent identity the policy is applied to")
    parser.add_argument(
        "--grant",
        action="append",
        default=[],
        metavar="TOOL",
        help="grant one write tool for this run (idea_template_create, idea_template_update, idea_template_delete)",
    )
    parser.add_argument(
        "--home", default=None, help="the elynav home folder (default: $ELYNAV_HOME or the data dir)"
    )


def run(args: argparse.Namespace) -> int:
    from elynav_nb.templates.server import build_server
    from elynav_nb.templates.service import TemplateService

    server = build_server(args.agent, TemplateService.open(args.home), list(args.grant))
    server.run()
    return 0
