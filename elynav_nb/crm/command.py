"""``elynav mcp crm --db PATH``: serve the CRM over MCP on stdio.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``. ``configure`` only adds arguments
(``stdio_options.py``: it imports nothing heavy); ``run`` checks the ``--db`` path (a folder, or a
file in a folder that does not exist, is a one-line typed error saying what to pass instead), then
imports the server and serves until the client closes stdin. A missing database file is created (an
empty CRM), an older one migrated. Nothing but MCP messages goes to stdout. ``python -m
elynav_nb.crm.server`` is the same command (``server.main``, on the same ``stdio_options``).
"""

from __future__ import annotations

import argparse

from elynav_nb.crm.stdio_options import check_database_path, configure

__all__ = ["configure", "run"]


def run(args: argparse.Namespace) -> int:
    database = check_database_path(args.db)
    from elynav_nb.crm.server import serve_stdio

    serve_stdio(str(database), busy_timeout_seconds=args.busy_timeout)
    return 0
