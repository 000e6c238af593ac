"""MCP servers of an ACP stand-in session: the ``mcpServers`` entries, and one real MCP client call per use.

Where it sits: ``acp_standin`` parses the ``mcpServers`` of ``session/new`` / ``session/load`` with
``parse_mcp_servers`` (a ``ValueError`` becomes -32602); ``acp_turns`` calls ``call_mcp_tool`` for
``@standin mcp``. Connections are made lazily, one per call, and closed when the call returns (so
nothing stays open at exit): a stdio server is spawned with the ``mcp`` SDK's ``stdio_client`` (its
stderr goes to a temporary file), an http server is reached with ``streamable_http_client`` and the
entry's headers. ``sse`` is refused (``mcpCapabilities.sse`` is false).

Entries, as ACP sends them: stdio ``{name, command, args, env: [{name, value}]}``; http
``{type: "http", name, url, headers: [{name, value}]}``.

Data flow: ``mcpServers`` JSON -> ``McpServerEntry`` -> ``call_mcp_tool`` -> ``McpCallResult`` (text of the
result's blocks, is_error) -> the tool_call_update.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any

__all__ = ["McpCallResult", "McpServerEntry", "call_mcp_tool", "parse_mcp_servers"]


@dataclass(frozen=True)
class McpServerEntry:
    name: str
    transport: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class McpCallResult:
    text: str
    is_error: bool
    raw: dict[str, Any]


def _pairs(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, list):
        raise ValueError(f"{what} must be a list of {{name, value}}")
    pairs: dict[str, str] = {}
    for item in value:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("value"), str)
        ):
            raise ValueError(f"each entry of {what} needs a string name and value")
        pairs[item["name"]] = item["value"]
    return pairs


def parse_mcp_servers(raw: Any) -> list[McpServerEntry]:
    if not isinstance(raw, list):
        raise ValueError("mcpServers must be a list")
    entries: list[McpServerEntry] = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError("each MCP server needs a string name")
        transport = item.get("type", "stdio")
        if transport == "stdio":
            command, args = item.get("command"), item.get("args", [])
            if not isinstance(command, str) or not isinstance(args, list):
                raise ValueError(f"MCP server {item['name']}: command must be a string, args a list")
            entries.append(
                McpServerEntry(
                    item["name"],
                    "stdio",
                    command=command,
                    args=tuple(str(argument) for argument in args),
                    env=_pairs(item.get("env", []), "env"),
                )
            )
        elif transport in ("http", "sse"):
            if not isinstance(item.get("url"), str):
                raise ValueError(f"MCP server {item['name']}: url must be a string")
            entries.append(
                McpServerEntry(
                    item["name"],
                    str(transport),
                    url=item["url"],
                    headers=_pairs(item.get("headers", []), "headers"),
                )
            )
        else:
            raise ValueError(f"MCP server {item['name']}: unknown type {transport!r}")
    return entries


def _result_of(result: Any) -> McpCallResult:
    blocks = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
    texts = [str(block.get("text", "")) for block in blocks if block.get("type") == "text"]
    text = "\n".join(texts) if texts else json.dumps(blocks)
    raw: dict[str, Any] = {"content": blocks, "isError": bool(result.is_error)}
    if result.structured_content is not None:
        raw["structuredContent"] = result.structured_content
    return McpCallResult(text, bool(result.is_error), raw)


async def call_mcp_tool(
    entry: McpServerEntry, tool: str, arguments: dict[str, Any], cwd: str
) -> McpCallResult:
    """Connect to ``entry``, call ``tool``, disconnect. Connection failures come back as ``is_error``."""
    from mcp import Client

    try:
        if entry.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            environment = dict(os.environ)
            environment.update(entry.env)
            parameters = StdioServerParameters(
                command=entry.command, args=list(entry.args), env=environment, cwd=cwd
            )
            with tempfile.TemporaryFile("w+") as error_log:  # a real fd, as stdio_client needs
                async with Client(stdio_client(parameters, errlog=error_log)) as client:
                    return _result_of(await client.call_tool(tool, arguments))
        if entry.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            async with create_mcp_http_client(headers=entry.headers or None) as http_client:
                async with Client(streamable_http_client(entry.url, http_client=http_client)) as client:
                    return _result_of(await client.call_tool(tool, arguments))
        message = f"MCP server {entry.name}: the stand-in does not connect {entry.transport} servers"
    except Exception as error:  # noqa: BLE001 - a failed connection or call is a failed tool call
        message = f"MCP server {entry.name}: {type(error).__name__}: {error}"
    return McpCallResult(message, True, {"error": message})
