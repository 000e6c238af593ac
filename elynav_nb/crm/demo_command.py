"""``elynav crm demo --accounts N --seed S [--db PATH]``: create a deterministic demo CRM database.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``; ``configure`` adds arguments, ``run``
calls ``demo_database.create_demo_database`` and prints one line per table.
"""

from __future__ import annotations

import argparse

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--accounts", type=int, default=200, metavar="N", help="number of accounts (default: 200)"
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="random seed; same seed, same data (default: %(default)s)",
    )
    parser.add_argument(
        "--activities-per-account",
        type=int,
        default=8,
        metavar="K",
        help="average activities per account (default: 8)",
    )
    parser.add_argument(
        "--db", default="elynav-crm-demo.sqlite", metavar="PATH", help="database file (default: %(default)s)"
    )
    parser.add_argument("--force", action="store_true", help="replace the file when it exists")


def run(args: argparse.Namespace) -> int:
    from elynav_nb.crm.demo_database import create_demo_database

    counts = create_demo_database(
        args.db,
        accounts=args.accounts,
        seed=args.seed,
        activities_per_account=args.activities_per_account,
        overwrite=args.force,
    )
    print(f"created {args.db} (seed {args.seed})")
    for table, count in counts.items():
        print(f"  {table:<14}{count:>10,}")
    print(f"serve it to agents with: elynav mcp crm --db {args.db}")
    return 0
