"""One office, three employees on three wire protocols, all real binaries: a delegation chain and its cancel.

The employees (one ``Office``, one ``FakeModelApi`` on loopback, one scratch HOME):

- ``w-claude``: the real claude (``ELYNAV_CLAUDE_BIN``, the binary bundled in claude-agent-sdk;
  2.1.332 when written), over its native stream-json (``--input-format/--output-format
  stream-json``, one process across turns). It delegates with its ``Bash`` tool, allowed by
  ``--allowedTools Bash(elynav ask:*)`` (``ASK_RULE``).
- ``w-codex``: the pinned codex 0.171.0 over ``codex app-server`` (the default mode, one process,
  JSON-RPC). It delegates with its shell tool; the definition's ``Bash(elynav ask:*)`` becomes an
  exec-policy ``allow`` rule in its config home, so the ask runs without a prompt.
- ``w-acp``: the pinned gemini 0.61.0 as an ACP agent (``gemini --acp``, Agent Client Protocol over
  stdio). It runs its shell command itself (``run_shell_command``, in its own process tree, not the
  client's ``terminal/*``), in the session mode ``yolo`` (``session/set_mode``: every tool approved
  by the agent, no prompt reaches the office). gemini announces such a call ``in_progress`` without
  its input; the ACP codec makes it a ``ToolUse`` at once, so the turn waits on a tool (its silence
  is bounded by ``tool_idle_timeout``, as claude's and codex's running commands are). gemini rather
  than codex-acp or claude-agent-acp: it runs the command in its own tree and honours
  ``session/cancel`` mid-command (``test_acp_real``), its ``yolo`` mode needs no permission answer
  from the test, and its requests go to a third API of the fake (Gemini), apart from the other two.

The fake API answers each CLI from a queue of its own API (``request.api``: "anthropic" for claude,
"openai" for codex, "gemini" for gemini), so the three agents' requests never race for one script;
side requests (token counts, gemini's checks) are answered by the fake itself.

``test_a_user_cancel_cascades_down_three_protocols``: the user asks w-claude, which asks w-codex,
which asks w-acp, which runs ``touch <marker> && sleep 61.5``. The user cancels the root ask: the
office cancels the asks it waits on, then the root, each turn through its CLI's own interrupt
(claude: the control request ``interrupt``; codex: ``turn/interrupt``; gemini: ``session/cancel``).
The three asks end ``cancelled`` by the user, the ``sleep`` is gone, the history shows the chain,
and one more ask to each employee is answered by the same process (the cancel interrupted the
turns, it did not break or restart the CLIs). After the office closes no process of the three
employees' trees is left.

``test_the_chain_completes_end_to_end``: the same chain without a cancel; each answer comes back up
as the tool result of the one who asked.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import deque
from collections.abc import Iterable
from pathlib import Path

import psutil
import pytest

from elynav_nb.agents import AgentDefinition, ToolResult
from elynav_nb.office import ASK_RULE, Office
from elynav_nb.office.rights import USER
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import ModelRequest, Reply

from .acp_setups import SETUPS
from .conftest import RealCli
from .runner_setups import MODELS, command_of, process_tree, wait_for, wait_gone

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]

SLEEP = "sleep 61.5"
FOLLOW_UP = "Are you still there?"
STILL_HERE = "Still here."
ASK_TIMEOUT = 300.0
CHAIN_TIMEOUT = 180.0  # from the user's ask to the three asks running (three CLIs start on 2 busy cores)


class ApiQueues:
    """The fake API's chooser: the next reply of the request's own API; ``FOLLOW_UP`` gets ``STILL_HERE``.

    The follow-up is keyed by its text, not by its place in a queue: a request a CLI might still
    send while its cancelled turn winds down cannot take it. An empty queue answers a text that
    says so (the test's assertions on the replies then show it).
    """

    def __init__(self, **replies: Iterable[Reply]) -> None:
        self.queues = {api: deque(queued) for api, queued in replies.items()}

    def __call__(self, request: ModelRequest) -> Reply | None:
        if request.api not in self.queues:
            return None
        if FOLLOW_UP in request.last_user_text:
            return Reply.say(STILL_HERE)
        queue = self.queues[request.api]
        return queue.popleft() if queue else Reply.say(f"(no scripted {request.api} reply left)")


def definitions() -> list[AgentDefinition]:
    return [
        AgentDefinition(
            name="w-claude",
            description="the claude employee (stream-json)",
            prompt="You delegate to w-codex with elynav ask.",
            tools=("Read", ASK_RULE),
        ),
        AgentDefinition(
            name="w-codex",
            description="the codex employee (app-server)",
            prompt="You delegate to w-acp with elynav ask.",
            tools=("Read", ASK_RULE),
            permission_mode="acceptEdits",
            model=MODELS["codex"],
            cli="codex",
        ),
        AgentDefinition(
            name="w-acp",
            description="the ACP employee (gemini --acp)",
            prompt="You run the long jobs.",
            permission_mode="yolo",  # gemini's ACP session mode that approves every tool
            cli="acp",
        ),
    ]


def make_office(
    api: FakeModelApi, tmp_path: Path, claude: RealCli, codex: RealCli, acp_agent: RealCli
) -> Office:
    workspace = tmp_path / "workspace"
    launch = SETUPS[acp_agent.name](api, workspace, tmp_path / "home")  # HOME, TMPDIR, gemini's settings
    environment = {
        **api.cli_environment(),
        **launch.environment,
        "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK": "1",
        "IS_SANDBOX": "1",
    }
    return Office(
        workspace,
        definitions(),
        executable={"claude": claude.argv[0], "codex": codex.argv[0], "acp": list(launch.argv)},
        environment=environment,
        ask_timeout=ASK_TIMEOUT,
    )


@pytest.fixture
def three_clis(claude_cli, codex_cli, gemini_acp_agent, says_version, monkeypatch):
    for cli in (claude_cli, codex_cli, gemini_acp_agent):
        says_version(cli)
    for name in ("ELYNAV_CODEX_MODE", "ELYNAV_OFFICE_SOCKET", "ELYNAV_OFFICE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return claude_cli, codex_cli, gemini_acp_agent


def trees(office: Office) -> list[psutil.Process]:
    """Every process of the employees' trees now (each CLI and what it runs)."""
    return [
        process for employee in office.employees.values() for process in process_tree(employee.runner.pid)
    ]


def chain(history) -> list[tuple[str, str]]:
    return list(zip(history["sender"], history["agent"], strict=True))


async def test_a_user_cancel_cascades_down_three_protocols(three_clis, tmp_path):
    claude, codex, acp_agent = three_clis
    marker = tmp_path / f"acp-tool-started-{uuid.uuid4().hex}"
    queues = ApiQueues(
        anthropic=[Reply.shell("elynav ask w-codex 'Pass the long job on'")],
        openai=[Reply.shell("elynav ask w-acp 'Run the long job'")],
        gemini=[Reply.shell(f"touch {marker} && {SLEEP}")],
    )
    async with FakeModelApi(chooser=queues) as api:
        office = make_office(api, tmp_path, claude, codex, acp_agent)
        async with office:
            root = office.submit("w-claude", "Start the long job.")
            acp_employee = office.employee("w-acp")
            await wait_for(
                lambda: len([ask for ask in office.asks if ask.status == "running"]) == 3, CHAIN_TIMEOUT
            )
            await wait_for(marker.exists, CHAIN_TIMEOUT)
            await wait_for(
                lambda: any(SLEEP in command_of(p) for p in process_tree(acp_employee.runner.pid)), 30
            )
            sleepers = [p for p in process_tree(acp_employee.runner.pid) if SLEEP in command_of(p)]
            # gemini announces the approved call in_progress, without its input: still a tool the
            # turn waits on (the runner's tool_idle_timeout bounds its silence, not idle_timeout)
            await wait_for(
                lambda: acp_employee.current_turn is not None and acp_employee.current_turn.waiting_on_tools,
                30,
            )
            seen = trees(office)
            pids = {name: employee.runner.pid for name, employee in office.employees.items()}
            asks = list(office.asks)
            # running asks in employee order: the chain, top down
            assert [(ask.sender, ask.agent) for ask in asks] == [
                (USER, "w-claude"),
                ("w-claude", "w-codex"),
                ("w-codex", "w-acp"),
            ]

            root.cancel()
            bound = max(employee.runner.interrupt_timeout for employee in office.employees.values()) * 3 + 30
            replies = await asyncio.wait_for(asyncio.gather(*asks), timeout=bound)
            left = await wait_gone(sleepers, timeout=30)

            after = {name: await office.ask(name, FOLLOW_UP) for name in ("w-claude", "w-codex", "w-acp")}
            pids_after = {name: employee.runner.pid for name, employee in office.employees.items()}
            seen += trees(office)
            history = office.history()
    still_running = await wait_gone(seen, timeout=30)

    assert [reply.outcome for reply in replies] == ["cancelled"] * 3, [reply.error for reply in replies]
    assert [reply.cancelled_by for reply in replies] == [USER] * 3
    assert [reply.error_code for reply in replies] == ["CANCELLED"] * 3
    assert not left, f"the ACP agent's command outlived the cancel: {[command_of(p) for p in left]}"
    for name, reply in after.items():
        assert reply.outcome == "done" and reply.text == STILL_HERE, (name, reply.outcome, reply.error)
    assert pids_after == pids  # interrupted, not restarted
    assert chain(history) == [
        (USER, "w-claude"),
        ("w-claude", "w-codex"),
        ("w-codex", "w-acp"),
        (USER, "w-claude"),
        (USER, "w-codex"),
        (USER, "w-acp"),
    ]
    assert list(history["outcome"]) == ["cancelled"] * 3 + ["done"] * 3
    assert list(history["cancelled_by"][:3]) == [USER] * 3
    assert not still_running, (
        f"left running after the office closed: {[command_of(p) for p in still_running]}"
    )


async def test_the_chain_completes_end_to_end(three_clis, tmp_path):
    claude, codex, acp_agent = three_clis
    queues = ApiQueues(
        anthropic=[
            Reply.shell("elynav ask w-codex 'What does the ACP agent say'"),
            Reply.say("Claude: done."),
        ],
        openai=[
            Reply.shell("elynav ask w-acp 'Say something'"),
            Reply.say("Codex relays: the ACP agent is fine."),
        ],
        gemini=[Reply.say("The ACP agent is fine.")],
    )
    async with FakeModelApi(chooser=queues) as api:
        office = make_office(api, tmp_path, claude, codex, acp_agent)
        async with office:
            reply = await office.ask("w-claude", "Ask down the chain.")
            seen = trees(office)
            history = office.history()
        codex_requests = api.model_requests("openai")
        gemini_requests = api.model_requests("gemini")
    still_running = await wait_gone(seen, timeout=30)

    assert reply.outcome == "done", reply.error
    assert reply.text == "Claude: done."
    [claude_result] = [event for event in reply.events if isinstance(event, ToolResult)]
    assert "Codex relays: the ACP agent is fine." in claude_result.text and not claude_result.is_error
    # each ask's text reached the next model; the answer came back as the asker's tool result
    assert "What does the ACP agent say" in codex_requests[0].last_user_text
    assert "Say something" in gemini_requests[0].last_user_text
    assert "The ACP agent is fine." in str(codex_requests[-1].body["input"][-1])
    assert chain(history) == [(USER, "w-claude"), ("w-claude", "w-codex"), ("w-codex", "w-acp")]
    assert list(history["outcome"]) == ["done"] * 3
    assert list(history["reply"]) == [
        "Claude: done.",
        "Codex relays: the ACP agent is fine.",
        "The ACP agent is fine.",
    ]
    assert not still_running, (
        f"left running after the office closed: {[command_of(p) for p in still_running]}"
    )
