"""``AgentRunner(cli="codex")`` over app-server, on a fault-injecting fake ``codex app-server``.

The fake (``fake_codex_app_server.py``) speaks the JSON-RPC lines recorded from the real codex; the
real binary runs the same scenarios in ``tests/real_cli``. Here, fast and without Node: many turns in
one process, prompts answered both ways with codex's integer ids, a request we do not support
refused, a refused turn, a crash then the thread resumed, a cancel that keeps the process, a codex
deaf to the interrupt stopped in the background, endless retries ended by our bound, resume and
settings between turns.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from elynav_nb.agents import AgentDefinition, AgentError, AgentRunner, PermissionRequest, TextDelta
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.errors import CliStartFailed

from .helpers import our_zombies, process_alive, wait_until_gone_async

pytestmark = pytest.mark.anyio

FAKE = str(Path(__file__).with_name("fake_codex_app_server.py"))
DEFINITION = AgentDefinition(name="elynav-tester", description="A test agent.", prompt="You are the tester.")


@pytest.fixture(autouse=True)
def cli_homes(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ELYNAV_CLI_HOMES", str(tmp_path / "cli-homes"))
    monkeypatch.delenv("ELYNAV_CODEX_MODE", raising=False)
    return tmp_path / "cli-homes"


@pytest.fixture
def workspace(tmp_path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def fake_runner(workspace: Path, mode: str = "echo", log: Path | None = None, **options) -> AgentRunner:
    switch_mode(workspace, mode)
    environment = {
        "FAKE_MODE_FILE": str(workspace.parent / "fake-mode"),
        **({"FAKE_LOG": str(log)} if log else {}),
    }
    runner = AgentRunner(
        options.pop("definition", DEFINITION),
        workspace,
        cli="codex",
        executable=[sys.executable, FAKE],
        environment={**environment, **options.pop("environment", {})},
        **options,
    )
    assert runner.plan.driver == "persistent" and runner.cli_mode == "app-server"
    return runner


def switch_mode(workspace: Path, mode: str) -> None:
    """What the fake codex does from its next start on (the runner's environment is frozen)."""
    (workspace.parent / "fake-mode").write_text(mode, encoding="utf-8")


def logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


async def wait_for(condition, timeout: float = 20.0) -> None:
    import time

    import anyio

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await anyio.sleep(0.02)


async def test_turns_stream_deltas_in_one_process_on_one_thread(workspace, tmp_path):
    log = tmp_path / "log.jsonl"
    runner = fake_runner(workspace, log=log)
    first = await runner.send("bonjour")
    pid = runner.pid
    second = await runner.send("encore")
    second_pid = runner.pid
    await runner.stop()

    assert first.outcome == "completed" and first.text == "echo: bonjour (turn 1)"
    assert len([event for event in first.events if isinstance(event, TextDelta)]) >= 1
    assert second.text == "echo: encore (turn 2)" and second_pid == pid
    assert first.session_id == second.session_id == runner.session_id and runner.session_id
    assert first.usage["input_tokens"] == 10 and second.usage["input_tokens"] == 10  # per turn
    assert second.usage["thread_total"]["input_tokens"] == 20
    methods = [message.get("method") for message in logged(log)]
    assert methods[:3] == ["initialize", "initialized", "thread/start"]
    assert methods.count("turn/start") == 2 and "thread/resume" not in methods
    [thread_start] = [message for message in logged(log) if message.get("method") == "thread/start"]
    assert (
        thread_start["params"]["approvalPolicy"] == "never"
        and thread_start["params"]["sandbox"] == "read-only"
    )
    warnings = [event for event in first.events if isinstance(event, AgentError)]
    assert [warning.code for warning in warnings] == [
        "CLI_WARNING"
    ]  # start-up warnings are shown, not failures
    assert "mode=app-server" in repr(runner) and our_zombies() == []


async def test_prompts_are_answered_with_codex_s_own_ids_and_unsupported_requests_refused(
    workspace, tmp_path
):
    log = tmp_path / "log.jsonl"
    decisions = iter([False, True])
    runner = fake_runner(
        workspace, mode="approval", log=log, permission_handler=lambda request: next(decisions)
    )
    denied = await runner.send("make it")
    allowed = await runner.send("make it now")
    await runner.stop()

    [asked] = [event for event in denied.events if isinstance(event, PermissionRequest)]
    assert asked.tool_name == "command_execution" and asked.input["command"] == "touch made.txt"
    assert denied.text.startswith("decline;") and allowed.text.startswith("accept;")
    assert '"Unsupported by elynav_nb: item/tool/requestUserInput"' in denied.text
    answers = [message for message in logged(log) if "method" not in message]
    assert [answer["id"] for answer in answers] == [1, 0, 1, 0]  # integers, as codex sent them
    assert [answer.get("result", {}).get("decision") for answer in answers if answer["id"] == 0] == [
        "decline",
        "accept",
    ]
    [thread_start] = [message for message in logged(log) if message.get("method") == "thread/start"]
    assert thread_start["params"]["approvalPolicy"] == "untrusted"  # a handler: codex asks


async def test_a_refused_turn_fails_typed_and_the_runner_goes_on(workspace):
    runner = fake_runner(workspace, mode="refuse")
    result = await runner.send("bonjour")
    assert (
        result.outcome == "failed"
        and result.error_code == "PROTOCOL_ERROR"
        and "fake refusal" in result.error
    )
    assert runner.is_running and not runner.busy
    await runner.stop()


async def test_a_refused_thread_fails_the_start_typed_and_leaves_no_process(workspace):
    runner = fake_runner(workspace, mode="no-thread")
    with pytest.raises(CliStartFailed, match="refused thread/start: fake: no thread today") as refused:
        await runner.start()
    assert refused.value.code == "CLI_START_FAILED" and "exited" not in str(refused.value)
    result = await runner.send("bonjour")  # a turn reports the same failure, typed
    await runner.stop()
    assert result.outcome == "failed" and result.error_code == "CLI_START_FAILED"
    assert runner.pid is None or not process_alive(runner.pid)
    assert our_zombies() == []


async def test_a_crash_fails_the_turn_and_the_next_one_resumes_the_thread(workspace, tmp_path):
    log = tmp_path / "log.jsonl"
    runner = fake_runner(workspace, log=log)
    first = await runner.send("one")
    switch_mode(workspace, "crash")
    await runner.restart()  # a new process that reads the new mode, on the same thread
    crashed = await runner.send("two")
    switch_mode(workspace, "echo")
    after = await runner.send("three")  # starts a new process itself
    await runner.stop()

    assert crashed.outcome == "failed" and crashed.error_code == "CLI_EXITED"
    assert "crashing on purpose" in crashed.error
    assert after.outcome == "completed" and after.text == "echo: three (turn 3)"  # the thread kept its turns
    assert first.session_id == crashed.session_id == after.session_id
    resumes = [message for message in logged(log) if message.get("method") == "thread/resume"]
    assert [message["params"]["threadId"] for message in resumes] == [first.session_id, first.session_id]
    assert [message["method"] for message in logged(log)].count("thread/start") == 1


async def test_a_cancel_interrupts_and_keeps_the_process(workspace, tmp_path):
    runner = fake_runner(workspace, mode="slow")
    turn = runner.send("talk")
    await wait_for(lambda: any(isinstance(event, TextDelta) for event in turn.events))
    pid = runner.pid
    result = await turn.cancel()
    assert result.outcome == "cancelled" and result.error == "cancelled by the user"
    assert runner.pid == pid and runner.is_running and runner.status == "idle"
    switch_mode(workspace, "echo")  # not read: the same process takes the next turn
    nxt = runner.send("again")
    await wait_for(lambda: any(isinstance(event, TextDelta) for event in nxt.events))
    await nxt.cancel()
    await runner.stop()
    assert pid is not None and not process_alive(pid) and our_zombies() == []


async def test_a_cancel_right_after_send_waits_for_the_turn_id(workspace, tmp_path):
    log = tmp_path / "log.jsonl"
    runner = fake_runner(workspace, mode="slow", log=log)
    await runner.start()
    turn = runner.send("talk")
    result = await turn.cancel()
    await runner.stop()
    assert result.outcome == "cancelled"
    interrupts = [message for message in logged(log) if message.get("method") == "turn/interrupt"]
    assert interrupts and all(message["params"]["turnId"] for message in interrupts)


async def test_a_codex_deaf_to_the_interrupt_is_stopped_in_the_background_and_resumed(workspace):
    runner = fake_runner(
        workspace, mode="deaf", settle_timeout=0.3, interrupt_timeout=1.0, stop_bounds=StopBounds(sigkill=2.0)
    )
    turn = runner.send("talk")
    await wait_for(lambda: any(isinstance(event, TextDelta) for event in turn.events))
    pid = runner.pid
    result = await turn.cancel()
    assert result.outcome == "cancelled" and "is being stopped" in result.error
    assert runner.status == "stopping"
    assert pid is not None and await wait_until_gone_async(pid, timeout=15)
    switch_mode(workspace, "echo")
    after = await runner.send("still there?")
    assert after.outcome == "completed" and after.text == "echo: still there? (turn 2)"
    assert after.session_id == result.session_id and runner.pid != pid
    await runner.stop()
    assert runner.status == "closed" and our_zombies() == []


async def test_endless_retries_end_by_our_bound(workspace):
    runner = fake_runner(workspace, mode="retry", retry_timeout=1.0)
    result = await runner.send("hello?")
    await runner.stop()
    assert result.outcome == "timeout" and result.error_code == "AGENT_TIMEOUT"
    assert "kept retrying the model API for 1 s" in result.error and "Reconnecting" in result.error


async def test_resume_in_a_new_runner_and_an_unknown_thread_refused(workspace):
    first_runner = fake_runner(workspace)
    first = await first_runner.send("one")
    await first_runner.stop()
    resumed = fake_runner(workspace, resume=first.session_id)
    assert resumed.session_id == first.session_id
    again = await resumed.send("two")
    await resumed.stop()
    assert again.text == "echo: two (turn 2)" and again.session_id == first.session_id

    stranger = fake_runner(workspace, resume="no-such-thread")
    with pytest.raises(CliStartFailed, match="cannot resume") as caught:
        await stranger.start()
    assert caught.value.code == "SESSION_NOT_FOUND"
    await stranger.stop()
    assert our_zombies() == []


async def test_a_lost_thread_after_a_crash_starts_a_new_one_and_says_so(workspace, cli_homes):
    runner = fake_runner(workspace)
    first = await runner.send("one")
    for thread in cli_homes.rglob("threads/*"):
        thread.unlink()  # codex lost the thread (its home wiped)
    await runner.restart()
    after = await runner.send("two")
    await runner.stop()
    assert after.outcome == "completed" and after.text == "echo: two (turn 1)"
    assert after.session_id != first.session_id
    assert [event.code for event in after.events if isinstance(event, AgentError)][-1] == "CONVERSATION_LOST"


async def test_settings_between_turns(workspace, tmp_path):
    log = tmp_path / "log.jsonl"
    runner = fake_runner(workspace, log=log)
    await runner.send("one")
    pid = runner.pid
    await runner.set_model("gpt-fake-2")
    await runner.send("two")
    await runner.set_permission_mode("acceptEdits")
    assert not runner.is_running  # restarted at the next turn, on the same thread
    third = await runner.send("three")
    servers = await runner.mcp_status()
    await runner.stop()

    assert pid is not None and third.text == "echo: three (turn 3)"
    turn_starts = [message["params"] for message in logged(log) if message.get("method") == "turn/start"]
    assert "model" not in turn_starts[0] and turn_starts[1]["model"] == "gpt-fake-2"
    [resume] = [message["params"] for message in logged(log) if message.get("method") == "thread/resume"]
    assert resume["sandbox"] == "workspace-write" and resume["threadId"] == third.session_id
    assert servers == [{"name": "crm", "status": "connected", "tools": ["search_accounts"]}]
