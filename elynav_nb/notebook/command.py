"""``elynav mcp notebook``: serve one live notebook's tools over MCP on stdio.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``. ``configure`` only adds arguments; ``run`` opens the
notebook and serves until the client closes stdin. The token comes from ``$JUPYTER_TOKEN`` or the running
server's own file, never from the command line, where ``ps`` would show it.
"""

from __future__ import annotations

import argparse
import asyncio

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--path", required=True, help="the notebook, relative to the server's root (a/b.ipynb)"
    )
    parser.add_argument(
        "--url",
        default=None,
        help="the Jupyter server (default: the one running here; token in $JUPYTER_TOKEN)",
    )
    parser.add_argument("--name", default="Elynav agent", help="the name people see in JupyterLab")


def run(args: argparse.Namespace) -> int:
    from elynav_nb.notebook.mcp_server import serve_stdio

    asyncio.run(serve_stdio(args.path, args.url, args.name))
    return 0
