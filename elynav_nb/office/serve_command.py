"""``elynav office serve [--workspace W]``: the office of a workspace, headless, until SIGINT or SIGTERM.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``. Kernels (``Office(W).start()`` attaches),
``elynav acp`` and ``elynav ask`` from a terminal reach it through its socket. It refuses to start
when another office already serves W (``OFFICE_ALREADY_RUNNING``): one office per workspace.

On SIGINT or SIGTERM it stops as ``Office.stop()`` does: queued and running asks end ``cancelled``
("the office stopped"), their callers get that reply, every CLI is stopped, the lock is released.
Killed with SIGKILL, nothing runs: its clients see their asks end ``failed`` (``OFFICE_UNREACHABLE``),
and the next office of W marks every ask left unfinished ``failed`` (``OFFICE_STOPPED``) in the history.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from elynav_nb.office.acp_command import add_office_options, executable_argument

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    add_office_options(parser)
    parser.add_argument(
        "--agents", default=None, metavar="A,B", help="the employees (default: the workspace's)"
    )


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    from elynav_nb.office.office import Office

    agents = [name for name in args.agents.split(",") if name] if args.agents else None
    office = Office(
        os.path.abspath(args.workspace), agents, executable=executable_argument(args.executable), attach=False
    )
    await office.start()
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(number, stopping.set)
    print(
        f"elynav office: serving {office.workspace} ({', '.join(office.employees)}) at {office.socket_path}",
        file=sys.stderr,
        flush=True,
    )
    try:
        await stopping.wait()
    finally:
        await office.stop()
        print("elynav office: stopped", file=sys.stderr, flush=True)
    return 0
