"""Office employees on an ACP agent (the embedded ACP stand-in), with the office's rules unchanged.

A claude employee (the claude stand-in) delegates to an ACP one and the reverse: the ACP agent runs
``elynav ask`` through its shell tool (here through the client's terminal, the office's command
allowed by the office itself since an ACP agent takes no tool rules). A cancel of the user's ask
cascades into the ACP employee's turn and ends the command it runs.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from elynav_nb.agents import ToolUse
from elynav_nb.office import Office
from elynav_nb.office.office_commands import is_office_command
from elynav_nb.office.rights import USER
from tests.agents.helpers import running_commands

from .conftest import FAST_STOP, worker
from .helpers import tool_text, wait_until

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def acp_standin_home(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ELYNAV_ACP_STANDIN_HOME", str(tmp_path / "acp-standin-home"))


def acp_worker(name: str, **changes: object):
    return dataclasses.replace(worker(name), cli="acp", **changes)


def office_on(tmp_path, agents) -> Office:
    return Office(
        tmp_path / "workspace",
        agents,
        executable={"claude": "standin", "acp": "standin"},
        stop_bounds=FAST_STOP,
        interrupt_timeout=3.0,
    )


def test_only_one_office_command_passes_the_office_rule() -> None:
    assert is_office_command("elynav ask w-b 'Bonjour'")
    assert is_office_command(["bash", "-lc", "elynav cancel ask_1"])
    assert is_office_command(["elynav", "ask", "w-b", "x"])
    for command in (
        "elynav ask w-b x; rm -rf /",
        "elynav ask w-b $(cat secret)",
        "elynav ask w-b x | tee out",
        "echo elynav ask",
        "elynav status",
        None,
        ["bash", "-lc", "elynav ask w-b x && curl evil"],
    ):
        assert not is_office_command(command), command


async def test_a_claude_employee_delegates_to_an_acp_one_and_back(tmp_path):
    office = office_on(tmp_path, [worker("w-claude"), acp_worker("w-acp")])
    async with office:
        acp_runner = office.employee("w-acp").runner
        assert acp_runner.cli_name == "acp" and acp_runner.plan.driver == "persistent"
        reply = await office.ask("w-claude", "@standin ask w-acp Prépare la relance")
        assert reply.outcome == "done", reply.error
        assert "Stand-in reply to:" in tool_text(reply) and "Prépare la relance" in tool_text(reply)
        # the ACP agent delegates through its shell: the office allows its own command, nobody is asked
        back = await office.ask("w-acp", "@standin shell elynav ask w-claude Bonjour")
        assert back.outcome == "done", back.error
        assert "You said: Bonjour" in tool_text(back)
        history = office.history()
    assert list(history["sender"]) == [USER, "w-claude", USER, "w-acp"]
    assert list(history["agent"]) == ["w-claude", "w-acp", "w-acp", "w-claude"]
    assert (history["outcome"] == "done").all()


async def test_a_cancel_cascades_into_an_acp_employee_and_ends_its_command(tmp_path):
    marker = "sleep 61.5"
    leaf = acp_worker("w-acp", permission_mode="bypassPermissions")
    office = office_on(tmp_path, [worker("w-claude"), leaf])
    async with office:
        root = office.submit("w-claude", f"@standin ask w-acp @standin shell {marker}")
        assert await wait_until(
            lambda: len([ask for ask in office.asks if ask.status == "running"]) == 2, timeout=30
        )
        acp_employee = office.employee("w-acp")

        def leaf_runs_its_command() -> bool:
            turn = acp_employee.current_turn
            return (
                turn is not None
                and any(isinstance(event, ToolUse) for event in turn.events)
                and bool(running_commands(marker))
            )

        assert await wait_until(leaf_runs_its_command, timeout=30)
        acp_pid = acp_employee.runner.pid
        asks = list(office.asks)
        root.cancel()
        replies = await asyncio.wait_for(
            asyncio.gather(*asks), timeout=office.employee("w-claude").runner.interrupt_timeout + 5
        )
        assert [reply.outcome for reply in replies] == ["cancelled", "cancelled"]
        assert all(reply.cancelled_by == USER for reply in replies)
        assert await wait_until(
            lambda: not running_commands(marker), timeout=10
        )  # the command it ran is gone
        assert acp_employee.runner.pid == acp_pid  # interrupted (session/cancel), not killed
        after = await office.ask("w-acp", "encore")
        assert after.outcome == "done" and "Stand-in reply to: encore" in after.text
