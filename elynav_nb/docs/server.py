"""The Docs MCP server: the reference's six tools plus ``create_document``, over stdio.

Where it sits: the thin MCP edge of ``elynav_nb.docs`` (``elynav mcp docs``). Each tool validates
its input, calls a ``DocsSession`` from a ``DocsSessionPool`` (or the REST client for list, metadata
and create), and returns JSON. Tool names, inputs and error codes follow
CoopCodeCommun/lasuite-docs-mcp (design note §7.1): ``list_documents``, ``read_document``,
``insert_block``, ``update_block``, ``delete_block``, ``get_document_metadata``; every document tool
takes ``doc_id`` (with ``DOCS_INSTANCE_URL`` set) or ``doc_url``.

Errors are tool results with ``is_error`` set whose text is the JSON ``{"code", "message"}``
(``DOC_NOT_FOUND``, ``DOC_READONLY``, ``BLOCK_NOT_FOUND``, ``SYNC_TIMEOUT``, ``INVALID_INPUT``,
``AUTH_REQUIRED``, ``INSTANCE_MISMATCH``, ... and ``INTERNAL_ERROR`` for anything unexpected).
Unlike the reference, every write is saved over REST before the tool returns, so it survives the
room emptying; anonymous sessions say in a ``warning`` that nothing was saved.

Configuration comes from the environment: ``DOCS_INSTANCE_URL``, ``DOCS_SESSION_ID``,
``DOCS_CSRF_TOKEN`` (all optional; without a session only public editable documents open).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from elynav_nb.docs.addressing import DocAddress, parse_docs_url
from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.rest import DocsRestClient
from elynav_nb.docs.session import DocsSession, DocsSessionPool
from elynav_nb.errors import ElynavError, InvalidInput

__all__ = ["SERVER_NAME", "TOOL_NAMES", "DocsMCPServer", "DocsToolService", "build_docs_server", "main"]

SERVER_NAME = "elynav-docs"
TOOL_NAMES: tuple[str, ...] = (
    "list_documents",
    "read_document",
    "insert_block",
    "update_block",
    "delete_block",
    "get_document_metadata",
    "create_document",
)

logger = logging.getLogger(__name__)

_INSTRUCTIONS = (
    "Read and edit La Suite Docs documents live, block by block. Address a document with doc_id (a UUID v4) "
    "or doc_url (https://<host>/docs/<uuid>/). read_document returns block ids; pass them to update_block, "
    "delete_block or insert_block's after_block_id. Text is inline markdown (**bold**, *italic*, ~~strike~~, "
    "`code`, [link](url)). Errors are JSON {code, message}: DOC_NOT_FOUND, DOC_READONLY, DOC_NOT_PUBLIC, "
    "BLOCK_NOT_FOUND, UNSUPPORTED_BLOCK_TYPE, SYNC_TIMEOUT, AUTH_REQUIRED, INSTANCE_MISMATCH, INVALID_INPUT."
)

_READ = ToolAnnotations(read_only_hint=True, open_world_hint=True)
_ADD = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)
_CHANGE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
)

DocId = Field(default=None, description="The document's UUID v4 (needs DOCS_INSTANCE_URL), or use doc_url.")
DocUrl = Field(default=None, description="The document link, https://<host>/docs/<uuid>/.")


class BlockContent(BaseModel):
    """A block to insert: its type, inline-markdown text and (headings only) level."""

    type: Literal[
        "paragraph", "heading", "bulletListItem", "numberedListItem", "checkListItem", "quote", "codeBlock"
    ] = "paragraph"
    text: str = Field(min_length=1, description="Inline markdown; must not be empty.")
    level: int | None = Field(default=None, description="Heading level 1, 2 or 3 (headings only).")


def _error_result(code: str, message: str) -> CallToolResult:
    text = json.dumps({"code": code, "message": message}, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _ok_result(payload: dict[str, Any]) -> CallToolResult:
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


class DocsToolService:
    """What the tools share: the credentials, one REST client per instance, and the session pool."""

    def __init__(
        self, credentials: DocsCredentials, *, idle_ttl: float = 300.0, **session_options: Any
    ) -> None:
        self.credentials = credentials
        self.pool = DocsSessionPool(credentials, idle_ttl=idle_ttl, save_debounce=0.2, **session_options)
        self._rest: DocsRestClient | None = None

    def address(self, doc_id: str | None, doc_url: str | None) -> DocAddress:
        if bool(doc_id) == bool(doc_url):
            raise InvalidInput("give exactly one of doc_id or doc_url")
        return parse_docs_url(str(doc_url or doc_id), instance=self.credentials.instance)

    def rest(self) -> DocsRestClient:
        instance = self.credentials.instance
        if instance is None:
            raise InvalidInput(
                "no Docs instance is set: set DOCS_INSTANCE_URL or pass a doc_url first",
                details={"reason": "INSTANCE_NOT_SET"},
            )
        if self._rest is None:
            self._rest = DocsRestClient(instance, self.credentials)
        return self._rest

    async def session(self, doc_id: str | None, doc_url: str | None) -> DocsSession:
        address = self.address(doc_id, doc_url)
        self.credentials.settle(address.origin)
        return await self.pool.get(address.link)

    async def persisted(self, session: DocsSession, payload: dict[str, Any]) -> dict[str, Any]:
        result = await session.save()
        if not result.saved:
            payload["warning"] = result.reason
        return payload

    async def aclose(self) -> None:
        await self.pool.close_all()
        if self._rest is not None:
            await self._rest.aclose()


async def _guarded(action: Callable[[], Awaitable[dict[str, Any]]]) -> CallToolResult:
    try:
        return _ok_result(await action())
    except ElynavError as error:
        return _error_result(error.code, error.message)
    except Exception as error:  # the model gets a stable code; the details stay in the server log
        logger.exception("docs tool failed")
        return _error_result("INTERNAL_ERROR", f"unexpected {type(error).__name__}")


class DocsMCPServer(MCPServer):
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
            return _error_result("INVALID_INPUT", _validation_message(error.__cause__))


def _validation_message(error: ValidationError) -> str:
    """One line per problem: ``content.text: String should have at least 1 character``."""
    problems = []
    for problem in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        problems.append(f"{where}: {problem['msg']}")
    return "; ".join(problems)


def build_docs_server(service: DocsToolService) -> MCPServer:
    """The MCP server exposing ``service`` (closed with the server's lifespan)."""

    @asynccontextmanager
    async def lifespan(server: MCPServer) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await service.aclose()

    server: MCPServer = DocsMCPServer(SERVER_NAME, version="0.1.0", instructions=_INSTRUCTIONS, lifespan=lifespan)

    @server.tool(title="List documents", annotations=_READ, structured_output=False)
    async def list_documents() -> CallToolResult:
        """Documents these credentials can list (first 100), newest first."""

        async def action() -> dict[str, Any]:
            documents = await service.rest().list_documents(page_size=100, max_pages=1)
            return {"documents": [document.as_metadata() for document in documents]}

        return await _guarded(action)

    @server.tool(title="Read a document", annotations=_READ, structured_output=False)
    async def read_document(doc_id: str | None = DocId, doc_url: str | None = DocUrl) -> CallToolResult:
        """The document's title and blocks (id, type, inline-markdown text, heading level)."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            blocks = []
            for top in session.blocks:
                for block in top.walk():
                    item: dict[str, Any] = {"id": block.id, "type": block.type, "text": block.text}
                    if block.type == "heading":
                        item["level"] = block.props.get("level")
                    if block.opaque:
                        item["opaque"] = True
                    blocks.append(item)
            return {
                "id": session.document_id,
                "title": session.title,
                "blocks": blocks,
                "markdown": session.to_markdown(),
            }

        return await _guarded(action)

    @server.tool(title="Insert a block", annotations=_ADD, structured_output=False)
    async def insert_block(
        content: BlockContent,
        doc_id: str | None = DocId,
        doc_url: str | None = DocUrl,
        after_block_id: str | None = Field(
            default=None, description="Insert after this block; null = at the top."
        ),
    ) -> CallToolResult:
        """Insert one block; returns its new block_id once the server acknowledged and it is saved."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            block_id = await session.insert_block(content.text, content.type, content.level, after_block_id)
            return await service.persisted(session, {"block_id": block_id})

        return await _guarded(action)

    @server.tool(title="Update a block", annotations=_CHANGE, structured_output=False)
    async def update_block(
        block_id: str,
        text: str = Field(min_length=1, description="The new inline-markdown text; type and level are kept."),
        doc_id: str | None = DocId,
        doc_url: str | None = DocUrl,
    ) -> CallToolResult:
        """Replace a block's text (minimal edit: people typing in the same block keep their characters)."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            await session.update_block(block_id, text)
            return await service.persisted(session, {"ok": True})

        return await _guarded(action)

    @server.tool(title="Delete a block", annotations=_CHANGE, structured_output=False)
    async def delete_block(
        block_id: str, doc_id: str | None = DocId, doc_url: str | None = DocUrl
    ) -> CallToolResult:
        """Delete a block and its nested children."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            await session.delete_block(block_id)
            return await service.persisted(session, {"ok": True})

        return await _guarded(action)

    @server.tool(title="Document metadata", annotations=_READ, structured_output=False)
    async def get_document_metadata(
        doc_id: str | None = DocId, doc_url: str | None = DocUrl
    ) -> CallToolResult:
        """Title, dates, link_reach, link_role and abilities."""

        async def action() -> dict[str, Any]:
            address = service.address(doc_id, doc_url)
            service.credentials.settle(address.origin)
            info = await service.rest().retrieve(address.document_id)
            return info.as_metadata()

        return await _guarded(action)

    @server.tool(title="Create a document", annotations=_ADD, structured_output=False)
    async def create_document(
        title: str = Field(min_length=1, description="The new document's title."),
    ) -> CallToolResult:
        """Create a document (UUID v4 id); returns its id and link."""

        async def action() -> dict[str, Any]:
            rest = service.rest()
            info = await rest.create_document(title)
            return {"id": info.id, "title": info.title, "url": f"{rest.instance}/docs/{info.id}/"}

        return await _guarded(action)

    return server


def main() -> None:
    """Serve over stdio until the client closes stdin (``elynav mcp docs``)."""
    service = DocsToolService(DocsCredentials.from_env())
    server = build_docs_server(service)
    anyio.run(server.run_stdio_async)


if __name__ == "__main__":
    main()
