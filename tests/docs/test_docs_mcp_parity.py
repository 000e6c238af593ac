"""Parity of ``elynav mcp docs`` with the reference server, lasuite-docs-mcp 0.2.1 (its sixteen tools,
their argument names and error codes), and every tool's annotations."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client
from mcp.types import Tool

from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.mcp.common import guarded
from elynav_nb.docs.mcp.server import ELYNAV_TOOL_NAMES, REFERENCE_TOOL_NAMES, TOOL_NAMES, build_docs_server
from elynav_nb.docs.mcp.service import DocsToolService
from elynav_nb.errors import ElynavError, error_for_code

pytestmark = pytest.mark.anyio

# CoopCodeCommun/lasuite-docs-mcp src/server.ts at 0.2.1 (commit fb0c72dd): each tool, its
# argument names, and the ones its zod schema requires. Where the reference takes a document
# reference it is "doc_id or doc_url" (a union), so neither is required on its own.
REFERENCE_TOOLS: dict[str, tuple[set[str], set[str]]] = {
    "list_documents": (set(), set()),
    "read_document": ({"doc_id", "doc_url"}, set()),
    "get_document_metadata": ({"doc_id", "doc_url"}, set()),
    "insert_block": ({"doc_id", "doc_url", "content", "after_block_id"}, {"content"}),
    "update_block": ({"doc_id", "doc_url", "block_id", "text"}, {"block_id", "text"}),
    "delete_block": ({"doc_id", "doc_url", "block_id"}, {"block_id"}),
    "set_session_credentials": (
        {"docs_sessionid", "csrftoken", "instance_url"},
        {"docs_sessionid", "csrftoken"},
    ),
    "clear_session_credentials": (set(), set()),
    "create_document": ({"title", "parent_id"}, {"title"}),
    "delete_document": ({"doc_id", "doc_url"}, set()),
    "move_document": (
        {"doc_id", "doc_url", "target_parent_id", "position"},
        {"target_parent_id", "position"},
    ),
    "duplicate_document": ({"doc_id", "doc_url", "with_accesses"}, set()),
    "update_document_title": ({"doc_id", "doc_url", "title"}, {"title"}),
    "list_my_documents": ({"page", "page_size"}, set()),
    "list_document_children": ({"doc_id", "doc_url"}, set()),
    "list_document_descendants": ({"doc_id", "doc_url", "max_depth"}, set()),
}
# Ours beyond the reference.
OUR_TOOLS = {
    "search_documents",
    "restore_document",
    "list_trash",
    "insert_markdown",
    "replace_section",
    "list_comment_threads",
    "create_comment_thread",
    "reply_to_comment_thread",
    "resolve_comment_thread",
    "unresolve_comment_thread",
    "react_to_comment",
    "list_versions",
    "read_version",
    "diff_versions",
}
# Required by the reference but optional here, because a link may stand in for the id.
LINK_ALTERNATIVES = {("move_document", "target_parent_id"): "target_parent_url"}
# src/types.ts DocsErrorCode at 0.2.x, plus the codes its server.ts formats itself.
REFERENCE_ERROR_CODES = {
    "DOC_NOT_FOUND",
    "DOC_NOT_PUBLIC",
    "AUTH_REQUIRED",
    "INSTANCE_NOT_SET",
    "INSTANCE_MISMATCH",
    "DOC_READONLY",
    "BLOCK_NOT_FOUND",
    "UNSUPPORTED_BLOCK_TYPE",
    "SYNC_TIMEOUT",
    "INVALID_INPUT",
    "INTERNAL_ERROR",
}
# What each tool does, as the hints say it: (read_only, destructive, idempotent, open_world).
# Destructive = it overwrites or removes something (a title, a block, a place in the tree and, for
# a move, the document's own accesses); a trashed document is restorable but trashing still
# removes it. Idempotent = the same call twice leaves the same state. Credentials live in this
# server's memory only, so clearing them touches nothing outside (not open-world).
ANNOTATIONS: dict[str, tuple[bool, bool | None, bool | None, bool]] = {
    "list_documents": (True, None, None, True),
    "read_document": (True, None, None, True),
    "get_document_metadata": (True, None, None, True),
    "list_my_documents": (True, None, None, True),
    "list_document_children": (True, None, None, True),
    "list_document_descendants": (True, None, None, True),
    "search_documents": (True, None, None, True),
    "list_trash": (True, None, None, True),
    "insert_block": (False, False, False, True),
    "insert_markdown": (False, False, False, True),
    "create_document": (False, False, False, True),
    "duplicate_document": (False, False, False, True),
    "update_block": (False, True, True, True),
    "delete_block": (False, True, True, True),
    "replace_section": (False, True, True, True),
    "update_document_title": (False, True, True, True),
    "move_document": (False, True, True, True),
    "delete_document": (False, True, True, True),
    "restore_document": (False, False, True, True),
    "set_session_credentials": (False, False, True, True),
    "clear_session_credentials": (False, False, True, False),
    "list_comment_threads": (True, None, None, True),
    "list_versions": (True, None, None, True),
    "read_version": (True, None, None, True),
    "diff_versions": (True, None, None, True),
    "create_comment_thread": (False, False, False, True),
    "reply_to_comment_thread": (False, False, False, True),
    "resolve_comment_thread": (False, True, True, True),
    "unresolve_comment_thread": (False, True, True, True),
    "react_to_comment": (False, True, True, True),
}


@pytest.fixture
async def served_tools() -> AsyncIterator[dict[str, Tool]]:
    service = DocsToolService(DocsCredentials.anonymous())
    async with Client(build_docs_server(service), raise_exceptions=True) as client:
        yield {tool.name: tool for tool in (await client.list_tools()).tools}


async def test_the_reference_sixteen_tools_and_ours_are_served(served_tools: dict[str, Tool]) -> None:
    assert len(REFERENCE_TOOLS) == 16
    missing = sorted(set(REFERENCE_TOOLS) - set(served_tools))
    assert not missing, f"reference tools not served: {missing}"
    assert set(served_tools) == set(REFERENCE_TOOLS) | OUR_TOOLS
    assert REFERENCE_TOOL_NAMES == tuple(REFERENCE_TOOLS)  # the module's list, in the reference's order
    assert set(ELYNAV_TOOL_NAMES) == OUR_TOOLS and set(TOOL_NAMES) == set(served_tools)


async def test_the_reference_argument_names_are_taken(served_tools: dict[str, Tool]) -> None:
    for name, (arguments, required_there) in REFERENCE_TOOLS.items():
        schema = served_tools[name].input_schema
        properties = set(schema.get("properties", {}))
        required_here = set(schema.get("required", []))
        assert arguments <= properties, (name, arguments - properties)
        assert required_here <= required_there, (name, required_here - required_there)  # no new demand
        for argument in required_there - required_here:
            alternative = LINK_ALTERNATIVES[(name, argument)]
            assert alternative in properties, (name, argument)


async def test_the_reference_values_are_accepted(served_tools: dict[str, Tool]) -> None:
    def schema_of(tool: str, argument: str) -> dict[str, Any]:
        prop: dict[str, Any] = served_tools[tool].input_schema["properties"][argument]
        return prop

    positions = set(schema_of("move_document", "position")["enum"])
    assert {"first-child", "last-child", "left", "right"} <= positions  # the reference's four
    assert positions == {"first-child", "last-child", "first-sibling", "last-sibling", "left", "right"}
    depth = json.dumps(schema_of("list_document_descendants", "max_depth"))
    assert '"minimum": 1' in depth and '"maximum": 10' in depth
    page_size = json.dumps(schema_of("list_my_documents", "page_size"))
    assert '"maximum": 100' in page_size
    block_types = served_tools["insert_block"].input_schema["$defs"]["BlockContent"]["properties"]["type"][
        "enum"
    ]
    assert {"paragraph", "heading"} <= set(block_types)
    assert set(schema_of("read_document", "format")["enum"]) == {"blocks", "markdown"}


async def test_every_tool_declares_the_right_annotations(served_tools: dict[str, Tool]) -> None:
    assert set(ANNOTATIONS) == set(served_tools)
    for name, (read_only, destructive, idempotent, open_world) in ANNOTATIONS.items():
        hints = served_tools[name].annotations
        assert hints is not None, name
        got = (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint)
        assert got == (read_only, destructive, idempotent, open_world), name
        assert served_tools[name].title, name


def test_the_reference_error_codes_exist_here() -> None:
    typed = {code for code in REFERENCE_ERROR_CODES if error_for_code(code) is not ElynavError}
    # INSTANCE_NOT_SET is INVALID_INPUT with that reason in the library, given its own code at the
    # MCP edge; INTERNAL_ERROR is the edge's answer to anything untyped.
    assert REFERENCE_ERROR_CODES - typed == {"INSTANCE_NOT_SET", "INTERNAL_ERROR"}


async def test_an_untyped_failure_is_internal_error_and_its_text_stays_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    session_id = secrets.token_hex(16)

    async def broken() -> dict[str, Any]:
        raise RuntimeError(f"Cookie: docs_sessionid={session_id}")

    result = await guarded(broken)
    assert result.is_error
    assert json.loads(result.content[0].text) == {
        "code": "INTERNAL_ERROR",
        "message": "unexpected RuntimeError",
    }
    logged = caplog.text
    assert "RuntimeError" in logged and "in broken" in logged  # the stack is kept for the maintainer
    assert session_id not in logged
