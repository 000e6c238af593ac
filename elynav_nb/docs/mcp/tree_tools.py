"""The Docs MCP tools of the document tree and lifecycle: list, search, create, rename, move, trash.

Where it sits: registered on the server by ``server.build_docs_server``; every tool calls
``DocsToolService.tree()`` (``rest.tree_client.DocsTreeClient``) or ``rest()`` and returns JSON. The
reference's ``list_documents``, ``list_my_documents``, ``create_document``, ``delete_document``,
``move_document``, ``duplicate_document``, ``update_document_title``, ``list_document_children``
and ``list_document_descendants`` keep its names and arguments; ours add ``search_documents``,
``restore_document`` and ``list_trash``. Where the reference takes a document id, a link works
too (``doc_url``, ``parent_url``, ``target_parent_url``), and a link to another instance is
``INSTANCE_MISMATCH`` before anything is sent.

How data flows: arguments -> ``service.document_id`` (settles the instance on a first link) ->
one tree call -> records shown by ``mcp.common.document_summary``. Refusals are Docs' and the
tree client's typed errors: ``NOT_ALLOWED``, ``AUTH_REQUIRED``, ``DOC_NOT_FOUND``,
``RATE_LIMITED``, ``INVALID_INPUT`` (with ``reason: MOVE_INTO_OWN_DESCENDANT`` for a move into the
document's own subtree).
"""

from __future__ import annotations

from typing import Annotated, Any, Final

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from elynav_nb.docs.mcp.common import (
    ADDITIVE,
    DOC_ID,
    DOC_URL,
    OVERWRITE,
    READ_ONLY,
    RESTORE,
    document_summary,
    guarded,
)
from elynav_nb.docs.mcp.service import DocsToolService
from elynav_nb.docs.rest.tree import DocumentList, DocumentTree, MovePosition

__all__ = ["DEFAULT_DESCENDANT_DEPTH", "register_tree_tools"]

DEFAULT_DESCENDANT_DEPTH: Final = 5  # the reference's default


def _listing(documents: DocumentList) -> dict[str, Any]:
    return {
        "count": len(documents),
        "total": documents.count,
        "results": [document_summary(node) for node in documents],
    }


def _tree_listing(tree: DocumentTree) -> dict[str, Any]:
    levels = tree.levels()
    results = []
    for node in tree:
        summary = document_summary(node, parent_id=tree.parent_of.get(node.id))
        summary["level"] = levels[node.id]
        results.append(summary)
    return {"count": len(results), "results": results}


def register_tree_tools(server: MCPServer, service: DocsToolService) -> None:
    """Add the tree and lifecycle tools to ``server``."""

    @server.tool(title="List documents", annotations=READ_ONLY, structured_output=False)
    async def list_documents() -> CallToolResult:
        """Documents these credentials can list (the first 100), newest first."""

        async def action() -> dict[str, Any]:
            documents = await service.rest().list_documents(page_size=100, max_pages=1)
            return {"documents": [document.as_metadata() for document in documents]}

        return await guarded(action)

    @server.tool(title="List my documents", annotations=READ_ONLY, structured_output=False)
    async def list_my_documents(
        page: int = Field(default=1, ge=1, description="Page number, from 1."),
        page_size: int = Field(default=20, ge=1, le=100, description="Documents per page (at most 100)."),
    ) -> CallToolResult:
        """One page of your highest documents (private ones included), newest first; ``count`` is
        the total over every page. Needs set_session_credentials."""

        async def action() -> dict[str, Any]:
            service.require_signed_in("list your documents")
            documents = await service.tree().list_documents(page=page, page_size=page_size)
            total = documents.count if documents.count is not None else len(documents)
            return {
                "count": total,
                "page": page,
                "page_size": page_size,
                "has_next": page * page_size < total,
                "results": [document_summary(node) for node in documents],
            }

        return await guarded(action)

    @server.tool(title="Create a document", annotations=ADDITIVE, structured_output=False)
    async def create_document(
        title: str = Field(min_length=1, description="The new document's title."),
        parent_id: str | None = Field(
            default=None, description="Create it as the last child of this document (UUID); null = top level."
        ),
        parent_url: str | None = Field(default=None, description="The parent's link, instead of parent_id."),
    ) -> CallToolResult:
        """Create a document (UUID v4 id), at the top of your workspace or under a parent (a child
        has no access of its own: it inherits its parent's). Needs set_session_credentials."""

        async def action() -> dict[str, Any]:
            parent = None
            if parent_id or parent_url:
                parent = service.document_id(parent_id, parent_url, what="parent")
            node = await service.tree().create(title, parent=parent)
            return document_summary(node, parent_id=parent)

        return await guarded(action)

    @server.tool(title="Delete a document", annotations=OVERWRITE, structured_output=False)
    async def delete_document(doc_id: str | None = DOC_ID, doc_url: str | None = DOC_URL) -> CallToolResult:
        """Put the document and everything under it in the trash (restore_document brings it
        back within 30 days)."""

        async def action() -> dict[str, Any]:
            change = await service.tree().delete(service.document_id(doc_id, doc_url))
            return {"ok": True, "id": change.document_id}

        return await guarded(action)

    @server.tool(title="Move a document", annotations=OVERWRITE, structured_output=False)
    async def move_document(
        position: Annotated[
            MovePosition,
            Field(
                description="first-child / last-child: become a child of the target; left / right: the "
                "sibling just before / after it; first-sibling / last-sibling: first / last among its "
                "siblings."
            ),
        ],
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
        target_parent_id: str | None = Field(
            default=None, description="The target document (UUID) the position is relative to."
        ),
        target_parent_url: str | None = Field(
            default=None, description="The target's link, instead of target_parent_id."
        ),
    ) -> CallToolResult:
        """Move a document and its subtree. Docs drops the document's own accesses when it changes
        tree (it inherits from its new place). Moving into its own subtree is refused."""

        async def action() -> dict[str, Any]:
            document_id = service.document_id(doc_id, doc_url)
            target_id = service.document_id(target_parent_id, target_parent_url, what="target_parent")
            change = await service.tree().move(document_id, target_id, position)
            return {"ok": True, "id": document_id, "target_id": target_id, "position": change.position}

        return await guarded(action)

    @server.tool(title="Duplicate a document", annotations=ADDITIVE, structured_output=False)
    async def duplicate_document(
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
        with_accesses: bool = Field(default=False, description="Copy the accesses and link settings too."),
        with_descendants: bool = Field(default=False, description="Copy the sub-documents too."),
    ) -> CallToolResult:
        """Copy a document ("Copy of <title>", same content); returns the copy's id and link."""

        async def action() -> dict[str, Any]:
            change = await service.tree().duplicate(
                service.document_id(doc_id, doc_url),
                with_accesses=with_accesses,
                with_descendants=with_descendants,
            )
            new_id = str(change.new_document_id)
            return {
                "id": new_id,
                "url": f"{service.instance}/docs/{new_id}/",
                "duplicated_from": change.document_id,
            }

        return await guarded(action)

    @server.tool(title="Rename a document", annotations=OVERWRITE, structured_output=False)
    async def update_document_title(
        title: str = Field(min_length=1, description="The new title (at most 255 characters)."),
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
    ) -> CallToolResult:
        """Rename a document."""

        async def action() -> dict[str, Any]:
            node = await service.tree().update_title(service.document_id(doc_id, doc_url), title)
            return {"ok": True, "id": node.id, "title": node.title}

        return await guarded(action)

    @server.tool(title="List a document's children", annotations=READ_ONLY, structured_output=False)
    async def list_document_children(
        doc_id: str | None = DOC_ID, doc_url: str | None = DOC_URL
    ) -> CallToolResult:
        """The document's direct children (not in the trash), in tree order."""

        async def action() -> dict[str, Any]:
            return _listing(await service.tree().children(service.document_id(doc_id, doc_url)))

        return await guarded(action)

    @server.tool(title="List a document's descendants", annotations=READ_ONLY, structured_output=False)
    async def list_document_descendants(
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
        max_depth: int | None = Field(
            default=None,
            ge=1,
            le=10,
            description="Levels below the document (1 = its children; default 5). Without a document: "
            "your whole workspace, every level unless max_depth is given.",
        ),
    ) -> CallToolResult:
        """Every descendant of a document, flat and depth-first, each with its parent_id and level
        (1 = a child); or, with no document, everything you can reach (level 0 = a top document)."""

        async def action() -> dict[str, Any]:
            if not doc_id and not doc_url:
                return _tree_listing(await service.tree().workspace_tree(max_depth=max_depth))
            document_id = service.document_id(doc_id, doc_url)
            subtree = await service.tree().descendants(
                document_id, max_depth=max_depth or DEFAULT_DESCENDANT_DEPTH
            )
            listing = _tree_listing(subtree)
            listing["results"] = [item for item in listing["results"] if item["id"] != document_id]
            listing["count"] = len(listing["results"])
            return listing

        return await guarded(action)

    @server.tool(title="Search documents", annotations=READ_ONLY, structured_output=False)
    async def search_documents(
        query: str = Field(description="Words of the title (case and accents ignored)."),
        limit: int = Field(default=50, ge=1, le=200, description="At most this many documents."),
    ) -> CallToolResult:
        """Documents whose title matches, anywhere in your tree; parent_id is a match's top document."""

        async def action() -> dict[str, Any]:
            return _listing(await service.tree().search(query, limit=limit))

        return await guarded(action)

    @server.tool(title="Restore a document", annotations=RESTORE, structured_output=False)
    async def restore_document(doc_id: str | None = DOC_ID, doc_url: str | None = DOC_URL) -> CallToolResult:
        """Take a document out of the trash (owners, within 30 days; it stays hidden while an
        ancestor is itself in the trash)."""

        async def action() -> dict[str, Any]:
            change = await service.tree().restore(service.document_id(doc_id, doc_url))
            return {"ok": True, "id": change.document_id, "message": change.message}

        return await guarded(action)

    @server.tool(title="List the trash", annotations=READ_ONLY, structured_output=False)
    async def list_trash(
        limit: int = Field(default=50, ge=1, le=200, description="At most this many documents."),
    ) -> CallToolResult:
        """Documents you own that are in the trash (restorable for 30 days), last deleted first."""

        async def action() -> dict[str, Any]:
            service.require_signed_in("list the trash")
            return _listing(await service.tree().trash(limit=limit))

        return await guarded(action)
