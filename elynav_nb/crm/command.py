"""``elynav mcp crm --db PATH``: serve the CRM over MCP on stdio.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``. ``configure`` only adds arguments (it
imports nothing heavy); ``run`` checks the ``--db`` path (a folder, or a file in a folder that does
not exist, is a one-line typed error saying what to pass instead), then imports the server and
serves until the client closes stdin. A missing database file is created (an empty CRM), an older
one migrated. Nothing but MCP messages goes to stdout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", required=True, metavar="PATH", help="SQLite CRM database file (created if missing)"
    )
    parser.add_argument(
        "--busy-timeout",
        type=float,
        default=5.0,  # database.DEFAULT_BUSY_TIMEOUT_SECONDS (not imported: configure stays light)
        metavar="SECONDS",
        help="how long a write waits for a locked database before DATABASE_BUSY (default: %(default)s)",
    )


def check_database_path(database: str) -> Path:
    """The ``--db`` path made absolute; ``INVALID_INPUT`` / ``NOT_FOUND`` naming it when no file can be there."""
    from elynav_nb.errors import InvalidInput, NotFound

    path = Path(database).expanduser().resolve()
    if path.is_dir():
        raise InvalidInput(
            f"--db {path} is a folder, not a database file; pass the path of a file, "
            f"e.g. --db {path / 'crm.sqlite'} (created if missing)",
            details={"path": str(path)},
        )
    if not path.parent.is_dir():
        raise NotFound(
            f"--db {path}: its folder {path.parent} does not exist; create it first "
            f"(mkdir -p {path.parent}) or pass --db a path in an existing folder",
            details={"path": str(path)},
        )
    return path


def run(args: argparse.Namespace) -> int:
    database = check_database_path(args.db)
    from elynav_nb.crm.server import serve_stdio

    serve_stdio(str(database), busy_timeout_seconds=args.busy_timeout)
    return 0
