"""RunnerManager: reuse per conversation, idle TTL, stop_all leaves nothing running."""

from __future__ import annotations

import asyncio

import pytest

from elynav_nb.agents.manager import RunnerManager
from elynav_nb.errors import InvalidInput

from .helpers import fake_cli_command, our_zombies, process_alive


def make_manager(tmp_path, **options) -> RunnerManager:
    return RunnerManager(tmp_path, executable=fake_cli_command(), **options)


@pytest.mark.anyio
async def test_same_conversation_reuses_the_live_runner(tmp_path):
    manager = make_manager(tmp_path)
    first = await manager.get_or_create("conversation-1", None)
    again = await manager.get_or_create("conversation-1", None)
    other = await manager.get_or_create("conversation-2", None)
    assert first is again
    assert other is not first
    assert (await first.send("hi")).text == "echo: hi"
    assert list(manager.to_frame()["conversation_id"]) == ["conversation-1", "conversation-2"]
    pids = [first.pid, other.pid]
    await manager.stop_all()
    assert len(manager) == 0
    assert not any(process_alive(pid) for pid in pids)
    assert our_zombies() == []


@pytest.mark.anyio
async def test_conversation_keeps_its_agent(tmp_path):
    manager = make_manager(tmp_path)
    await manager.get_or_create("conversation-1", None)
    with pytest.raises(InvalidInput):
        await manager.get_or_create("conversation-1", "another-agent")
    await manager.stop_all()


@pytest.mark.anyio
async def test_idle_runners_are_stopped_by_the_sweeper(tmp_path):
    manager = make_manager(tmp_path, idle_ttl=0.3)
    runner = await manager.get_or_create("conversation-1", None)
    pid = runner.pid
    for _ in range(100):
        if "conversation-1" not in manager:
            break
        await asyncio.sleep(0.05)
    assert "conversation-1" not in manager
    assert runner.status == "closed"
    assert not process_alive(pid)
    await manager.stop_all()


@pytest.mark.anyio
async def test_a_busy_runner_is_not_swept(tmp_path):
    manager = RunnerManager(
        tmp_path,
        idle_ttl=0.2,
        executable=fake_cli_command(),
        environment={"FAKE_CLI_MODE": "hang"},
        idle_timeout=60,
    )
    runner = await manager.get_or_create("conversation-1", None)
    turn = runner.send("long")
    await asyncio.sleep(0.8)
    assert await manager.stop_idle() == []
    assert "conversation-1" in manager
    await turn.cancel()
    await manager.stop_all()
