"""``elynav acp --agent NAME``: an employee of the office as an ACP agent, driven by the official SDK's
client, every message it sends validated by the SDK's schema. The office is hosted here (as a
kernel would); ``elynav acp`` attaches to it, so its asks meet the others in one FIFO."""

from __future__ import annotations

import asyncio
import dataclasses
import sys

import pytest
from acp import schema

from elynav_nb.agents import AgentRunner
from elynav_nb.office import Office

from .acp_client import RecordingClient, check_conformance, elynav_acp
from .conftest import FAST_STOP, worker
from .helpers import wait_until

pytestmark = pytest.mark.anyio

BOUND = 60


@pytest.fixture(autouse=True)
def acp_standin_home(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ELYNAV_ACP_STANDIN_HOME", str(tmp_path / "acp-standin-home"))


def acp_worker(name: str):
    return dataclasses.replace(worker(name), cli="acp")


@pytest.fixture
async def host(tmp_path):
    office = Office(
        tmp_path / "workspace",
        [worker("w-a"), acp_worker("w-acp")],
        executable={"claude": "standin", "acp": "standin"},
        stop_bounds=FAST_STOP,
        interrupt_timeout=3.0,
    )
    await office.start()
    yield office
    await office.stop()


async def open_session(session, cwd) -> str:
    started = await asyncio.wait_for(session.connection.initialize(protocol_version=1), BOUND)
    assert started.agent_info.name == "elynav-office" and started.agent_info.title.endswith("(elynav office)")
    assert started.agent_capabilities.load_session
    return (await session.connection.new_session(cwd=str(cwd), mcp_servers=[])).session_id


def text_prompt(text: str) -> list[schema.TextContentBlock]:
    return [schema.TextContentBlock(type="text", text=text)]


async def test_a_prompt_streams_thoughts_plan_and_text_and_every_message_conforms(host):
    async with elynav_acp(host.workspace, "w-acp") as session:
        session_id = await open_session(session, host.workspace)
        answer = await asyncio.wait_for(
            session.connection.prompt(
                session_id=session_id,
                prompt=text_prompt("@standin think pondering\n@standin plan\n@standin say Hello there"),
            ),
            BOUND,
        )
        client = session.client
        assert answer.stop_reason == "end_turn"
        assert "pondering" in client.text("agent_thought_chunk")
        assert client.text().strip() == "Hello there"
        assert len(client.of_kind("plan")) == 1 and len(client.of_kind("plan")[0].entries) == 2
        meta = answer.field_meta["elynav"]
        history = host.history()
        assert list(history["ask_id"]) == [meta["ask_id"]] and list(history["sender"]) == ["user"]
        assert meta["outcome"] == "done" and "cost_usd" in meta
        assert check_conformance(session) >= 5


async def test_a_permission_prompt_of_the_employee_is_asked_of_the_client(host):
    client = RecordingClient()
    async with elynav_acp(host.workspace, "w-acp", client=client) as session:
        session_id = await open_session(session, host.workspace)
        answer = await asyncio.wait_for(
            session.connection.prompt(
                session_id=session_id, prompt=text_prompt("@standin shell echo from-the-chat")
            ),
            BOUND,
        )
        assert answer.stop_reason == "end_turn"
        assert len(client.permission_requests) == 1
        tool_call, options = client.permission_requests[0]
        assert tool_call.kind == "execute" and "allow_once" in [option.option_id for option in options]
        finished = [update for update in client.of_kind("tool_call_update") if update.status == "completed"]
        assert finished and "from-the-chat" in finished[0].content[0].content.text
        check_conformance(session)


async def test_a_prompt_waits_its_turn_in_the_one_fifo_and_says_its_place(host):
    blocker = host.submit("w-a", "@standin slow 3\nfrom the notebook")
    assert await wait_until(lambda: blocker.status == "running")
    async with elynav_acp(host.workspace, "w-a") as session:
        session_id = await open_session(session, host.workspace)
        prompt = asyncio.ensure_future(
            session.connection.prompt(session_id=session_id, prompt=text_prompt("from the chat"))
        )
        assert await wait_until(
            lambda: (
                "Waiting in w-a's queue: next, busy for user." in session.client.text("agent_thought_chunk")
            )
        )
        assert not blocker.done
        answer = await asyncio.wait_for(prompt, BOUND)
        assert answer.stop_reason == "end_turn" and session.client.text().endswith("You said: from the chat")
        history = host.history()
        assert list(history["prompt"].str.split().str[-1]) == ["notebook", "chat"]
        assert history["ended_at"].iloc[0] <= history["started_at"].iloc[1]
        check_conformance(session)


async def test_a_second_prompt_while_one_is_queued_and_a_cancel_of_the_queued_one(host):
    blocker = host.submit("w-a", "@standin slow 20\nlong")
    assert await wait_until(lambda: blocker.status == "running")
    async with elynav_acp(host.workspace, "w-a") as session:
        first_session = await open_session(session, host.workspace)
        second_session = (
            await session.connection.new_session(cwd=str(host.workspace), mcp_servers=[])
        ).session_id
        first = asyncio.ensure_future(
            session.connection.prompt(session_id=first_session, prompt=text_prompt("first"))
        )
        assert await wait_until(lambda: len(host.asks) == 2)
        second = asyncio.ensure_future(
            session.connection.prompt(session_id=second_session, prompt=text_prompt("second"))
        )
        assert await wait_until(lambda: len(host.asks) == 3)
        assert [host.queue_position(ask) for ask in host.asks] == [0, 1, 2]
        await session.connection.cancel(session_id=first_session)  # the queued one
        assert (await asyncio.wait_for(first, BOUND)).stop_reason == "cancelled"
        host.cancel(blocker)
        answer = await asyncio.wait_for(second, BOUND)
        assert answer.stop_reason == "end_turn"
        outcomes = host.history().set_index("prompt")["outcome"]
        assert outcomes["first"] == "cancelled" and outcomes["second"] == "done"
        assert host.history().set_index("prompt")["cancelled_by"]["first"] == "user"
        check_conformance(session)


async def test_a_client_that_disconnects_mid_turn_gets_its_ask_cancelled(host):
    async with elynav_acp(host.workspace, "w-a") as session:
        session_id = await open_session(session, host.workspace)
        prompt = asyncio.ensure_future(
            session.connection.prompt(session_id=session_id, prompt=text_prompt("@standin slow 30\nlong"))
        )
        assert await wait_until(lambda: host.asks and host.asks[0].status == "running")
        ask = host.asks[0]
        session.process.kill()  # the chat server dies: nobody waits for this answer any more
        reply = await asyncio.wait_for(ask, BOUND)
        assert reply.outcome == "cancelled" and "went away" in reply.error
        with pytest.raises(ConnectionError):
            await asyncio.wait_for(prompt, BOUND)


async def test_an_office_that_stops_with_prompts_queued_ends_them(host):
    blocker = host.submit("w-a", "@standin slow 20\nlong")
    assert await wait_until(lambda: blocker.status == "running")
    async with elynav_acp(host.workspace, "w-a") as session:
        session_id = await open_session(session, host.workspace)
        queued = asyncio.ensure_future(
            session.connection.prompt(session_id=session_id, prompt=text_prompt("queued"))
        )
        assert await wait_until(lambda: len(host.asks) == 2)
        await host.stop()
        answer = await asyncio.wait_for(queued, BOUND)
        assert answer.stop_reason == "cancelled" and answer.field_meta["elynav"]["outcome"] == "cancelled"
        check_conformance(session)


async def test_session_load_replays_the_employees_one_conversation(host):
    await host.ask("w-a", "asked from the notebook")
    async with elynav_acp(host.workspace, "w-a") as session:
        await session.connection.initialize(protocol_version=1)
        await asyncio.wait_for(
            session.connection.load_session(
                cwd=str(host.workspace), session_id="w-a:earlier", mcp_servers=[]
            ),
            BOUND,
        )
        assert "asked from the notebook" in session.client.text("user_message_chunk")
        assert "You said: asked from the notebook" in session.client.text()
        check_conformance(session)


async def test_agent_runner_drives_an_employee_through_elynav_acp(host):
    runner = AgentRunner(
        None,
        host.workspace,
        cli="acp",
        executable=[
            sys.executable,
            "-m",
            "elynav_nb.cli",
            "acp",
            "--agent",
            "w-a",
            "--workspace",
            str(host.workspace),
        ],
        stop_bounds=FAST_STOP,
    )
    try:
        first = await asyncio.wait_for(runner.send("Bonjour"), BOUND)
        assert first.outcome == "completed" and first.text.endswith("You said: Bonjour")
        second = await asyncio.wait_for(runner.send("encore"), BOUND)
        assert second.outcome == "completed"
    finally:
        await runner.stop()
    history = host.history()
    assert list(history["agent"]) == ["w-a", "w-a"] and list(history["sender"]) == ["user", "user"]


async def test_a_cancel_from_the_client_is_the_users_and_cascades(host):
    """The prompt's ask waits on an ask it sent (w-a asks w-acp); session/cancel ends both."""
    async with elynav_acp(host.workspace, "w-a") as session:
        session_id = await open_session(session, host.workspace)
        prompt = asyncio.ensure_future(
            session.connection.prompt(
                session_id=session_id,
                prompt=text_prompt("@standin ask w-acp @standin delay 30\n@standin say late"),
            )
        )
        assert await wait_until(lambda: host.employee("w-acp").current is not None, timeout=30)
        child = host.employee("w-acp").current
        await session.connection.cancel(session_id=session_id)
        answer = await asyncio.wait_for(prompt, BOUND)
        assert answer.stop_reason == "cancelled"
        reply = await asyncio.wait_for(child, BOUND)
        assert reply.outcome == "cancelled" and reply.cancelled_by == "user"
        check_conformance(session)
