"""A turn that did not complete says why in its repr and its HTML, not only in ``.error_code``.

``start()`` raises the typed error of a CLI that cannot start; ``send()`` gives a ``failed`` turn with
the same code instead (the documented contract): that failed turn's repr must name the code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from elynav_nb.agents import AgentDefinition, AgentRunner, TurnResult
from elynav_nb.errors import CliNotFound

pytestmark = pytest.mark.anyio

SDR = AgentDefinition(name="elynav-sdr", description="test sdr", tools=("Read",), prompt="You are the SDR.")


def failed_result(**changes: object) -> TurnResult:
    fields: dict[str, object] = {
        "outcome": "failed",
        "text": "",
        "events": (),
        "session_id": "s-1",
        "agent_name": "elynav-sdr",
        "error": "cannot start '/nowhere/claude': no such executable",
        "error_code": "CLI_NOT_FOUND",
    }
    fields.update(changes)
    return TurnResult(**fields)  # type: ignore[arg-type]


def test_a_failed_result_shows_its_code_and_a_short_error_in_repr_and_html() -> None:
    result = failed_result()
    shown = repr(result)
    assert shown.startswith("<TurnResult failed agent='elynav-sdr'")
    assert "error_code=CLI_NOT_FOUND" in shown and "no such executable" in shown
    page = result._repr_html_()
    assert "CLI_NOT_FOUND" in page and "no such executable" in page


def test_the_repr_keeps_a_long_error_short_and_a_completed_result_unchanged() -> None:
    long_error = "the agent CLI exited with code 1 during the turn " + "x" * 5000
    shown = repr(failed_result(error=long_error, error_code="CLI_EXITED"))
    assert "error_code=CLI_EXITED" in shown and len(shown) < 400 and "…" in shown
    timed_out = repr(failed_result(outcome="timeout", error="no output for 5 s", error_code=""))
    assert "error='no output for 5 s'" in timed_out and "error_code" not in timed_out
    completed = repr(failed_result(outcome="completed", text="Bonjour", error="", error_code=""))
    assert "error" not in completed and completed.endswith("text='Bonjour'>")


async def test_start_raises_and_send_gives_a_failed_turn_whose_repr_names_the_code(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-claude")
    runner = AgentRunner(SDR, tmp_path, executable=missing, fallback_to_standin=False)
    with pytest.raises(CliNotFound):
        await runner.start()
    result = await runner.send("Bonjour")
    await runner.stop()
    assert result.outcome == "failed" and result.error_code == "CLI_NOT_FOUND"
    assert "error_code=CLI_NOT_FOUND" in repr(result)
    assert "CLI_NOT_FOUND" in result._repr_html_()


async def test_the_event_table_says_when_each_event_came_and_what_a_raw_status_line_is(
    tmp_path: Path,
) -> None:
    async with AgentRunner(SDR, tmp_path, executable="standin") as runner:
        turn = runner.send("@standin bash echo hi")
        live = turn.to_frame()
        result = await turn
    frame = result.to_frame()
    assert list(frame.columns) == ["at", "kind", "summary", "parent_tool_use_id"]
    assert str(frame["at"].dtype).endswith("UTC]") and frame["at"].notna().all()
    assert frame["at"].is_monotonic_increasing  # in the order they came
    assert len(live) <= len(frame) and list(live["at"]) == list(frame["at"][: len(live)])
    raw = frame.loc[frame["kind"] == "raw", "summary"].tolist()
    assert "system/status: requesting" in raw  # what the line says, not only its type
