"""The Docs MCP tools of comment threads and versions (none of the reference's: issue 31).

Where it sits: registered on the server by ``server.build_docs_server``, in the reference's naming
style (snake_case verb + object, ``doc_id`` or ``doc_url``). Threads go through the live session
(``DocsSession.comments``: the anchor is a mark in the document); versions through the session's
REST client.

    list_comment_threads      threads with comments, authors, resolved state, anchored text
    create_comment_thread     a thread on a block (or a quoted span of it), marked in the document
    reply_to_comment_thread   resolve_comment_thread   unresolve_comment_thread   react_to_comment
    list_versions             read_version (blocks or markdown)   diff_versions (markdown diff +
                              the changed blocks; ``new_version_id`` null = the document now)

Restoring a version is not offered: Docs has no restore endpoint (its frontend saves the version's
content over the document), and a restore replaces a whole document, which a tool here must not do
unasked; ``DocsSession`` users can read a version and write it themselves.
"""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from elynav_nb.docs.blocknote.version_diff import DocumentState
from elynav_nb.docs.mcp.common import ADDITIVE, DOC_ID, DOC_URL, OVERWRITE, READ_ONLY, guarded
from elynav_nb.docs.mcp.service import DocsToolService
from elynav_nb.docs.rest.threads import Comment, Thread

__all__ = ["DISCUSSION_TOOL_NAMES", "register_discussion_tools"]

DISCUSSION_TOOL_NAMES = (
    "list_comment_threads",
    "create_comment_thread",
    "reply_to_comment_thread",
    "resolve_comment_thread",
    "unresolve_comment_thread",
    "react_to_comment",
    "list_versions",
    "read_version",
    "diff_versions",
)


def _comment(comment: Comment) -> dict[str, Any]:
    return {
        "id": comment.id,
        "author": comment.author,
        "text": comment.text,
        "created_at": comment.created_at,
        "reactions": [{"emoji": r.emoji, "count": len(r.users)} for r in comment.reactions],
    }


def _thread(thread: Thread) -> dict[str, Any]:
    return {
        "thread_id": thread.id,
        "resolved": thread.resolved,
        "block_id": thread.block_id,
        "anchor_text": thread.anchor_text,
        "creator": thread.creator,
        "comments": [_comment(comment) for comment in thread.comments],
    }


def _state(state: DocumentState, format: str) -> dict[str, Any]:
    if format == "markdown":
        return {"markdown": state.markdown}
    return {
        "blocks": [
            {"id": block.id, "type": block.type, "text": block.text}
            for top in state.blocks
            for block in top.walk()
        ]
    }


def register_discussion_tools(server: MCPServer, service: DocsToolService) -> None:
    """Add the thread and version tools to ``server``."""

    @server.tool(title="List comment threads", annotations=READ_ONLY, structured_output=False)
    async def list_comment_threads(
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
        include_resolved: bool = Field(default=True, description="Also list resolved threads."),
    ) -> CallToolResult:
        """The document's comment threads: each thread's id, resolved state, the block and text it
        is anchored to, and its comments (author, inline-markdown text, reactions), newest first."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            threads = await session.comments.threads()
            return {"threads": [_thread(t) for t in threads if include_resolved or not t.resolved]}

        return await guarded(action)

    @server.tool(title="Create a comment thread", annotations=ADDITIVE, structured_output=False)
    async def create_comment_thread(
        block_id: str = Field(description="The block to comment on (from read_document)."),
        text: str = Field(min_length=1, description="The first comment, inline markdown."),
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
        quote: str | None = Field(
            default=None, description="Comment on this span of the block's text only (as read, no markdown)."
        ),
    ) -> CallToolResult:
        """Open a comment thread on a block, or on a quoted span of its text; people see the text
        marked as a comment in the editor. Returns the thread_id."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            thread = await session.comments.open(block_id, text, quote=quote)
            return _thread(thread)

        return await guarded(action)

    @server.tool(title="Reply to a comment thread", annotations=ADDITIVE, structured_output=False)
    async def reply_to_comment_thread(
        thread_id: str,
        text: str = Field(min_length=1, description="The reply, inline markdown."),
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
    ) -> CallToolResult:
        """Add a comment to a thread; returns the comment."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            return _comment(await session.comments.reply(thread_id, text))

        return await guarded(action)

    @server.tool(title="Resolve a comment thread", annotations=OVERWRITE, structured_output=False)
    async def resolve_comment_thread(
        thread_id: str, doc_id: str | None = DOC_ID, doc_url: str | None = DOC_URL
    ) -> CallToolResult:
        """Mark a thread resolved (Docs allows its creator and the document's owners)."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            await session.comments.resolve(thread_id)
            return {"ok": True}

        return await guarded(action)

    @server.tool(title="Unresolve a comment thread", annotations=OVERWRITE, structured_output=False)
    async def unresolve_comment_thread(
        thread_id: str, doc_id: str | None = DOC_ID, doc_url: str | None = DOC_URL
    ) -> CallToolResult:
        """Reopen a resolved thread."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            await session.comments.unresolve(thread_id)
            return {"ok": True}

        return await guarded(action)

    @server.tool(title="React to a comment", annotations=OVERWRITE, structured_output=False)
    async def react_to_comment(
        thread_id: str,
        comment_id: str,
        emoji: str = Field(min_length=1, description="One emoji."),
        remove: bool = Field(default=False, description="Remove your reaction instead."),
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
    ) -> CallToolResult:
        """Add (or remove) your emoji reaction on a comment."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            await session.comments.react(thread_id, comment_id, emoji, remove=remove)
            return {"ok": True}

        return await guarded(action)

    @server.tool(title="List versions", annotations=READ_ONLY, structured_output=False)
    async def list_versions(doc_id: str | None = DOC_ID, doc_url: str | None = DOC_URL) -> CallToolResult:
        """The document's saved versions, newest first (the current content is not one of them)."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            versions = await session.versions()
            return {"versions": [{"version_id": v.id, "last_modified": v.last_modified} for v in versions]}

        return await guarded(action)

    @server.tool(title="Read a version", annotations=READ_ONLY, structured_output=False)
    async def read_version(
        version_id: str,
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
        format: Literal["blocks", "markdown"] = Field(default="markdown", description="blocks or markdown."),
    ) -> CallToolResult:
        """A saved version of the document, as markdown or as blocks."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            return {"version_id": version_id, **_state(await session.read_version(version_id), format)}

        return await guarded(action)

    @server.tool(title="Diff versions", annotations=READ_ONLY, structured_output=False)
    async def diff_versions(
        old_version_id: str,
        new_version_id: str | None = Field(default=None, description="null: the document as it is now."),
        doc_id: str | None = DOC_ID,
        doc_url: str | None = DOC_URL,
    ) -> CallToolResult:
        """What changed between two versions (or a version and now): a unified markdown diff, and
        the blocks added, deleted, changed or moved."""

        async def action() -> dict[str, Any]:
            session = await service.session(doc_id, doc_url)
            diff = await session.diff(old_version_id, new_version_id)
            return {
                "markdown_diff": diff.markdown,
                "changes": [change.__dict__ for change in diff.changes],
            }

        return await guarded(action)
