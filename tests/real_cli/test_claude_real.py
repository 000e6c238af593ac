"""The real claude CLI through today's ``AgentRunner``, offline against the fake Anthropic Messages API.

Until now the real binary was only driven without a login (every turn ends "Not logged in").
With ``ANTHROPIC_BASE_URL`` on the fake API and a dummy key it runs whole turns: streamed text,
and a Bash tool call, in one persistent stream-json process.
"""

from __future__ import annotations

import pytest

from elynav_nb.agents import AgentRunner
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.events import AgentStarted, TextDelta, ToolResult, ToolUse
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply

from .setups import TEST_AGENT_PROMPT, plain_workspace

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]


def _definition(tools: tuple[str, ...], permission_mode: str | None = None) -> AgentDefinition:
    return AgentDefinition(
        name="elynav-test",
        description="A test agent.",
        prompt=TEST_AGENT_PROMPT,
        tools=tools,
        permission_mode=permission_mode,
    )


def _environment(api: FakeModelApi, home: dict[str, str]) -> dict[str, str]:
    return {
        **home,
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "IS_SANDBOX": "1",  # a throw-away sandbox: lets bypassPermissions run as root
    }


async def test_a_whole_text_turn_streams_through_the_runner(
    claude_cli, says_version, isolated_home, tmp_path
):
    says_version(claude_cli)
    chunks = ("Hello ", "from ", "the ", "fake ", "model.")
    async with FakeModelApi([Reply.say(*chunks)]) as api:
        runner = AgentRunner(
            _definition(tools=("Read",)),
            plain_workspace(tmp_path),
            executable=claude_cli.argv[0],
            fallback_to_standin=False,
            environment=_environment(api, isolated_home),
            keep_deltas=True,
        )
        async with runner:
            result = await runner.send("say hello")
        requests = api.model_requests("anthropic")

    assert result.outcome == "completed", result.error
    assert result.text == "Hello from the fake model."
    assert [event.text for event in result.events if isinstance(event, TextDelta)] == list(chunks)
    started = [event for event in result.events if isinstance(event, AgentStarted)]
    assert started and started[0].cli_version == claude_cli.version and not started[0].is_standin
    assert result.usage["output_tokens"] == 10
    [request] = requests
    assert request.last_user_text == "say hello"
    assert TEST_AGENT_PROMPT in request.system_prompt  # --agent: the definition's prompt is the system prompt
    assert "Read" in request.tool_names and "Bash" not in request.tool_names  # the definition's tools
    assert request.headers["x-api-key"] == "[redacted]"


async def test_a_bash_tool_turn_through_the_runner(claude_cli, says_version, isolated_home, tmp_path):
    says_version(claude_cli)
    async with FakeModelApi([Reply.shell("echo hi"), Reply.say("Tool done.")]) as api:
        runner = AgentRunner(
            _definition(tools=("Bash",), permission_mode="bypassPermissions"),
            plain_workspace(tmp_path),
            executable=claude_cli.argv[0],
            fallback_to_standin=False,
            environment=_environment(api, isolated_home),
        )
        async with runner:
            result = await runner.send("run it")
        requests = api.model_requests("anthropic")

    assert result.outcome == "completed", result.error
    [tool_use] = [event for event in result.events if isinstance(event, ToolUse)]
    assert tool_use.name == "Bash" and tool_use.input["command"] == "echo hi"
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    assert (
        tool_result.tool_use_id == tool_use.id
        and tool_result.text.strip() == "hi"
        and not tool_result.is_error
    )
    assert result.text == "Tool done."
    assert len(requests) == 2 and "tool_result" in str(requests[1].body["messages"][-1])
