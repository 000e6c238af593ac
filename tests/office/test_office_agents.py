"""Agents asking agents for real: each ``elynav ask`` runs in the stand-in's real Bash tool, in its own session.

These build chains of real processes (CLI -> bash -> elynav ask -> socket -> office -> next CLI) and
check the office's promises on them: who is calling is known from the process tree, cycles are
refused at once, a cancel cascades to the end of a depth-5 chain within its bound and leaves no
process behind, and a kill -9 of a CLI mid-turn gives a synthetic reply and a resumed conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import sys
from pathlib import Path

import pandas
import psutil
import pytest

from elynav_nb.agents import AgentDefinition, ToolUse
from elynav_nb.errors import OfficeAlreadyRunning
from elynav_nb.office import USER, Office

from .conftest import worker
from .helpers import tool_processes, tool_text, wait_until

pytestmark = pytest.mark.anyio

CHAIN = ["w-a", "w-b", "w-c", "w-d", "w-e", "w-f"]


def leaf_runs_its_tool(office, agent: str) -> bool:
    """The agent's turn has started its Bash tool (so every CLI of the chain runs)."""
    turn = office.employee(agent).current_turn
    return turn is not None and any(isinstance(event, ToolUse) for event in turn.events)


def chain_prompt(agents: list[str], last: str) -> str:
    """``@standin ask`` nested on one line: each agent asks the next; the last one runs ``last``."""
    text = last
    for agent in reversed(agents[1:]):
        text = f"@standin ask {agent} {text}"
    return text


async def test_an_agent_delegates_with_elynav_ask_and_the_office_knows_who_asked(make_office):
    office = await make_office([worker("w-a"), worker("w-b")])
    reply = await office.ask("w-a", "@standin ask w-b Prépare la relance")
    assert reply.outcome == "done"
    assert "You said: Prépare la relance" in tool_text(reply)  # b's answer came back through the Bash tool
    history = office.history()
    assert list(history["sender"]) == [USER, "w-a"] and list(history["agent"]) == ["w-a", "w-b"]
    assert history["parent_id"].iloc[1] == reply.ask_id and list(history["outcome"]) == ["done", "done"]
    assert list(office.history("w-b")["ask_id"]) == [history["ask_id"].iloc[1]]
    started = office.employee("w-a").runner.last_started
    assert started is not None and started.tools == (
        "Read",
        "Bash",
    )  # like the real CLI: the rule's tool is listed


async def test_a_cancel_cascades_down_a_depth_five_chain_of_real_processes(make_office):
    office = await make_office([worker(name) for name in CHAIN])
    root = office.submit("w-a", chain_prompt(CHAIN, "@standin sleep-tool 120"))
    assert await wait_until(
        lambda: len([ask for ask in office.asks if ask.status == "running"]) == 6, timeout=30
    )
    assert await wait_until(lambda: leaf_runs_its_tool(office, "w-f"), timeout=30)
    asks = sorted(office.asks, key=lambda ask: CHAIN.index(ask.agent))
    assert [(ask.sender, ask.agent) for ask in asks] == [(USER, "w-a"), *itertools.pairwise(CHAIN)]
    assert all(child.parent is parent for parent, child in itertools.pairwise(asks))
    cli_pids = [office.employee(name).runner.pid for name in CHAIN]
    root.cancel()
    # The bound of the whole cascade is one interrupt round (the office's interrupt_timeout), not six:
    # every ask is cancelled at once, and each CLI gets its own interrupt.
    one_round = office.employee("w-a").runner.interrupt_timeout
    replies = await asyncio.wait_for(asyncio.gather(*asks), timeout=one_round)
    assert [reply.outcome for reply in replies] == ["cancelled"] * 6
    assert all(reply.cancelled_by == USER for reply in replies)
    assert "was cancelled" in replies[5].error
    assert [office.employee(name).runner.pid for name in CHAIN] == cli_pids  # interrupted, not killed
    assert await wait_until(lambda: tool_processes(office) == [], timeout=10)
    assert all(employee.status == "idle" and not employee.queue for employee in office.employees.values())


@pytest.mark.parametrize(
    ("agents", "cycle"),
    [
        (["w-a"], "w-a cannot ask itself"),
        (["w-a", "w-b"], "cycle w-b -> w-a -> w-b"),
        (["w-a", "w-b", "w-c"], "cycle w-c -> w-a -> w-b -> w-c"),
    ],
)
async def test_cycles_through_real_processes_are_refused_at_once(make_office, agents, cycle):
    office = await make_office([worker(name) for name in agents])
    replies = {}
    office.add_listener(
        lambda event, ask: replies.setdefault(ask.agent, ask.reply) if event == "ended" else None
    )
    reply = await asyncio.wait_for(office.ask("w-a", chain_prompt([*agents, "w-a"], "hello")), timeout=30)
    assert reply.outcome == "done"  # every turn ended; the refused ask came back as an error to its caller
    history = office.history()
    asks = history[history["outcome"] != "refused"]
    assert (asks["outcome"] == "done").all() and len(asks) == len(agents)  # the refused ask was never queued
    refused = history[history["outcome"] == "refused"]  # but it left its trace: one row, with its code
    assert len(refused) == 1
    row = refused.iloc[0]
    assert (row["request"], row["sender"], row["agent"], row["prompt"]) == ("ask", agents[-1], "w-a", "hello")
    assert row["error_code"] == "DEADLOCK" and cycle in row["error"]
    assert row["parent_id"] == replies[agents[-1]].ask_id  # sent from the last agent's running turn
    assert row["queued_at"] == row["ended_at"] and row["wait_s"] == 0.0 and pandas.isna(row["started_at"])
    refused_in = tool_text(replies[agents[-1]])  # the last agent's `elynav ask` was refused
    assert (
        "DEADLOCK: " in refused_in
        and cycle in refused_in
        and "exited with code 2" in replies[agents[-1]].text
    )


async def test_an_agent_cannot_cancel_another_agents_ask_even_with_its_name_and_token(make_office):
    thief = AgentDefinition(name="w-c", description="test agent w-c", tools=("Bash",), prompt="You are c.")
    office = await make_office([worker("w-a"), worker("w-b"), thief], permission_mode="acceptEdits")
    outer = office.submit("w-a", "@standin ask w-b @standin sleep-tool 60")
    assert await wait_until(lambda: office.employee("w-b").current is not None)
    target = office.employee("w-b").current
    token_of_a = office.employee("w-a").token
    command = f"ELYNAV_AGENT_NAME=w-a ELYNAV_OFFICE_TOKEN={token_of_a} elynav cancel {target.id}"
    attempt = await office.ask("w-c", f"@standin bash {command}")
    assert "NOT_ALLOWED" in tool_text(attempt) and "w-c may not cancel" in tool_text(attempt)
    assert target.status == "running" and not target.cancelling
    refused = office.history().query("outcome == 'refused'")  # the refused cancel left its trace
    assert list(refused["request"]) == ["cancel"] and list(refused["target_id"]) == [target.id]
    assert (refused["sender"].iloc[0], refused["agent"].iloc[0]) == ("w-c", "w-b")
    assert refused["error_code"].iloc[0] == "NOT_ALLOWED" and "w-c may not cancel" in refused["error"].iloc[0]
    # the user's ask to c, then c's refused cancel
    assert list(office.history("w-c")["outcome"]) == ["done", "refused"]
    queued_behind = await office.ask("w-c", "@standin bash elynav ask w-a hi --timeout 0.2 ; echo exit=$?")
    assert "exit=4" in tool_text(queued_behind)  # w-a is busy: c's own ask waits in the queue, then times out
    outer.cancel()
    assert (await target).outcome == "cancelled"


async def test_an_ask_to_an_unknown_agent_is_refused_and_recorded_with_its_code(make_office):
    office = await make_office([worker("w-a")])
    reply = await asyncio.wait_for(office.ask("w-a", "@standin ask w-nobody Bonjour"), timeout=30)
    assert reply.outcome == "done" and "AGENT_NOT_FOUND: " in tool_text(reply)
    history = office.history()
    assert list(history["outcome"]) == ["done", "refused"] and list(history["request"]) == ["ask", "ask"]
    refused = history.iloc[1]
    assert (refused["sender"], refused["agent"], refused["error_code"]) == (
        "w-a",
        "w-nobody",
        "AGENT_NOT_FOUND",
    )
    assert refused["parent_id"] == reply.ask_id and refused["prompt"] == "Bonjour"
    assert refused["ask_id"] not in (reply.ask_id, None) and pandas.isna(refused["target_id"])
    assert list(office.history("w-a")["outcome"]) == ["done", "refused"]  # kept with the agent who asked
    assert office.asks == []  # nothing was queued


async def test_an_agent_may_cancel_the_ask_it_sent(make_office):
    sender = AgentDefinition(name="w-a", description="test agent w-a", tools=("Bash",), prompt="You are a.")
    office = await make_office([sender, worker("w-b")], permission_mode="acceptEdits")
    script = (
        "elynav ask w-b '@standin sleep-tool 60' 2>ask.log & "
        "for i in $(seq 50); do grep -q 'ask ' ask.log && break; sleep 0.1; done; sleep 1; "
        "elynav cancel $(grep -o 'ask [0-9a-f]*' ask.log | cut -d' ' -f2); wait $!; echo ask-exit=$?"
    )
    reply = await asyncio.wait_for(office.ask("w-a", f"@standin bash {script}"), timeout=30)
    assert ": cancelling" in tool_text(reply) and "ask-exit=3" in tool_text(reply)  # it was running; exit 3
    history = office.history("w-b")
    assert list(history["outcome"]) == ["cancelled"] and list(history["cancelled_by"]) == ["w-a"]


async def test_kill_9_of_a_cli_mid_turn_gives_a_failed_reply_and_the_next_ask_resumes_the_session(
    make_office,
):
    office = await make_office([worker("w-a"), worker("w-b")])
    first = await office.ask("w-a", "remember me")
    outer = office.submit("w-a", "@standin ask w-b @standin sleep-tool 60")
    assert await wait_until(lambda: office.employee("w-b").current is not None)
    inner = office.employee("w-b").current
    orphan_candidates = [p for p in tool_processes(office) if "elynav" in " ".join(p.cmdline())]
    os.kill(office.employee("w-a").runner.pid, signal.SIGKILL)
    outer_reply = await asyncio.wait_for(outer, timeout=15)
    inner_reply = await asyncio.wait_for(inner, timeout=15)
    assert outer_reply.outcome == "failed" and outer_reply.error_code == "CLI_EXITED"
    assert (
        inner_reply.outcome == "cancelled" and inner.parent is outer
    )  # the logical cascade, no process had to die
    assert orphan_candidates  # the `elynav ask` run by a's Bash, in a session of its own
    _, still_alive = await asyncio.to_thread(psutil.wait_procs, orphan_candidates, 10)
    assert still_alive == []  # left under PID 1 by the kill, it got its cancelled reply and exited
    after = await office.ask("w-a", "are you back?")
    assert after.outcome == "done" and after.session_id == first.session_id
    assert "I remember 2 earlier turns" in after.text


async def test_asks_left_in_flight_by_a_dead_office_are_ended_on_the_next_start(make_office, tmp_path):
    workspace = tmp_path / "shared"
    code = (
        "import asyncio, os, sys\n"
        "from elynav_nb.office import Office\n"
        "sys.path.insert(0, os.getcwd())\n"
        "from tests.office.conftest import worker\n"
        "async def main():\n"
        f"    office = await Office({str(workspace)!r}, [worker('w-a')], executable='standin').start()\n"
        "    office.submit('w-a', '@standin slow 60\\nnever finishes')\n"
        "    await asyncio.sleep(1.0)\n"
        "    print(office.employee('w-a').runner.pid, office.socket_path.parent, flush=True)\n"
        "    await asyncio.sleep(60)\n"
        "asyncio.run(main())\n"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE, cwd=os.getcwd()
    )
    first_line = (await asyncio.wait_for(process.stdout.readline(), timeout=30)).decode().split()
    cli_pid, dead_socket_folder = int(first_line[0]), Path(first_line[1])
    with pytest.raises(OfficeAlreadyRunning, match=f"process {process.pid}"):  # the other kernel holds it
        await Office(workspace, [worker("w-a")], executable="standin", attach=False).start()
    process.kill()  # the kernel dies: no cleanup runs
    await process.communicate()
    try:
        office = await make_office([worker("w-a")], workspace=workspace)  # the lock died with the process
        history = office.history()
        assert list(history["outcome"]) == ["failed"] and list(history["error_code"]) == ["OFFICE_STOPPED"]
        assert "office stopped" in history["error"].iloc[0]
        assert (await office.ask("w-a", "fresh start")).outcome == "done"
        assert not dead_socket_folder.exists()  # the dead office's private socket folder was removed
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(cli_pid, signal.SIGKILL)  # the dead office's CLI would finish its turn, then exit
