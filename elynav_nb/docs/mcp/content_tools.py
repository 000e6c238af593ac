"""The Docs MCP tools that read and edit one document's content, live, block by block.

Where it sits: registered on the server by ``server.build_docs_server``; each tool validates its
arguments (pydantic, from the signature), opens the document through ``DocsToolService.session``
(a ``DocsSession`` from the pool) and returns JSON. The reference's ``read_document``,
``get_document_metadata``, ``insert_block``, ``update_block`` and ``delete_block`` keep its names
and arguments; ``read_document`` also takes ``format`` (``blocks`` or ``markdown``), and
``insert_markdown`` / ``replace_section`` write whole markdown (``DocsSession.insert_markdown`` and
``replace_section``).

How data flows: tool arguments -> ``service.session(doc_id, doc_url)`` -> one acknowledged write on
the live document -> ``service.persisted`` saves it over REST before the tool returns (unlike the
reference), an anonymous session saying in ``warning`` that nothing was saved.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import BaseModel, Field

from elynav_nb.docs.mcp.common import ADDITIVE, DOC_ID, DOC_URL, OVERWRITE, READ_ONLY, guarded
from elynav_nb.docs.mcp.service import DocsToolService
from elynav_nb.docs.session import DocsSession

__all__ = ["BlockContent", "register_content_tools"]


class BlockContent(BaseModel):
    """A block to insert: its type, inline-markdown text and (headings only) level."""

    type: Literal[
        "paragraph", "heading", "bulletListItem", "numberedListItem", "checkListItem", "quote", "codeBlock"
    ] = "paragraph"
    text: str = Field(min_length=1, description="Inline markdown; must not be empty.")
    level: int | None = Field(default=None, description="Heading level 1, 2 or 3 (headings only).")


def _block_items(session: DocsSession) -> list[dict[str, Any]]:
    items = []
    for top in session.blocks:
        for block in top.walk():
            item: dict[str, Any] = {"id": block.id, "type": block.type, "text": block.text}
            if block.type == "heading":
                item["level"] = block.props.get("level")
            if block.opaque:
                item["opaque"] = True
            items.append(item)
    return items


def register_content_tools(server: MCPServer, service: DocsToolService) -> None:
    """Add the content tools to ``server``."""

    @server.tool(title="Read a document", annotations=READ_ONLY, structured_output=False)
    async def read_document(
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
        format: Literal["blocks", "markdown"] = Field(
            default="blocks",
            description="blocks: [{id, type, text, level}] with the ids other tools take; "
            "markdown: the whole document as markdown.",
        ),
    ) -> CallToolResult:
        """The document's title and content: its blocks (id, type, inline-markdown text, heading
        level), or with format=markdown its markdown."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            payload: dict[str, Any] = {"id": session.document_id, "title": session.title}
            if format == "markdown":
                payload["markdown"] = session.to_markdown()
            else:
                payload["blocks"] = _block_items(session)
            return payload

        return await guarded(action)

    @server.tool(title="Document metadata", annotations=READ_ONLY, structured_output=False)
    async def get_document_metadata(
        doc_id: str | None = DOC_ID, doc_url: str | None = DOC_URL
    ) -> CallToolResult:
        """Title, dates, link_reach, link_role and your abilities, without loading the content."""

        async def action() -> dict[str, Any]:
            return (await service.retrieve(doc_id, doc_url)).as_metadata()

        return await guarded(action)

    @server.tool(title="Insert a block", annotations=ADDITIVE, structured_output=False)
    async def insert_block(
        content: BlockContent,
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
        after_block_id: str | None = Field(
            default=None, description="Insert after this block; null = at the top."
        ),
    ) -> CallToolResult:
        """Insert one block; returns its new block_id once the server acknowledged and it is saved."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            block_id = await session.insert_block(content.text, content.type, content.level, after_block_id)
            return await service.persisted(session, {"block_id": block_id})

        return await guarded(action)

    @server.tool(title="Update a block", annotations=OVERWRITE, structured_output=False)
    async def update_block(
        block_id: str,
        text: str = Field(min_length=1, description="The new inline-markdown text; type and level are kept."),
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
    ) -> CallToolResult:
        """Replace a block's text (minimal edit: people typing in the same block keep their characters)."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            await session.update_block(block_id, text)
            return await service.persisted(session, {"ok": True})

        return await guarded(action)

    @server.tool(title="Delete a block", annotations=OVERWRITE, structured_output=False)
    async def delete_block(
        block_id: str, doc_id: str | None = DOC_ID, doc_url: str | None = DOC_URL
    ) -> CallToolResult:
        """Delete a block and its nested children."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            await session.delete_block(block_id)
            return await service.persisted(session, {"ok": True})

        return await guarded(action)

    @server.tool(title="Insert markdown", annotations=ADDITIVE, structured_output=False)
    async def insert_markdown(
        markdown: str = Field(
            min_length=1,
            description="Block-level markdown: headings, paragraphs, bullet/numbered/check lists "
            "(nested), quotes, fenced code with a language, dividers, images by URL, tables.",
        ),
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
        after_block_id: str | None = Field(
            default=None, description="Insert after this block; null = at the top."
        ),
    ) -> CallToolResult:
        """Insert markdown as blocks in one acknowledged edit; returns the new block ids, in order."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            block_ids = await session.insert_markdown(markdown, after=after_block_id)
            return await service.persisted(session, {"block_ids": list(block_ids)})

        return await guarded(action)

    @server.tool(title="Replace a section", annotations=OVERWRITE, structured_output=False)
    async def replace_section(
        heading_id: str = Field(description="The block id of the section's heading (from read_document)."),
        markdown: str = Field(description="The section's new content, as block-level markdown."),
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
    ) -> CallToolResult:
        """Replace what follows a heading, up to the next heading of the same or a higher level, by
        a minimal change: blocks whose text is unchanged keep their ids (and people's edits)."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            change = await session.replace_section(heading_id, markdown)
            payload: dict[str, Any] = {
                "ok": True,
                **dataclasses.asdict(change),
            }  # kept, updated, inserted, deleted
            return await service.persisted(session, payload)

        return await guarded(action)
