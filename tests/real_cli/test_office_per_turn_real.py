"""An office employee on the real codex or gemini delegates with ``elynav ask`` to a claude (stand-in) one.

The fake model API asks the codex/gemini employee to run ``elynav ask w-helper 'Bonjour'`` in its
shell tool: a real process that reaches the office's socket from inside the CLI (codex: its
workspace-write sandbox with network access, which the office turns on; gemini: ``auto_edit`` with
the definition's ``run_shell_command(elynav ask)`` rule). The office sees the delegation, the
helper answers, the employee finishes its turn.
"""

from __future__ import annotations

import pytest

from elynav_nb.agents import AgentDefinition, ToolResult
from elynav_nb.office import ASK_RULE, Office
from elynav_nb.sandbox.fake_model_api import FakeModelApi
from elynav_nb.sandbox.fake_model_script import Reply

from .runner_setups import MODELS

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]


async def test_a_codex_or_gemini_employee_delegates_with_elynav_ask(
    per_turn_cli, says_version, isolated_home, tmp_path, monkeypatch
):
    cli = per_turn_cli
    says_version(cli)
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
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
            reply = await office.ask("w-boss", "ask the helper")
            history = office.history()

    assert reply.ok, reply.error
    assert reply.text == "Delegated."
    [tool_result] = [event for event in reply.events if isinstance(event, ToolResult)]
    assert "You said: Bonjour" in tool_result.text and not tool_result.is_error
    delegated = history[history["sender"] == "w-boss"]
    assert list(delegated["agent"]) == ["w-helper"] and list(delegated["outcome"]) == ["done"]
