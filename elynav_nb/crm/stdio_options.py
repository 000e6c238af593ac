"""The options of the CRM's stdio server and the check of its ``--db`` path, shared by its two entry points.

Where it sits: under ``command.py`` (``elynav mcp crm``) and ``server.main`` (``python -m
elynav_nb.crm.server``, the command of the ``.mcp.json`` entry), so both take the same arguments and
refuse a bad path with the same message; neither entry point imports the other. Light on purpose: it
imports nothing heavy (``configure`` runs for every ``elynav`` command line).

How data flows: ``configure(parser)`` adds ``--db`` and ``--busy-timeout``; ``check_database_path``
turns ``--db`` into an absolute path, or a typed error naming what to pass instead.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["check_database_path", "configure"]


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
