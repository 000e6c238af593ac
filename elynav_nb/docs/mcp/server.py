"""The Docs MCP server (``elynav mcp docs``): the reference's sixteen tools and ours, over stdio.

Where it sits: the thin MCP edge of ``elynav_nb.docs``. Tool names, argument names and error codes
follow CoopCodeCommun/lasuite-docs-mcp 0.2.1 (``REFERENCE_TOOL_NAMES``: its six content tools, two
credential tools and eight tree tools); ``ELYNAV_TOOL_NAMES`` are ours beyond it. Every tool that
names a document takes ``doc_id`` (a UUID v4, once an instance is known) or ``doc_url`` (the link,
which also fixes the instance; another instance's link is ``INSTANCE_MISMATCH``).

How data flows: ``build_docs_server(service)`` registers the credential tools (here), the content
tools (``mcp.content_tools``: live ``DocsSession`` edits) and the tree tools
(``mcp.tree_tools``: ``DocsRestClient.tree``), all over one ``DocsToolService``
(``mcp.service``: credentials in memory, the instance, clients and sessions). Results are JSON;
errors are ``is_error`` results whose text is ``{"code", "message", ...}`` (``DOC_NOT_FOUND``,
``DOC_READONLY``, ``DOC_NOT_PUBLIC``, ``BLOCK_NOT_FOUND``, ``SYNC_TIMEOUT``, ``AUTH_REQUIRED``,
``NOT_ALLOWED``, ``INSTANCE_MISMATCH``, ``INSTANCE_NOT_SET``, ``RATE_LIMITED``, ``INVALID_INPUT``,
... and ``INTERNAL_ERROR`` for anything unexpected), argument-schema failures included.

Why this text differs from the other elynav servers: the CRM and templates servers write a typed
error as ``CODE: message``; this one keeps the reference's JSON text on purpose, because agents and
prompts written for lasuite-docs-mcp parse it. Its ``structured_content`` is the mapping all three
share (``elynav_nb/_mcp_errors.py``: ``{code, message[, details]}``), so a program reads a typed
error from any of them the same way (``mcp.common.error_result``).

Credentials come from the environment (``DOCS_INSTANCE_URL``, ``DOCS_SESSION_ID``,
``DOCS_CSRF_TOKEN``, all optional) or from ``set_session_credentials``; either way they stay in
this process's memory and never appear in a result, an error or a log line. ``DOCS_MCP_LOG_LEVEL``
sets the server's log level (stderr; default ``INFO``). ``DOCS_MCP_USER_NAME`` is the name people
see for this writer in the documents it edits (``write_mcp_config`` sets it to the agent's name).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final, Literal, cast

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import Field, ValidationError

from elynav_nb._mcp_stdio import AnsweringStdio
from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.mcp.common import LOCAL_RESET, error_result, guarded
from elynav_nb.docs.mcp.content_tools import register_content_tools
from elynav_nb.docs.mcp.discussion_tools import DISCUSSION_TOOL_NAMES, register_discussion_tools
from elynav_nb.docs.mcp.service import DocsToolService
from elynav_nb.docs.mcp.tree_tools import register_tree_tools
from elynav_nb.errors import ElynavError

__all__ = [
    "ELYNAV_TOOL_NAMES",
    "REFERENCE_TOOL_NAMES",
    "SERVER_NAME",
    "TOOL_NAMES",
    "DocsMCPServer",
    "DocsToolService",
    "build_docs_server",
    "main",
]

SERVER_NAME: Final = "elynav-docs"
# lasuite-docs-mcp 0.2.1 (src/server.ts): v0.1's six tools, v0.2's eight, v0.2.1's two.
REFERENCE_TOOL_NAMES: Final[tuple[str, ...]] = (
    "list_documents",
    "read_document",
    "get_document_metadata",
    "insert_block",
    "update_block",
    "delete_block",
    "set_session_credentials",
    "clear_session_credentials",
    "create_document",
    "delete_document",
    "move_document",
    "duplicate_document",
    "update_document_title",
    "list_my_documents",
    "list_document_children",
    "list_document_descendants",
)
ELYNAV_TOOL_NAMES: Final[tuple[str, ...]] = (
    "search_documents",
    "restore_document",
    "list_trash",
    "insert_markdown",
    "replace_section",
    *DISCUSSION_TOOL_NAMES,
)
TOOL_NAMES: Final[tuple[str, ...]] = REFERENCE_TOOL_NAMES + ELYNAV_TOOL_NAMES

_INSTRUCTIONS = (
    "Read, edit and organise La Suite Docs documents. Address a document with doc_id (a UUID v4) or "
    "doc_url (https://<host>/docs/<uuid>/; the first link fixes the instance). read_document returns "
    "block ids; pass them to update_block, delete_block, replace_section or as after_block_id. Text is "
    "inline markdown (**bold**, *italic*, ~~strike~~, `code`, [link](url)); insert_markdown and "
    "replace_section take block markdown. Comment threads: list_comment_threads, create_comment_thread "
    "(on a block id, optionally a quoted span), reply_to_comment_thread, resolve_comment_thread; "
    "versions: list_versions, read_version, diff_versions. Creating, moving, renaming, duplicating, trashing and listing "
    "your documents need a signed-in session: call set_session_credentials with the docs_sessionid and "
    "csrftoken cookies (kept in memory only). Errors are JSON {code, message}: DOC_NOT_FOUND, "
    "DOC_READONLY, DOC_NOT_PUBLIC, BLOCK_NOT_FOUND, SYNC_TIMEOUT, AUTH_REQUIRED, NOT_ALLOWED, "
    "INSTANCE_MISMATCH, INSTANCE_NOT_SET, RATE_LIMITED, INVALID_INPUT. A SYNC_TIMEOUT with pending: true "
    "means the change is made and on its way: calling the same tool again with the same arguments "
    "waits for it and returns its result without writing twice. A write answered with saved: false "
    "is done; Docs saves it later."
)


class DocsMCPServer(AnsweringStdio, MCPServer):
    """``MCPServer`` whose argument-validation failures are JSON ``{code, message}`` like every
    other error of these tools (the SDK answers ``Error executing tool <name>: <pydantic dump>``)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if not isinstance(error.__cause__, ValidationError):
                raise
            return error_result({"code": "INVALID_INPUT", "message": _validation_message(error.__cause__)})


def _validation_message(error: ValidationError) -> str:
    """One line per problem: ``content.text: String should have at least 1 character`` (never the
    value given: it may be a secret)."""
    problems = []
    for problem in error.errors(include_url=False, include_input=False, include_context=False):
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        problems.append(f"{where}: {problem['msg']}")
    return "; ".join(problems)


def _register_credential_tools(server: MCPServer, service: DocsToolService) -> None:
    @server.tool(
        title="Set Docs session credentials",
        annotations=LOCAL_RESET.model_copy(update={"open_world_hint": True}),
        structured_output=False,
    )
    async def set_session_credentials(
        docs_sessionid: str = Field(min_length=1, description="The docs_sessionid cookie's value."),
        csrftoken: str = Field(min_length=1, description="The csrftoken cookie's value."),
        instance_url: str | None = Field(
            default=None, description="The Docs instance (https://<host>); switches to it if another was set."
        ),
    ) -> CallToolResult:
        """Use a signed-in browser session (copy the docs_sessionid and csrftoken cookies from the
        browser's developer tools). Checked against Docs at once; kept in memory only, never
        written, logged or returned. Refused credentials leave the server anonymous."""

        async def action() -> dict[str, Any]:
            return await service.set_credentials(docs_sessionid, csrftoken, instance_url)

        return await guarded(action)

    @server.tool(title="Clear Docs session credentials", annotations=LOCAL_RESET, structured_output=False)
    async def clear_session_credentials() -> CallToolResult:
        """Forget the session credentials (the instance stays set); later calls are anonymous."""

        async def action() -> dict[str, Any]:
            return await service.clear_credentials()

        return await guarded(action)


def build_docs_server(service: DocsToolService) -> MCPServer:
    """The MCP server exposing ``service`` (closed with the server's lifespan)."""

    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await service.aclose()

    server: MCPServer = DocsMCPServer(
        SERVER_NAME,
        version="0.2.0",
        instructions=_INSTRUCTIONS,
        lifespan=lifespan,
        log_level=_log_level(),
    )
    register_content_tools(server, service)
    _register_credential_tools(server, service)
    register_tree_tools(server, service)
    register_discussion_tools(server, service)
    return server


_LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def _log_level() -> _LogLevel:
    level = os.environ.get("DOCS_MCP_LOG_LEVEL", "INFO").upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        return "INFO"
    return cast(_LogLevel, level)


# Loggers whose DEBUG lines carry HTTP headers (a real Docs answers with Set-Cookie: the session
# and CSRF cookies): they never go below INFO, whatever DOCS_MCP_LOG_LEVEL says.
_HEADER_LOGGERS: Final = ("httpcore", "hpack")


def main() -> None:
    """Serve over stdio until the client closes stdin (``elynav mcp docs``)."""
    for name in _HEADER_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO)
    try:
        credentials = DocsCredentials.from_env()
    except ElynavError as error:  # a malformed DOCS_* variable: say which rule, never the value
        raise SystemExit(f"elynav mcp docs: {error.code}: {error.message}") from None
    server = build_docs_server(DocsToolService(credentials, user_name=_user_name()))
    anyio.run(server.run_stdio_async)


def _user_name() -> str:
    """The name this writer shows in the document's presence: ``DOCS_MCP_USER_NAME`` (the agent's
    name, from ``write_mcp_config``), else ``Elynav bot``; one line of at most 64 characters."""
    name = " ".join(os.environ.get("DOCS_MCP_USER_NAME", "").split())[:64]
    return name if name and name.isprintable() else "Elynav bot"


if __name__ == "__main__":
    main()
