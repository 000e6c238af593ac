"""A tiny MCP server over stdio for the stand-in tests: ``ping``, ``add`` and ``whoami``.

Where it sits: test support only. The stand-in CLI (``elynav_nb.sandbox.claude.claude_standin``) spawns it from an
``--mcp-config`` entry and calls its tools as a real MCP client. ``whoami`` reports the server's pid, process
group and session so a test can check where the stand-in started it. Run: ``python tiny_mcp_server.py``.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

tiny_server = MCPServer("tiny", version="0.1.0")


@tiny_server.tool(annotations=ToolAnnotations(read_only_hint=True))
def ping() -> str:
    """Answer pong."""
    return "pong"


@tiny_server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(left: int, right: int) -> int:
    """Add two integers."""
    return left + right


@tiny_server.tool(annotations=ToolAnnotations(read_only_hint=True))
def whoami() -> str:
    """The server's pid, process group, session and the TINY_GREETING variable."""
    greeting = os.environ.get("TINY_GREETING", "")
    return f"pid={os.getpid()} pgid={os.getpgrp()} sid={os.getsid(0)} greeting={greeting}"


if __name__ == "__main__":
    tiny_server.run()
