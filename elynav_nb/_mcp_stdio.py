"""``AnsweringStdio``: our MCP servers over stdio, where every request line gets an answer.

Where it sits: a mixin before ``MCPServer`` in the CRM (``crm/server.py``), templates
(``templates/server.py``) and Docs (``docs/mcp/server.py``) servers; a package-level private module
because capabilities do not import each other. I/O only: the answers are ``_mcp_errors``'s.

Why: the mcp SDK's stdio reader parses each line with pydantic, whose JSON parser refuses a lone
surrogate (``"\\ud800"``, valid JSON); the reader then hands the exception on and the server drops it
(``transport yielded exception``, a DEBUG line), so the request's id is never answered and the
client waits for its own timeout. Here the server's read stream is screened: such an exception
becomes ``_mcp_errors.answer_to_unread_line`` of the line it was raised for, written on the SDK's
own write stream (so it never interleaves with another answer); every other item goes on unchanged.

How data flows::

    stdin -> SDK stdio reader -> SessionMessage ---------------------------> the server
                              -> Exception(line) -> answer_to_unread_line -> SDK stdout writer
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp_types
from anyio.abc import ObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from elynav_nb._mcp_errors import answer_to_unread_line

__all__ = ["AnsweringStdio"]

logger = logging.getLogger(__name__)


class AnsweringStdio:
    """Put before ``MCPServer`` in a server's bases: ``run()`` / ``run_stdio_async()`` answer every request."""

    _lowlevel_server: Any  # MCPServer's own (the SDK's run_stdio_async uses it the same way)

    async def run_stdio_async(self) -> None:
        """Serve over stdio until the client closes stdin (the SDK's own, with the screen)."""
        async with stdio_server() as (read_stream, write_stream):
            screened_send, screened_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            async with anyio.create_task_group() as group:
                group.start_soon(_screen, read_stream, screened_send, write_stream)
                await self._lowlevel_server.run(
                    screened_receive, write_stream, self._lowlevel_server.create_initialization_options()
                )
                group.cancel_scope.cancel()


async def _screen(
    source: Any,
    screened: ObjectSendStream[SessionMessage | Exception],
    answers: Any,
) -> None:
    async with screened:
        async for item in source:
            if isinstance(item, Exception):
                answer = _answer_for(item)
                if answer is not None:
                    await answers.send(SessionMessage(answer))
                    continue
            await screened.send(item)


def _answer_for(error: Exception) -> Any:
    """The SDK message answering the line ``error`` was raised for (None: leave it to the SDK)."""
    if not isinstance(error, ValidationError):
        return None
    for detail in error.errors():
        given = detail.get("input")
        if detail.get("type") == "json_invalid" and isinstance(given, str | bytes):
            answer = answer_to_unread_line(given)  # the parser refused the line: it is the input
        elif isinstance(given, dict):
            answer = answer_to_unread_line(given)  # a message whose shape the SDK refused
        else:
            continue
        if answer is not None:
            logger.info(
                "answered a request the MCP SDK could not read: %s", answer.get("error", "tool error")
            )
            return mcp_types.jsonrpc_message_adapter.validate_python(answer, by_name=False)
    return None
