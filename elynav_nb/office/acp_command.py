"""``elynav acp --agent NAME [--workspace W]``: the office's employee NAME as an ACP agent over stdio.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``. JupyterLab's chat (jupyter-ai's ACP personas),
Zed, marimo or ``AgentRunner(cli="acp", executable=["elynav", "acp", "--agent", "sdr"])`` start it
and speak ACP on its stdin and stdout (nothing else is written to stdout).

How it finds the office: ``Office(W).start()``, as a notebook does: it attaches to the office that
serves W (a kernel, ``elynav office serve``, another ``elynav acp``) or, when none does, hosts one
itself (``--executable`` then chooses the CLI, as ``Office(executable=...)`` does). The agent
(``office/acp_agent.py``) reaches the office through its socket as the user.

When the client closes stdin: the asks of this agent still open are cancelled (nobody waits), and
an office this process hosts stops (its queued and running asks end ``cancelled``, "the office
stopped"; clients attached to it see their asks end so).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import cast

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agent", required=True, metavar="NAME", help="the employee (e.g. sdr or elynav-sdr)"
    )
    add_office_options(parser)


def add_office_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", default=".", metavar="W", help="the office's workspace (default: .)")
    parser.add_argument(
        "--executable",
        default=None,
        metavar="CMD",
        help="the CLI of an office started here when none serves the workspace ('standin', or a command; "
        "default: the real claude when on PATH, else the stand-in)",
    )


def executable_argument(value: str | None) -> str | list[str] | None:
    if value is None or value == "standin":
        return value
    return value.split()


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    import acp

    from elynav_nb import __version__
    from elynav_nb.office.acp_agent import EmployeeAgent
    from elynav_nb.office.client import OfficeClient
    from elynav_nb.office.office import Office

    office = await Office(
        os.path.abspath(args.workspace), executable=executable_argument(args.executable)
    ).start()
    try:
        employee = office.employee(args.agent)
        if office.attachment is not None:
            client = office.attachment.client
        else:
            assert office.socket_path is not None
            client = OfficeClient(office.socket_path, office.user_token)
        description = str(employee.to_row().get("agent") or "")
        agent = EmployeeAgent(client, employee.name, description=description, version=__version__)
        agent.history_log = office.history_log
        print(
            f"elynav acp: {employee.name} of the office serving {office.workspace}",
            file=sys.stderr,
            flush=True,
        )
        try:
            await acp.run_agent(cast(acp.Agent, agent))  # the methods it serves; the SDK answers the rest
        finally:
            await agent.close_all()
    finally:
        await office.stop()
    return 0
