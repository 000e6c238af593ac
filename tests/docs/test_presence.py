"""Presence (issue 31): who else is in the document, and the MCP writer's own name."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
from mcp import Client, StdioServerParameters, stdio_client

from elynav_nb.crm.workspace import docs_server_entry
from elynav_nb.docs.session import DocsSession
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


async def wait_for_people(doc: DocsSession, count: int) -> None:
    async with asyncio.timeout(10):
        while len(doc.people()) < count:
            await asyncio.sleep(0.02)


async def test_people_reads_who_else_is_in_the_document() -> None:
    async with DocsSandbox() as sandbox:
        document = sandbox.create_document("Ensemble")
        link = sandbox.document_link(document.id)
        async with (
            DocsSession.open(link, sandbox.credentials(), user_name="Agent Plume") as agent,
            DocsSession.open(link, sandbox.credentials(), user_name="Alice") as person,
        ):
            await wait_for_people(agent, 1)
            await wait_for_people(person, 1)
            [seen_by_agent] = agent.people()
            [seen_by_person] = person.people()
        assert seen_by_agent.name == "Alice" and seen_by_person.name == "Agent Plume"
        assert seen_by_agent.color and not seen_by_agent.is_typing_here


async def test_the_mcp_writer_shows_the_agents_name() -> None:
    async with DocsSandbox() as sandbox:
        document = sandbox.create_document("Agent at work")
        entry = docs_server_entry()
        assert entry["env"] == {
            "DOCS_MCP_USER_NAME": "${ELYNAV_AGENT_NAME:-Elynav bot}"
        }  # expanded by the CLI
        environment = {
            "PATH": os.environ.get("PATH", ""),
            "DOCS_MCP_USER_NAME": "elynav-content",
            "DOCS_SESSION_ID": sandbox.session_id,
            "DOCS_CSRF_TOKEN": sandbox.csrf_token,
            "DOCS_INSTANCE_URL": sandbox.url,
        }
        parameters = StdioServerParameters(command=sys.executable, args=entry["args"], env=environment)
        async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as person:
            async with Client(stdio_client(parameters)) as client:
                inserted = await client.call_tool(
                    "insert_block", {"doc_id": document.id, "content": {"text": "hi"}}
                )
                assert not inserted.is_error
                await wait_for_people(person, 1)
                names = [someone.name for someone in person.people()]
        assert names == ["elynav-content"]


async def test_a_person_sees_the_block_the_agent_is_writing() -> None:
    async with DocsSandbox() as sandbox:
        document = sandbox.create_document("Curseur")
        link = sandbox.document_link(document.id)
        async with (
            DocsSession.open(link, sandbox.credentials(), user_name="Agent Plume") as agent,
            DocsSession.open(link, sandbox.credentials(), user_name="Alice") as person,
        ):
            await agent.append_block("Un")
            written = await agent.append_block("Deux, en cours")
            async with asyncio.timeout(10):
                while not [someone for someone in person.people() if someone.block_id == written]:
                    await asyncio.sleep(0.02)
            [agent_seen] = person.people()
            assert agent_seen.name == "Agent Plume" and agent_seen.is_typing_here
            assert agent_seen.cursor is not None and agent_seen.cursor["head"]["assoc"] == -1
