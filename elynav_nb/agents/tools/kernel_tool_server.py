"""How a runner serves its kernel tools to its CLI: the MCP server ``kernel``, inside the kernel process.

Where it sits: ``AgentRunner(tools=...)`` calls ``serve_tools`` once (the set and its ``McpToolEndpoint``,
in the ``RunnerContext``); claude's launcher asks this module what to put on the command line and
answers claude's ``mcp_message`` requests with it; the others reach the endpoint over loopback HTTP. The transport per CLI, and why:

- claude (stream-json): an SDK MCP server, as claude-agent-sdk's ``create_sdk_mcp_server`` does:
  ``--mcp-config {"mcpServers": {"kernel": {"type": "sdk", "name": "kernel"}}}``, and the CLI's MCP
  messages arrive as ``mcp_message`` control requests on the same stream-json pipe (answered with
  ``{"mcp_response": ...}``). No port, no extra process, nothing another local process can reach.
  ``--allowedTools mcp__kernel__<name>,...``: the user handed these tools over, so calling them asks
  no permission (the runner's hooks still see every call). An agent whose definition lists its
  tools would not see the server (claude filters tools by the agent's list), so that definition is
  sent again with ``initialize`` (``agents``: it wins over the agent file) with ``mcp__kernel`` added.

- codex (app-server and exec) and gemini: they reach MCP servers over stdio or HTTP only, so the
  driver starts a ``LoopbackMcpServer`` (``agents/tools/loopback_server.py``: MCP streamable HTTP on
  127.0.0.1, on the runner's loop) with the runner and stops it with the runner; a secret per start,
  sent as ``Authorization: Bearer`` and carried to the CLI in ``ELYNAV_KERNEL_TOOLS_TOKEN`` only. The
  CLI's config names it (``protocols/codex/launch.kernel_tools_table``: ``[mcp_servers.kernel] url`` +
  ``bearer_token_env_var``, approved without asking, the variable kept out of codex's commands;
  ``protocols/gemini/launch.kernel_tools_settings``: ``mcpServers.kernel.httpUrl`` + a
  ``${ELYNAV_KERNEL_TOOLS_TOKEN}`` header gemini expands, ``trust: true``). Names as the model sees
  them (checked on codex-cli 0.171.0 and gemini 0.61.0): codex defers MCP tools behind its
  ``tool_search`` and calls ``{"namespace": "mcp__kernel", "name": "<tool>"}``; gemini calls
  ``mcp_kernel_<tool>`` (a name over 63 characters would be cut: refused, as is one a ``kernel_*``
  server of ``.mcp.json`` could shadow). A ``.mcp.json`` server named ``kernel`` is refused on every CLI.

How a call flows (claude)::

    CLI stdout: control_request {subtype: mcp_message, server_name: kernel, message: JSON-RPC}
      -> ClaudeStreamWire.serve_request -> mcp_message_server -> McpToolEndpoint.handle (awaits the tool)
      -> control_response {mcp_response: JSON-RPC answer} -> CLI stdin
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elynav_nb.agents.definitions.agent_definition import AgentDefinition
from elynav_nb.agents.protocols.launch import refuse_taken_server_name
from elynav_nb.agents.tools.mcp_endpoint import GateVerdict, McpToolEndpoint
from elynav_nb.agents.tools.outcome import ToolOutcome
from elynav_nb.agents.tools.tool_set import KernelToolSet, tool_set_of

if TYPE_CHECKING:
    from elynav_nb.agents.hooks.runner import HookRunner

__all__ = [
    "KERNEL_SERVER_NAME",
    "apply_hooks",
    "agents_with_kernel_tools",
    "check_server_name_free",
    "claude_tool_flags",
    "mcp_message_server",
    "serve_tools",
]

KERNEL_SERVER_NAME = "kernel"

_NOTIFICATION_ACK: dict[str, Any] = {"jsonrpc": "2.0", "result": {}}


def serve_tools(
    tools: KernelToolSet | Sequence[Any] | Callable[..., Any],
) -> tuple[KernelToolSet, McpToolEndpoint]:
    """The runner's tool set (a set as given; functions, tools and sets gathered) and its MCP endpoint."""
    tool_set = tool_set_of(tools)
    return tool_set, McpToolEndpoint(tool_set, KERNEL_SERVER_NAME)


def apply_hooks(endpoint: McpToolEndpoint, hooks: HookRunner) -> None:
    """Run the runner's PreToolUse / PostToolUse callbacks on each kernel tool call (where the CLI runs none).

    The callbacks see the tool by the name the model uses (``mcp__kernel__<name>``): a deny answers a
    tool error holding the reason (before: the function does not run; after: the result is withheld),
    a rewrite runs the function with the new input. A failing callback denies (``HookRunner``).
    """

    def qualified(name: str) -> str:
        return f"mcp__{endpoint.server_name}__{name}"

    async def before(name: str, arguments: Mapping[str, Any]) -> GateVerdict:
        decision = await hooks.before_tool(qualified(name), arguments)
        if decision is None or decision.behavior == "allow":
            return GateVerdict(allowed=True)
        if decision.denied:
            return GateVerdict(allowed=False, reason=decision.reason)
        return GateVerdict(allowed=True, arguments=decision.updated_input)

    async def after(name: str, arguments: Mapping[str, Any], outcome: ToolOutcome) -> str:
        decision = await hooks.after_tool(qualified(name), arguments, outcome.structured)
        return decision.reason if decision is not None and decision.denied else ""

    endpoint.gate = before
    endpoint.result_gate = after


def claude_tool_flags(endpoint: McpToolEndpoint) -> list[str]:
    """The flags that declare the SDK server and allow its tools."""
    servers = {"mcpServers": {endpoint.server_name: {"type": "sdk", "name": endpoint.server_name}}}
    return [
        "--mcp-config",
        json.dumps(servers, separators=(",", ":")),
        "--allowedTools",
        ",".join(endpoint.qualified_names()),
    ]


def agents_with_kernel_tools(
    definition: AgentDefinition | None, endpoint: McpToolEndpoint
) -> dict[str, dict[str, Any]]:
    """``{name: definition}`` for ``initialize`` when the agent lists its tools (else nothing to send)."""
    if definition is None or not definition.tools:
        return {}
    entry = definition.to_cli_agents_json()
    server_rule = f"mcp__{endpoint.server_name}"
    if server_rule not in entry["tools"]:
        entry["tools"] = [*entry["tools"], server_rule]
    return {definition.name: entry}


def mcp_message_server(endpoint: McpToolEndpoint) -> Callable[[dict[str, Any]], Any]:
    """The answerer of claude's ``mcp_message`` requests for ``endpoint`` (another server name: an error)."""

    async def answer(fields: dict[str, Any]) -> dict[str, Any]:
        server_name = fields.get("server_name")
        if server_name != endpoint.server_name:
            raise LookupError(f"no SDK MCP server named {server_name!r} in this kernel")
        response = await endpoint.handle(fields.get("message"))
        return {"mcp_response": response if response is not None else _NOTIFICATION_ACK}

    return answer


def check_server_name_free(mcp_config: Path | None, endpoint: McpToolEndpoint) -> None:
    """``INVALID_INPUT`` when the workspace's ``.mcp.json`` already names a server ``kernel``."""
    if mcp_config is None or not mcp_config.is_file():
        return
    try:
        loaded = json.loads(mcp_config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # claude reports a broken file itself (the per-turn CLIs' reader refuses it)
    servers = loaded.get("mcpServers") if isinstance(loaded, Mapping) else None
    if isinstance(servers, Mapping):
        refuse_taken_server_name(endpoint.server_name, servers, source=str(mcp_config))
