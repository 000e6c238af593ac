"""``elynav mcp docs`` spawned over stdio with a real MCP client: every tool at least once against a
DocsSandbox, and the session credentials given to ``set_session_credentials`` never seen again,
neither in a tool result, nor in an error, nor in the server's stderr (its log, at DEBUG)."""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, stdio_client

from elynav_nb.docs.mcp.server import TOOL_NAMES
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


class Recorder:
    """Calls tools and keeps every text the server sent back."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.texts: list[str] = []
        self.called: set[str] = set()

    async def answer(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        result = await self.client.call_tool(tool, arguments)
        self.called.add(tool)
        text = "\n".join(getattr(item, "text", "") for item in result.content)
        self.texts.append(text)
        data: dict[str, Any] = json.loads(text)
        return bool(result.is_error), data

    async def ok(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        failed, data = await self.answer(tool, arguments)
        assert not failed, (tool, data)
        return data

    async def refused(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        failed, data = await self.answer(tool, arguments)
        assert failed, (tool, data)
        return data


def titles(listing: dict[str, Any]) -> list[str]:
    return [item["title"] for item in listing["results"]]


async def exercise_every_tool(calls: Recorder, sandbox: DocsSandbox, wrong: tuple[str, str]) -> None:
    someone, _ = sandbox.create_user("Bob Public")
    public = sandbox.create_document("Public page", owner=someone, link_reach="public", link_role="editor")

    # anonymous: a public editable page opens, nothing of yours is listed
    anonymous_write = await calls.ok("insert_block", {"doc_id": public.id, "content": {"text": "hello"}})
    assert "warning" in anonymous_write  # live, but an anonymous session cannot save
    assert (await calls.refused("list_my_documents", {}))["code"] == "AUTH_REQUIRED"

    # credentials: refused ones, malformed ones, then the right ones
    refused = await calls.refused(
        "set_session_credentials", {"docs_sessionid": wrong[0], "csrftoken": wrong[1]}
    )
    assert refused["code"] == "AUTH_REQUIRED"
    malformed = await calls.refused(
        "set_session_credentials", {"docs_sessionid": wrong[0], "csrftoken": wrong[1] + ";x=1"}
    )
    assert malformed["code"] == "INVALID_INPUT"
    accepted = await calls.ok(
        "set_session_credentials", {"docs_sessionid": sandbox.session_id, "csrftoken": sandbox.csrf_token}
    )
    assert accepted["verified"] and accepted["user"]["email"] == sandbox.default_user.email

    # the tree
    guide = await calls.ok("create_document", {"title": "Guide"})
    intro = await calls.ok("create_document", {"title": "Intro", "parent_id": guide["id"]})
    usage = await calls.ok("create_document", {"title": "Usage", "parent_url": guide["url"]})
    await calls.ok("update_document_title", {"doc_url": usage["url"], "title": "How to use"})
    await calls.ok(
        "move_document", {"doc_id": usage["id"], "target_parent_id": intro["id"], "position": "left"}
    )
    assert titles(await calls.ok("list_document_children", {"doc_id": guide["id"]})) == [
        "How to use",
        "Intro",
    ]
    below = await calls.ok("list_document_descendants", {"doc_url": guide["url"], "max_depth": 2})
    assert [(item["title"], item["parent_id"]) for item in below["results"]] == [
        ("How to use", guide["id"]),
        ("Intro", guide["id"]),
    ]
    assert titles(await calls.ok("list_my_documents", {})) == ["Guide"]
    assert titles(await calls.ok("search_documents", {"query": "intro"})) == ["Intro"]
    listed = await calls.ok("list_documents", {})
    assert [document["id"] for document in listed["documents"]] == [guide["id"]]
    copy = await calls.ok("duplicate_document", {"doc_id": intro["id"]})
    assert sandbox.store.get_document(copy["id"]) is not None
    await calls.ok("delete_document", {"doc_id": intro["id"]})
    assert [item["id"] for item in (await calls.ok("list_trash", {}))["results"]] == [intro["id"]]
    await calls.ok("restore_document", {"doc_id": intro["id"]})
    assert (await calls.ok("get_document_metadata", {"doc_id": intro["id"]}))["title"] == "Intro"

    # the content, live
    heading = (
        await calls.ok(
            "insert_block",
            {"doc_id": guide["id"], "content": {"type": "heading", "level": 1, "text": "Start"}},
        )
    )["block_id"]
    step = (
        await calls.ok(
            "insert_block", {"doc_url": guide["url"], "content": {"text": "step"}, "after_block_id": heading}
        )
    )["block_id"]
    await calls.ok("update_block", {"doc_id": guide["id"], "block_id": step, "text": "first **step**"})
    blocks = (await calls.ok("read_document", {"doc_id": guide["id"]}))["blocks"]
    assert [(block["type"], block["text"]) for block in blocks] == [
        ("heading", "Start"),
        ("paragraph", "first **step**"),
    ]
    missing = await calls.refused("delete_block", {"doc_id": guide["id"], "block_id": "no-such-block"})
    assert missing["code"] == "BLOCK_NOT_FOUND"
    scratch = (await calls.ok("insert_block", {"doc_id": guide["id"], "content": {"text": "scratch"}}))[
        "block_id"
    ]
    assert await calls.ok("delete_block", {"doc_id": guide["id"], "block_id": scratch}) == {"ok": True}
    added = await calls.ok(
        "insert_markdown",
        {"doc_id": guide["id"], "markdown": "## Next\n\n- one\n- two", "after_block_id": step},
    )
    assert len(added["block_ids"]) == 3
    blocks = (await calls.ok("read_document", {"doc_id": guide["id"]}))["blocks"]
    assert set(added["block_ids"]) <= {block["id"] for block in blocks}
    replaced = await calls.ok(
        "replace_section", {"doc_id": guide["id"], "heading_id": heading, "markdown": "replaced"}
    )
    assert replaced["ok"] and replaced["heading_id"] == heading
    assert replaced["updated"] == [step] and sorted(replaced["deleted"]) == sorted(added["block_ids"])
    markdown = (await calls.ok("read_document", {"doc_id": guide["id"], "format": "markdown"}))["markdown"]
    assert "replaced" in markdown and "first **step**" not in markdown

    # comment threads, anchored in the document, and the versions the saves made
    thread = await calls.ok(
        "create_comment_thread", {"doc_id": guide["id"], "block_id": step, "text": "Is this **right**?"}
    )
    assert thread["block_id"] == step and thread["anchor_text"] == "replaced"
    reply = await calls.ok(
        "reply_to_comment_thread", {"doc_id": guide["id"], "thread_id": thread["thread_id"], "text": "Yes"}
    )
    assert reply["author"] == "Alice Martin" and reply["text"] == "Yes"
    reacted = {
        "doc_id": guide["id"],
        "thread_id": thread["thread_id"],
        "comment_id": reply["id"],
        "emoji": "👍",
    }
    assert await calls.ok("react_to_comment", reacted) == {"ok": True}
    assert await calls.ok(
        "resolve_comment_thread", {"doc_id": guide["id"], "thread_id": thread["thread_id"]}
    ) == {"ok": True}
    assert await calls.ok(
        "unresolve_comment_thread", {"doc_id": guide["id"], "thread_id": thread["thread_id"]}
    ) == {"ok": True}
    [listed] = (await calls.ok("list_comment_threads", {"doc_id": guide["id"]}))["threads"]
    assert [c["text"] for c in listed["comments"]] == ["Is this **right**?", "Yes"] and not listed["resolved"]
    assert listed["comments"][1]["reactions"] == [{"emoji": "👍", "count": 1}]
    missing = {"doc_id": guide["id"], "block_id": scratch, "text": "on a deleted block"}
    assert (await calls.refused("create_comment_thread", missing))["code"] == "BLOCK_NOT_FOUND"
    versions = (await calls.ok("list_versions", {"doc_id": guide["id"]}))["versions"]
    assert versions, "every save that changed the content made a version"
    oldest = versions[-1]["version_id"]
    assert "markdown" in await calls.ok("read_version", {"doc_id": guide["id"], "version_id": oldest})
    diff = await calls.ok("diff_versions", {"doc_id": guide["id"], "old_version_id": oldest})
    assert "+replaced" in diff["markdown_diff"].replace("+++", "") and diff["changes"]
    other_version = {"doc_id": public.id, "version_id": oldest}
    assert (await calls.refused("read_version", other_version))["code"] in ("NOT_FOUND", "NOT_ALLOWED")

    assert await calls.ok("clear_session_credentials", {}) == {"ok": True, "instance": sandbox.url}
    assert (await calls.refused("create_document", {"title": "x"}))["code"] == "AUTH_REQUIRED"


async def test_every_tool_over_stdio_and_the_credentials_never_leak(tmp_path: Path) -> None:
    wrong = (secrets.token_hex(16), secrets.token_hex(16))  # secret-looking, unknown to Docs
    async with DocsSandbox(throttle_per_minute=100_000) as sandbox:
        parameters = StdioServerParameters(  # the command .mcp.json declares: elynav mcp docs
            command=sys.executable,
            args=["-m", "elynav_nb", "mcp", "docs"],
            env={"DOCS_INSTANCE_URL": sandbox.url, "DOCS_MCP_LOG_LEVEL": "DEBUG"},  # no session
        )
        log_path = tmp_path / "server.log"
        with log_path.open("w+") as errlog:
            async with Client(stdio_client(parameters, errlog=errlog)) as client:
                calls = Recorder(client)
                await exercise_every_tool(calls, sandbox, wrong)
        assert calls.called == set(TOOL_NAMES)
        given = [sandbox.session_id, sandbox.csrf_token, *wrong]

    log = log_path.read_text()
    assert "/api/v1.0/users/me/" in log  # the log is on, and at a level that shows requests
    assert "response_headers" not in log  # httpcore's DEBUG lines (Set-Cookie on a real Docs) stay off
    log_without_wrapping = "".join(log.split())  # the console handler wraps long lines
    for secret in given:
        assert secret not in log and secret not in log_without_wrapping
        for text in calls.texts:
            assert secret not in text
