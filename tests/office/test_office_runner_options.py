"""``Office(..., runner_options=RunnerOptions.of(...))``: the employees' settings as one typed object."""

from __future__ import annotations

import pytest

from elynav_nb.agents import RunnerOptions
from elynav_nb.errors import InvalidInput
from elynav_nb.office import Office

from .conftest import FAST_STOP, worker

pytestmark = pytest.mark.anyio


async def test_every_employee_gets_the_options_with_the_offices_own_settings(tmp_path):
    options = RunnerOptions.of(
        turn_timeout=42.0, max_turns=3, stop_bounds=FAST_STOP, environment={"MINE": "1"}
    )
    office = Office(
        tmp_path / "workspace", [worker("w-a"), worker("w-b")], executable="standin", runner_options=options
    )
    async with office:
        runner = office.employee("w-a").runner
        assert runner.options.bounds.turn == 42.0 and runner.options.turn.limits.max_turns == 3
        assert runner.environment_overrides["MINE"] == "1"  # the office adds its own beside the caller's
        assert runner.environment_overrides["BASH_MAX_TIMEOUT_MS"] == str(int(office.ask_timeout * 1000))
        assert (
            "--allowedTools" in runner.options.process.extra_arguments
        )  # claude's tool rules, from its plan
        reply = await office.ask("w-b", "hello")
        assert reply.outcome == "done"
    assert options.process.environment == {"MINE": "1"}  # the caller's object is left as it was


def test_options_and_keywords_together_are_refused(tmp_path):
    with pytest.raises(InvalidInput, match="runner_options or as keywords"):
        Office(tmp_path, [worker("w-a")], runner_options=RunnerOptions.of(), max_turns=2)
