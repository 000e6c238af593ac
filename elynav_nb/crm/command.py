"""``elynav mcp crm --db PATH``: serve the CRM over MCP on stdio.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``. ``configure`` only adds arguments (it
imports nothing heavy); ``run`` imports the server and serves until the client closes stdin.
Nothing but MCP messages goes to stdout.
"""

from __future__ import annotations

import argparse

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", required=True, metavar="PATH", help="SQLite CRM database (created if missing)"
    )
    parser.add_argument(
        "--busy-timeout",
        type=float,
        default=5.0,  # store.DEFAULT_BUSY_TIMEOUT_SECONDS (not imported: configure stays light)
        metavar="SECONDS",
        help="how long a write waits for a locked database before DATABASE_BUSY (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    from elynav_nb.crm.server import serve_stdio

    serve_stdio(args.db, busy_timeout_seconds=args.busy_timeout)
    return 0
