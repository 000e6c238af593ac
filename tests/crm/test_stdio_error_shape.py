"""A typed error reaches an MCP client in the same shape from all three elynav servers (CRM, templates,
Docs), each spawned over stdio with the command its .mcp.json entry declares.

The shape (``elynav_nb/_mcp_errors.py``): ``is_error``, ``structured_content = {code, message}`` plus
``details`` when the error has some. The text is ``CODE: message`` then the details as JSON for the
CRM and the templates; the Docs server keeps the reference's JSON object as its text (the same code,
message and details, flattened), which its docstring explains.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from elynav_nb.crm.store import CrmStore
from elynav_nb.templates.service import TemplateService

pytestmark = pytest.mark.anyio

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]
BARE_DOCUMENT_ID = "5b1f4a2e-8c3d-4e5f-9a6b-7c8d9e0f1a2b"


@asynccontextmanager
async def served(arguments: list[str], env: dict[str, str] | None = None) -> AsyncIterator[Client]:
    parameters = StdioServerParameters(
        command=sys.executable, args=arguments, env=env, cwd=str(REPOSITORY_ROOT)
    )
    with anyio.fail_after(90), tempfile.TemporaryFile("w+") as server_log:  # a guard against a hung child
        async with Client(stdio_client(parameters, errlog=server_log)) as client:
            yield client


def text_of(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def shared_payload(result: CallToolResult) -> dict[str, Any]:
    """The ``structured_content`` of a typed error, checked against the one shape."""
    assert result.is_error, text_of(result)
    payload = result.structured_content
    assert payload is not None, text_of(result)
    assert set(payload) in ({"code", "message"}, {"code", "message", "details"}), payload
    assert isinstance(payload["code"], str) and re.fullmatch(r"[A-Z][A-Z0-9_]+", payload["code"])
    assert isinstance(payload["message"], str) and payload["message"]
    if "details" in payload:
        assert isinstance(payload["details"], dict) and payload["details"]
    return payload


def coded_line(payload: dict[str, Any]) -> str:
    line = f"{payload['code']}: {payload['message']}"
    if "details" in payload:
        line += " " + json.dumps(payload["details"], ensure_ascii=False, sort_keys=True)
    return line


async def test_the_crm_server_sends_a_typed_error_in_the_shared_shape(tmp_path: Path) -> None:
    database = tmp_path / "crm.sqlite"
    CrmStore.open(database).close()
    async with served(["-m", "elynav_nb.crm.server", "--db", str(database)]) as crm:
        created = await crm.call_tool("create_account", {"name": "Acme", "domain": "acme.fr"})
        assert not created.is_error and created.structured_content is not None
        duplicate = await crm.call_tool("create_account", {"name": "Acme bis", "domain": "acme.fr"})
        no_at = await crm.call_tool(
            "create_contact", {"account_id": 1, "first_name": "A", "last_name": "B", "email": "a.b"}
        )
    for result in (duplicate, no_at):
        assert text_of(result) == coded_line(shared_payload(result))
    assert shared_payload(duplicate)["code"] == "DUPLICATE"
    assert shared_payload(duplicate)["details"] == {"existing_id": created.structured_content["id"]}
    assert shared_payload(no_at)["code"] == "INVALID_INPUT" and "details" not in shared_payload(no_at)


async def test_the_templates_server_sends_a_typed_error_in_the_shared_shape(tmp_path: Path) -> None:
    home = tmp_path / "elynav-home"
    TemplateService.open(home)
    environment = {"ELYNAV_HOME": str(home), "PYTHONPATH": str(REPOSITORY_ROOT)}
    async with served(
        ["-m", "elynav_nb.cli", "mcp", "templates", "--agent", "sdr"], environment
    ) as templates:
        refused = await templates.call_tool("idea_template_create", {"name": "Sneaky", "content": "x"})
        unknown = await templates.call_tool("idea_template_read", {"templateId": "no-such-template-1"})
    for result in (refused, unknown):
        assert text_of(result) == coded_line(shared_payload(result))
    assert shared_payload(refused) == {
        "code": "NOT_ALLOWED",
        "message": "agent 'sdr' may not call idea_template_create: write tools are refused unless granted",
        "details": {"tool": "idea_template_create", "agent": "sdr"},
    }
    assert shared_payload(unknown)["code"] == "TEMPLATE_NOT_FOUND"


async def test_the_docs_server_sends_a_typed_error_in_the_shared_shape_with_the_reference_text() -> None:
    async with served(["-m", "elynav_nb", "mcp", "docs"], {"DOCS_MCP_LOG_LEVEL": "WARNING"}) as docs:
        no_instance = await docs.call_tool("read_document", {"doc_id": BARE_DOCUMENT_ID})
        neither = await docs.call_tool("read_document", {})
    for result in (no_instance, neither):
        payload = shared_payload(result)
        reference_text = json.loads(text_of(result))  # lasuite-docs-mcp's shape: one flat JSON object
        assert reference_text == {
            "code": payload["code"],
            "message": payload["message"],
            **payload.get("details", {}),
        }
    assert shared_payload(no_instance)["code"] == "INSTANCE_NOT_SET"
    assert shared_payload(neither) == {
        "code": "INVALID_INPUT",
        "message": "give exactly one of doc_id or doc_url",
    }
