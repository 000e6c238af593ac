"""``elynav mcp notebook``: the notebook tools over MCP on stdio, for agents outside the kernel.

Where it sits: the thin MCP edge of ``elynav_nb.notebook``. It opens one ``LiveNotebook`` (as a named
collaborator of the room), builds ``notebook_tools`` over it and lets ``McpToolEndpoint`` answer MCP's
JSON-RPC: the same tools, names, schemas and typed tool errors as inside the kernel. The stdio transport
is MCP's: one JSON-RPC message per line on stdin, one answer per line on stdout; logs go to stderr.

Which server: ``--url`` (and the token in ``$JUPYTER_TOKEN``), else the one Jupyter server this user runs
(its ``jpserver-<pid>.json`` in the runtime directory: url and token); several running is ``INVALID_INPUT``
naming ``--url``. The token is never printed.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from elynav_nb.agents.tools.mcp_endpoint import McpToolEndpoint
from elynav_nb.errors import InvalidInput, NotFound
from elynav_nb.notebook.live import LiveNotebook
from elynav_nb.notebook.tools import notebook_tools

__all__ = ["SERVER_NAME", "running_server", "serve_stdio"]

SERVER_NAME = "notebook"


def running_server(runtime_dir: Path | None = None) -> tuple[str, str]:
    """``(url, token)`` of the one Jupyter server running for this user."""
    if runtime_dir is None:
        configured = os.environ.get("JUPYTER_RUNTIME_DIR")
        if configured:
            runtime_dir = Path(configured)
        else:
            from jupyter_core.paths import jupyter_runtime_dir

            runtime_dir = Path(jupyter_runtime_dir())
    servers: list[dict[str, Any]] = []
    for info_file in sorted(runtime_dir.glob("jpserver-*.json")):
        try:
            info = json.loads(info_file.read_text(encoding="utf-8"))
            pid = int(info.get("pid", 0))
            os.kill(pid, 0)  # still running?
        except (OSError, ValueError, TypeError):
            continue
        servers.append(info)
    if not servers:
        raise NotFound(
            "no running Jupyter server found: start JupyterLab, or give --url (token in $JUPYTER_TOKEN)"
        )
    if len(servers) > 1:
        urls = ", ".join(str(server.get("url")) for server in servers)
        raise InvalidInput(f"several Jupyter servers run ({urls}): choose one with --url")
    return str(servers[0]["url"]), str(servers[0].get("token", ""))


async def serve_stdio(path: str, url: str | None, user_name: str) -> None:
    token = os.environ.get("JUPYTER_TOKEN", "")
    if url is None:
        url, found_token = running_server()
        token = token or found_token
    async with LiveNotebook.open(path, server_url=url, token=token, user_name=user_name) as nb:
        endpoint = McpToolEndpoint(notebook_tools(nb), SERVER_NAME)
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.buffer.readline)
            if not line:
                return
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                answer: dict[str, Any] | None = {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32700, "message": "parse error"},
                }
            else:
                answer = await endpoint.handle(message)
            if answer is not None:
                sys.stdout.write(json.dumps(answer) + "\n")
                sys.stdout.flush()
