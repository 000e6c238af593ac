"""Issue 28, items 1 and 7: an ACP terminal's background commands neither hang a turn nor outlive it.

``sleep 3000 & echo started`` (the everyday ``npm run dev &``) once held ``terminal/wait_for_exit``
until the turn timeout (30 minutes), and the sleep, like a ``setsid`` daemon, survived the turn and
``runner.stop()``. Here, with real processes: the command's exit is answered within the drain bound,
and every process it started ends with the turn, with ``runner.stop()``, on ``terminal/kill``. Each
sleep has a unique length (its marker); every wait is bounded; leftovers are killed by pid after.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from pathlib import Path

import psutil
import pytest

from elynav_nb.agents.events import ToolResult, ToolUse
from elynav_nb.agents.protocols.acp.terminals import DRAIN_SECONDS, WorkspaceTerminals
from elynav_nb.errors import InvalidInput
from tests.widgets.helpers import wait_until

from .acp_standin_runs import TURN_BOUND, acp_standin_home, ask, make_runner, of_type
from .helpers import running_commands

pytestmark = pytest.mark.anyio

__all__ = ["acp_standin_home", "make_runner"]  # fixtures, used by name


@pytest.fixture
def markers():
    """Unique sleep lengths; whatever still runs after the test is killed by pid."""
    made: list[str] = []

    def make() -> str:
        made.append(f"3000.{secrets.randbelow(10**8):08d}")
        return made[-1]

    yield make
    for marker in made:
        for process in running_commands(f"sleep {marker}"):
            with contextlib.suppress(psutil.Error):
                process.kill()


def _background(in_group: str, own_session: str) -> str:
    return f"sleep {in_group} & setsid sleep {own_session} & echo started"


async def _both_started(*markers: str) -> bool:
    return await wait_until(lambda: all(running_commands(f"sleep {marker}") for marker in markers), 10)


async def _all_gone(*markers: str) -> bool:
    return await wait_until(lambda: not any(running_commands(f"sleep {marker}") for marker in markers), 15)


async def test_a_command_that_leaves_a_background_child_exits_within_the_drain_bound(tmp_path: Path, markers):
    terminals = WorkspaceTerminals(tmp_path, dict(os.environ))
    in_group, own_session = markers(), markers()
    created = await terminals.create({"command": _background(in_group, own_session)})
    status = await asyncio.wait_for(terminals.wait_for_exit(created), timeout=DRAIN_SECONDS + 10)
    output = await terminals.output(created)
    assert status == {"exitCode": 0, "signal": None}
    assert output["output"] == "started\n" and output["exitStatus"] == status
    assert await _both_started(in_group, own_session)
    await terminals.release(created)  # exited: its background lives on until the turn ends
    assert running_commands(f"sleep {in_group}") and terminals.live == 1
    assert await asyncio.wait_for(terminals.end_all(), timeout=20) == 1
    assert await _all_gone(in_group, own_session)
    assert terminals.live == 0


async def test_kill_and_the_time_bound_reach_the_background_children_too(tmp_path: Path, markers):
    first, second, third, fourth = markers(), markers(), markers(), markers()
    terminals = WorkspaceTerminals(tmp_path, dict(os.environ))
    created = await terminals.create({"command": f"{_background(first, second)}; sleep 60"})
    assert await _both_started(first, second)
    await asyncio.wait_for(terminals.kill(created), timeout=20)
    assert await _all_gone(first, second)
    assert (await terminals.output(created))["exitStatus"]["signal"] in ("SIGTERM", "SIGKILL")
    timed = WorkspaceTerminals(tmp_path, dict(os.environ), timeout=1.0)
    created = await timed.create({"command": f"{_background(third, fourth)}; sleep 60"})
    status = await asyncio.wait_for(timed.wait_for_exit(created), timeout=20)
    assert status == {"exitCode": None, "signal": "SIGKILL"}
    assert await _all_gone(third, fourth)
    await terminals.end_all()
    await timed.end_all()


@pytest.mark.parametrize(
    "params",
    [
        {"command": "echo \ud800"},
        {"command": "echo", "args": ["\udfff"]},
        {"command": "echo", "args": "a string, once iterated character by character"},
        {"command": "echo", "args": [3]},
        {"command": "echo", "env": [{"name": "X", "value": "\ud800"}]},
        {"command": "echo", "env": [{"name": "A=B", "value": "x"}]},
        {"command": "echo", "env": {"X": "1"}},
        {"command": "echo", "cwd": "/tmp/\ud800"},
    ],
    ids=["command", "arg", "args-string", "args-number", "env-value", "env-name", "env-dict", "cwd"],
)
async def test_bad_terminal_requests_are_typed_refusals(tmp_path: Path, params):
    terminals = WorkspaceTerminals(tmp_path, dict(os.environ))
    with pytest.raises(InvalidInput):
        await terminals.create(params)
    assert terminals.live == 0 and terminals.pids() == []


# -- end to end on the ACP stand-in -----------------------------------------------------------------


async def test_a_turn_with_a_background_command_ends_and_leaves_nothing(make_runner, markers):
    in_group, own_session = markers(), markers()
    runner = make_runner(permission_mode="bypassPermissions")
    result = await ask(runner, f"@standin shell {_background(in_group, own_session)}")  # bounded: TURN_BOUND
    assert result.outcome == "completed", result.error
    [tool_result] = of_type(result, ToolResult)
    assert not tool_result.is_error and "started" in tool_result.text
    assert await _all_gone(in_group, own_session), "a background process outlived its turn"
    assert (await ask(runner, "after")).outcome == "completed"  # the agent goes on


async def test_stop_during_a_turn_ends_every_process_the_terminal_started(make_runner, markers):
    in_group, own_session = markers(), markers()
    runner = make_runner(permission_mode="bypassPermissions")
    turn = runner.send(f"@standin shell {_background(in_group, own_session)}; sleep 60")

    async def tool_started() -> None:
        async for event in turn:
            if isinstance(event, ToolUse):
                return

    await asyncio.wait_for(tool_started(), TURN_BOUND)
    assert await _both_started(in_group, own_session)
    await asyncio.wait_for(runner.stop(), timeout=30)
    assert not any(running_commands(f"sleep {marker}") for marker in (in_group, own_session)), (
        "stop() returned with a terminal's process alive"
    )
