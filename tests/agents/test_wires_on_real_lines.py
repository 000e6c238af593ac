"""Each wire driven against lines recorded from the real CLIs (tests/fixtures), without a process.

A replay channel stands where the persistent driver stands: the wire's requests are answered with the
recorded answers, in order (each re-keyed with the id the wire chose, then decoded by the wire
itself), what the wire writes is kept, and the recorded notifications are fed through the wire's
decoder. The per-turn CLIs' wires are their adapters' pure parts: the turn command and the decoder.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.events import (
    AgentEvent,
    AgentStarted,
    ControlResponse,
    PermissionAnswer,
    PermissionRequest,
    TextDelta,
    TurnEnded,
)
from elynav_nb.agents.locate import CliCommand
from elynav_nb.agents.protocols.adapter_settings import adapter_settings
from elynav_nb.agents.protocols.claude.wire import ClaudeStreamWire
from elynav_nb.agents.protocols.codex.adapter import CodexAdapter
from elynav_nb.agents.protocols.codex.app_wire import CodexAppServerWire
from elynav_nb.agents.protocols.codex.launch import plan_codex_runner
from elynav_nb.agents.protocols.gemini.adapter import GeminiAdapter
from elynav_nb.agents.protocols.wire import PersistentWire, TurnSink
from elynav_nb.agents.results import Outcome, main_text
from elynav_nb.agents.runner import AgentRunner
from elynav_nb.errors import AgentNotFound

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).parents[1] / "fixtures"
DEFINITION = AgentDefinition(name="elynav-test", description="A test agent.", prompt="You are the tester.")


def recorded(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


class ReplayChannel:
    """The driver's side of a wire, answered from a recording (answers in the order they were recorded)."""

    def __init__(self, wire: PersistentWire, answers: list[dict[str, Any]], rekey: Any) -> None:
        self.wire = wire
        self.answers = list(answers)
        self.rekey = rekey  # (recorded answer, our request id) -> the answer line as the CLI would send it
        self.written: list[dict[str, Any]] = []
        self.ended: list[tuple[Outcome, str, str]] = []
        self.emitted: list[AgentEvent] = []
        self.counter = 0
        self.pending: list[tuple[str, asyncio.Future[ControlResponse]]] = []

    def next_request_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter}"

    async def write(self, data: bytes) -> None:
        self.written.append(json.loads(data))

    async def start_request(
        self, request_id: str, method: str, fields: dict[str, Any]
    ) -> asyncio.Future[ControlResponse]:
        await self.write(self.wire.encode_request(request_id, method, fields))
        future: asyncio.Future[ControlResponse] = asyncio.get_running_loop().create_future()
        [answer] = [item for item in self.wire.decode_line(self.rekey(self.answers.pop(0), request_id))]
        assert isinstance(answer, ControlResponse) and answer.request_id == request_id
        future.set_result(answer)
        return future

    async def request(self, method: str, *, timeout: float, **fields: Any) -> ControlResponse:
        return await (await self.start_request(self.next_request_id("req"), method, fields))

    def end_turn(self, turn: TurnSink, outcome: Outcome, *, error: str, error_code: str) -> None:
        self.ended.append((outcome, error, error_code))

    def emit(self, event: AgentEvent) -> None:
        self.emitted.append(event)


class Collected:
    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    def push(self, event: AgentEvent) -> None:
        self.events.append(event)


# -- claude stream-json -----------------------------------------------------------------------------


def claude_wire(agent_name: str | None = None) -> ClaudeStreamWire:
    return ClaudeStreamWire(
        session_id=lambda: "11111111-2222-4333-8444-555555555555",
        agent_name=agent_name,
        permission_mode=None,
        partial_messages=True,
        start_timeout=5,
        interrupt_timeout=5,
    )


def claude_rekey(answer: dict[str, Any], request_id: str) -> bytes:
    answer = json.loads(json.dumps(answer))
    answer["response"]["request_id"] = request_id
    return json.dumps(answer).encode()


async def test_claude_wire_opens_on_the_real_initialize_answer_and_decodes_a_real_turn():
    [initialize] = recorded(FIXTURES / "claude_real" / "initialize_response.jsonl")
    wire = claude_wire()
    channel = ReplayChannel(wire, [initialize], claude_rekey)
    await wire.open(channel)
    [request] = channel.written
    assert request["type"] == "control_request" and request["request"] == {
        "subtype": "initialize",
        "hooks": None,
    }

    turn = Collected()
    await wire.send_prompt(channel, turn, "Bonjour")
    prompt = channel.written[-1]
    assert prompt["type"] == "user" and prompt["session_id"] == "11111111-2222-4333-8444-555555555555"
    for line in (FIXTURES / "claude_real" / "plain_turn_partial.jsonl").read_bytes().splitlines():
        turn.events.extend(item for item in wire.decode_line(line) if isinstance(item, AgentEvent))
    assert [event for event in turn.events if isinstance(event, AgentStarted)]
    ended = [event for event in turn.events if isinstance(event, TurnEnded)]
    results = [
        message
        for message in recorded(FIXTURES / "claude_real" / "plain_turn_partial.jsonl")
        if message.get("type") == "result"
    ]
    assert len(ended) == len(results) >= 1 and all(not event.is_error for event in ended)
    assert main_text(turn.events) and any(isinstance(event, TextDelta) for event in turn.events)


async def test_claude_wire_refuses_an_agent_the_real_cli_does_not_know():
    [initialize] = recorded(FIXTURES / "claude_real" / "initialize_response.jsonl")
    wire = claude_wire(agent_name="no-such-agent")
    with pytest.raises(AgentNotFound, match="no-such-agent"):
        await wire.open(ReplayChannel(wire, [initialize], claude_rekey))


def test_claude_wire_answers_a_real_permission_prompt():
    wire = claude_wire()
    requests = [
        item
        for line in (FIXTURES / "claude_real" / "permission_allow_deny.jsonl").read_bytes().splitlines()
        for item in wire.decode_line(line)
        if isinstance(item, PermissionRequest)
    ]
    assert requests
    allowed = json.loads(wire.encode_permission_answer(requests[0], PermissionAnswer(True)))
    denied = json.loads(wire.encode_permission_answer(requests[0], PermissionAnswer(False, "no")))
    assert allowed["response"]["request_id"] == requests[0].request_id
    assert allowed["response"]["response"] == {"behavior": "allow", "updatedInput": dict(requests[0].input)}
    assert denied["response"]["response"] == {"behavior": "deny", "message": "no"}


# -- codex app-server -------------------------------------------------------------------------------


def codex_rekey(answer: dict[str, Any], request_id: str) -> bytes:
    return json.dumps({**answer, "id": request_id}).encode()


def codex_wire(tmp_path: Path) -> CodexAppServerWire:
    plan = plan_codex_runner(workspace=tmp_path, codex_home=tmp_path / "home", system_prompt="", tools=())
    threads: list[str] = []
    wire = CodexAppServerWire(
        plan=plan,
        cli_version="0.171.0",
        workspace=tmp_path,
        home=tmp_path / "home",
        thread_id="",
        resume_asked=False,
        set_thread_id=threads.append,
        start_timeout=5,
        interrupt_timeout=5,
        retry_timeout=60,
    )
    wire.threads_seen = threads  # type: ignore[attr-defined]
    return wire


async def test_codex_wire_opens_a_thread_and_streams_two_real_turns(tmp_path):
    messages = recorded(FIXTURES / "codex_real" / "codex-0.171.0-app-server-text_turns.jsonl")
    answers = [message for message in messages if "id" in message and "result" in message]
    notifications = [message for message in messages if "method" in message]
    wire = codex_wire(tmp_path)
    channel = ReplayChannel(wire, answers, codex_rekey)
    await wire.open(channel)
    methods = [line.get("method") for line in channel.written]
    assert methods == ["initialize", "initialized", "thread/start"]
    thread_id = answers[1]["result"]["thread"]["id"]
    assert wire.threads_seen == [thread_id]  # type: ignore[attr-defined]

    turn = Collected()
    await wire.send_prompt(channel, turn, "Bonjour")
    assert channel.written[-1]["method"] == "turn/start"
    assert channel.written[-1]["params"]["threadId"] == thread_id and channel.ended == []
    events: list[AgentEvent] = []
    for message in notifications:
        events.extend(
            item for item in wire.decode_line(json.dumps(message).encode()) if isinstance(item, AgentEvent)
        )
    ended = [event for event in events if isinstance(event, TurnEnded)]
    assert len(ended) == 2 and all(not event.is_error for event in ended)
    assert any(isinstance(event, TextDelta) for event in events) and main_text(events)


def test_codex_wire_echoes_codex_integer_ids_in_permission_answers(tmp_path):
    wire = codex_wire(tmp_path)
    messages = recorded(FIXTURES / "codex_real" / "codex-0.171.0-app-server-approvals.jsonl")
    requests = [
        item
        for message in messages
        for item in wire.decode_line(json.dumps(message).encode())
        if isinstance(item, PermissionRequest)
    ]
    assert requests
    answer = json.loads(wire.encode_permission_answer(requests[0], PermissionAnswer(True)))
    recorded_ids = [
        message["id"] for message in messages if message.get("method", "").endswith("requestApproval")
    ]
    assert answer["id"] == recorded_ids[0] and answer["result"] == {"decision": "accept"}
    assert json.loads(wire.encode_permission_answer(requests[0], PermissionAnswer(False)))["result"] == {
        "decision": "decline"
    }


# -- the per-turn CLIs: their adapters' turn command and decoder ------------------------------------


@pytest.mark.parametrize(
    ("adapter_class", "recording"),
    [
        (CodexAdapter, FIXTURES / "codex_real" / "codex-0.171.0-text_turn.jsonl"),
        (GeminiAdapter, sorted((FIXTURES / "gemini_real").glob("*text*.jsonl"))[0]),
    ],
    ids=["codex-exec", "gemini"],
)
def test_per_turn_wires_build_a_turn_and_decode_a_real_one(tmp_path, monkeypatch, adapter_class, recording):
    monkeypatch.setenv("ELYNAV_CLI_HOMES", str(tmp_path / "homes"))
    cli = "codex" if adapter_class is CodexAdapter else "gemini"
    runner = AgentRunner(DEFINITION, tmp_path, cli=cli, cli_mode="exec" if cli == "codex" else None)
    adapter = adapter_class(adapter_settings(runner._driver.context, DEFINITION))
    adapter.prepare(CliCommand(argv=(cli,), is_standin=False, name=cli), "0.0")
    command = adapter.turn_command("Bonjour", conversation_id=adapter.new_conversation_id(), resuming=False)
    assert command.argv[0] == cli and "Bonjour" in (command.stdin_data or b"").decode() + " ".join(
        command.argv
    )
    decoder = adapter.new_decoder()
    events = [event for line in recording.read_bytes().splitlines() for event in decoder.decode_line(line)]
    ended = [event for event in events if isinstance(event, TurnEnded)]
    assert len(ended) == 1 and not ended[0].is_error and main_text(events)
    assert decoder.verdict(0).outcome == "completed"
