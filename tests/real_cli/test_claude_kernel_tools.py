"""Kernel tools on the real claude CLI, offline against the fake Anthropic Messages API.

The fake model asks for ``mcp__kernel__<tool>``; the real CLI reaches the runner's SDK MCP server over
``mcp_message`` control requests; the tool runs in this process; the test reads the next request the
fake API received to check that the tool's result reached the model.
"""

from __future__ import annotations

import pandas
import pytest

from elynav_nb.agents import AgentRunner, ToolResult, ToolUse
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.tools import agent_tool, df_tools, kernel_tools
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply

from .setups import TEST_AGENT_PROMPT, plain_workspace
from .test_claude_real import _environment

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]


def _definition(tools: tuple[str, ...]) -> AgentDefinition:
    return AgentDefinition(
        name="elynav-test", description="A test agent.", prompt=TEST_AGENT_PROMPT, tools=tools
    )


def _tool_result_sent(request) -> str:
    """The text of the tool_result block of the model request's last message."""
    blocks = request.body["messages"][-1]["content"]
    [block] = [block for block in blocks if block.get("type") == "tool_result"]
    content = block["content"]
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content)
    return str(content)


async def _one_tool_turn(claude_cli, home, tmp_path, tools, call, agent_tools=("Read",)):
    async with FakeModelApi([call, Reply.say("Done.")]) as api:
        runner = AgentRunner(
            _definition(agent_tools),
            plain_workspace(tmp_path),
            executable=claude_cli.argv[0],
            fallback_to_standin=False,
            environment=_environment(api, home),
            tools=tools,
        )
        async with runner:
            result = await runner.send("use the tool")
        requests = api.model_requests("anthropic")
    return runner, result, requests


async def test_the_model_calls_a_kernel_function_and_its_result_reaches_the_model(
    claude_cli, says_version, isolated_home, tmp_path
):
    says_version(claude_cli)
    seen: list[tuple[int, int]] = []

    @agent_tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        seen.append((a, b))
        return a * b

    runner, result, requests = await _one_tool_turn(
        claude_cli, isolated_home, tmp_path, [multiply], Reply.mcp("kernel", "multiply", {"a": 6, "b": 7})
    )
    assert result.outcome == "completed", result.error
    assert seen == [(6, 7)] and runner.tool_endpoint is not None and runner.tool_endpoint.calls == 1
    [use] = [event for event in result.events if isinstance(event, ToolUse)]
    assert use.name == "mcp__kernel__multiply"
    assert len(requests) == 2
    assert (
        "mcp__kernel__multiply" in requests[0].tool_names
    )  # the agent lists Read: the kernel server was added
    assert _tool_result_sent(requests[1]) == "42"
    assert result.text == "Done."


async def test_a_frame_query_tool_on_the_real_cli(claude_cli, says_version, isolated_home, tmp_path):
    says_version(claude_cli)
    accounts = pandas.DataFrame({"name": ["Acme", "Globex", "Initech"], "score": [91, 45, 78]})
    _, result, requests = await _one_tool_turn(
        claude_cli,
        isolated_home,
        tmp_path,
        df_tools(accounts, name="accounts"),
        Reply.mcp("kernel", "accounts_query", {"expression": "score < 50"}),
    )
    assert result.outcome == "completed", result.error
    sent = _tool_result_sent(requests[1])
    assert "Globex" in sent and "Acme" not in sent


async def test_a_tool_that_raises_reaches_the_model_as_a_tool_error(
    claude_cli, says_version, isolated_home, tmp_path
):
    says_version(claude_cli)

    @agent_tool
    def lookup(account: str) -> str:
        """Look an account up."""
        raise KeyError(f"unknown account {account}")

    _, result, requests = await _one_tool_turn(
        claude_cli,
        isolated_home,
        tmp_path,
        kernel_tools(lookup),
        Reply.mcp("kernel", "lookup", {"account": "Zed"}),
    )
    assert result.outcome == "completed", result.error
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    assert tool_result.is_error
    sent = _tool_result_sent(requests[1])
    assert "KeyError" in sent and "unknown account Zed" in sent and "Traceback" not in sent
