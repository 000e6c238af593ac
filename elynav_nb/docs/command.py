"""``elynav mcp docs``: serve the La Suite Docs tools over MCP on stdio.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``. ``configure`` only adds arguments; ``run``
imports the server and serves until the client closes stdin. Credentials come from the environment
(``DOCS_SESSION_ID``, ``DOCS_CSRF_TOKEN``), never from the command line, where ``ps`` would show them.
"""

from __future__ import annotations

import argparse
import os

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--instance",
        metavar="URL",
        default=None,
        help="the Docs instance origin (default: $DOCS_INSTANCE_URL, else the first doc_url used)",
    )
    parser.add_argument(
        "--user-name",
        metavar="NAME",
        default=None,
        help="the name people see for this writer in the document (default: $DOCS_MCP_USER_NAME, "
        "which `write_mcp_config` sets to the agent's name, else 'Elynav bot')",
    )


def run(args: argparse.Namespace) -> int:
    if args.instance:
        os.environ["DOCS_INSTANCE_URL"] = args.instance
    if args.user_name:
        os.environ["DOCS_MCP_USER_NAME"] = args.user_name
    from elynav_nb.docs.mcp.server import main

    main()
    return 0
