"""The MCP server in process (``Client(server)``): schemas, annotations, structured output, coded errors."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from elynav_nb.crm.server import TOOL_NAMES, build_crm_server
from elynav_nb.crm.store import CrmStore

WRITE_TOOLS = {
    "create_account",
    "update_account",
    "create_contact",
    "log_activity",
    "create_opportunity",
    "update_opportunity_stage",
}


@pytest.fixture
async def crm_client(store: CrmStore) -> AsyncIterator[Client]:
    async with Client(build_crm_server(store), raise_exceptions=True) as client:
        yield client


def _text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, _text(result)
    assert result.structured_content is not None
    return result.structured_content


@pytest.mark.anyio
async def test_tools_declare_schemas_and_annotations(crm_client: Client) -> None:
    listed = await crm_client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == set(TOOL_NAMES)
    for name, tool in tools.items():
        assert tool.annotations is not None, name
        assert tool.annotations.read_only_hint is (name not in WRITE_TOOLS), name
        if name in WRITE_TOOLS:
            assert tool.annotations.destructive_hint is not None, name
        assert tool.output_schema is not None, name
        assert tool.description, name
    assert tools["create_contact"].annotations.destructive_hint is False  # type: ignore[union-attr]
    assert tools["update_opportunity_stage"].annotations.destructive_hint is True  # type: ignore[union-attr]
    stage_schema = tools["create_opportunity"].input_schema["properties"]["stage"]
    assert stage_schema["enum"] == ["prospecting", "qualification", "proposal", "negotiation", "won", "lost"]
    limit_schema = tools["search_accounts"].input_schema["properties"]["limit"]
    assert (limit_schema["minimum"], limit_schema["maximum"]) == (1, 100)


@pytest.mark.anyio
async def test_structured_output_and_pagination(crm_client: Client) -> None:
    for number in range(5):
        await _call(crm_client, "create_account", {"name": f"Groupe Durand {number}"})
    first_page = await _call(crm_client, "search_accounts", {"query": "durand", "limit": 3})
    assert [item["name"] for item in first_page["items"]][:1] == ["Groupe Durand 0"]
    assert len(first_page["items"]) == 3 and first_page["next_cursor"]
    second_page = await _call(
        crm_client, "search_accounts", {"query": "durand", "limit": 3, "cursor": first_page["next_cursor"]}
    )
    assert len(second_page["items"]) == 2 and second_page["next_cursor"] is None
    all_ids = {item["id"] for item in first_page["items"] + second_page["items"]}
    assert all_ids == {1, 2, 3, 4, 5}
    summary = await _call(crm_client, "pipeline_summary", {})
    assert summary["stages"][0]["stage"] == "prospecting"


@pytest.mark.anyio
async def test_duplicate_email_gives_duplicate_and_the_existing_id(crm_client: Client) -> None:
    account = await _call(crm_client, "create_account", {"name": "Acme", "domain": "acme.fr"})
    contact = await _call(
        crm_client,
        "create_contact",
        {"account_id": account["id"], "first_name": "Jean", "last_name": "Dupont", "email": "jean@acme.fr"},
    )
    again = await crm_client.call_tool(
        "create_contact",
        {"account_id": account["id"], "first_name": "J", "last_name": "D", "email": "Jean@Acme.fr"},
    )
    assert again.is_error
    text = _text(again)
    assert "DUPLICATE: a contact with email jean@acme.fr already exists" in text
    assert f"(id {contact['id']}" in text
    assert f'"existing_id": {contact["id"]}' in text


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("get_account", {"account_id": 42}, "NOT_FOUND: account 42 does not exist"),
        (
            "create_contact",
            {"account_id": 1, "first_name": "A", "last_name": "B", "email": "a.b"},
            "INVALID_INPUT",
        ),
        (
            "create_opportunity",
            {"account_id": 1, "name": "Deal", "amount": -1},
            "INVALID_INPUT: amount -1.0 is negative",
        ),
        (
            "create_opportunity",
            {"account_id": 1, "name": "Deal", "amount": 5, "stage": "signed"},
            "INVALID_INPUT",
        ),
        ("update_opportunity_stage", {"opportunity_id": 3, "stage": "won"}, "NOT_FOUND: opportunity 3"),
        (
            "log_activity",
            {"account_id": 1, "kind": "fax", "subject": "x", "logged_by": "Yann"},
            "INVALID_INPUT",
        ),
        (
            "log_activity",
            {"account_id": 1, "kind": "email", "subject": "x", "logged_by": "Yann", "body": "é" * 600_000},
            "INVALID_INPUT: body is 1,200,000 bytes",
        ),
        (
            "search_accounts",
            {"cursor": "forged"},
            "INVALID_INPUT: cursor 'forged' was not given by this server",
        ),
        ("search_accounts", {"limit": 1000}, "INVALID_INPUT: limit must be an integer from 1 to 100"),
    ],
)
async def test_bad_inputs_come_back_as_coded_tool_errors(
    crm_client: Client, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    await _call(crm_client, "create_account", {"name": "Acme"})
    result = await crm_client.call_tool(tool, arguments)
    assert result.is_error
    assert expected in _text(result)


@pytest.mark.anyio
async def test_sql_injection_through_mcp_is_plain_text(crm_client: Client, store: CrmStore) -> None:
    await _call(crm_client, "create_account", {"name": "Acme"})
    page = await _call(crm_client, "search_accounts", {"query": "x'); DROP TABLE accounts; --"})
    assert page["items"] == []
    created = await _call(crm_client, "create_account", {"name": "Robert'); DROP TABLE accounts; --"})
    assert created["name"] == "Robert'); DROP TABLE accounts; --"
    assert store.table_counts()["accounts"] == 2


@pytest.mark.anyio
async def test_locked_database_through_mcp_gives_database_busy(tmp_path: Path) -> None:
    path = tmp_path / "crm.sqlite"
    with CrmStore.open(path, busy_timeout_seconds=0.2) as crm_store:
        async with Client(build_crm_server(crm_store), raise_exceptions=True) as client:
            blocker = sqlite3.connect(path, isolation_level=None)
            blocker.execute("BEGIN IMMEDIATE")
            try:
                result = await client.call_tool("create_account", {"name": "Acme"})
            finally:
                blocker.execute("ROLLBACK")
                blocker.close()
            assert result.is_error
            assert _text(result).startswith("DATABASE_BUSY:")
            assert result.structured_content is not None
            assert result.structured_content["code"] == "DATABASE_BUSY"
            retried = await client.call_tool("create_account", {"name": "Acme"})
            assert not retried.is_error


@pytest.mark.anyio
async def test_a_tool_added_after_the_build_goes_through_the_same_gate(store: CrmStore) -> None:
    server = build_crm_server(store)

    @server.tool()
    def ping(times: int = 1) -> dict[str, int]:  # what benchmarks/crm_search.py adds
        return {"pong": times}

    async with Client(server, raise_exceptions=True) as client:
        assert await _call(client, "ping", {"times": 2}) == {"pong": 2}
        for arguments in ({"times": "2"}, {"times": 2**63}, {"loud": True}):
            refused = await client.call_tool("ping", arguments)
            assert refused.is_error and refused.structured_content is not None
            assert refused.structured_content["code"] == "INVALID_INPUT", arguments
        server.remove_tool("ping")
        gone = await client.call_tool("ping", {})
        assert gone.is_error and _text(gone).startswith("INVALID_INPUT: unknown tool 'ping'")
