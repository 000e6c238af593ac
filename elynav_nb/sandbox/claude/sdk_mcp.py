"""SDK MCP servers for the stand-in: a real MCP client whose messages ride ``mcp_message`` control requests.

Where it sits: ``mcp_servers.McpHub`` opens an ``mcp.Client`` per configured server; for an
``{"type": "sdk", "name": ...}`` entry of ``--mcp-config`` (claude-agent-sdk's in-process servers, and
elynav's kernel tools) the client's transport is ``sdk_control_transport`` below, as in the real CLI
2.1.332: each JSON-RPC message the client writes becomes one ``control_request`` on stdout
(``{"subtype": "mcp_message", "server_name": ..., "message": ...}``), and the host's
``control_response`` (``{"mcp_response": ...}``) becomes the message the client reads. So the stand-in
runs the same handshake as the real CLI (``initialize``, ``notifications/initialized``,
``tools/list``) and its ``@standin mcp <server> <tool>`` directive calls the host's tools the same way.

SDK servers start when the host's ``initialize`` control request arrives (the host is listening by
then), never in ``-p`` text mode, which has no control channel.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

__all__ = ["ControlChannel", "sdk_control_transport"]

REQUEST_TIMEOUT_SECONDS = 600.0  # a host tool may run long; the real CLI's MCP timeout is of this order
_request_numbers = itertools.count(1)


@dataclass
class ControlChannel:
    """The stand-in's way to ask the host: write a control request, wait for its control response."""

    emit: Callable[[dict[str, Any]], None]
    pending: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)

    async def request(self, fields: dict[str, Any]) -> dict[str, Any]:
        """The host's answer (``{"behavior": "deny", "message": ...}`` when it answered an error)."""
        request_id = f"sdkmcp-{next(_request_numbers)}"
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = answer
        self.emit({"type": "control_request", "request_id": request_id, "request": fields})
        try:
            return await asyncio.wait_for(answer, REQUEST_TIMEOUT_SECONDS)
        finally:
            self.pending.pop(request_id, None)


@asynccontextmanager
async def sdk_control_transport(server_name: str, channel: ControlChannel) -> AsyncIterator[tuple[Any, Any]]:
    """The (read, write) message streams of an MCP client whose peer is the host's SDK server."""
    import mcp.types as mcp_types
    from mcp.shared.message import SessionMessage

    read_writer, read_stream = anyio.create_memory_object_stream[Any](16)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](16)

    async def relay(payload: dict[str, Any]) -> None:
        answer = await channel.request(
            {"subtype": "mcp_message", "server_name": server_name, "message": payload}
        )
        if "id" not in payload or "method" not in payload:
            return  # a notification (or our own response): the host only acknowledged it
        response = answer.get("mcp_response")
        if not isinstance(response, dict):
            message = str(answer.get("message") or "the host gave no mcp_response")
            response = {"jsonrpc": "2.0", "id": payload["id"], "error": {"code": -32603, "message": message}}
        try:
            parsed: Any = SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(response))
        except ValueError as error:
            parsed = error
        try:
            await read_writer.send(parsed)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    async def pump_client_output() -> None:
        async with anyio.create_task_group() as relays:
            async with write_reader:
                async for session_message in write_reader:
                    payload = session_message.message.model_dump(
                        by_alias=True, exclude_unset=True, mode="json"
                    )
                    relays.start_soon(relay, payload)  # concurrent calls, as the real CLI makes them

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(pump_client_output)
        try:
            yield read_stream, write_stream
        finally:
            await write_stream.aclose()
            await read_writer.aclose()
            await read_stream.aclose()
            task_group.cancel_scope.cancel()
