"""``McpToolEndpoint``: a ``KernelToolSet`` answering MCP's JSON-RPC messages, one message at a time.

Where it sits: between a transport and the tools. The transports carry messages only: claude's
``mcp_message`` control requests on the stream-json pipe (``tools/kernel_tool_server.py``), and the
loopback HTTP server for codex and gemini. Neither parses MCP; this module does, and does no I/O: it
awaits the tool, which runs in the kernel (an ``async`` tool on the kernel's loop, a plain one on its
own thread).

How a message flows::

    {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "head", "arguments": {..}}}
      -> handle(message) -> the call gate (hooks may deny or rewrite; None: no gate)
      -> tool_set.call(name, arguments) -> ToolOutcome -> the result gate (a hook may withhold it)
      -> {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": ..}], "isError": ..}}

Methods: ``initialize`` (the client's protocol version when we know it, else our newest), ``ping``,
``tools/list``, ``tools/call``; notifications get no answer (``None``); any other method is JSON-RPC
``-32601``, a malformed message ``-32600`` / ``-32602``. A tool that fails is a tool result with
``isError`` (the model reads it and the turn goes on), never a JSON-RPC error. A tool's result is
its JSON text, but for a string, which the model reads as it is. ``calls`` counts what
ran, for the views and the tests.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from elynav_nb.agents._jsonrpc import INVALID_PARAMS, INVALID_REQUEST, JSON_RPC, METHOD_NOT_FOUND
from elynav_nb.agents.tools.outcome import ToolOutcome
from elynav_nb.agents.tools.tool_set import KernelToolSet

__all__ = ["PROTOCOL_VERSIONS", "CallGate", "GateVerdict", "McpToolEndpoint", "ResultGate"]

PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
"""The MCP revisions whose ``tools`` methods this endpoint answers (newest first)."""

_SERVER_VERSION = "1"


@dataclass(frozen=True)
class GateVerdict:
    """What the call gate says of one call: run it (maybe with other arguments) or refuse it."""

    allowed: bool
    arguments: Mapping[str, Any] | None = None  # the arguments to run with (None: the model's)
    reason: str = ""  # the refusal the model reads


CallGate = Callable[[str, Mapping[str, Any]], Awaitable[GateVerdict]]
"""Asked before each call with (tool name, arguments): the runner's PreToolUse hooks, where given."""

ResultGate = Callable[[str, Mapping[str, Any], ToolOutcome], Awaitable[str]]
"""Asked after each call with (tool name, arguments, outcome): a reason to withhold the result ("" keeps it)."""

CallListener = Callable[[str, Mapping[str, Any], ToolOutcome], None]
"""Told after each call with (tool name, arguments, outcome)."""


class McpToolEndpoint:
    """One MCP server named ``server_name`` over ``tool_set`` (see the module docstring)."""

    def __init__(
        self,
        tool_set: KernelToolSet,
        server_name: str = "kernel",
        *,
        gate: CallGate | None = None,
        result_gate: ResultGate | None = None,
        listeners: tuple[CallListener, ...] = (),
    ) -> None:
        self.tool_set = tool_set
        self.server_name = server_name
        self.gate = gate
        self.result_gate = result_gate
        self.listeners = list(listeners)
        self.calls = 0

    def qualified_names(self, separator: str = "__", prefix: str = "mcp") -> list[str]:
        """The names a CLI gives the tools (claude: ``mcp__kernel__head``)."""
        return [separator.join((prefix, self.server_name, name)) for name in self.tool_set.names]

    async def handle(self, message: Any) -> dict[str, Any] | None:
        """The answer to one JSON-RPC message (None for a notification)."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return JSON_RPC.error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        method = message.get("method")
        if "id" not in message:
            return None  # a notification (initialized, cancelled...) or a stray response
        request_id = message["id"]
        params = message.get("params")
        if params is None:
            params = {}
        if not isinstance(method, str) or not isinstance(params, dict):
            return JSON_RPC.error(request_id, INVALID_REQUEST, "a request needs a method and object params")
        if method == "initialize":
            return JSON_RPC.result(request_id, self._initialize(params))
        if method == "ping":
            return JSON_RPC.result(request_id, {})
        if method == "tools/list":
            return JSON_RPC.result(request_id, {"tools": self.tool_descriptions()})
        if method == "tools/call":
            name = params.get("name")
            arguments = params.get("arguments")
            if arguments is None:
                arguments = {}
            if not isinstance(name, str) or not isinstance(arguments, dict):
                return JSON_RPC.error(
                    request_id, INVALID_PARAMS, "tools/call needs a tool name and object arguments"
                )
            return JSON_RPC.result(request_id, await self.call(name, arguments))
        return JSON_RPC.error(request_id, METHOD_NOT_FOUND, f"method not found: {method}")

    def tool_descriptions(self) -> list[dict[str, Any]]:
        return [
            {"name": tool.name, "description": tool.description, "inputSchema": tool.parameters}
            for tool in self.tool_set
        ]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Run one tool through the gate: the MCP ``CallToolResult`` of it."""
        if self.gate is not None and name in self.tool_set:
            verdict = await self.gate(name, arguments)
            if not verdict.allowed:
                return _tool_text(verdict.reason or f"the call of {name!r} was denied", is_error=True)
            if verdict.arguments is not None:
                arguments = verdict.arguments
        outcome = await self.tool_set.call(name, arguments)
        self.calls += 1
        for listener in list(self.listeners):
            listener(name, arguments, outcome)
        if self.result_gate is not None:
            withheld = await self.result_gate(name, arguments, outcome)
            if withheld:
                return _tool_text(withheld, is_error=True)
        if isinstance(outcome.structured, str) and not outcome.is_error:
            return _tool_text(outcome.structured, is_error=False)  # a string is read as text, not as JSON
        return _tool_text(outcome.content, is_error=outcome.is_error)

    def _initialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": f"elynav-{self.server_name}", "version": _SERVER_VERSION},
            "instructions": "Python functions and DataFrames of the user's Jupyter kernel, offered as tools.",
        }


def _tool_text(text: str, *, is_error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}
