"""What an ACP agent is given at ``session/new``: the workspace's MCP servers and the kernel tools, in ACP's form (pure).

Where it sits: ``AcpLauncher`` (``protocols/launcher.py``) reads the workspace's ``.mcp.json`` and calls
``acp_mcp_servers``; the ``AcpWire`` sends the list with ``session/new`` and ``session/load``.
No I/O here. ``ACP_NOTES`` are the runner's ``limitations`` on any ACP agent.

How data flows::

    .mcp.json (read by per_turn.read_workspace_mcp_servers, placeholders expanded) -> ACP's form:
      stdio  {name, command, args, env: [{name, value}]}
      http   {type: "http", name, url, headers: [{name, value}]}
    kernel tools (a loopback server) -> one more http server, its bearer secret in a header
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from elynav_nb.agents.protocols.launch import KernelToolsServer, McpServer

__all__ = ["ACP_NOTES", "MCP_WAIT", "acp_agent_label", "acp_mcp_servers", "acp_server"]

_INTERPRETERS = ("node", "python", "python3", "npx", "uvx", "bun", "deno")

ACP_NOTES = (
    "ACP has no system prompt: the agent definition's prompt opens the first turn of each new session",
    "the definition's tools are not passed to an ACP agent: its own permission prompts decide what runs",
    "an ACP agent reports no cost (unless it sends usage_update with a cost): max_budget_usd counts nothing",
    "output_schema is asked in the prompt and validated here (ACP has no structured output)",
    "mcp_status() lists the servers given to the session (ACP has no status request)",
)


# claude under claude-agent-acp connects MCP servers in the background by default: a server slow to
# start (a Python one on a busy machine) was missing from the first model request. This makes it
# connect them before the first request, as the native claude runner does; other agents ignore it.
# Laid under the agent's environment (a value the user sets wins).
MCP_WAIT = {"MCP_CONNECTION_NONBLOCKING": "0"}


def acp_server(server: McpServer) -> dict[str, Any]:
    """One MCP server of the workspace as ACP's ``McpServer``."""
    if server.transport == "stdio":
        return {
            "name": server.name,
            "command": server.command,
            "args": list(server.args),
            "env": [{"name": name, "value": value} for name, value in server.env.items()],
        }
    return {
        "type": "sse" if server.transport == "sse" else "http",
        "name": server.name,
        "url": server.url,
        "headers": [{"name": name, "value": value} for name, value in server.headers.items()],
    }


def acp_mcp_servers(
    workspace_servers: Sequence[McpServer], kernel: KernelToolsServer | None
) -> list[dict[str, Any]]:
    """The workspace's MCP servers (``.mcp.json``, read) and the kernel tool server, for ACP."""
    servers = [acp_server(server) for server in workspace_servers]
    if kernel is not None:
        servers.append(
            acp_server(
                McpServer(
                    name=kernel.name,
                    url=kernel.url,
                    headers={"Authorization": f"Bearer {kernel.token}"},
                    transport="http",
                )
            )
        )
    return servers


def acp_agent_label(argv: Sequence[str]) -> str:
    """A short name of an agent's command for messages: ``codex-acp``, ``index.js`` (not ``/usr/bin/node``)."""
    words = [_command_name(word) for word in argv if word and not word.startswith("-")]
    for word in words:
        if word.split(".")[0] not in _INTERPRETERS:
            return word
    return words[0] if words else "?"


def _command_name(word: str) -> str:
    """``/x/pkg/dist/index.js`` -> ``pkg``; ``/x/.bin/codex-acp`` -> ``codex-acp``."""
    parts = [part for part in word.split("/") if part]
    if len(parts) > 1 and parts[-1].split(".")[0] in ("index", "cli", "main"):
        parents = [part for part in parts[:-1] if part not in ("dist", "bin", "lib", "build", "src")]
        if parents:
            return parents[-1]
    return parts[-1] if parts else word
