"""Kernel tools on the real codex (app-server and exec) and gemini, through the runner's loopback MCP server.

Each test runs once per CLI (``per_turn_cli``): the model (the fake API) calls a kernel tool defined
here, the CLI reaches the kernel's loopback server with the runner's secret, the tool runs in this
process, and its result is in the next request the model receives. A DataFrame ``query`` tool and a
tool that raises go the same way; the secret is in no file of the CLI's home and no argument.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas
import pytest

from elynav_nb.agents import ToolResult
from elynav_nb.agents.tools import agent_tool, df_tools, kernel_tools
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply

from .runner_setups import agent_definition, make_runner
from .setups import plain_workspace

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]

SEEN: list[str] = []


@agent_tool
def lookup_account(name: str) -> dict[str, object]:
    """Look an account up by name in the kernel."""
    SEEN.append(name)
    return {"account": name, "tier": "gold", "marker": "kernel-answer-7381"}


@agent_tool
def broken_tool(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(f"the kernel says no: {reason}")


def _model_requests(api: FakeModelApi, cli_name: str) -> list:
    return api.model_requests("openai" if cli_name == "codex" else "gemini")


def _files_holding(folder, text: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The files under ``folder`` whose bytes hold ``text``."""
    found = []
    for root, _, names in os.walk(folder):  # files come and go while the CLI runs: skip those gone
        for name in names:
            path = Path(root) / name
            try:
                if path.is_file() and text.encode() in path.read_bytes():
                    found.append(str(path.relative_to(folder)))
            except OSError:
                continue
    return found


async def test_the_model_calls_a_kernel_function_and_reads_its_result(
    per_turn_cli, says_version, isolated_home, tmp_path
):
    cli = per_turn_cli
    says_version(cli)
    SEEN.clear()
    script = [Reply.mcp("kernel", "lookup_account", {"name": "Girard"}), Reply.say("Gold it is.")]
    async with FakeModelApi(script) as api:
        runner = make_runner(cli, api, plain_workspace(tmp_path), isolated_home, tools=[lookup_account])
        async with runner:
            result = await runner.send("look Girard up")
            server = runner.tool_server
            assert server is not None and server.is_serving
            secret, port = server.secret, server.port
            holding_secret = _files_holding(runner.cli_home, secret)
            holding_port = _files_holding(runner.cli_home, f"127.0.0.1:{port}/mcp")
            command_line = " ".join(runner.command_line)
        requests = _model_requests(api, cli.name)

    assert result.outcome == "completed", f"{result.error} {result.stderr_tail[-1500:]}"
    assert SEEN == ["Girard"], "the tool ran in this process"
    [tool_use] = result.tool_uses
    assert tool_use.name == "mcp__kernel__lookup_account" and tool_use.input == {"name": "Girard"}
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    assert not tool_result.is_error and "kernel-answer-7381" in tool_result.text
    assert "kernel-answer-7381" in json.dumps(requests[-1].body), "the result reached the model"
    assert result.text == "Gold it is."
    assert runner.tool_endpoint is not None and runner.tool_endpoint.calls == 1
    # the secret reached the CLI through its environment only
    assert holding_secret == [] and secret not in command_line and holding_port
    assert not server.is_serving, "stop() closed the server"


async def test_a_frame_query_tool_and_a_tool_that_raises(per_turn_cli, says_version, isolated_home, tmp_path):
    cli = per_turn_cli
    says_version(cli)
    frame = pandas.DataFrame(
        {"name": ["Atelier Girard", "Boulangerie Moreau", "Cabinet Petit"], "score": [31, 97, 55]}
    )
    tools = kernel_tools(df_tools(frame, name="accounts"), broken_tool)
    script = [
        Reply.mcp("kernel", "accounts_query", {"expression": "score > 90"}),
        Reply.mcp("kernel", "broken_tool", {"reason": "testing"}),
        Reply.say("Done."),
    ]
    async with FakeModelApi(script) as api:
        runner = make_runner(cli, api, plain_workspace(tmp_path), isolated_home, tools=tools)
        async with runner:
            result = await runner.send("who scores over 90?")
        requests = _model_requests(api, cli.name)

    assert result.outcome == "completed", f"{result.error} {result.stderr_tail[-1500:]}"
    results = [event for event in result.events if isinstance(event, ToolResult)]
    assert len(results) == 2, [event.kind for event in result.events]
    queried, broken = results
    assert (
        not queried.is_error and "Boulangerie Moreau" in queried.text and "Cabinet Petit" not in queried.text
    )
    assert broken.is_error and "the kernel says no: testing" in broken.text
    bodies = [json.dumps(request.body) for request in requests]
    assert any("Boulangerie Moreau" in body for body in bodies[1:]), "the query's rows reached the model"
    assert "the kernel says no: testing" in bodies[-1], "the tool's error reached the model"
    assert result.text == "Done."


async def test_the_agents_own_commands_and_an_asking_runner(
    per_turn_cli, says_version, isolated_home, tmp_path
):
    """The secret and the commands the agent runs; the tools called without a prompt where the runner asks.

    codex: its commands do not see the secret (``shell_environment_policy.exclude``); gemini hands them
    its whole environment, which ``runner.limitations`` says. A definition that lists its tools and
    ``permission_prompts=True`` (codex app-server: approval policy ``untrusted``; exec and gemini: the
    safest mode) still gets the kernel tools, run without a prompt: the user handed them over.
    """
    cli = per_turn_cli
    says_version(cli)
    SEEN.clear()
    definition = agent_definition(tools=("Read", "Bash"), permission_mode="bypassPermissions")
    script = [Reply.shell("env"), Reply.say("Listed.")]
    async with FakeModelApi(script) as api:
        runner = make_runner(
            cli, api, plain_workspace(tmp_path), isolated_home, definition, tools=[lookup_account]
        )
        async with runner:
            listed = await runner.send("list the environment")
            assert runner.tool_server is not None
            secret = runner.tool_server.secret
        asking_definition = agent_definition(tools=("Read",))
        api.script.extend([Reply.mcp("kernel", "lookup_account", {"name": "Moreau"}), Reply.say("Asked.")])
        asking = make_runner(
            cli,
            api,
            plain_workspace(tmp_path),
            isolated_home,
            asking_definition,
            tools=[lookup_account],
            permission_prompts=True,
        )
        async with asking:
            called = await asking.send("look Moreau up")
            prompts = list(asking.pending_permissions)

    assert listed.outcome == "completed", listed.error
    [shell_result] = [event for event in listed.events if isinstance(event, ToolResult)]
    assert "PATH=" in shell_result.text, "the command ran and printed the environment"
    token_note = [note for note in runner.limitations if "ELYNAV_KERNEL_TOOLS_TOKEN" in note]
    if cli.name == "codex":
        assert secret not in shell_result.text and "ELYNAV_KERNEL_TOOLS_TOKEN" not in shell_result.text
        assert not token_note
    else:  # gemini: no way to keep one variable from its commands without redacting every secret-like one
        assert secret in shell_result.text and token_note
    assert called.outcome == "completed", f"{called.error} {called.stderr_tail[-1500:]}"
    assert SEEN == ["Moreau"] and not prompts
    [tool_result] = [event for event in called.events if isinstance(event, ToolResult)]
    assert "kernel-answer-7381" in tool_result.text and called.text == "Asked."


async def test_a_pre_tool_use_hook_vetoes_a_kernel_tool_call_on_every_cli(
    per_turn_cli, says_version, isolated_home, tmp_path
):
    """Where the CLI runs the hooks (gemini, codex exec) it asks them; on codex app-server the kernel server does."""
    from elynav_nb.agents.hooks import deny

    cli = per_turn_cli
    says_version(cli)
    SEEN.clear()
    seen_names: list[str] = []

    def veto(call):  # type: ignore[no-untyped-def]
        seen_names.append(call.tool_name)
        return deny("accounts are read in the CRM today, not in the kernel")

    script = [Reply.mcp("kernel", "lookup_account", {"name": "Girard"}), Reply.say("Understood.")]
    async with FakeModelApi(script) as api:
        runner = make_runner(
            cli,
            api,
            plain_workspace(tmp_path),
            isolated_home,
            tools=[lookup_account],
            hooks={"PreToolUse": veto},
        )
        async with runner:
            result = await runner.send("look Girard up")
        requests = _model_requests(api, cli.name)
    assert result.outcome == "completed", result.error
    assert SEEN == []  # the function never ran
    assert seen_names and all("lookup_account" in name for name in seen_names)
    assert "accounts are read in the CRM today" in json.dumps(requests[-1].body)
