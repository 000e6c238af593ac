"""The Docs MCP server: tools in process on the sandbox, errors as JSON {code, message}, one stdio round trip."""

from __future__ import annotations

import json
import sys
import tempfile
import uuid
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, stdio_client

from elynav_nb.docs.mcp.server import TOOL_NAMES, DocsToolService, build_docs_server
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


def payload(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.content[0].text)
    return data


async def test_tools_edit_a_sandbox_document_and_errors_are_json() -> None:
    async with DocsSandbox() as sandbox:
        service = DocsToolService(sandbox.credentials())
        async with Client(build_docs_server(service), raise_exceptions=True) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == set(TOOL_NAMES)
            # each tool's annotations: test_docs_mcp_parity.py

            created = payload(await client.call_tool("create_document", {"title": "From MCP"}))
            doc_id = created["id"]
            inserted = await client.call_tool(
                "insert_block",
                {"doc_id": doc_id, "content": {"type": "heading", "level": 2, "text": "**Plan**"}},
            )
            block_id = payload(inserted)["block_id"]
            second = payload(
                await client.call_tool(
                    "insert_block",
                    {"doc_url": created["url"], "content": {"text": "step one"}, "after_block_id": block_id},
                )
            )["block_id"]
            assert payload(
                await client.call_tool(
                    "update_block", {"doc_id": doc_id, "block_id": second, "text": "step *one*"}
                )
            ) == {"ok": True}
            read = payload(await client.call_tool("read_document", {"doc_id": doc_id}))
            assert [(block["type"], block["text"], block.get("level")) for block in read["blocks"]] == [
                ("heading", "**Plan**", 2),
                ("paragraph", "step *one*", None),
            ]
            assert sandbox.store.get_document(doc_id).content is not None  # saved before the tool returned
            as_markdown = payload(
                await client.call_tool("read_document", {"doc_id": doc_id, "format": "markdown"})
            )
            assert set(as_markdown) == {"id", "title", "markdown"}
            assert as_markdown["markdown"].strip().split("\n\n") == ["## **Plan**", "step *one*"]

            missing = await client.call_tool(
                "update_block", {"doc_id": doc_id, "block_id": str(uuid.uuid4()), "text": "x"}
            )
            assert missing.is_error and payload(missing)["code"] == "BLOCK_NOT_FOUND"
            unknown_doc = await client.call_tool("read_document", {"doc_id": str(uuid.uuid4())})
            assert unknown_doc.is_error and payload(unknown_doc)["code"] == "DOC_NOT_FOUND"
            both = await client.call_tool("read_document", {})
            assert both.is_error and payload(both)["code"] == "INVALID_INPUT"
            for arguments, where in [  # rejected by the argument schema: JSON too, with the field
                ({"doc_id": doc_id, "content": {"text": ""}}, "content.text"),
                ({"doc_id": doc_id, "content": {"text": "x", "type": "table"}}, "content.type"),
                ({"doc_id": doc_id, "content": "not an object"}, "content"),
            ]:
                refused = await client.call_tool("insert_block", arguments)
                assert refused.is_error and payload(refused)["code"] == "INVALID_INPUT", refused.content
                assert payload(refused)["message"].startswith(where)
            no_block = await client.call_tool("update_block", {"doc_id": doc_id, "text": "x"})
            assert payload(no_block) == {"code": "INVALID_INPUT", "message": "block_id: Field required"}
            metadata = payload(await client.call_tool("get_document_metadata", {"doc_id": doc_id}))
            assert metadata["title"] == "From MCP" and metadata["link_reach"] == "restricted"
            listed = payload(await client.call_tool("list_documents", {}))
            assert [document["id"] for document in listed["documents"]] == [doc_id]
            assert payload(
                await client.call_tool("delete_block", {"doc_id": doc_id, "block_id": second})
            ) == {"ok": True}


async def test_stdio_round_trip() -> None:
    async with DocsSandbox() as sandbox:
        document = sandbox.create_document("Over stdio")
        parameters = StdioServerParameters(  # the command .mcp.json declares: elynav mcp docs
            command=sys.executable,
            args=["-m", "elynav_nb", "mcp", "docs"],
            env={
                "DOCS_INSTANCE_URL": sandbox.url,
                "DOCS_SESSION_ID": sandbox.session_id,
                "DOCS_CSRF_TOKEN": sandbox.csrf_token,
            },
        )
        with tempfile.TemporaryFile("w+") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog)) as client:
                inserted = await client.call_tool(
                    "insert_block",
                    {"doc_id": document.id, "content": {"type": "paragraph", "text": "via stdio"}},
                )
                assert not inserted.is_error, inserted.content
                read = payload(await client.call_tool("read_document", {"doc_id": document.id}))
        assert [block["text"] for block in read["blocks"]] == ["via stdio"]
        assert document.content is not None
