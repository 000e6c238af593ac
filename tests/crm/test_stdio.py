"""The real thing: the server spawned over stdio with a real MCP client (kept to one start)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from mcp import Client, StdioServerParameters, stdio_client

from elynav_nb.crm import Crm
from elynav_nb.crm.session import McpStdioSession
from elynav_nb.crm.store import CrmStore
from elynav_nb.errors import Duplicate, InvalidInput, StoreCorrupt


@pytest.mark.anyio
async def test_create_log_and_search_round_trip_over_stdio(tmp_path: Path) -> None:
    path = tmp_path / "crm.sqlite"
    CrmStore.open(path).close()  # an empty CRM
    crm = Crm.open(path)
    async with crm:
        account = await crm.call(
            "create_account", name="Durand Logistique SAS", domain="durand-logistique.fr"
        )
        account_id = int(account.loc[0, "id"])
        contact = await crm.call(
            "create_contact",
            account_id=account_id,
            first_name="Claire",
            last_name="Martin",
            email="claire.martin@durand-logistique.fr",
        )
        contact_id = int(contact.loc[0, "id"])
        await crm.call(
            "log_activity",
            account_id=account_id,
            contact_id=contact_id,
            kind="call",
            subject="Appel de découverte",
            logged_by="elynav-sdr",
            occurred_at="2025-06-02T10:00:00Z",
        )
        found = await crm.call("search_accounts", query="durand logist")
        assert found["name"].to_list() == ["Durand Logistique SAS"]
        assert found["id"].dtype == pd.ArrowDtype(pa.int64())
        assert found["created_at"].dtype == pd.ArrowDtype(pa.timestamp("us", tz="UTC"))
        assert found.dtypes.to_dict() == crm.accounts().dtypes.to_dict()  # the same dtypes both ways
        assert found.attrs == {"next_cursor": None}
        # the arguments as one dict (the MCP / OpenAI-style shape), or a dict and keywords together
        by_dict = await crm.call("search_accounts", {"query": "durand logist"})
        pd.testing.assert_frame_equal(by_dict, found)
        mixed = await crm.call("search_accounts", {"query": "durand logist"}, limit=1)
        pd.testing.assert_frame_equal(mixed, found)
        with pytest.raises(InvalidInput, match="query given both in the dict and as a keyword"):
            await crm.call("search_accounts", {"query": "a"}, query="b")
        with pytest.raises(InvalidInput, match="must be a dict"):
            await crm.call("search_accounts", ["query", "a"])  # type: ignore[arg-type]
        activities = await crm.call("list_activities", account_id=account_id)
        assert activities["subject"].to_list() == ["Appel de découverte"]
        assert str(activities["kind"].dtype) == "category"
        with pytest.raises(Duplicate) as caught:
            await crm.call(
                "create_contact",
                account_id=account_id,
                first_name="C",
                last_name="M",
                email="Claire.Martin@durand-logistique.fr",
            )
        assert caught.value.details["existing_id"] == contact_id
        nothing = await crm.call("search_accounts", query="'; DROP TABLE accounts; --")
        assert nothing.empty and "name" in nothing.columns
        with pytest.raises(InvalidInput):
            await crm.call("no_such_tool")
    assert crm.counts()["activities"] == 1  # the server wrote it; the read-only side sees it

    # the same server through the plain SDK client and the command of the .mcp.json entry
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "elynav_nb.crm.server", "--db", str(path)]
    )
    with (tmp_path / "server.log").open("w+") as server_log:
        async with Client(stdio_client(parameters, errlog=server_log)) as client:
            result = await client.call_tool("search_contacts", {"query": "claire"})
    assert not result.is_error
    assert result.structured_content is not None
    assert [item["email"] for item in result.structured_content["items"]] == [
        "claire.martin@durand-logistique.fr"
    ]


@pytest.mark.anyio
async def test_a_server_that_cannot_start_gives_its_typed_error(tmp_path: Path) -> None:
    future = tmp_path / "future.sqlite"
    with sqlite3.connect(future) as connection:
        connection.execute("PRAGMA user_version = 99")
    connection.close()
    session = McpStdioSession(
        StdioServerParameters(
            command=sys.executable, args=["-m", "elynav_nb.crm.server", "--db", str(future)]
        )
    )
    with pytest.raises(StoreCorrupt, match="schema version 99"):
        await session.call_tool("pipeline_summary", {})
    await session.aclose()
    assert not session.running
