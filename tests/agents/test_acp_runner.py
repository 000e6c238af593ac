"""``AgentRunner(cli="acp")`` on the embedded ACP stand-in: what a user sees of a turn, turn by turn.

How: each test starts a runner on a fresh workspace and stand-in home (``ELYNAV_ACP_STANDIN_HOME``),
sends prompts made of ``@standin`` directive lines (``elynav_nb/sandbox/acp/acp_directives.py``) and
asserts on the streamed events, the ``TurnResult`` and the files and processes left behind: a streamed
turn, odd lines and unknown methods from the agent, permission prompts (answered, refused, expired,
remembered), the agent's own error and stop reasons, and the client's confined fs and terminal
methods. Every wait is bounded (``asyncio.wait_for``); nothing is timed. The start-up faults,
cancels and crashes are in ``test_acp_runner_faults.py``.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from elynav_nb.agents.events import (
    AgentError,
    PermissionRequest,
    PermissionWithdrawn,
    RawEvent,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
)
from elynav_nb.errors import InvalidInput
from tests.widgets.helpers import wait_until

from .acp_standin_runs import TURN_BOUND, acp_standin_home, ask, make_runner, of_type
from .helpers import running_commands

pytestmark = pytest.mark.anyio

__all__ = ["acp_standin_home", "make_runner"]  # fixtures, used by name

ACP_OPTION_KINDS = ["allow_once", "allow_always", "reject_once", "reject_always"]


async def answer_permissions(turn, decide) -> list[PermissionRequest]:
    """Read the whole turn, calling ``decide(request)`` on each permission prompt; the prompts seen."""

    async def read() -> list[PermissionRequest]:
        seen = []
        async for event in turn:
            if isinstance(event, PermissionRequest):
                seen.append(event)
                decide(event)
        return seen

    return await asyncio.wait_for(read(), TURN_BOUND)


# -- a streamed turn --------------------------------------------------------------------------------


async def test_a_streamed_turn_gives_deltas_thinking_raw_updates_and_the_result(make_runner):
    runner = make_runner()
    said = "the stand-in streams this sentence a few words at a time"
    turn = runner.send(
        f"@standin think weighing it up\n@standin say {said}\n@standin plan\n@standin unknown-update"
    )

    async def read() -> list:
        return [event async for event in turn]

    streamed = await asyncio.wait_for(read(), TURN_BOUND)
    result = await turn
    assert result.outcome == "completed", result.error
    deltas = [event.text for event in streamed if isinstance(event, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == said == result.text
    assert "".join(event.text for event in streamed if isinstance(event, ThinkingDelta)) == "weighing it up"
    raw = {event.subtype for event in of_type(result, RawEvent)}
    assert {"plan", "elynav_unknown_kind"} <= raw  # never dropped
    assert result.session_id and result.session_id == runner.session_id
    assert runner.last_started is not None
    assert runner.last_started.cli_version == "0.1.0" and runner.last_started.is_standin
    assert result.cli == "acp" and result.cli_version == "0.1.0"
    kinds = list(result.to_frame()["kind"])
    assert {"started", "thinking", "text", "raw", "ended"} <= set(kinds) and kinds[-1] == "ended"
    assert list(runner.to_frame()["outcome"]) == ["completed"]


async def test_a_line_that_is_not_json_rpc_is_an_error_event_and_the_turn_goes_on(make_runner):
    runner = make_runner()
    result = await ask(runner, "@standin malformed\n@standin say still here")
    assert result.outcome == "completed", result.error
    assert result.text == "still here"
    errors = of_type(result, AgentError)
    assert [error.code for error in errors] == ["INVALID_JSON", "INVALID_JSON_RPC"]
    assert errors[0].excerpt == "this line is not JSON {"
    assert '"hello": 1' in errors[1].excerpt
    assert (await ask(runner, "next")).text == "Stand-in reply to: next"


async def test_an_unknown_client_method_is_answered_method_not_found(make_runner):
    runner = make_runner()
    result = await ask(runner, "@standin unknown-method")
    assert result.outcome == "completed", result.error
    assert result.text == "The client answered -32601"


# -- permission prompts -----------------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "outcome"), [("allow", "selected allow"), ("deny", "selected reject")])
async def test_a_permission_prompt_for_an_unannounced_tool_reaches_the_user(make_runner, answer, outcome):
    runner = make_runner(permission_prompts=True)
    turn = runner.send("@standin permission-unknown-tool")
    seen = await answer_permissions(
        turn, lambda request: request.allow() if answer == "allow" else request.deny()
    )
    result = await turn
    assert len(seen) == 1 and seen[0].tool_use_id == "never_announced_1"
    assert result.outcome == "completed", result.error
    assert result.text == f"The permission outcome was {outcome}"
    decisions = [event.decision for event in of_type(result, PermissionWithdrawn)]
    assert decisions == ["allowed" if answer == "allow" else "denied"]


async def test_an_unanswered_permission_prompt_is_denied_after_the_timeout(make_runner):
    runner = make_runner(permission_prompts=True, permission_timeout=0.3)
    turn = runner.send("@standin permission-unknown-tool")
    seen = await answer_permissions(turn, lambda request: None)
    result = await turn
    assert len(seen) == 1
    assert result.outcome == "completed", result.error
    assert result.text == "The permission outcome was selected reject"
    assert [event.decision for event in of_type(result, PermissionWithdrawn)] == ["expired"]
    assert runner.pending_permissions == []


async def test_a_shell_call_asks_with_the_acp_options_and_always_is_remembered(make_runner):
    runner = make_runner(permission_prompts=True)
    turn = runner.send("@standin shell echo remembered")
    seen = await answer_permissions(turn, lambda request: request.allow(always=True))
    result = await turn
    assert result.outcome == "completed", result.error
    assert len(seen) == 1
    request = seen[0]
    assert request.tool_name == "echo remembered" and request.input == {"command": "echo remembered"}
    assert [option["kind"] for option in request.options] == ACP_OPTION_KINDS
    assert result.text == "The command printed: remembered"
    again = runner.send("@standin shell echo remembered")
    asked_again = await answer_permissions(again, lambda request: request.deny())
    second = await again
    assert asked_again == []  # the same session: not asked again
    assert second.outcome == "completed" and second.text == "The command printed: remembered"


async def test_a_denied_shell_call_fails_its_tool_and_runs_nothing(make_runner, tmp_path):
    runner = make_runner(permission_prompts=True)
    made = tmp_path / "workspace" / "made-by-shell"
    turn = runner.send(f"@standin shell touch {made}")
    seen = await answer_permissions(turn, lambda request: request.deny())
    result = await turn
    assert len(seen) == 1
    assert result.outcome == "completed" and result.text == "The command was denied."
    assert [event.is_error for event in of_type(result, ToolResult)] == [True]
    assert not made.exists()


# -- the agent's own errors and stop reasons ---------------------------------------------------------


async def test_an_error_answer_ends_the_turn_in_error_and_the_runner_goes_on(make_runner):
    runner = make_runner()
    result = await ask(runner, "@standin error boom")
    assert result.outcome == "error"
    assert result.error_code == "CLI_ERROR" and "boom" in result.error
    pid = runner.pid
    after = await ask(runner, "after the error")
    assert after.outcome == "completed" and after.text == "Stand-in reply to: after the error"
    assert runner.pid == pid


@pytest.mark.parametrize(
    ("reason", "code"),
    [("refusal", "REFUSAL"), ("max_tokens", "MAX_TOKENS"), ("cancelled", "CANCELLED_BY_AGENT")],
)
async def test_a_stop_reason_of_the_agent_is_a_typed_error_code(make_runner, reason, code):
    runner = make_runner()
    result = await ask(runner, f"@standin stop {reason}")
    assert result.outcome != "completed"
    assert result.error_code == code
    assert result.error
    assert (await ask(runner, "next")).outcome == "completed"


# -- the client's fs and terminal methods -----------------------------------------------------------


async def test_a_read_outside_the_workspace_is_refused_by_the_client(make_runner, tmp_path):
    secret = "the content nobody may read"
    (tmp_path / "outside.txt").write_text(secret + "\n")
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "inside.txt").write_text("first line inside\nsecond\n")
    runner = make_runner()
    inside = await ask(runner, "@standin read inside.txt")
    assert inside.outcome == "completed" and inside.text == "first line inside"
    for path in ("../outside.txt", str(tmp_path / "outside.txt")):
        result = await ask(runner, f"@standin read {path}")
        assert result.outcome == "completed", result.error
        assert [event.is_error for event in of_type(result, ToolResult)] == [True]
        assert "outside the agent's workspace" in result.text
        assert all(secret not in event.summary() for event in result.events)
        assert secret not in result.text and secret not in str(of_type(result, ToolResult)[0].content)


async def test_a_write_goes_through_the_client_inside_the_workspace_only(make_runner, tmp_path):
    runner = make_runner(permission_mode="acceptEdits")
    result = await ask(runner, "@standin write notes/inside.txt hello")
    assert result.outcome == "completed", result.error
    assert result.text == "Wrote notes/inside.txt"
    assert (tmp_path / "workspace" / "notes" / "inside.txt").read_text() == "hello"
    outside = await ask(runner, "@standin write ../outside-new.txt nope")
    assert outside.outcome == "completed", outside.error
    assert "outside the agent's workspace" in outside.text
    assert not (tmp_path / "outside-new.txt").exists()


async def test_a_write_asked_and_allowed_is_written(make_runner, tmp_path):
    runner = make_runner(permission_prompts=True)
    turn = runner.send("@standin write asked.txt allowed content")
    seen = await answer_permissions(turn, lambda request: request.allow())
    result = await turn
    assert len(seen) == 1 and result.text == "Wrote asked.txt"
    assert (tmp_path / "workspace" / "asked.txt").read_text() == "allowed content"


async def test_a_client_terminal_command_is_killed_when_the_turn_is_cancelled(make_runner):
    marker = "sleep 30.25"
    runner = make_runner(permission_mode="bypassPermissions")
    turn = runner.send(f"@standin shell {marker}")

    async def tool_started() -> None:
        async for event in turn:
            if isinstance(event, ToolUse):
                return

    await asyncio.wait_for(tool_started(), TURN_BOUND)
    assert await wait_until(lambda: bool(running_commands(marker)))
    pid = runner.pid
    for process in running_commands(marker):  # run by the client's terminal (here), not by the stand-in
        ancestors = [parent.pid for parent in process.parents()]
        assert os.getpid() in ancestors and pid not in ancestors
    result = await asyncio.wait_for(turn.cancel(), TURN_BOUND)
    assert result.outcome == "cancelled"
    assert await wait_until(lambda: not running_commands(marker))
    assert runner.pid == pid
    assert (await ask(runner, "after")).outcome == "completed"


async def test_a_model_or_mode_the_agent_does_not_offer_is_said_not_dropped(make_runner) -> None:
    # the stand-in's sessions offer no model and the modes of acp_sessions.MODE_IDS
    runner = make_runner(model="some-model", permission_mode="dontAsk")
    result = await ask(runner, "Bonjour")
    notices = {error.code: error.message for error in of_type(result, AgentError)}
    assert result.outcome == "completed", result.error
    assert "some-model" in notices["MODEL_NOT_OFFERED"] and "its own default" in notices["MODEL_NOT_OFFERED"]
    assert "'dontAsk'" in notices["MODE_NOT_OFFERED"] and "its session modes:" in notices["MODE_NOT_OFFERED"]
    # asked again later, a live change is refused with a typed error, and the conversation goes on
    with pytest.raises(InvalidInput, match="offers no model 'another-model'"):
        await runner.set_model("another-model")
    with pytest.raises(InvalidInput, match="offers no session mode 'dontAsk'"):
        await runner.set_permission_mode("dontAsk")
    again = await ask(runner, "Encore")
    assert again.outcome == "completed" and not of_type(again, AgentError)


@pytest.mark.parametrize(("given", "seen"), [(None, "0"), ("1", "1")])
async def test_the_agent_is_asked_to_connect_mcp_servers_before_its_first_request(
    make_runner, given, seen
) -> None:
    # MCP_CONNECTION_NONBLOCKING=0 (claude-agent-acp's claude otherwise connects them in the background);
    # a value the user gives wins
    environment = {"MCP_CONNECTION_NONBLOCKING": given} if given else {}
    runner = make_runner(permission_mode="bypassPermissions", environment=environment)
    result = await ask(runner, "@standin shell echo wait=$MCP_CONNECTION_NONBLOCKING")
    assert result.outcome == "completed", result.error
    assert result.text == f"The command printed: wait={seen}"
