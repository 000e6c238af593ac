"""One table of scenarios through MCP (in-process ``Client``) and the OpenAI invoker: identical answers."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from elynav_nb._mcp_errors import tool_error_text
from elynav_nb.templates.openai_tools import OpenAIToolInvoker, invoke, openai_tools
from elynav_nb.templates.policy import PolicyBook
from elynav_nb.templates.server import TemplatesMCPServer
from elynav_nb.templates.service import TemplateService

GRANTS = {
    "editor": ["idea_template_update"],
    "admin": ["idea_template_create", "idea_template_update", "idea_template_delete"],
}
AGENTS = ["reader", "editor", "admin"]
SEEDED_ID = "code-reviewer-1"

# (agent, tool, arguments): run in order on a fresh store seeded with one template.
SCENARIOS: list[tuple[str, str, Any]] = [
    ("reader", "idea_template_list", {}),
    ("reader", "idea_template_read", {"templateId": SEEDED_ID}),
    ("reader", "idea_template_read", {"templateId": "no-such-template-1"}),
    ("reader", "idea_template_read", {"templateId": "../../etc/passwd"}),
    ("reader", "idea_template_read", {}),
    ("reader", "idea_template_create", {"name": "Sneaky", "content": "x"}),
    ("reader", "idea_template_update", {"templateId": SEEDED_ID, "content": "x"}),
    ("reader", "idea_template_delete", {"templateId": SEEDED_ID}),
    ("editor", "idea_template_update", {"templateId": SEEDED_ID, "content": "v2", "expectedVersion": 1}),
    ("editor", "idea_template_update", {"templateId": SEEDED_ID, "content": "v3", "expectedVersion": 1}),
    ("editor", "idea_template_update", {"templateId": SEEDED_ID, "name": "Renamed"}),
    ("editor", "idea_template_update", {"templateId": SEEDED_ID, "content": None, "name": "Again"}),
    ("editor", "idea_template_update", {"templateId": SEEDED_ID}),
    ("editor", "idea_template_update", {"templateId": SEEDED_ID, "expectedVersion": "2", "content": "x"}),
    ("editor", "idea_template_update", {"templateId": SEEDED_ID, "expectedVersion": 0, "content": "x"}),
    ("editor", "idea_template_update", {"templateId": SEEDED_ID, "content": "x", "colour": "red"}),
    ("editor", "idea_template_update", {"templateId": SEEDED_ID, "defaultProfileId": "gpt-9000"}),
    ("editor", "idea_template_create", {"name": "New", "content": "x"}),
    ("editor", "idea_template_delete", {"templateId": SEEDED_ID}),
    ("admin", "idea_template_create", {"name": "", "content": "x"}),
    ("admin", "idea_template_create", {"name": "Writer", "content": "x", "defaultProfileId": "nope"}),
    ("admin", "idea_template_create", {"name": "Huge", "content": "a" * (2 * 1024 * 1024)}),
    (
        "admin",
        "idea_template_create",
        {"name": "Writer", "content": "Write.", "defaultProfileId": "claude-opus"},
    ),
    ("admin", "idea_template_list", {}),
    ("admin", "idea_template_delete", {"templateId": "writer-2", "expectedVersion": 7}),
    ("admin", "idea_template_delete", {"templateId": "writer-2", "expectedVersion": 1}),
    ("admin", "idea_template_read", {"templateId": "writer-2"}),
    ("admin", "idea_template_delete", {"templateId": "writer-2"}),
    ("admin", "idea_template_purge", {}),
]


def _seeded_service(home: Path) -> TemplateService:
    service = TemplateService.open(home)
    service.create("Code reviewer", "You review code.")
    return service


async def _run_through_mcp(home: Path) -> list[tuple[str, Any]]:
    service = _seeded_service(home)
    book = PolicyBook(GRANTS)
    outcomes: list[tuple[str, Any]] = []
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        for agent in AGENTS:
            server = TemplatesMCPServer(service, book.for_agent(agent))
            clients[agent] = await stack.enter_async_context(Client(server, raise_exceptions=True))
        for agent, tool_name, arguments in SCENARIOS:
            result = await clients[agent].call_tool(tool_name, arguments)
            text = result.content[0].text  # type: ignore[union-attr]
            payload = result.structured_content
            if result.is_error:
                assert payload is not None
                assert text == tool_error_text(payload)  # CODE: message, then the details as JSON
                outcomes.append(("error", payload))
            else:
                assert json.loads(text) == payload
                outcomes.append(("ok", payload))
    return outcomes


def _run_through_openai(home: Path) -> list[tuple[str, Any]]:
    invoker = OpenAIToolInvoker(_seeded_service(home), PolicyBook(GRANTS))
    outcomes: list[tuple[str, Any]] = []
    for agent, tool_name, arguments in SCENARIOS:
        answer = json.loads(invoke(agent, tool_name, json.dumps(arguments), invoker=invoker))
        if "error" in answer:
            outcomes.append(("error", answer["error"]))
        else:
            outcomes.append(("ok", answer))
    return outcomes


@pytest.mark.anyio
async def test_mcp_and_openai_give_identical_results_and_errors(tmp_path: Path) -> None:
    mcp_outcomes = await _run_through_mcp(tmp_path / "mcp-home")
    openai_outcomes = _run_through_openai(tmp_path / "openai-home")
    for scenario, mcp_outcome, openai_outcome in zip(SCENARIOS, mcp_outcomes, openai_outcomes, strict=True):
        assert mcp_outcome == openai_outcome, scenario
    codes = [outcome[1]["code"] if outcome[0] == "error" else "ok" for outcome in mcp_outcomes]
    assert codes == [
        "ok", "ok", "TEMPLATE_NOT_FOUND", "INVALID_INPUT", "INVALID_INPUT",
        "NOT_ALLOWED", "NOT_ALLOWED", "NOT_ALLOWED",
        "ok", "VERSION_CONFLICT", "ok", "ok", "INVALID_INPUT", "INVALID_INPUT", "INVALID_INPUT",
        "INVALID_INPUT", "INVALID_INPUT", "NOT_ALLOWED", "NOT_ALLOWED",
        "INVALID_INPUT", "INVALID_INPUT", "INVALID_INPUT", "ok", "ok",
        "VERSION_CONFLICT", "ok", "TEMPLATE_NOT_FOUND", "TEMPLATE_NOT_FOUND",
        "INVALID_INPUT",
    ]  # fmt: skip
    assert mcp_outcomes[9][1]["details"] == {
        "templateId": SEEDED_ID,
        "expectedVersion": 1,
        "currentVersion": 2,
    }
    assert mcp_outcomes[11][1] == {
        "id": SEEDED_ID,
        "name": "Again",
        "contentMd": "v2",
        "version": 2,
        "defaultProfileId": "claude-sonnet",
    }


@pytest.mark.anyio
async def test_tool_lists_match_the_policy_on_both_paths(tmp_path: Path) -> None:
    service = _seeded_service(tmp_path)
    book = PolicyBook(GRANTS)
    invoker = OpenAIToolInvoker(service, book)
    expected = {
        "reader": ["idea_template_list", "idea_template_read"],
        "editor": ["idea_template_list", "idea_template_read", "idea_template_update"],
        "admin": [
            "idea_template_list",
            "idea_template_read",
            "idea_template_create",
            "idea_template_update",
            "idea_template_delete",
        ],
    }
    for agent in AGENTS:
        async with Client(TemplatesMCPServer(service, book.for_agent(agent))) as client:
            listed = (await client.list_tools()).tools
        functions = openai_tools(agent, invoker=invoker)
        assert [tool.name for tool in listed] == expected[agent]
        assert [function["function"]["name"] for function in functions] == expected[agent]
        for tool, function in zip(listed, functions, strict=True):
            assert tool.input_schema == function["function"]["parameters"]
            assert tool.annotations is not None and tool.annotations.read_only_hint == (
                agent == "reader" or tool.name.endswith(("_list", "_read"))
            )
            if not tool.annotations.read_only_hint:
                assert tool.annotations.destructive_hint is not None


def test_openai_invoker_decodes_arguments(tmp_path: Path) -> None:
    invoker = OpenAIToolInvoker(_seeded_service(tmp_path), PolicyBook())
    assert json.loads(invoker.invoke("reader", "idea_template_list", ""))["templates"][0]["id"] == SEEDED_ID
    broken = json.loads(invoker.invoke("reader", "idea_template_read", "{oops"))
    assert broken["error"]["code"] == "INVALID_INPUT"
    not_an_object = json.loads(invoker.invoke("reader", "idea_template_read", "[1]"))
    assert not_an_object["error"]["code"] == "INVALID_INPUT"
    nobody = json.loads(invoker.invoke("", "idea_template_list", "{}"))
    assert nobody["error"]["code"] == "INVALID_INPUT"


@pytest.mark.anyio
async def test_an_unexpected_failure_reaches_the_mcp_client_without_its_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = _seeded_service(tmp_path)

    def broken_list() -> list[object]:
        raise OSError("disk on fire at /secret/path")

    monkeypatch.setattr(service, "list_templates", broken_list)
    async with Client(TemplatesMCPServer(service, PolicyBook().for_agent("reader"))) as client:
        result = await client.call_tool("idea_template_list", {})
    assert result.is_error
    assert result.content[0].text == "Error executing tool idea_template_list"  # type: ignore[union-attr]
