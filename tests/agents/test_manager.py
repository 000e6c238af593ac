"""RunnerManager: reuse per conversation, idle TTL, stop_all leaves nothing running, its runners' settings."""

from __future__ import annotations

import asyncio

import pytest

from elynav_nb.agents import AgentRunner, RunnerOptions
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


@pytest.mark.anyio
async def test_every_runner_gets_the_runner_options_given(tmp_path):
    options = RunnerOptions.of(executable=fake_cli_command(), turn_timeout=42.0, max_turns=3)
    made = []

    def factory(agent, workspace, runner_options):
        made.append((agent, workspace, runner_options))
        return AgentRunner.from_options(agent, workspace, runner_options)

    async with RunnerManager(tmp_path, runner_options=options, runner_factory=factory) as manager:
        assert manager.runner_options is options
        runner = await manager.get_or_create("conversation-1", None)
        assert runner.options.bounds.turn == 42.0 and runner.options.turn.limits.max_turns == 3
        assert (await runner.send("hi")).text == "echo: hi"
    assert made == [(None, tmp_path, options)]


def test_keywords_become_one_runner_options(tmp_path):
    manager = RunnerManager(tmp_path, executable=fake_cli_command(), idle_timeout=7.0)
    assert isinstance(manager.runner_options, RunnerOptions)
    assert manager.runner_options.bounds.idle == 7.0


def test_options_and_keywords_together_are_refused(tmp_path):
    with pytest.raises(InvalidInput, match="runner_options or as keywords"):
        RunnerManager(tmp_path, runner_options=RunnerOptions.of(), model="sonnet")
