"""The office through its Python API on the stand-in CLI: FIFO, busy, bad input, cancel, rights, timeouts."""

from __future__ import annotations

import asyncio

import pytest

from elynav_nb.errors import AgentBusy, AgentNotFound, AskNotFound, Deadlock, InvalidInput, NotAllowed
from elynav_nb.office import USER, Office

from .conftest import worker
from .helpers import wait_until

pytestmark = pytest.mark.anyio

SLOW = "@standin slow 20\n"


async def test_one_ask_gets_a_reply_from_the_agents_canonical_conversation(make_office):
    office = await make_office([worker("w-a")])
    reply = await office.ask("w-a", "Bonjour")
    assert reply.outcome == "done" and reply.ok
    assert "You said: Bonjour" in reply.text and reply.used_standin
    assert reply.sender == USER and reply.agent == "w-a" and reply.parent_id is None
    assert reply.started_at is not None and reply.queued_at <= reply.started_at <= reply.ended_at
    assert reply.session_id == office.employee("w-a").session_id
    second = await office.ask("w-a", "Encore")
    assert "I remember 1 earlier turn " in second.text  # the same conversation answers every caller
    assert second.session_id == reply.session_id


async def test_a_hundred_concurrent_asks_are_served_in_exact_arrival_order(make_office):
    office = await make_office([worker("w-a")])
    started: list[str] = []
    office.add_listener(lambda event, ask: started.append(ask.id) if event == "started" else None)

    async def ask_number(number: int):
        ask = office.submit("w-a", f"question {number}")
        return ask, await ask

    outcomes = await asyncio.gather(*(ask_number(number) for number in range(100)))
    submitted = [ask.id for ask, _ in outcomes]
    assert started == submitted
    for number, (_, reply) in enumerate(outcomes):
        assert reply.outcome == "done" and reply.text.endswith(f"You said: question {number}")
    history = office.history()
    assert list(history["ask_id"]) == submitted
    assert history["started_at"].is_monotonic_increasing
    assert (history["outcome"] == "done").all()


async def test_try_ask_refuses_a_busy_employee_and_queues_nothing(make_office):
    office = await make_office([worker("w-a"), worker("w-b")])
    running = office.submit("w-a", SLOW + "long")
    assert await wait_until(lambda: running.turn is not None)
    with pytest.raises(AgentBusy) as caught:
        office.try_ask("w-a", "now?")
    assert caught.value.details == {"agent": "w-a", "caller": USER, "queue_length": 0}
    assert len(office.employee("w-a").queue) == 0
    quick = await office.try_ask("w-b", "free?")  # another employee is free
    assert quick.outcome == "done"
    running.cancel()
    assert (await running).outcome == "cancelled"


@pytest.mark.parametrize(
    ("to", "text", "options", "error_class"),
    [
        ("nobody", "hi", {}, AgentNotFound),
        ("w-a", "", {}, InvalidInput),
        ("w-a", "   \n ", {}, InvalidInput),
        ("w-a", "x" * 100_001, {}, InvalidInput),
        ("w-a", "hi", {"timeout": 0}, InvalidInput),
        ("w-a", "hi", {"timeout": float("nan")}, InvalidInput),
        ("w-a", "hi", {"sender": "nobody"}, AgentNotFound),
        ("w-a", "hi", {"parent": "no-such-ask"}, AskNotFound),
    ],
)
async def test_bad_input_gets_a_typed_error_and_the_office_keeps_serving(
    make_office, to, text, options, error_class
):
    office = await make_office([worker("w-a")])
    with pytest.raises(error_class):
        office.submit(to, text, **options)
    assert office.asks == [] and office.history().empty
    assert (await office.ask("w-a", "still there?")).outcome == "done"


async def test_cancelling_a_queued_ask_removes_it_without_touching_the_employee(make_office):
    office = await make_office([worker("w-a")])
    running = office.submit("w-a", "@standin slow 1\nfirst")
    queued = office.submit("w-a", "second")
    assert await wait_until(lambda: running.turn is not None)
    pid = office.employee("w-a").runner.pid
    assert queued.status == "queued" and office.queue_position(queued) == 1
    queued.cancel()
    reply = await queued
    assert reply.outcome == "cancelled" and reply.started_at is None and reply.cancelled_by == USER
    assert office.employee("w-a").queue == type(office.employee("w-a").queue)()
    assert (await running).outcome == "done"  # the employee went on with its work
    assert office.employee("w-a").runner.pid == pid and len(office.employee("w-a").runner.history) == 1


async def test_cancelling_a_running_ask_interrupts_it_and_the_conversation_goes_on(make_office):
    office = await make_office([worker("w-a")])
    first = await office.ask("w-a", "one")
    running = office.submit("w-a", SLOW + "two")
    assert await wait_until(lambda: running.turn is not None)
    pid = office.employee("w-a").runner.pid
    assert office.employee("w-a").status == "busy" and office.employee("w-a").caller == USER
    running.cancel()
    running.cancel()  # idempotent
    reply = await running
    assert reply.outcome == "cancelled" and reply.error_code == "CANCELLED" and reply.cancelled_by == USER
    assert office.employee("w-a").status == "idle" and office.employee("w-a").runner.pid == pid
    after = await office.ask("w-a", "three")
    assert after.outcome == "done" and after.session_id == first.session_id
    assert "I remember 2 earlier turns" in after.text


async def test_only_the_sender_or_the_user_may_cancel_and_a_refusal_changes_nothing(make_office):
    office = await make_office([worker("w-a"), worker("w-b"), worker("w-c")])
    ask = office.submit("w-b", SLOW + "for a", sender="w-a")
    assert await wait_until(lambda: ask.turn is not None)
    with pytest.raises(NotAllowed) as caught:
        office.cancel(ask.id, by="w-c")
    assert caught.value.code == "NOT_ALLOWED" and caught.value.details["sender"] == "w-a"
    assert ask.status == "running" and not ask.cancelling and ask.cancelled_by == ""
    with pytest.raises(NotAllowed):
        ask.cancel(by="w-b")  # the one doing the work may not cancel it either
    office.cancel(ask.id, by="w-a")
    reply = await ask
    assert reply.outcome == "cancelled" and reply.cancelled_by == "w-a"
    assert office.cancel(ask.id, by="w-a") is ask  # idempotent on an ended ask
    with pytest.raises(AskNotFound):
        office.cancel("no-such-ask")


async def test_a_deadline_ends_a_running_ask_and_a_queued_one(make_office):
    office = await make_office([worker("w-a")])
    running = office.submit("w-a", SLOW + "slow", timeout=0.5)
    queued = office.submit("w-a", "waits too long", timeout=0.3)
    queued_reply, running_reply = await queued, await running
    assert queued_reply.outcome == "timeout" and queued_reply.started_at is None
    assert running_reply.outcome == "timeout" and running_reply.error_code == "AGENT_TIMEOUT"
    assert "0.5 s" in running_reply.error
    assert (await office.ask("w-a", "next")).outcome == "done"


async def test_interrupting_the_cell_that_awaits_an_ask_cancels_it(make_office):
    office = await make_office([worker("w-a")])
    ask = office.submit("w-a", SLOW + "long")
    waiter = asyncio.ensure_future(ask)  # a cell awaiting the ask; the kernel interrupt cancels its task
    assert await wait_until(lambda: ask.turn is not None)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    reply = await ask
    assert reply.outcome == "cancelled" and reply.cancelled_by == USER


async def test_a_second_office_that_may_not_attach_is_refused(make_office, tmp_path):
    office = await make_office([worker("w-a")])
    second = Office(office.workspace, [worker("w-a")], executable="standin", attach=False)
    with pytest.raises(Exception) as caught:
        await second.start()
    assert getattr(caught.value, "code", "") == "OFFICE_ALREADY_RUNNING"
    assert second.status == "new" and second.socket_path is None
    await office.stop()
    third = await make_office([worker("w-a")], workspace=office.workspace)
    assert (await third.ask("w-a", "hello")).outcome == "done"


async def test_stop_ends_every_ask_and_leaves_nothing_running(make_office):
    office = await make_office([worker("w-a"), worker("w-b")])
    running = office.submit("w-a", SLOW + "long")
    queued = office.submit("w-a", "waiting")
    other = office.submit("w-b", SLOW + "long too")
    assert await wait_until(lambda: running.turn is not None and other.turn is not None)
    pids = [office.employee(name).runner.pid for name in ("w-a", "w-b")]
    socket_folder = office.socket_server.directory
    await office.stop()
    await office.stop()  # idempotent
    for ask in (running, queued, other):
        assert ask.done and ask.reply.outcome == "cancelled" and "office stopped" in ask.reply.error
    from tests.agents.helpers import process_alive

    assert not any(process_alive(pid) for pid in pids if pid)
    assert not socket_folder.exists() and not office.files.locked
    with pytest.raises(Exception, match="stopped|closed"):
        office.submit("w-a", "too late")


async def test_an_ask_sent_from_a_turn_never_outlives_that_turns_deadline(make_office):
    office = await make_office([worker("w-a"), worker("w-b")])
    outer = office.submit("w-a", SLOW + "outer", timeout=60)
    assert await wait_until(lambda: outer.turn is not None)
    inner = office.submit("w-b", SLOW + "inner", sender="w-a", timeout=3600)
    assert inner.parent is outer and inner.deadline == outer.deadline
    outer.cancel()
    assert (await inner).outcome == "cancelled" and (await outer).outcome == "cancelled"


async def test_a_turn_being_cancelled_may_not_ask_anyone(make_office):
    office = await make_office([worker("w-a"), worker("w-b")])
    outer = office.submit("w-a", SLOW + "outer")
    assert await wait_until(lambda: outer.turn is not None)  # a queued ask is settled at once, not cancelling
    outer.cancel()
    assert outer.cancelling
    with pytest.raises(NotAllowed, match="being cancelled"):
        office.submit("w-b", "too late", sender="w-a")
    assert (
        office.employee("w-b").queue == type(office.employee("w-b").queue)()
        and office.employee("w-b").current is None
    )
    await outer


async def test_turn_bounds_follow_the_ask_timeout(make_office):
    office = await make_office([worker("w-a")], ask_timeout=120)
    runner = office.employee("w-a").runner
    assert runner.options.bounds.turn == 120 and runner.options.bounds.tool_idle == 120
    assert runner.environment_overrides["BASH_MAX_TIMEOUT_MS"] == "120000"


async def test_an_ask_cancelled_while_its_cli_starts_leaves_no_process_after_stop(make_office):
    from tests.agents.helpers import process_alive

    office = await make_office([worker("w-a"), worker("w-b")])
    outer = office.submit("w-a", SLOW + "outer")
    assert await wait_until(lambda: outer.turn is not None)
    inner = office.submit("w-b", SLOW + "inner", sender="w-a")  # w-b's CLI starts now
    outer.cancel()  # cascades to inner before its turn was sent
    assert (await inner).outcome == "cancelled" and (await outer).outcome == "cancelled"
    await office.stop()
    for employee in office.employees.values():
        process = employee.runner.process
        assert process is None or not process_alive(process.pid), employee.name


async def test_a_new_office_on_the_workspace_resumes_each_employees_conversation(make_office, tmp_path):
    workspace = tmp_path / "kept"
    first_office = await make_office([worker("w-a")], workspace=workspace)
    first = await first_office.ask("w-a", "souviens-toi")
    await first_office.stop()  # a kernel restart: the next office reads .elynav/sessions.json
    second_office = await make_office([worker("w-a")], workspace=workspace)
    again = await second_office.ask("w-a", "tu te souviens ?")
    assert again.session_id == first.session_id and "I remember 1 earlier turn " in again.text
    assert list(second_office.history()["session_id"]) == [first.session_id, first.session_id]


async def test_a_timeout_cascades_like_a_cancel(make_office):
    office = await make_office([worker("w-a"), worker("w-b"), worker("w-c")])
    outer = office.submit(
        "w-a", SLOW + "outer", timeout=3.0
    )  # room for the CLIs to start on a loaded machine
    assert await wait_until(lambda: outer.turn is not None or outer.done)
    middle = office.submit("w-b", SLOW + "middle", sender="w-a")
    await wait_until(lambda: middle.turn is not None or middle.done)
    inner = office.submit("w-c", SLOW + "inner", sender="w-b")
    replies = await asyncio.wait_for(asyncio.gather(outer, middle, inner), timeout=15)
    assert [reply.outcome for reply in replies] == [
        "timeout",
        "timeout",
        "timeout",
    ]  # the children share its deadline
    assert all(employee.status == "idle" for employee in office.employees.values())


async def test_a_cycle_through_a_queued_ask_is_refused_at_once(make_office):
    office = await make_office([worker("w-a"), worker("w-b"), worker("w-c")])
    b_busy = office.submit("w-b", SLOW + "b works for the user")
    a_busy = office.submit("w-a", SLOW + "a works for the user")
    assert await wait_until(lambda: b_busy.turn is not None and a_busy.turn is not None)
    queued = office.submit("w-b", "a asks b", sender="w-a")  # queued behind b's own work
    assert queued.status == "queued"
    c_busy = office.submit("w-c", SLOW + "c works for b", sender="w-b")  # b's turn now waits on c
    with pytest.raises(Deadlock) as caught:
        office.submit("w-a", "c asks a", sender="w-c")  # a waits (queued) on b, b on c: c may not wait on a
    assert caught.value.details["cycle"] == ["w-c", "w-a", "w-b", "w-c"]
    assert len(office.employee("w-a").queue) == 0
    for ask in (a_busy, b_busy):
        ask.cancel()
    replies = await asyncio.gather(a_busy, b_busy, queued, c_busy)
    assert {reply.outcome for reply in replies} == {"cancelled"}


async def test_a_conversation_that_cannot_be_resumed_is_replaced_by_a_new_one_with_a_note(
    make_office, tmp_path
):
    workspace = tmp_path / "lost"
    first_office = await make_office([worker("w-a")], workspace=workspace)
    first = await first_office.ask("w-a", "bonjour")
    await first_office.stop()
    transcript = tmp_path / "standin-home" / "sessions" / f"{first.session_id}.jsonl"
    assert transcript.is_file()
    transcript.unlink()  # the CLI lost it (a forced stop can leave it incomplete: claude-code#31613)
    second_office = await make_office([worker("w-a")], workspace=workspace)
    again = await second_office.ask("w-a", "tu es là ?")
    assert again.outcome == "done" and again.session_id != first.session_id
    assert second_office.files.load_sessions() == {"w-a": again.session_id}
    notes = [record for record in second_office.history_log.records() if record["record"] == "note"]
    assert any(f"session {first.session_id} could not be resumed" in note["text"] for note in notes)


async def test_a_headless_employee_is_allowed_the_tools_its_definition_lists(make_office):
    from elynav_nb.agents import builtin_agents

    office = await make_office(["elynav-orchestrator"])
    runner = office.employee("orchestrator").runner
    reply = await office.ask("orchestrator", "bonjour")
    argv = runner.process.argv
    allowed = argv[argv.index("--allowedTools") + 1 :]
    assert reply.outcome == "done"
    assert allowed[: len(builtin_agents()["elynav-orchestrator"].tools)] == list(
        builtin_agents()["elynav-orchestrator"].tools
    )
    assert "mcp__crm__pipeline_summary" in allowed and "Bash(elynav ask:*)" in allowed


async def test_an_unknown_ask_option_is_refused_typed_and_nothing_is_queued(make_office):
    office = await make_office([worker("w-a")])
    for call in (office.submit, office.try_ask):
        with pytest.raises(InvalidInput, match="unknown ask option 'sendr'"):
            call("w-a", "hello", sendr="user")
    with pytest.raises(InvalidInput, match="unknown ask option"):
        await office.ask("w-a", "hello", timeout_s=3)
    assert office.asks == [] and office.history().empty
