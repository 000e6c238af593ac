"""The Docs MCP server's tree, lifecycle and credential tools, in process, against DocsSandbox:
what each tool does to the sandbox's tree, and every refusal as JSON {code, message}."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.mcp.server import build_docs_server
from elynav_nb.docs.mcp.service import DocsToolService
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio

# Every tool that names a document, with the other arguments it needs.
DOCUMENT_TOOLS: dict[str, dict[str, Any]] = {
    "read_document": {},
    "get_document_metadata": {},
    "insert_block": {"content": {"text": "x"}},
    "update_block": {"block_id": "b", "text": "x"},
    "delete_block": {"block_id": "b"},
    "insert_markdown": {"markdown": "x"},
    "replace_section": {"heading_id": "h", "markdown": "x"},
    "delete_document": {},
    "move_document": {"target_parent_id": str(uuid.uuid4()), "position": "last-child"},
    "duplicate_document": {},
    "update_document_title": {"title": "x"},
    "list_document_children": {},
    "list_document_descendants": {},
    "restore_document": {},
    "list_comment_threads": {},
    "create_comment_thread": {"block_id": "b", "text": "x"},
    "reply_to_comment_thread": {"thread_id": str(uuid.uuid4()), "text": "x"},
    "resolve_comment_thread": {"thread_id": str(uuid.uuid4())},
    "unresolve_comment_thread": {"thread_id": str(uuid.uuid4())},
    "react_to_comment": {"thread_id": str(uuid.uuid4()), "comment_id": str(uuid.uuid4()), "emoji": "👍"},
    "list_versions": {},
    "read_version": {"version_id": "v1"},
    "diff_versions": {"old_version_id": "v1"},
}


def payload(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.content[0].text)
    return data


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool's JSON answer; the test fails if the tool reported an error."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, result.content)
    return payload(result)


async def refusal(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool's JSON error; the test fails if the tool succeeded."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, (tool, result.content)
    return payload(result)


@pytest.fixture
async def sandbox() -> AsyncIterator[DocsSandbox]:
    async with DocsSandbox(throttle_per_minute=100_000) as running:
        yield running


def titles(items: list[dict[str, Any]]) -> list[str]:
    return [item["title"] for item in items]


async def test_create_list_rename_move_and_descend(sandbox: DocsSandbox) -> None:
    service = DocsToolService(sandbox.credentials())
    async with Client(build_docs_server(service), raise_exceptions=True) as client:
        handbook = await call(client, "create_document", {"title": "Handbook"})
        assert handbook["url"] == sandbox.document_link(handbook["id"]) and handbook["depth"] == 1
        first = await call(client, "create_document", {"title": "First", "parent_id": handbook["id"]})
        second = await call(client, "create_document", {"title": "Second", "parent_url": handbook["url"]})
        deep = await call(client, "create_document", {"title": "Deep", "parent_id": second["id"]})
        assert (first["parent_id"], second["depth"], deep["depth"]) == (handbook["id"], 2, 3)
        await call(client, "create_document", {"title": "Archive"})

        mine = await call(client, "list_my_documents", {"page_size": 1})
        assert (mine["count"], mine["has_next"], len(mine["results"])) == (2, True, 1)
        children = await call(client, "list_document_children", {"doc_url": handbook["url"]})
        assert titles(children["results"]) == ["First", "Second"]

        renamed = await call(client, "update_document_title", {"doc_id": first["id"], "title": "Welcome"})
        assert renamed == {"ok": True, "id": first["id"], "title": "Welcome"}
        assert sandbox.store.get_document(first["id"]).title == "Welcome"

        moved = await call(
            client,
            "move_document",
            {"doc_id": second["id"], "target_parent_id": first["id"], "position": "left"},
        )
        assert moved["ok"] and moved["position"] == "left"
        children = await call(client, "list_document_children", {"doc_id": handbook["id"]})
        assert titles(children["results"]) == ["Second", "Welcome"]
        await call(
            client,
            "move_document",
            {"doc_id": first["id"], "target_parent_url": second["url"], "position": "first-child"},
        )

        below = await call(client, "list_document_descendants", {"doc_id": handbook["id"]})
        assert [(item["title"], item["level"], item["parent_id"]) for item in below["results"]] == [
            ("Second", 1, handbook["id"]),
            ("Welcome", 2, second["id"]),
            ("Deep", 2, second["id"]),
        ]
        one_level = await call(
            client, "list_document_descendants", {"doc_id": handbook["id"], "max_depth": 1}
        )
        assert titles(one_level["results"]) == ["Second"]
        workspace = await call(client, "list_document_descendants", {})
        assert titles(workspace["results"]) == ["Handbook", "Second", "Welcome", "Deep", "Archive"]
        assert [item["level"] for item in workspace["results"]] == [0, 1, 2, 2, 0]

        into_own_subtree = await refusal(
            client,
            "move_document",
            {"doc_id": handbook["id"], "target_parent_id": deep["id"], "position": "last-child"},
        )
        assert into_own_subtree["code"] == "INVALID_INPUT"
        assert into_own_subtree["reason"] == "MOVE_INTO_OWN_DESCENDANT"
        found = await call(client, "search_documents", {"query": "welc"})
        assert titles(found["results"]) == ["Welcome"]


async def test_duplicate_trash_restore_and_metadata(sandbox: DocsSandbox) -> None:
    service = DocsToolService(sandbox.credentials())
    async with Client(build_docs_server(service), raise_exceptions=True) as client:
        plan = await call(client, "create_document", {"title": "Plan"})
        await call(client, "create_document", {"title": "Step", "parent_id": plan["id"]})
        copy = await call(client, "duplicate_document", {"doc_url": plan["url"], "with_descendants": True})
        assert copy["duplicated_from"] == plan["id"] and copy["url"] == sandbox.document_link(copy["id"])
        copied = await call(client, "list_document_children", {"doc_id": copy["id"]})
        assert titles(copied["results"]) == ["Copy of Step"]  # as the sandbox (Docs) names copies
        assert sandbox.store.get_document(copy["id"]).title == "Copy of Plan"

        assert await call(client, "delete_document", {"doc_id": plan["id"]}) == {"ok": True, "id": plan["id"]}
        trash = await call(client, "list_trash", {})
        assert [(item["id"], "deleted_at" in item) for item in trash["results"]] == [(plan["id"], True)]
        assert titles((await call(client, "list_my_documents", {}))["results"]) == ["Copy of Plan"]
        restored = await call(client, "restore_document", {"doc_url": plan["url"]})
        assert restored["ok"] and restored["id"] == plan["id"]
        assert (await call(client, "list_trash", {}))["results"] == []
        metadata = await call(client, "get_document_metadata", {"doc_url": plan["url"]})
        assert metadata["title"] == "Plan" and metadata["abilities"]["destroy"] is True

        missing = await refusal(client, "delete_document", {"doc_id": str(uuid.uuid4())})
        assert missing["code"] == "DOC_NOT_FOUND"
        for arguments in ({}, {"doc_id": plan["id"], "doc_url": plan["url"]}):
            neither_or_both = await refusal(client, "delete_document", arguments)
            assert neither_or_both["code"] == "INVALID_INPUT"
        bad_depth = await refusal(
            client, "list_document_descendants", {"doc_id": plan["id"], "max_depth": 11}
        )
        assert bad_depth["code"] == "INVALID_INPUT" and bad_depth["message"].startswith("max_depth")
        bad_position = await refusal(
            client, "move_document", {"doc_id": plan["id"], "target_parent_id": copy["id"], "position": "up"}
        )
        assert bad_position["code"] == "INVALID_INPUT" and bad_position["message"].startswith("position")


async def test_a_reader_and_an_anonymous_caller_are_refused(sandbox: DocsSandbox) -> None:
    reader, reader_session = sandbox.create_user("Rita Reader")
    shared = sandbox.create_document("Shared")
    sandbox.share(shared.id, reader, "reader")
    as_reader = DocsToolService(sandbox.credentials(reader_session))
    async with Client(build_docs_server(as_reader), raise_exceptions=True) as client:
        for tool, arguments in [
            ("delete_document", {"doc_id": shared.id}),
            ("update_document_title", {"doc_id": shared.id, "title": "Mine"}),
            ("create_document", {"title": "Sub", "parent_id": shared.id}),
        ]:
            refused = await refusal(client, tool, arguments)
            assert refused["code"] == "NOT_ALLOWED", (tool, refused)
        readonly = await refusal(client, "insert_block", {"doc_id": shared.id, "content": {"text": "x"}})
        assert readonly["code"] == "DOC_READONLY"
    assert (shared.title, shared.deleted_at) == ("Shared", None)

    anonymous = DocsToolService(DocsCredentials.anonymous(sandbox.url))
    async with Client(build_docs_server(anonymous), raise_exceptions=True) as client:
        for tool, arguments in [
            ("create_document", {"title": "x"}),
            ("list_my_documents", {}),
            ("list_trash", {}),
            ("duplicate_document", {"doc_id": shared.id}),
        ]:
            refused = await refusal(client, tool, arguments)
            assert refused["code"] == "AUTH_REQUIRED", (tool, refused)
        private = await refusal(client, "read_document", {"doc_id": shared.id})
        assert private["code"] == "DOC_NOT_PUBLIC"


async def test_a_link_to_another_instance_is_refused_by_every_document_tool(sandbox: DocsSandbox) -> None:
    async with DocsSandbox() as other:
        theirs = other.create_document("Theirs")
        foreign_link = other.document_link(theirs.id)
        service = DocsToolService(sandbox.credentials())
        async with Client(build_docs_server(service), raise_exceptions=True) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            takes_a_document = {
                name for name, tool in tools.items() if "doc_url" in tool.input_schema["properties"]
            }
            assert takes_a_document == set(DOCUMENT_TOOLS)
            for tool, arguments in DOCUMENT_TOOLS.items():
                refused = await refusal(client, tool, {"doc_url": foreign_link, **arguments})
                assert refused["code"] == "INSTANCE_MISMATCH", (tool, refused)
                assert refused["link_origin"] == other.url and refused["instance_origin"] == sandbox.url
            mine = await call(client, "create_document", {"title": "Mine"})
            for tool, arguments in [
                ("create_document", {"title": "x", "parent_url": foreign_link}),
                (
                    "move_document",
                    {"doc_id": mine["id"], "target_parent_url": foreign_link, "position": "left"},
                ),
            ]:
                refused = await refusal(client, tool, arguments)
                assert refused["code"] == "INSTANCE_MISMATCH", (tool, refused)
        # the other instance never heard from us (the sandbox counts every document request)
        assert not other.request_log
        assert (theirs.title, theirs.deleted_at) == ("Theirs", None)


async def test_set_and_clear_session_credentials(sandbox: DocsSandbox) -> None:
    service = DocsToolService(DocsCredentials.anonymous())
    async with Client(build_docs_server(service), raise_exceptions=True) as client:
        no_instance = await refusal(client, "create_document", {"title": "x"})
        assert no_instance["code"] == "INSTANCE_NOT_SET"
        bare_id = await refusal(client, "read_document", {"doc_id": str(uuid.uuid4())})
        assert bare_id["code"] == "INSTANCE_NOT_SET"
        unchecked = await call(
            client,
            "set_session_credentials",
            {"docs_sessionid": sandbox.session_id, "csrftoken": sandbox.csrf_token},
        )
        assert unchecked == {"ok": True, "instance": None, "verified": False}  # no instance to ask yet
        assert not service.credentials.is_anonymous

        wrong = await refusal(
            client,
            "set_session_credentials",
            {"docs_sessionid": "0" * 32, "csrftoken": sandbox.csrf_token, "instance_url": sandbox.url},
        )
        assert wrong["code"] == "AUTH_REQUIRED" and service.credentials.is_anonymous
        assert service.instance == sandbox.url  # the instance given stays set
        accepted = await call(
            client,
            "set_session_credentials",
            {"docs_sessionid": sandbox.session_id, "csrftoken": sandbox.csrf_token},
        )
        assert accepted["ok"] and accepted["verified"]
        assert accepted["user"]["full_name"] == sandbox.default_user.full_name
        created = await call(client, "create_document", {"title": "Signed in"})
        assert sandbox.store.get_document(created["id"]).title == "Signed in"
        await call(client, "insert_block", {"doc_id": created["id"], "content": {"text": "kept"}})
        assert len(service.pool) == 1

        assert await call(client, "clear_session_credentials", {}) == {"ok": True, "instance": sandbox.url}
        assert len(service.pool) == 0  # the live session opened with the old cookie is closed
        refused = await refusal(client, "create_document", {"title": "x"})
        assert refused["code"] == "AUTH_REQUIRED"

        async with DocsSandbox() as other:
            switched = await call(
                client,
                "set_session_credentials",
                {
                    "docs_sessionid": other.session_id,
                    "csrftoken": other.csrf_token,
                    "instance_url": other.url,
                },
            )
            assert switched["instance"] == other.url
            theirs = await call(client, "create_document", {"title": "Over there"})
            assert other.store.get_document(theirs["id"]) is not None
            back = await refusal(client, "read_document", {"doc_url": sandbox.document_link(created["id"])})
            assert back["code"] == "INSTANCE_MISMATCH"
