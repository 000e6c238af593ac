"""Kernel tools served to claude as an SDK MCP server: the endpoint alone, then whole turns on the stand-in.

The stand-in reaches the runner's tools exactly as the real CLI does (a real MCP client whose messages
ride ``mcp_message`` control requests), so these turns run the real transport end to end; the real
claude runs the same scenarios in ``tests/real_cli/test_claude_kernel_tools.py``.
"""

from __future__ import annotations

import asyncio
import json

import pandas
import pytest

from elynav_nb.agents import AgentRunner, ToolResult, ToolUse
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.tools import agent_tool, df_tools, kernel_tools
from elynav_nb.agents.tools.kernel_tool_server import (
    agents_with_kernel_tools,
    claude_tool_flags,
    mcp_message_server,
)
from elynav_nb.agents.tools.mcp_endpoint import GateVerdict, McpToolEndpoint
from elynav_nb.errors import InvalidInput

FAST_STOP = StopBounds(close_stdin=2.0, sigint=2.0, sigterm=1.0, sigkill=1.0, orphans=1.0)

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def isolated_standin_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    monkeypatch.delenv("ELYNAV_STANDIN_VERSION", raising=False)


@agent_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@agent_tool
def explode(reason: str) -> str:
    """A tool that always fails."""
    raise ValueError(f"no luck: {reason}")


def call_directive(tool: str, arguments: dict[str, object]) -> str:
    return f"@standin mcp kernel {tool} {json.dumps(arguments)}"


def tool_results(result) -> list[ToolResult]:
    return [event for event in result.events if isinstance(event, ToolResult)]


def result_text(tool_result: ToolResult) -> str:
    content = tool_result.content
    if isinstance(content, list):
        return " ".join(str(block.get("text", "")) for block in content)
    return str(content)


# -- the endpoint alone ------------------------------------------------------------------------------


async def test_the_endpoint_answers_the_mcp_handshake_and_lists_the_tools():
    endpoint = McpToolEndpoint(kernel_tools(add))
    answer = await endpoint.handle(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
    )
    assert answer is not None and answer["id"] == 0
    assert answer["result"]["protocolVersion"] == "2025-06-18"
    assert "tools" in answer["result"]["capabilities"]
    unknown_version = await endpoint.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1999-01-01"}}
    )
    assert unknown_version is not None and unknown_version["result"]["protocolVersion"] == "2025-11-25"
    assert await endpoint.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    listed = await endpoint.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert listed is not None
    [tool] = listed["result"]["tools"]
    assert tool["name"] == "add" and tool["description"] == "Add two integers."
    assert tool["inputSchema"]["required"] == ["a", "b"]


async def test_the_endpoint_runs_a_call_and_reports_tool_failures_as_tool_results():
    endpoint = McpToolEndpoint(kernel_tools(add, explode))
    good = await endpoint.handle(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        }
    )
    assert good == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"content": [{"type": "text", "text": "5"}], "isError": False},
    }
    failed = await endpoint.handle(
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "explode", "arguments": {"reason": "x"}},
        }
    )
    assert failed is not None and failed["result"]["isError"] is True
    text = failed["result"]["content"][0]["text"]
    assert "ValueError" in text and "no luck: x" in text and "Traceback" not in text
    missing = await endpoint.handle(
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "nope", "arguments": {}}}
    )
    assert (
        missing is not None
        and missing["result"]["isError"] is True
        and "NOT_FOUND" in missing["result"]["content"][0]["text"]
    )
    assert endpoint.calls == 3


async def test_the_endpoint_refuses_malformed_messages_with_json_rpc_errors():
    endpoint = McpToolEndpoint(kernel_tools(add))
    assert (await endpoint.handle({"id": 1, "method": "ping"}))["error"]["code"] == -32600  # type: ignore[index]
    assert (await endpoint.handle([1, 2]))["error"]["code"] == -32600  # type: ignore[index]
    unknown = await endpoint.handle({"jsonrpc": "2.0", "id": 2, "method": "resources/list"})
    assert unknown is not None and unknown["error"]["code"] == -32601
    bad = await endpoint.handle({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 7}})
    assert bad is not None and bad["error"]["code"] == -32602
    assert await endpoint.handle({"jsonrpc": "2.0", "id": 4, "method": "ping"}) == {
        "jsonrpc": "2.0",
        "id": 4,
        "result": {},
    }


async def test_the_gate_may_refuse_a_call_or_change_its_arguments():
    seen: list[tuple[str, dict[str, object]]] = []

    async def gate(name, arguments):
        seen.append((name, dict(arguments)))
        if arguments.get("a") == 13:
            return GateVerdict(allowed=False, reason="13 brings bad luck")
        return GateVerdict(allowed=True, arguments={**arguments, "b": 100})

    endpoint = McpToolEndpoint(kernel_tools(add), gate=gate)
    refused = await endpoint.call("add", {"a": 13, "b": 1})
    rewritten = await endpoint.call("add", {"a": 1, "b": 1})
    assert refused == {"content": [{"type": "text", "text": "13 brings bad luck"}], "isError": True}
    assert rewritten["content"][0]["text"] == "101"
    assert seen == [("add", {"a": 13, "b": 1}), ("add", {"a": 1, "b": 1})]
    assert endpoint.calls == 1  # the refused call never ran


async def test_the_claude_side_of_the_transport():
    endpoint = McpToolEndpoint(kernel_tools(add))
    flags = claude_tool_flags(endpoint)
    assert flags[0] == "--mcp-config" and json.loads(flags[1]) == {
        "mcpServers": {"kernel": {"type": "sdk", "name": "kernel"}}
    }
    assert flags[2:] == ["--allowedTools", "mcp__kernel__add"]
    answer = mcp_message_server(endpoint)
    listed = await answer(
        {"server_name": "kernel", "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}
    )
    assert listed["mcp_response"]["result"]["tools"][0]["name"] == "add"
    ack = await answer(
        {"server_name": "kernel", "message": {"jsonrpc": "2.0", "method": "notifications/initialized"}}
    )
    assert ack == {"mcp_response": {"jsonrpc": "2.0", "result": {}}}
    with pytest.raises(LookupError, match="other"):
        await answer({"server_name": "other", "message": {"jsonrpc": "2.0", "id": 1, "method": "ping"}})


def test_an_agent_that_lists_its_tools_is_sent_again_with_the_kernel_server_added():
    endpoint = McpToolEndpoint(kernel_tools(add))
    listing = AgentDefinition(name="analyst", description="d", prompt="p", tools=("Read", "Grep"))
    assert agents_with_kernel_tools(listing, endpoint)["analyst"]["tools"] == ["Read", "Grep", "mcp__kernel"]
    assert agents_with_kernel_tools(AgentDefinition(name="all", description="d", prompt="p"), endpoint) == {}
    assert agents_with_kernel_tools(None, endpoint) == {}


# -- whole turns on the stand-in -----------------------------------------------------------------------


def make_runner(workspace, tools, agent=None, **options) -> AgentRunner:
    options.setdefault("stop_bounds", FAST_STOP)
    return AgentRunner(agent, workspace, executable="standin", tools=tools, **options)


async def test_a_kernel_function_is_called_by_the_agent_during_its_turn(tmp_path):
    calls: list[tuple[int, int]] = []

    @agent_tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        calls.append((a, b))
        return a * b

    async with make_runner(tmp_path, [multiply]) as runner:
        result = await runner.send(call_directive("multiply", {"a": 6, "b": 7}))
        status = await runner.mcp_status()
    assert result.outcome == "completed", result.error
    [use] = [event for event in result.events if isinstance(event, ToolUse)]
    assert use.name == "mcp__kernel__multiply" and use.input == {"a": 6, "b": 7}
    [tool_result] = tool_results(result)
    assert result_text(tool_result) == "42" and not tool_result.is_error
    assert calls == [(6, 7)] and runner.tool_endpoint is not None and runner.tool_endpoint.calls == 1
    assert [(server["name"], server["status"]) for server in status] == [("kernel", "connected")]


async def test_a_tool_that_raises_gives_the_model_a_tool_error_and_the_turn_goes_on(tmp_path):
    async with make_runner(tmp_path, kernel_tools(add, explode)) as runner:
        failed = await runner.send(call_directive("explode", {"reason": "the api key sk-ant-secret"}))
        after = await runner.send(call_directive("add", {"a": 1, "b": 2}))
    assert failed.outcome == "completed"
    [tool_result] = tool_results(failed)
    text = result_text(tool_result)
    assert tool_result.is_error and "ValueError" in text and "no luck" in text
    assert "Traceback" not in text and "kernel_tool.py" not in text
    assert after.outcome == "completed" and result_text(tool_results(after)[0]) == "3"


async def test_a_tool_that_hangs_is_cut_by_the_tool_timeout(tmp_path):
    @agent_tool
    async def wait_forever() -> str:
        """Never answers."""
        await asyncio.sleep(3600)
        return "never"

    async with make_runner(tmp_path, kernel_tools(wait_forever, tool_timeout=0.5)) as runner:
        result = await runner.send(call_directive("wait_forever", {}))
    assert result.outcome == "completed"
    [tool_result] = tool_results(result)
    assert tool_result.is_error and "TIMEOUT" in result_text(tool_result)


async def test_an_async_tool_sees_the_kernel_objects_as_they_are_now_and_runs_on_the_runner_loop(tmp_path):
    inventory = {"apples": 1}
    loops: list[asyncio.AbstractEventLoop] = []

    @agent_tool
    async def count(item: str) -> int:
        """How many of an item there are."""
        loops.append(asyncio.get_running_loop())
        return inventory.get(item, 0)

    async with make_runner(tmp_path, [count]) as runner:
        first = await runner.send(call_directive("count", {"item": "apples"}))
        inventory["apples"] = 40  # the next call reads the object as it is now
        second = await runner.send(call_directive("count", {"item": "apples"}))
    assert result_text(tool_results(first)[0]) == "1" and result_text(tool_results(second)[0]) == "40"
    assert loops == [asyncio.get_running_loop()] * 2


async def test_a_frame_query_tool_through_the_agent(tmp_path):
    accounts = pandas.DataFrame({"name": ["Acme", "Globex", "Initech"], "score": [91, 45, 78]})
    async with make_runner(tmp_path, df_tools(accounts, name="accounts")) as runner:
        result = await runner.send(call_directive("accounts_query", {"expression": "score > 70"}))
    [tool_result] = tool_results(result)
    payload = json.loads(result_text(tool_result))
    assert [row["name"] for row in payload["rows"]] == ["Acme", "Initech"]


async def test_two_runners_in_one_kernel_each_call_their_own_tools_at_once(tmp_path):
    @agent_tool
    async def who() -> str:
        """Says who."""
        await asyncio.sleep(0.2)
        return "first"

    @agent_tool(name="who")
    async def who_else() -> str:
        """Says who else."""
        await asyncio.sleep(0.2)
        return "second"

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with make_runner(tmp_path / "a", [who]) as one, make_runner(tmp_path / "b", [who_else]) as two:
        results = await asyncio.gather(
            one.send(call_directive("who", {})), two.send(call_directive("who", {}))
        )
    assert [result_text(tool_results(result)[0]) for result in results] == ["first", "second"]


async def test_a_workspace_server_named_kernel_is_refused_before_the_cli_starts(tmp_path):
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"kernel": {"command": "x"}}}))
    runner = make_runner(tmp_path, [add])
    with pytest.raises(InvalidInput, match="kernel"):
        await runner.start()
    assert runner.process is None


def test_bad_tools_are_refused_when_the_runner_is_made(tmp_path):
    with pytest.raises(InvalidInput, match="no tool"):
        make_runner(tmp_path, [])
    with pytest.raises(InvalidInput):
        make_runner(tmp_path, "add")
    with pytest.raises(InvalidInput, match="two tools are named"):
        make_runner(tmp_path, [add, add])
