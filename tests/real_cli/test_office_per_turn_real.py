"""An office employee on the real codex or gemini delegates with ``elynav ask`` to a claude (stand-in) one.

The fake model API asks the codex/gemini employee to run ``elynav ask w-helper 'Bonjour'`` in its
shell tool: a real process that reaches the office's socket from inside the CLI (codex: its
workspace-write sandbox with network access, which the office turns on; gemini: ``auto_edit`` with
the definition's ``run_shell_command(elynav ask)`` rule). The office sees the delegation, the
helper answers, the employee finishes its turn.
"""

from __future__ import annotations

import asyncio

import pytest

from elynav_nb.agents import AgentDefinition, ToolResult
from elynav_nb.office import ASK_RULE, Office
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import Reply

from .runner_setups import MODELS, wait_for

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]


async def test_a_codex_or_gemini_employee_delegates_with_elynav_ask(
    per_turn_cli, says_version, isolated_home, tmp_path, monkeypatch
):
    cli = per_turn_cli
    says_version(cli)
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    if cli.mode:
        monkeypatch.setenv("ELYNAV_CODEX_MODE", cli.mode)
    boss = AgentDefinition(
        name="w-boss",
        description="delegates",
        prompt="You delegate with elynav ask.",
        tools=("Read", ASK_RULE),
        permission_mode="acceptEdits",
        cli=cli.name,
    )
    helper = AgentDefinition(name="w-helper", description="helps", prompt="You help.", tools=("Read",))
    script = [Reply.shell("elynav ask w-helper 'Bonjour'"), Reply.say("Delegated.")]
    async with FakeModelApi(script) as api:
        office = Office(
            tmp_path / "workspace",
            [boss, helper],
            executable={"claude": "standin", cli.name: cli.argv[0]},
            environment={**api.cli_environment(), **isolated_home},
            model=MODELS[cli.name],
            ask_timeout=120.0,
        )
        async with office:
            boss_runner = office.employee("w-boss").runner
            reply = await office.ask("w-boss", "ask the helper")
            history = office.history()

    # codex over app-server keeps the office's permission prompts: its exec-policy rule (from the
    # definition's Bash(elynav ask:*)) lets the ask run without one; a process per turn cannot ask.
    assert boss_runner.options.permissions.prompts == cli.persistent

    assert reply.ok, reply.error
    assert reply.text == "Delegated."
    [tool_result] = [event for event in reply.events if isinstance(event, ToolResult)]
    assert "You said: Bonjour" in tool_result.text and not tool_result.is_error
    delegated = history[history["sender"] == "w-boss"]
    assert list(delegated["agent"]) == ["w-helper"] and list(delegated["outcome"]) == ["done"]


async def test_a_codex_employee_s_prompt_waits_on_the_office_until_answered(
    codex_cli, says_version, isolated_home, tmp_path, monkeypatch
):
    """codex over app-server asks before a command its rules do not allow; the office shows it."""
    says_version(codex_cli)
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    monkeypatch.delenv("ELYNAV_CODEX_MODE", raising=False)
    worker = AgentDefinition(
        name="w-codex",
        description="works",
        prompt="You work.",
        tools=("Read", ASK_RULE),
        permission_mode="acceptEdits",
        cli="codex",
    )
    script = [Reply.shell("touch report.txt"), Reply.say("Refused, fine.")]
    async with FakeModelApi(script) as api:
        office = Office(
            tmp_path / "workspace",
            [worker],
            executable={"claude": "standin", "codex": codex_cli.argv[0]},
            environment={**api.cli_environment(), **isolated_home},
            model=MODELS["codex"],
            ask_timeout=120.0,
        )
        async with office:
            employee = office.employee("w-codex")
            asking = asyncio.ensure_future(office.ask("w-codex", "write the report"))
            await wait_for(lambda: bool(employee.runner.pending_permissions))
            state = employee.status
            [request] = employee.runner.pending_permissions
            request.deny("Not today.")
            reply = await asking

    assert state == "asks permission" and "touch report.txt" in request.input["command"]
    assert reply.ok and reply.text == "Refused, fine."
    assert not (tmp_path / "workspace" / "report.txt").exists()
