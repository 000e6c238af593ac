"""``TurnView`` on a real ``AgentRunner`` driving the fake streaming CLI, headless (no kernel)."""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable
from pathlib import Path

import pytest

from elynav_nb.agents.events import PermissionRequest, ToolResult
from elynav_nb.agents.runner import AgentRunner
from elynav_nb.widgets import PermissionPrompt, TurnView

from .helpers import segment_text, wait_until

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
RunnerFactory = Callable[..., AgentRunner]


@pytest.mark.anyio
async def test_transcript_equals_turn_text_and_the_throttle_holds(make_runner: RunnerFactory) -> None:
    runner = make_runner(
        "stream", environment={"FAKE_DELTAS": "2000", "FAKE_DELTA_PAUSE": "0.002"}, keep_deltas=True
    )  # keep_deltas: turn.events counts every delta the view was sent
    turn = runner.send("stream please")
    view = TurnView(turn)
    result = await view.wait()

    assert result is not None and result.outcome == "completed"
    transcript = view.transcript.widget.value
    assert segment_text(transcript) == result.text == turn.text
    assert len(result.text) > 10_000
    text_deltas = sum(1 for event in turn.events if type(event).__name__ == "TextDelta")
    assert text_deltas == 2001
    assert view.transcript.written_chunks > text_deltas
    assert 1 <= view.transcript.flush_count <= text_deltas // 20
    assert not view.transcript.pending
    # thinking is shown muted, the tool call and its result as collapsible rows, all escaped
    assert segment_text(transcript, "elynav-thinking") == "Let me think about <this>."
    assert "<details class='elynav-tool'" in transcript
    assert "<details class='elynav-tool-result'" in transcript
    assert html.escape("echo <hi>") in transcript
    assert "<b>not bold</b>" not in transcript
    # the end: status line and a disabled Cancel
    status = view.status_line.value
    assert "completed" in status and "cost $0.1250" in status
    assert f"{result.duration_s:.2f} s" in status
    assert "agent default" in view.status_text()
    assert view.cancel_button.disabled
    assert view.finished


@pytest.mark.anyio
async def test_cancel_click_ends_the_turn_as_cancelled(make_runner: RunnerFactory) -> None:
    runner = make_runner("slow")
    turn = runner.send("go slowly")
    view = TurnView(turn, min_interval=0.05)
    assert await wait_until(lambda: view.events_shown >= 3)
    assert not view.cancel_button.disabled

    view.cancel_button.click()
    assert view.cancel_button.disabled  # at once: no second click
    result = await asyncio.wait_for(view.wait(), timeout=30)

    assert result is not None and result.outcome == "cancelled"
    assert turn.status == "cancelled"
    assert view.cancel_button.disabled
    assert view.status_line.value.count("cancelled") == 1
    assert segment_text(view.transcript.widget.value) == result.text
    assert result.text.startswith("slow ")
    assert "elynav-cancelled" in view.transcript.widget.value
    assert "elynav-error" not in view.transcript.widget.value  # the CLI's interrupted error is not a red row
    view.cancel_button.click()  # a click after the end changes nothing
    assert turn.status == "cancelled"


async def _permission_prompt_shown(runner: AgentRunner) -> tuple[TurnView, PermissionPrompt]:
    turn = runner.send("write a file")
    view = TurnView(turn, min_interval=0.05)
    assert await wait_until(lambda: len(view.prompts) == 1)
    prompt = next(iter(view.prompts.values()))
    assert view.permissions_box.children == (prompt.widget,)
    assert "waiting" in view.status_text()
    assert not prompt.allow_button.disabled and not prompt.deny_button.disabled
    return view, prompt


@pytest.mark.anyio
async def test_allow_click_lets_the_tool_run(make_runner: RunnerFactory) -> None:
    runner = make_runner("permission", permission_prompts=True)
    view, prompt = await _permission_prompt_shown(runner)
    assert "touch written.txt" in prompt.label.value

    prompt.allow_button.click()
    result = await asyncio.wait_for(view.wait(), timeout=30)

    assert result is not None and result.outcome == "completed"
    assert result.text == "the tool ran"
    tool_results = [event for event in result.events if isinstance(event, ToolResult)]
    assert [(event.text, event.is_error) for event in tool_results] == [("ran: touch written.txt", False)]
    assert prompt.decision == "allowed"
    assert prompt.allow_button.disabled and prompt.deny_button.disabled
    assert view.permissions_box.children == ()
    assert "permission allowed" in view.transcript.widget.value


@pytest.mark.anyio
async def test_deny_click_reaches_the_cli(make_runner: RunnerFactory) -> None:
    runner = make_runner("permission", permission_prompts=True)
    view, prompt = await _permission_prompt_shown(runner)

    prompt.deny_button.click()
    result = await asyncio.wait_for(view.wait(), timeout=30)

    assert result is not None and result.text == "the tool was denied"
    tool_results = [event for event in result.events if isinstance(event, ToolResult)]
    assert len(tool_results) == 1 and tool_results[0].is_error
    assert tool_results[0].text == "denied: Denied by the user."
    assert result.ended is not None and len(result.ended.permission_denials) == 1
    assert prompt.decision == "denied"
    assert view.permissions_box.children == ()
    assert "Bash</b> failed" in view.transcript.widget.value or "Bash failed" in view.transcript.widget.value


@pytest.mark.anyio
async def test_withdrawn_permission_disables_and_removes_the_prompt(make_runner: RunnerFactory) -> None:
    runner = make_runner("permission", permission_prompts=True)
    view, prompt = await _permission_prompt_shown(runner)

    view.cancel_button.click()  # the CLI withdraws its pending request when interrupted
    result = await asyncio.wait_for(view.wait(), timeout=30)

    assert result is not None and result.outcome == "cancelled"
    assert prompt.decision == "withdrawn"
    assert prompt.allow_button.disabled and prompt.deny_button.disabled
    assert view.permissions_box.children == ()
    assert "(withdrawn)" in prompt.label.value
    prompt.allow_button.click()  # too late: nothing happens, nothing raises
    assert prompt.decision == "withdrawn"


@pytest.mark.anyio
async def test_errors_show_as_red_rows(make_runner: RunnerFactory) -> None:
    runner = make_runner("error")
    turn = runner.send("fail")
    view = TurnView(turn)
    result = await asyncio.wait_for(view.wait(), timeout=30)

    assert result is not None and result.outcome == "error"
    transcript = view.transcript.widget.value
    assert "<div class='elynav-error' style='margin:2px 0;color:#c62828'>API_ERROR: " in transcript
    assert "rate limited" in transcript
    assert segment_text(transcript) == "partial answer"
    assert "color:#c62828'>error</b>" in view.status_line.value


@pytest.mark.anyio
async def test_repr_mimebundle_is_the_widget_with_our_text(make_runner: RunnerFactory) -> None:
    runner = make_runner("stream", environment={"FAKE_DELTAS": "5"})
    turn = runner.send("hi")
    view = TurnView(turn)
    await view.wait()
    bundle = view._repr_mimebundle_()
    assert bundle[WIDGET_MIME]["model_id"] == view.widget.model_id
    assert bundle["text/plain"] == repr(turn)
    assert bundle["text/plain"].startswith("<Turn completed")


@pytest.mark.anyio
async def test_capability_bundle_uses_the_registered_view_in_a_kernel(
    make_runner: RunnerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import elynav_nb._display as display

    runner = make_runner("stream", environment={"FAKE_DELTAS": "5"})
    turn = runner.send("hi")
    await turn
    monkeypatch.setattr(display, "in_notebook_kernel", lambda: True)
    turn_bundle = turn._repr_mimebundle_()
    runner_bundle = runner._repr_mimebundle_()
    assert WIDGET_MIME in turn_bundle and turn_bundle["text/plain"].startswith(repr(turn) + "\n")
    assert (
        "→ Bash" in turn_bundle["text/plain"] and "Done: 1 < 2" in turn_bundle["text/plain"]
    )  # the transcript
    assert "tool <b>Bash</b>" in turn_bundle["text/html"] and "Done: 1 &lt; 2" in turn_bundle["text/html"]
    assert WIDGET_MIME in runner_bundle and runner_bundle["text/plain"] == repr(runner)
    monkeypatch.setattr(display, "in_notebook_kernel", lambda: False)
    assert WIDGET_MIME not in turn._repr_mimebundle_()


@pytest.mark.anyio
async def test_view_made_mid_turn_catches_up(make_runner: RunnerFactory) -> None:
    runner = make_runner("slow")
    turn = runner.send("go slowly")
    assert await wait_until(lambda: turn.text.count("slow") >= 3)
    view = TurnView(turn, min_interval=0.05)  # catches up with the stored deltas (one coalesced run)
    assert await wait_until(lambda: view.events_shown >= 4)  # then gets each new delta live
    await turn.cancel()
    await asyncio.wait_for(view.wait(), timeout=30)
    assert segment_text(view.transcript.widget.value) == turn.text


def _cancel_shown(view: TurnView) -> bool:
    return bool(view.cancel_button.layout.display != "none")


@pytest.mark.anyio
async def test_a_settled_turn_hides_its_cancel_button(make_runner: RunnerFactory) -> None:
    # While the turn runs, Cancel shows; once it is settled (completed, cancelled), it is hidden:
    # a disabled red button would read as "still running". The status line keeps the outcome.
    runner = make_runner("slow")
    turn = runner.send("go slowly")
    view = TurnView(turn, min_interval=0.05)
    assert await wait_until(lambda: view.events_shown >= 2)
    assert _cancel_shown(view) and not view.cancel_button.disabled
    view.cancel_button.click()
    await asyncio.wait_for(view.wait(), timeout=30)
    assert turn.status == "cancelled" and not _cancel_shown(view)
    assert "cancelled" in view.status_line.value

    completed = make_runner("stream", environment={"FAKE_DELTAS": "5"}).send("hi")
    completed_view = TurnView(completed)
    result = await asyncio.wait_for(completed_view.wait(), timeout=30)
    assert result is not None and result.outcome == "completed"
    assert not _cancel_shown(completed_view) and completed_view.cancel_button.disabled
    assert "completed" in completed_view.status_line.value
    late_view = TurnView(completed)  # a view of a turn already over: no Cancel at all
    assert late_view.finished and not _cancel_shown(late_view)


@pytest.mark.anyio
async def test_always_allow_shows_where_the_agent_offers_it_and_is_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_runner: RunnerFactory
) -> None:
    # claude (the fake CLI) names no options: Allow and Deny only
    _, claude_prompt = await _permission_prompt_shown(make_runner("permission", permission_prompts=True))
    assert claude_prompt.always_button not in claude_prompt.widget.children
    claude_prompt.deny_button.click()

    # an ACP agent (the ACP stand-in) offers allow_always: a third button, and the choice holds
    monkeypatch.setenv("ELYNAV_ACP_STANDIN_HOME", str(tmp_path / "acp-standin-home"))
    workspace = tmp_path / "acp-workspace"
    workspace.mkdir()
    runner = AgentRunner(None, workspace, cli="acp", executable="standin", permission_prompts=True)
    try:
        view = TurnView(runner.send("@standin shell echo once"), min_interval=0.05)
        assert await wait_until(lambda: len(view.prompts) == 1)
        prompt = next(iter(view.prompts.values()))
        assert [button.description for button in prompt.widget.children[:3]] == [
            "Allow",
            "Always allow",
            "Deny",
        ]
        prompt.always_button.click()
        first = await asyncio.wait_for(view.wait(), timeout=30)
        assert (
            first is not None and first.outcome == "completed" and first.text == "The command printed: once"
        )
        assert prompt.decision == "allowed" and prompt.always_button.disabled
        again = await asyncio.wait_for(runner.send("@standin shell echo once"), timeout=30)
    finally:
        await runner.stop()
    assert again.outcome == "completed" and not [e for e in again.events if isinstance(e, PermissionRequest)]
