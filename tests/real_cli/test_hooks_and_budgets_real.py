"""Hooks and budgets on the real CLIs, offline against the fake model API.

claude 2.1.332: Python hooks allow / deny / rewrite a Bash call (the tool_result the next model request
carries is checked), a raising hook denies; ``max_turns`` and ``max_budget_usd`` stop a turn with
outcome ``limit``. gemini 0.61.0 and codex 0.171.0 exec: the same hooks as command hooks (deny / rewrite of a shell
call). codex app-server: no hook for its own tools; codex and gemini: no cost, asserted as limitations.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest

from elynav_nb.agents import AgentRunner, ToolResult, ToolUse
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.events import HookFailed
from elynav_nb.agents.hooks import HookCall, deny, rewrite
from elynav_nb.errors import InvalidInput
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply, Usage

from .runner_setups import agent_definition, make_runner
from .setups import TEST_AGENT_PROMPT, crm_workspace, plain_workspace

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]

EXPENSIVE = Usage(
    input_tokens=200_000, output_tokens=20_000
)  # about $0.6 a request on claude's default model


def _definition() -> AgentDefinition:
    return AgentDefinition(
        name="elynav-test",
        description="A test agent.",
        prompt=TEST_AGENT_PROMPT,
        tools=("Bash",),
        permission_mode="bypassPermissions",
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


def _claude(claude_cli, api, isolated_home, tmp_path, **options) -> AgentRunner:
    return AgentRunner(
        _definition(),
        plain_workspace(tmp_path),
        executable=claude_cli.argv[0],
        fallback_to_standin=False,
        environment=_environment(api, isolated_home),
        **options,
    )


def _tool_results_sent(api: FakeModelApi) -> list[dict]:
    """The tool_result blocks of the model requests the CLI sent."""
    blocks = []
    for request in api.model_requests("anthropic"):
        for message in request.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                blocks += [
                    block
                    for block in content
                    if isinstance(block, dict) and block.get("type") == "tool_result"
                ]
    return blocks


def _text_of(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


async def test_a_hook_sees_and_allows_a_bash_call(claude_cli, says_version, isolated_home, tmp_path):
    says_version(claude_cli)
    seen: list[HookCall] = []
    after: list[HookCall] = []
    async with FakeModelApi([Reply.shell("echo allowed"), Reply.say("Done.")]) as api:
        runner = _claude(
            claude_cli,
            api,
            isolated_home,
            tmp_path,
            hooks={"PreToolUse": seen.append, "PostToolUse": after.append},
        )
        async with runner:
            result = await runner.send("run it")
    assert result.outcome == "completed", result.error
    [call] = seen
    assert call.tool_name == "Bash" and call.tool_input["command"] == "echo allowed"
    assert call.session_id == result.session_id and call.raw["hook_event_name"] == "PreToolUse"
    [post] = after
    assert post.tool_response["stdout"].strip() == "allowed"
    [sent] = _tool_results_sent(api)
    assert _text_of(sent).strip() == "allowed" and not sent.get("is_error")


async def test_a_hook_denies_a_bash_call_and_the_model_reads_the_reason(
    claude_cli, says_version, isolated_home, tmp_path
):
    says_version(claude_cli)
    marker = tmp_path / "ran"
    async with FakeModelApi([Reply.shell(f"touch {marker}"), Reply.say("Understood.")]) as api:
        runner = _claude(
            claude_cli,
            api,
            isolated_home,
            tmp_path,
            hooks={"PreToolUse": [("Bash", lambda call: deny("no touching"))]},
        )
        async with runner:
            result = await runner.send("make the file")
    assert result.outcome == "completed", result.error
    assert not marker.exists()
    [sent] = _tool_results_sent(api)
    assert (
        sent["is_error"] is True
        and _text_of(sent) == "PreToolUse:Bash hook error: Denied by a hook: no touching"
    )
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    assert tool_result.is_error and "no touching" in tool_result.text


async def test_a_hook_rewrites_a_bash_call(claude_cli, says_version, isolated_home, tmp_path):
    says_version(claude_cli)

    async def safer(call: HookCall):
        return rewrite({**call.tool_input, "command": "echo rewritten"})

    async with FakeModelApi([Reply.shell("echo original"), Reply.say("Done.")]) as api:
        runner = _claude(claude_cli, api, isolated_home, tmp_path, hooks={"PreToolUse": safer})
        async with runner:
            result = await runner.send("run it")
    assert result.outcome == "completed", result.error
    [tool_use] = [event for event in result.events if isinstance(event, ToolUse)]
    assert tool_use.input["command"] == "echo original"  # the model's call, as it asked
    [sent] = _tool_results_sent(api)
    assert _text_of(sent).strip() == "rewritten"  # what ran, as the model reads it


async def test_a_raising_hook_denies_with_a_diagnostic_event(
    claude_cli, says_version, isolated_home, tmp_path
):
    says_version(claude_cli)

    def broken(call: HookCall):
        raise RuntimeError("policy file missing")

    async with FakeModelApi([Reply.shell("echo never"), Reply.say("Understood.")]) as api:
        runner = _claude(claude_cli, api, isolated_home, tmp_path, hooks={"PreToolUse": broken})
        async with runner:
            result = await runner.send("run it")
    [failed] = [event for event in result.events if isinstance(event, HookFailed)]
    assert failed.code == "HOOK_FAILED" and "policy file missing" in failed.message
    [sent] = _tool_results_sent(api)
    assert sent["is_error"] is True and "policy file missing" in _text_of(sent)


async def test_max_turns_stops_a_turn_with_outcome_limit(claude_cli, says_version, isolated_home, tmp_path):
    says_version(claude_cli)
    replies = [
        Reply.shell("echo one"),
        Reply.say("Next turn."),
    ]  # the limit stops the 1st turn after its tool
    async with FakeModelApi(replies) as api:
        runner = _claude(claude_cli, api, isolated_home, tmp_path, max_turns=1)
        async with runner:
            result = await runner.send("loop")
            pid = runner.pid
            after = await runner.send("hello again")
            assert runner.pid == pid  # the flag counts per turn: no restart
    assert "--max-turns" in runner.command_line
    assert result.outcome == "limit" and result.error_code == "MAX_TURNS_REACHED", result.error
    assert "Reached maximum number of turns (1)" in result.error
    assert result.ended is not None and result.ended.terminal_reason == "max_turns"
    assert after.outcome == "completed" and after.text == "Next turn.", after.error
    assert len(api.model_requests("anthropic")) == 2  # no model request after the limit


async def test_a_budget_stops_a_turn_and_the_next_turn_gets_its_own(
    claude_cli, says_version, isolated_home, tmp_path
):
    says_version(claude_cli)
    replies = [
        Reply(tool_calls=Reply.shell("echo costly").tool_calls, usage=EXPENSIVE),
        Reply(text=("Cheap answer.",)),
    ]
    async with FakeModelApi(replies) as api:
        runner = _claude(claude_cli, api, isolated_home, tmp_path, max_budget_usd=0.5)
        async with runner:
            over = await runner.send("spend")
            pid = runner.pid
            started = time.monotonic()
            within = await runner.send("a cheap one")
            restarted_turn_s = time.monotonic() - started
            assert runner.pid != pid  # --max-budget-usd counts the process: a new one (same session)
    print(f"a budgeted turn after a costly one, restart included: {restarted_turn_s:.2f} s")
    assert over.outcome == "limit" and over.error_code == "BUDGET_REACHED", over.error
    assert "Reached maximum budget ($0.5)" in over.error and over.cost_usd > 0.5
    assert over.ended is not None and over.ended.terminal_reason == "budget_exhausted"
    assert not [event for event in over.events if isinstance(event, ToolResult)]  # the tool never ran
    assert within.outcome == "completed", within.error
    assert within.text == "Cheap answer." and within.session_id == over.session_id


async def test_codex_exec_runs_the_hooks_as_command_hooks(codex_cli, says_version, isolated_home, tmp_path):
    """codex 0.171.0 exec runs $CODEX_HOME/hooks.json command hooks (features.hooks, trust bypassed)."""
    says_version(codex_cli)
    seen: list[HookCall] = []

    def policy(call: HookCall):
        seen.append(call)
        command = call.tool_input.get("command", "")
        if call.event == "PreToolUse" and "secret" in command:
            return deny("no secrets")
        if call.event == "PreToolUse":
            return rewrite({**call.tool_input, "command": "echo rewritten"})
        return None

    replies = [Reply.shell("echo original"), Reply.say("One."), Reply.shell("cat secret"), Reply.say("Two.")]
    async with FakeModelApi(replies) as api:
        runner = make_runner(
            replace(codex_cli, mode="exec"),
            api,
            plain_workspace(tmp_path),
            isolated_home,
            agent_definition(tools=("Bash",), permission_mode="bypassPermissions"),
            hooks={"PreToolUse": policy, "PostToolUse": policy},
        )
        async with runner:
            rewritten = await runner.send("run it")
            denied = await runner.send("read the secret")
        requests = api.model_requests("openai")
    assert rewritten.outcome == "completed" and denied.outcome == "completed", (rewritten.error, denied.error)
    assert [call.event for call in seen] == ["PreToolUse", "PostToolUse", "PreToolUse"]
    assert (
        seen[0].tool_name == "Bash"
        and seen[0].tool_use_id
        and seen[0].tool_input["command"] == "echo original"
    )
    outputs = [
        str(item.get("output"))
        for request in requests
        for item in request.body.get("input", [])
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    assert any("rewritten" in output for output in outputs)
    assert any("Command blocked by PreToolUse hook: no secrets" in output for output in outputs)


async def test_codex_app_server_says_its_hooks_and_budget_limits(codex_cli, says_version, tmp_path):
    says_version(codex_cli)
    runner = AgentRunner(
        _definition(),
        plain_workspace(tmp_path),
        cli="codex",
        executable=list(codex_cli.argv),
        hooks={"PreToolUse": print},
    )
    assert runner.cli_mode == "app-server" and not runner.capabilities.native_tool_hooks
    assert any("apply to kernel tools only" in note for note in runner.limitations)
    with pytest.raises(InvalidInput, match="reports no cost"):
        AgentRunner(
            _definition(),
            plain_workspace(tmp_path),
            cli="codex",
            executable=list(codex_cli.argv),
            max_budget_usd=1,
        )


async def test_gemini_runs_the_hooks_as_command_hooks(gemini_cli, says_version, isolated_home, tmp_path):
    """gemini 0.61.0 runs settings.json command hooks in headless mode: the runner's hooks ride on them."""
    says_version(gemini_cli)
    seen: list[HookCall] = []

    def policy(call: HookCall):
        seen.append(call)
        if call.event == "PreToolUse" and "secret" in call.tool_input.get("command", ""):
            return deny("no secrets")
        if call.event == "PreToolUse":
            return rewrite({**call.tool_input, "command": "echo rewritten"})
        return None

    replies = [Reply.shell("echo original"), Reply.say("One."), Reply.shell("cat secret"), Reply.say("Two.")]
    async with FakeModelApi(replies) as api:
        runner = make_runner(
            gemini_cli,
            api,
            plain_workspace(tmp_path),
            isolated_home,
            agent_definition(tools=("Bash",), permission_mode="bypassPermissions"),
            hooks={"PreToolUse": policy, "PostToolUse": policy},
        )
        async with runner:
            rewritten = await runner.send("run it")
            denied = await runner.send("read the secret")
            folder = runner._driver._hook_server.folder  # type: ignore[attr-defined]
            assert folder is not None and folder.exists()
        assert not folder.exists()  # stop() closed the hook socket
        requests = api.model_requests("gemini")
    assert rewritten.outcome == "completed" and denied.outcome == "completed", (rewritten.error, denied.error)
    assert [call.event for call in seen] == ["PreToolUse", "PostToolUse", "PreToolUse"]
    assert seen[0].tool_name == "run_shell_command" and seen[0].tool_input["command"] == "echo original"
    responses = [
        json.dumps(part["functionResponse"]["response"])
        for request in requests
        for content in request.body.get("contents", [])
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]
    assert any("rewritten" in response for response in responses)
    assert any("Tool execution blocked: no secrets" in response for response in responses)
    with pytest.raises(InvalidInput, match="reports no cost"):
        AgentRunner(
            _definition(),
            plain_workspace(tmp_path),
            cli="gemini",
            executable=list(gemini_cli.argv),
            max_budget_usd=1,
        )


@pytest.mark.parametrize("cli_name", ["claude", "codex", "gemini"])
async def test_which_native_hooks_see_an_mcp_tool_call(
    cli_name, request, says_version, isolated_home, tmp_path
):
    """Kernel tools reach the CLIs as MCP tools: wherever the CLI runs the hooks itself
    (``capabilities.native_tool_hooks``) its hooks see MCP tool calls too, so the kernel tool server must not
    apply them a second time (it does where the CLI cannot: codex app-server)."""
    cli = request.getfixturevalue(f"{cli_name}_cli")
    if cli_name == "codex":
        cli = replace(cli, mode="exec")
    says_version(cli)
    workspace, _ = crm_workspace(tmp_path)
    seen: list[HookCall] = []
    definition = agent_definition(
        tools=("Read", "mcp__crm__search_accounts"), permission_mode="bypassPermissions"
    )
    script = [Reply.mcp("crm", "search_accounts", {"query": "Girard"}), Reply.say("Found it.")]
    async with FakeModelApi(script) as api:
        if cli_name == "claude":
            runner = AgentRunner(
                definition,
                workspace,
                executable=cli.argv[0],
                fallback_to_standin=False,
                environment=_environment(api, isolated_home),
                hooks={"PreToolUse": seen.append},
            )
        else:
            runner = make_runner(
                cli, api, workspace, isolated_home, definition, hooks={"PreToolUse": seen.append}
            )
        async with runner:
            result = await runner.send("find Girard in the CRM")
    assert result.outcome == "completed", result.error
    print(f"{cli_name}: hooks saw {[call.tool_name for call in seen]}")
    assert runner.capabilities.native_tool_hooks
    [call] = seen
    assert call.tool_name == (
        "mcp_crm_search_accounts" if cli_name == "gemini" else "mcp__crm__search_accounts"
    )
    assert call.tool_input == {"query": "Girard"}
