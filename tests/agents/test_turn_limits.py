"""Budgets: ``max_turns`` and ``max_budget_usd`` per turn, outcome ``limit``, on the stand-in and the fake CLIs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from elynav_nb.agents import AgentRunner, ToolResult
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.events import ToolUse
from elynav_nb.agents.limits import ModelTurnCounter, check_limits
from elynav_nb.errors import BudgetReached, InvalidInput, MaxTurnsReached

pytestmark = pytest.mark.anyio

FAST_STOP = StopBounds(close_stdin=2.0, sigint=2.0, sigterm=1.0, sigkill=1.0, orphans=1.0)
HERE = Path(__file__).parent
DEFINITION = AgentDefinition(name="elynav-tester", description="A test agent.", prompt="You are the tester.")
TWO_TOOLS = "@standin bash echo one\n@standin bash echo two"


@pytest.fixture(autouse=True)
def isolated_homes(tmp_path, monkeypatch):
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    monkeypatch.setenv("ELYNAV_CLI_HOMES", str(tmp_path / "cli-homes"))
    monkeypatch.delenv("ELYNAV_STANDIN_VERSION", raising=False)
    monkeypatch.delenv("ELYNAV_CODEX_MODE", raising=False)


def standin(workspace, **options) -> AgentRunner:
    options.setdefault("stop_bounds", FAST_STOP)
    return AgentRunner(None, workspace, executable="standin", permission_mode="acceptEdits", **options)


# -- claude (the stand-in): the CLI's own flags ------------------------------------------------------------


async def test_claude_max_turns_is_its_flag_and_ends_the_turn_limit(tmp_path):
    async with standin(tmp_path, max_turns=1) as runner:
        result = await runner.send(TWO_TOOLS)
        assert runner.command_line[runner.command_line.index("--max-turns") + 1] == "1"
        after = await runner.send("still there?")
    assert result.outcome == "limit" and result.error_code == "MAX_TURNS_REACHED"
    assert "Reached maximum number of turns (1)" in result.error
    assert len([event for event in result.events if isinstance(event, ToolResult)]) == 1
    with pytest.raises(MaxTurnsReached):
        result.raise_for_outcome()
    assert after.outcome == "completed"  # per turn: the next one starts from zero
    assert list(runner.to_frame()["outcome"]) == ["limit", "completed"]
    assert "limit" in repr(result) and "MAX_TURNS_REACHED" in repr(result)


async def test_a_send_override_restarts_claude_with_its_bound_on_the_same_conversation(tmp_path):
    async with standin(tmp_path, max_turns=1) as runner:
        first = await runner.send("hello")
        pid = runner.pid
        second = await runner.send(TWO_TOOLS + "\ngo on", max_turns=5)
        assert runner.pid != pid  # the flag belongs to the process
        assert runner.command_line[runner.command_line.index("--max-turns") + 1] == "5"
    assert first.outcome == "completed" and second.outcome == "completed", second.error
    assert "I remember 1 earlier turn" in second.text  # --resume kept the conversation


async def test_claude_budget_is_per_turn_although_the_flag_counts_the_whole_process(tmp_path):
    spend = "@standin cost 0.03\n@standin bash echo one\n@standin bash echo two"
    async with standin(tmp_path, max_budget_usd=0.05) as runner:
        over = await runner.send(spend)
        pid = runner.pid
        assert runner.command_line[runner.command_line.index("--max-budget-usd") + 1] == "0.05"
        within = await runner.send("@standin cost 0.01\nsmall")
        assert runner.pid != pid  # a process that spent something restarts before a budgeted turn
    assert over.outcome == "limit" and over.error_code == "BUDGET_REACHED"
    assert "Reached maximum budget ($0.05)" in over.error and over.cost_usd == pytest.approx(0.06)
    assert len([event for event in over.events if isinstance(event, ToolResult)]) == 1  # the 2nd never ran
    with pytest.raises(BudgetReached):
        over.raise_for_outcome()
    assert within.outcome == "completed" and within.cost_usd == pytest.approx(0.01)


async def test_the_standin_budget_counts_the_process_like_the_real_cli(tmp_path):
    """Without the runner's restart (the flag given as a raw argument), the second turn ends at once."""
    async with standin(tmp_path, extra_arguments=("--max-budget-usd", "0.05")) as runner:
        first = await runner.send("@standin cost 0.06\nexpensive")
        second = await runner.send("cheap")
    assert first.outcome == "completed"  # the final answer went over: the turn was done anyway
    assert second.outcome == "limit" and second.error_code == "BUDGET_REACHED" and second.ended is not None
    assert second.ended.terminal_reason == "budget_exhausted"


def test_bounds_are_checked():
    for bad in ({"max_turns": 0}, {"max_turns": 1.5}, {"max_turns": True}, {"max_budget_usd": -1}):
        with pytest.raises(InvalidInput):
            check_limits(bad.get("max_turns"), bad.get("max_budget_usd"))  # type: ignore[arg-type]


def test_the_model_turn_counter_counts_rounds_of_tool_calls():
    counter = ModelTurnCounter(2)
    assert counter.observe(ToolUse(id="a", name="x")) == ""
    assert counter.observe(ToolUse(id="b", name="x")) == ""  # the same round (parallel calls)
    assert counter.observe(ToolResult(tool_use_id="a")) == ""
    assert counter.observe(ToolResult(tool_use_id="b")) == ""  # round 1 done
    assert counter.observe(ToolUse(id="sub", name="x", parent_tool_use_id="a")) == ""  # a subagent's
    assert counter.observe(ToolUse(id="c", name="x")) == ""
    assert "2 model turns" in counter.observe(ToolResult(tool_use_id="c"))


# -- codex and gemini: our own count -------------------------------------------------------------------------


def per_turn(cli: str, workspace: Path, **options) -> AgentRunner:
    return AgentRunner(
        DEFINITION,
        workspace,
        cli=cli,
        cli_mode="exec" if cli == "codex" else None,
        executable=[sys.executable, str(HERE / "fake_per_turn_cli.py")],
        environment={"FAKE_MODE": "tools"},
        **options,
    )


@pytest.mark.parametrize("cli", ["codex", "gemini"])
async def test_max_turns_on_a_process_per_turn_is_our_count_and_interrupts(tmp_path, cli):
    async with per_turn(cli, tmp_path, max_turns=2) as runner:
        result = await runner.send("run five tools")
        unbounded = await runner.send("again", max_turns=10)
    assert result.outcome == "limit" and result.error_code == "MAX_TURNS_REACHED", result.error
    assert "max_turns=2" in result.error
    assert len([event for event in result.events if isinstance(event, ToolResult)]) < 5
    assert unbounded.outcome == "completed" and "five tool rounds" in unbounded.text


async def test_max_turns_on_codex_app_server_interrupts_the_turn_and_the_thread_goes_on(tmp_path):
    runner = AgentRunner(
        DEFINITION,
        tmp_path,
        cli="codex",
        executable=[sys.executable, str(HERE / "fake_codex_app_server.py")],
        environment={"FAKE_MODE": "tools"},
        max_turns=1,
    )
    async with runner:
        result = await runner.send("run five tools")
        pid = runner.pid
        after = await runner.send("hello", max_turns=10)
        assert runner.pid == pid  # our own bound: no restart
    assert result.outcome == "limit" and result.error_code == "MAX_TURNS_REACHED", result.error
    assert after.outcome == "completed"


@pytest.mark.parametrize("cli", ["codex", "gemini"])
def test_a_budget_is_refused_where_the_cli_reports_no_cost(tmp_path, cli):
    with pytest.raises(InvalidInput, match="reports no cost"):
        per_turn(cli, tmp_path, max_budget_usd=1.0)


@pytest.mark.parametrize("cli", ["codex", "gemini"])
async def test_codex_exec_and_gemini_run_hooks_as_command_hooks(tmp_path, cli):
    runner = per_turn(cli, tmp_path, hooks={"PreToolUse": lambda call: None})
    assert runner.capabilities.native_tool_hooks
    expected = "dangerously-bypass-hook-trust" if cli == "codex" else "tool_use_id is empty"
    assert any(expected in note for note in runner.limitations)
    assert not any("hooks=" in note for note in per_turn(cli, tmp_path).limitations)


async def test_codex_exec_refuses_hooks_in_a_workspace_that_brings_its_own(tmp_path):
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "hooks.json").write_text("{}")
    runner = per_turn("codex", tmp_path, hooks={"PreToolUse": lambda call: None})
    with pytest.raises(InvalidInput, match="unreviewed"):
        await runner.start()
    result = await runner.send("hello")  # a turn ends failed with the same code instead
    await runner.stop()
    assert result.outcome == "failed" and result.error_code == "INVALID_INPUT"


async def test_codex_exec_with_hooks_gets_its_hooks_file_flag_and_feature(tmp_path):
    log = tmp_path / "argv.log"
    runner = AgentRunner(
        DEFINITION,
        tmp_path,
        cli="codex",
        cli_mode="exec",
        executable=[sys.executable, str(HERE / "fake_per_turn_cli.py")],
        environment={"FAKE_MODE": "echo", "FAKE_ARGV_LOG": str(log)},
        hooks={"PreToolUse": lambda call: None},
    )
    async with runner:
        result = await runner.send("hello")
        home = runner.cli_home
    assert result.outcome == "completed", result.error
    argv = log.read_text()
    assert "--dangerously-bypass-hook-trust" in argv and "features.hooks=true" in argv
    assert home is not None
    import json as json_module

    [entry] = json_module.loads((home / "hooks.json").read_text())["hooks"]["PreToolUse"]
    assert "hooks/command.py" in entry["hooks"][0]["command"]


def test_hooks_on_codex_app_server_are_said_in_the_limitations(tmp_path):
    runner = AgentRunner(DEFINITION, tmp_path, cli="codex", hooks={"PreToolUse": lambda call: None})
    assert runner.cli_mode == "app-server"
    assert any("apply to kernel tools only" in note for note in runner.limitations)
    assert not runner.capabilities.native_tool_hooks
    claude = standin(tmp_path, hooks={"PreToolUse": lambda call: None})
    assert claude.capabilities.native_tool_hooks and not claude.limitations


async def test_kernel_tools_get_the_same_hooks_through_before_and_after_tool(tmp_path):
    """The contract the kernel tool server relies on (codex and gemini have no native hooks)."""
    from elynav_nb.agents.hooks import deny, rewrite

    def pre(call):
        if call.tool_name == "drop_table":
            return deny("read-only")
        return rewrite({**call.tool_input, "limit": 10})

    runner = per_turn(
        "gemini", tmp_path, hooks={"PreToolUse": pre, "PostToolUse": [("query", lambda c: None)]}
    )
    denied = await runner.hooks.before_tool("drop_table", {})
    rewritten = await runner.hooks.before_tool("query", {"expr": "a > 1"}, tool_use_id="t1")
    after = await runner.hooks.after_tool("query", {"expr": "a > 1"}, {"rows": []})
    assert denied is not None and denied.denied and denied.reason == "read-only"
    assert rewritten is not None and rewritten.updated_input == {"expr": "a > 1", "limit": 10}
    assert after is None
