"""Every CRM tool checks its arguments the same strict way, seen through the real server over MCP stdio.

Each test starts ``python -m elynav_nb.crm.server`` (the command of the .mcp.json entry) once, sends
the adversarial arguments an agent could send, and expects a coded ``INVALID_INPUT`` naming the
argument (``structured_content = {code, message, details: {tool, field}}``), for the case found by
the adversarial pass and then for every argument of every tool the same way. The server's log must
never show a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent, Tool

from elynav_nb.crm.server import TOOL_NAMES
from elynav_nb.crm.store import CrmStore

pytestmark = pytest.mark.anyio

WRONG_VALUES_BY_TYPE: dict[str, list[Any]] = {
    "integer": ["5", True, 5.5, [5], {"value": 5}],
    "number": ["5", True, [5], {"value": 5}],
    "string": [5, True, 5.5, ["text"], {"text": "x"}],
}


@asynccontextmanager
async def crm_over_stdio(tmp_path: Path) -> AsyncIterator[Client]:
    """The CRM server on a fresh database, spawned over stdio; its log is checked for tracebacks after."""
    database = tmp_path / "crm.sqlite"
    CrmStore.open(database).close()
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "elynav_nb.crm.server", "--db", str(database)]
    )
    log_path = tmp_path / "server.log"
    with log_path.open("w+") as server_log:
        async with Client(stdio_client(parameters, errlog=server_log)) as client:
            yield client
    log = log_path.read_text()
    assert "Traceback" not in log and "unexpected exception" not in log, log


def _text(result: CallToolResult) -> str:
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))


def assert_invalid_input(result: CallToolResult, tool: str, argument: str) -> str:
    """The result is the coded refusal naming ``argument``; its message is returned."""
    assert result.is_error, (tool, argument, _text(result))
    payload = result.structured_content
    assert payload is not None, (tool, argument, _text(result))
    assert payload["code"] == "INVALID_INPUT", (tool, argument, payload)
    assert payload["details"] == {"tool": tool, "field": argument}, (tool, argument, payload)
    message = payload["message"]
    assert isinstance(message, str) and argument in message, (tool, argument, payload)
    assert _text(result).startswith(f"INVALID_INPUT: {message}")
    return message


def table_counts(tmp_path: Path) -> dict[str, int]:
    with CrmStore.open(tmp_path / "crm.sqlite") as store:
        return store.table_counts()


def declared_types(schema: dict[str, Any]) -> set[str]:
    branches = schema.get("anyOf", [schema])
    return {branch["type"] for branch in branches}


async def list_tools(client: Client) -> list[Tool]:
    tools = (await client.list_tools()).tools
    assert {tool.name for tool in tools} == set(TOOL_NAMES)
    return tools


async def test_integers_beyond_sqlite_64_bits_or_the_tools_bounds_are_invalid_input(tmp_path: Path) -> None:
    async with crm_over_stdio(tmp_path) as client:
        # the adversarial pass: an OverflowError shown as a bare "Error executing tool get_account"
        result = await client.call_tool("get_account", {"account_id": 2**63})
        message = assert_invalid_input(result, "get_account", "account_id")
        assert message == "account_id must be an integer from 1 to 9223372036854775807"

        checked = 0
        for tool in await list_tools(client):
            for argument, schema in tool.input_schema["properties"].items():
                if "integer" not in declared_types(schema):
                    continue
                low = schema.get("minimum", -(2**63))
                high = schema.get("maximum", 2**63 - 1)
                for value in (2**63, 2**64, -(2**63) - 1, low - 1, high + 1):
                    result = await client.call_tool(tool.name, {argument: value})
                    assert_invalid_input(result, tool.name, argument)
                checked += 1
        assert checked == 13  # ten ids and three page limits

        # the tools' own bounds, as the schema declares them
        for value in (0, 101):
            result = await client.call_tool("search_accounts", {"limit": value})
            assert assert_invalid_input(result, "search_accounts", "limit") == (
                "limit must be an integer from 1 to 100"
            )
        assert_invalid_input(
            await client.call_tool("get_account", {"account_id": 0}), "get_account", "account_id"
        )


async def test_wrong_json_types_are_coded_invalid_input_for_every_argument(tmp_path: Path) -> None:
    async with crm_over_stdio(tmp_path) as client:
        # the adversarial pass: "Error executing tool create_account: 1 validation error ..." (pydantic)
        message = assert_invalid_input(
            await client.call_tool("create_account", {"name": 5}), "create_account", "name"
        )
        assert message == "name must be a string, got an integer"

        swept = 0
        for tool in await list_tools(client):
            for argument, schema in tool.input_schema["properties"].items():
                (json_type,) = declared_types(schema) - {"null"}
                for value in WRONG_VALUES_BY_TYPE[json_type]:
                    result = await client.call_tool(tool.name, {argument: value})
                    assert_invalid_input(result, tool.name, argument)
                swept += 1
        assert swept >= 40
        result = await client.call_tool("create_contact", {"account_id": 1, "first_name": "A"})
        assert (
            assert_invalid_input(result, "create_contact", "last_name") == "last_name is required (a string)"
        )
    assert table_counts(tmp_path)["accounts"] == 0


async def test_a_string_or_a_boolean_is_not_an_integer(tmp_path: Path) -> None:
    async with crm_over_stdio(tmp_path) as client:
        await client.call_tool("create_account", {"name": "Acme"})
        # the adversarial pass: "5" and true were taken for a limit (5 and 1), "1" for an id
        for value, given in (("5", "a string"), (True, "a boolean"), (5.0, "a number")):
            result = await client.call_tool("search_accounts", {"limit": value})
            message = assert_invalid_input(result, "search_accounts", "limit")
            assert message == f"limit must be an integer, got {given}"
        for value in ("1", True):
            result = await client.call_tool("get_account", {"account_id": value})
            assert_invalid_input(result, "get_account", "account_id")
        result = await client.call_tool(
            "create_opportunity", {"account_id": 1, "name": "Deal", "amount": "10"}
        )
        assert_invalid_input(result, "create_opportunity", "amount")
    assert table_counts(tmp_path)["opportunities"] == 0


async def test_unknown_arguments_are_refused_by_every_tool(tmp_path: Path) -> None:
    async with crm_over_stdio(tmp_path) as client:
        for tool in await list_tools(client):
            result = await client.call_tool(tool.name, {"qurey": "durand"})
            message = assert_invalid_input(result, tool.name, "qurey")
            assert message.startswith(f"unknown argument 'qurey'; {tool.name} takes: ")
        result = await client.call_tool("create_account", {"name": "Acme", "website": "acme.fr"})
        assert_invalid_input(result, "create_account", "website")
    assert table_counts(tmp_path)["accounts"] == 0  # nothing half-done


async def test_nul_in_any_text_argument_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    async with crm_over_stdio(tmp_path) as client:
        result = await client.call_tool("create_account", {"name": "Acme\x00 Evil"})
        assert "NUL" in assert_invalid_input(result, "create_account", "name")
        swept = 0
        for tool in await list_tools(client):
            for argument, schema in tool.input_schema["properties"].items():
                if "string" in declared_types(schema):
                    result = await client.call_tool(tool.name, {argument: "before\x00after"})
                    assert "NUL" in assert_invalid_input(result, tool.name, argument)
                    swept += 1
        assert swept >= 25
        account = await client.call_tool("create_account", {"name": "Acme"})
        assert not account.is_error
        result = await client.call_tool(
            "log_activity",
            {"account_id": 1, "kind": "note", "subject": "x", "logged_by": "elynav-sdr", "body": "a\x00b"},
        )
        assert_invalid_input(result, "log_activity", "body")
    assert table_counts(tmp_path) == {
        "accounts": 1,
        "contacts": 0,
        "activities": 0,
        "opportunities": 0,
    }


async def test_a_text_that_looks_like_json_stays_that_text(tmp_path: Path) -> None:
    """The SDK's own argument handling parsed such text ("null" became no value, "[1]" a list)."""
    async with crm_over_stdio(tmp_path) as client:
        for industry in ("null", "[1]", '{"a": 1}', "true"):
            result = await client.call_tool(
                "create_account", {"name": f"Acme {industry}", "industry": industry}
            )
            assert not result.is_error, _text(result)
            assert result.structured_content is not None
            assert result.structured_content["industry"] == industry
        # null where the schema allows it is no value, and for an optional argument it means "not given"
        result = await client.call_tool("search_accounts", {"query": None, "limit": None, "cursor": None})
        assert not result.is_error, _text(result)
        assert result.structured_content is not None and len(result.structured_content["items"]) == 4
