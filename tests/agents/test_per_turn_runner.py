"""``AgentRunner(..., cli="codex" | "gemini")``: the process-per-turn runner on a fault-injecting fake CLI.

The fake (``fake_per_turn_cli.py``) speaks each CLI's argv and stdout lines; the real binaries are
driven in ``tests/real_cli``. Here: the seam (which runner a CLI gets), resume across turns and
runners, cancel and its bound on a CLI that ignores signals, tool processes in sessions of their
own, a crash, endless retries, timeouts, the config home, limitations, long prompts.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from elynav_nb.agents import AgentDefinition, AgentError, AgentRunner, AgentStarted, ToolUse
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.protocols.adapter_settings import adapter_settings
from elynav_nb.errors import AgentDefinitionInvalid, CliStartFailed, InvalidInput

from .helpers import our_zombies, process_alive, wait_until_gone_async

pytestmark = pytest.mark.anyio

FAKE = str(Path(__file__).with_name("fake_per_turn_cli.py"))
DEFINITION = AgentDefinition(
    name="elynav-tester",
    description="A test agent.",
    prompt="You are the tester.",
    tools=("Read", "mcp__crm__search_accounts"),
    model="sonnet",
)
CLIS = ("codex", "gemini")


@pytest.fixture(autouse=True)
def cli_homes(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cli-homes"
    monkeypatch.setenv("ELYNAV_CLI_HOMES", str(root))
    monkeypatch.setenv("ELYNAV_CODEX_MODE", "exec")  # the fake speaks `codex exec --json`, not app-server
    return root


@pytest.fixture
def workspace(tmp_path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def switch_mode(workspace: Path, mode: str) -> None:
    """What the fake CLI does from its next turn on (the runner's environment is frozen)."""
    (workspace.parent / "fake-mode").write_text(mode, encoding="utf-8")


def fake_runner(cli: str, workspace: Path, mode: str = "echo", **options) -> AgentRunner:
    switch_mode(workspace, mode)
    environment = {"FAKE_MODE_FILE": str(workspace.parent / "fake-mode"), **options.pop("environment", {})}
    return AgentRunner(
        options.pop("definition", DEFINITION),
        workspace,
        cli=cli,
        executable=[sys.executable, FAKE],
        environment=environment,
        **options,
    )


def events_of(result, kind):
    return [event for event in result.events if isinstance(event, kind)]


async def wait_for(condition, timeout: float = 20.0) -> None:
    import anyio

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await anyio.sleep(0.02)


# -- the seam ------------------------------------------------------------------------------------------------


def test_the_cli_picks_the_driver(workspace):
    claude = AgentRunner(DEFINITION, workspace)
    assert type(claude) is AgentRunner and claude.plan.driver == "persistent"
    for cli in CLIS:
        runner = AgentRunner(DEFINITION, workspace, cli=cli)
        assert type(runner) is AgentRunner and runner.cli_name == cli
        # codex over app-server is persistent (this module runs codex exec); gemini runs a process per turn
        assert runner.plan.driver == ("persistent" if runner.cli_mode == "app-server" else "per-turn")
    with pytest.raises(InvalidInput, match="unknown agent CLI 'copilot'"):
        AgentRunner(DEFINITION, workspace, cli="copilot")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="codex and gemini"):
        AgentRunner(DEFINITION, workspace, cli_config={"a": 1})


def test_codex_runs_app_server_unless_told_exec(workspace, monkeypatch):
    monkeypatch.delenv("ELYNAV_CODEX_MODE")
    runner = AgentRunner(DEFINITION, workspace, cli="codex")
    assert runner.plan.driver == "persistent" and runner.cli_mode == "app-server"
    assert "mode=app-server" in repr(runner) and runner.session_id == ""
    exec_runner = AgentRunner(DEFINITION, workspace, cli="codex", cli_mode="exec")
    assert exec_runner.plan.driver == "per-turn" and exec_runner.cli_mode == "exec"
    monkeypatch.setenv("ELYNAV_CODEX_MODE", "exec")
    assert AgentRunner(DEFINITION, workspace, cli="codex").plan.driver == "per-turn"
    assert AgentRunner(DEFINITION, workspace, cli="codex", cli_mode="app-server").plan.driver == "persistent"
    with pytest.raises(InvalidInput, match="codex has no mode 'acp'"):
        AgentRunner(DEFINITION, workspace, cli="codex", cli_mode="acp")
    with pytest.raises(InvalidInput, match="gemini has no mode 'app-server'"):
        AgentRunner(DEFINITION, workspace, cli="gemini", cli_mode="app-server")
    with pytest.raises(InvalidInput, match="resume="):
        AgentRunner(DEFINITION, workspace, cli="codex", cli_mode="app-server", session_id="0000")


def test_the_definition_may_name_its_cli(workspace):
    text = DEFINITION.to_markdown().replace("model: sonnet", "model: sonnet\ncli: gemini")
    definition = AgentDefinition.parse(text)
    assert definition.cli == "gemini" and AgentDefinition.parse(definition.to_markdown()) == definition
    assert AgentRunner(definition, workspace).cli_name == "gemini"
    assert AgentRunner(definition, workspace, cli="claude").cli_name == "claude"  # the argument wins
    with pytest.raises(AgentDefinitionInvalid, match="unknown \"cli\" 'vim'"):
        AgentDefinition.parse(text.replace("cli: gemini", "cli: vim"))
    with pytest.raises(AgentDefinitionInvalid):
        AgentDefinition(name="x", description="x", prompt="x", cli="vim")
    # A name: the agent file the claude CLI would find says which CLI runs it.
    folder = workspace / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "elynav-tester.md").write_text(text)
    assert AgentRunner("elynav-tester", workspace).cli_name == "gemini"


def test_codex_names_its_threads_itself(workspace):
    with pytest.raises(InvalidInput, match="resume="):
        AgentRunner(DEFINITION, workspace, cli="codex", session_id="0000")
    assert AgentRunner(DEFINITION, workspace, cli="codex").session_id == ""
    assert AgentRunner(DEFINITION, workspace, cli="gemini").session_id  # gemini takes ours


@pytest.mark.parametrize("cli", CLIS)
def test_limitations_are_said_not_dropped(cli, workspace):
    runner = AgentRunner(DEFINITION, workspace, cli=cli, permission_prompts=True)
    notes = " | ".join(runner.limitations)
    assert "no cost" in notes and "claude alias" in notes  # model: sonnet means nothing to them
    assert "no permission prompts" in notes and "'default'" in notes
    if cli == "codex":
        assert "cannot filter its built-in tools" in notes and "Read not enforced" in notes
    assert "limitations=[" in repr(runner) and "process per turn" in repr(runner)


# -- turns ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cli", CLIS)
async def test_turns_resume_one_conversation(cli, workspace, tmp_path):
    argv_log = tmp_path / "argv.jsonl"
    runner = fake_runner(cli, workspace, environment={"FAKE_ARGV_LOG": str(argv_log)})
    first = await runner.send("hello")
    second = await runner.send("again")
    await runner.stop()
    assert first.outcome == "completed" and first.text == "echo: hello (turn 1)"
    assert second.outcome == "completed" and second.text == "echo: again (turn 2)"  # the same conversation
    assert first.session_id == second.session_id == runner.session_id and runner.session_id
    [started] = events_of(first, AgentStarted)
    assert started.session_id == runner.session_id
    first_argv, second_argv = [json.loads(line) for line in argv_log.read_text().splitlines()]
    if cli == "codex":
        assert (
            "resume" not in first_argv and second_argv[second_argv.index("resume") + 1] == runner.session_id
        )
        assert second.usage["input_tokens"] == 10 and second.usage["thread_total"]["input_tokens"] == 20
    else:
        assert first_argv[first_argv.index("--session-id") + 1] == runner.session_id
        assert second_argv[second_argv.index("--resume") + 1] == runner.session_id
    assert [row for row in runner.to_frame()["outcome"]] == ["completed", "completed"]
    assert our_zombies() == []


@pytest.mark.parametrize("cli", CLIS)
async def test_a_new_runner_resumes_and_an_unknown_conversation_is_refused(cli, workspace):
    first_runner = fake_runner(cli, workspace)
    await first_runner.send("one")
    await first_runner.stop()
    again = fake_runner(cli, workspace, resume=first_runner.session_id)
    result = await again.send("two")
    await again.stop()
    assert result.outcome == "completed" and result.text == "echo: two (turn 2)"
    unknown = fake_runner(cli, workspace, resume="01a00000-0000-7000-8000-000000000000")
    with pytest.raises(CliStartFailed, match="No conversation found") as caught:
        await unknown.start()  # what the office catches to begin a new conversation
    assert caught.value.code == "SESSION_NOT_FOUND"


@pytest.mark.parametrize("cli", CLIS)
async def test_non_fatal_error_lines_do_not_fail_the_turn(cli, workspace):
    runner = fake_runner(cli, workspace, mode="warn")
    result = await runner.send("hello")
    await runner.stop()
    assert result.outcome == "completed" and result.text == "echo: hello (turn 1)"
    assert len(events_of(result, AgentError)) == 2  # kept in the transcript, not a failure


@pytest.mark.parametrize("cli", CLIS)
async def test_an_api_error_ends_the_turn_and_the_next_one_starts_afresh(cli, workspace):
    runner = fake_runner(cli, workspace, mode="api-error")
    failed = await runner.send("fail")
    switch_mode(workspace, "echo")
    after = await runner.send("now answer")
    await runner.stop()
    assert failed.outcome == "error" and failed.ended is not None and failed.ended.is_error
    assert after.outcome == "completed", after.error  # gemini: a new session, not --session-id of the old one


# -- cancel, crash, bounds ------------------------------------------------------------------------------------


@pytest.mark.parametrize("cli", CLIS)
async def test_cancel_mid_stream_settles_and_keeps_the_conversation(cli, workspace):
    # A CLI that honours the signal settles cleanly (the settle bound leaves room for a loaded machine).
    runner = fake_runner(cli, workspace, mode="slow", settle_timeout=10.0)
    turn = runner.send("talk")
    await wait_for(lambda: len(turn.events) >= 3)
    pid = runner.pid
    result = await turn.cancel()
    assert result.outcome == "cancelled" and result.error == "cancelled by the user"
    assert pid is not None and await wait_until_gone_async(pid)
    switch_mode(workspace, "echo")
    after = await runner.send("still there?")
    await runner.stop()
    assert after.outcome == "completed" and after.session_id == result.session_id
    assert after.text == "echo: still there? (turn 2)"
    assert our_zombies() == []


@pytest.mark.parametrize("cli", CLIS)
async def test_a_cli_deaf_to_signals_is_stopped_in_the_background(cli, workspace):
    runner = fake_runner(cli, workspace, mode="deaf", settle_timeout=0.3, stop_bounds=StopBounds(sigkill=2.0))
    turn = runner.send("talk")
    await wait_for(lambda: len(turn.events) >= 3)
    pid = runner.pid
    result = await turn.cancel()
    assert result.outcome == "cancelled" and "is being stopped" in result.error
    assert runner.status == "stopping"
    assert pid is not None and await wait_until_gone_async(pid, timeout=10)
    await runner.stop()
    assert runner.status == "closed" and our_zombies() == []


@pytest.mark.parametrize("cli", CLIS)
async def test_cancel_kills_a_tool_in_a_session_of_its_own(cli, workspace):
    runner = fake_runner(cli, workspace, mode="grandchild")
    turn = runner.send("run a tool")
    await wait_for(lambda: any(isinstance(event, ToolUse) for event in turn.events))
    assert runner.process is not None
    await wait_for(lambda: "grandchild" in runner.process.stderr.text())
    grandchild = int(runner.process.stderr.text().split("grandchild")[1].split()[0])
    assert os.getsid(grandchild) != os.getsid(runner.pid or 0)  # its own session: a group kill misses it
    result = await turn.cancel()
    assert result.outcome == "cancelled"
    assert await wait_until_gone_async(grandchild, timeout=10), "the tool process outlived the cancel"
    await runner.stop()


@pytest.mark.parametrize("cli", CLIS)
async def test_a_crash_mid_turn_fails_with_a_diagnostic_then_the_next_turn_resumes(cli, workspace):
    runner = fake_runner(cli, workspace, mode="echo")
    first = await runner.send("one")
    switch_mode(workspace, "crash")
    crashed = await runner.send("two")
    switch_mode(workspace, "echo")
    after = await runner.send("three")
    await runner.stop()
    assert crashed.outcome == "failed" and crashed.error_code == "CLI_EXITED"
    assert "exit code 3" in crashed.error and "crashed on purpose" in crashed.stderr_tail
    assert after.outcome == "completed" and after.session_id == first.session_id
    assert after.text == "echo: three (turn 3)"


@pytest.mark.parametrize("cli", CLIS)
async def test_endless_retries_end_at_our_bound(cli, workspace):
    runner = fake_runner(cli, workspace, mode="retry", retry_timeout=1.0)
    result = await runner.send("hello?")
    pid = runner.pid
    await runner.stop()
    assert result.outcome == "timeout" and result.error_code == "AGENT_TIMEOUT"
    assert "kept retrying the model API for 1 s" in result.error and "retry" in result.error.lower()
    assert len(events_of(result, AgentError)) >= 3  # the retry lines are kept, not failures by themselves
    assert pid is not None and not process_alive(pid)


@pytest.mark.parametrize("cli", CLIS)
async def test_idle_and_turn_timeouts(cli, workspace):
    idle = fake_runner(cli, workspace, mode="silent", idle_timeout=0.5)
    idle_result = await idle.send("hello?")
    await idle.stop()
    slow = fake_runner(cli, workspace, mode="slow", turn_timeout=0.8)
    slow_result = await slow.send("hello?")
    await slow.stop()
    assert idle_result.outcome == "timeout" and f"no output from {cli} for 0.5 s" in idle_result.error
    assert slow_result.outcome == "timeout" and "longer than 0.8 s" in slow_result.error
    assert our_zombies() == []


@pytest.mark.parametrize("cli", CLIS)
async def test_a_long_prompt_goes_through_stdin(cli, workspace, tmp_path):
    argv_log = tmp_path / "argv.jsonl"
    runner = fake_runner(cli, workspace, environment={"FAKE_ARGV_LOG": str(argv_log)})
    prompt = "x" * 200_000 + " the end"
    result = await runner.send(prompt)
    await runner.stop()
    assert result.outcome == "completed" and result.text.endswith("the end (turn 1)")
    argv = json.loads(argv_log.read_text())
    assert all(len(word) < 1000 for word in argv)


async def test_content_blocks_other_than_text_are_said_left_out(workspace):
    runner = fake_runner("codex", workspace)
    blocks = [{"type": "text", "text": "look"}, {"type": "image", "source": {"data": "..."}}]
    result = await runner.send(blocks)
    await runner.stop()
    assert result.outcome == "completed" and result.text == "echo: look (turn 1)"
    [dropped] = [event for event in events_of(result, AgentError) if event.code == "CONTENT_DROPPED"]
    assert "1 other content blocks" in dropped.message


# -- the config home -------------------------------------------------------------------------------------------


async def test_codex_home_holds_the_definition_and_the_workspace_mcp_servers(workspace, tmp_path):
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"crm": {"command": "elynav", "args": ["mcp", "crm"]}}})
    )
    home = tmp_path / "codex-home"
    runner = fake_runner("codex", workspace, config_home=home, permission_prompts=True)
    result = await runner.send("hi")
    await runner.stop()
    config = (home / "config.toml").read_text()
    assert result.outcome == "completed"
    assert 'developer_instructions = "You are the tester."' in config
    assert "[mcp_servers.crm]" in config and "required = true" in config
    assert 'enabled_tools = ["search_accounts"]' in config
    assert 'sandbox_mode = "read-only"' in config  # permission_prompts: the safest non-interactive mode
    assert await runner.mcp_status() == [{"name": "crm", "status": "configured"}]


async def test_gemini_home_holds_the_prompt_the_servers_and_the_users_login(workspace, tmp_path):
    (workspace / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"crm": {"command": "elynav", "args": ["mcp", "crm"]}}})
    )
    user_home = tmp_path / "user"
    (user_home / ".gemini").mkdir(parents=True)
    (user_home / ".gemini" / "oauth_creds.json").write_text("{}")
    (user_home / ".gemini" / "settings.json").write_text(
        '{"security": {"auth": {"selectedType": "oauth-personal"}}}'
    )
    home = tmp_path / "gemini-home"
    runner = fake_runner("gemini", workspace, config_home=home, environment={"HOME": str(user_home)})
    await runner.start()
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    assert settings["mcpServers"]["crm"]["trust"] is True and settings["mcpServers"]["crm"][
        "includeTools"
    ] == ["search_accounts"]
    assert settings["security"]["auth"]["selectedType"] == "oauth-personal"  # the user's login type
    assert (home / ".gemini" / "GEMINI.md").read_text().strip() == "You are the tester."
    assert (home / ".gemini" / "oauth_creds.json").resolve() == (user_home / ".gemini" / "oauth_creds.json")
    await runner.stop()


def test_the_default_home_is_outside_the_workspace(workspace, cli_homes):
    runner = AgentRunner(DEFINITION, workspace, cli="gemini")
    home = adapter_settings(runner._driver.context, DEFINITION).home
    assert cli_homes in home.parents and workspace not in home.parents
    assert home.name == "gemini-elynav-tester" and home.parent.name.startswith("workspace-")


async def test_a_missing_cli_fails_the_turn_with_the_install_hint(workspace, monkeypatch):
    monkeypatch.setenv("PATH", str(workspace))
    monkeypatch.delenv("ELYNAV_CODEX_CLI", raising=False)
    runner = AgentRunner(DEFINITION, workspace, cli="codex")
    result = await runner.send("hi")
    assert result.outcome == "failed" and result.error_code == "CLI_NOT_FOUND"
    assert "npm install -g @openai/codex" in result.error
