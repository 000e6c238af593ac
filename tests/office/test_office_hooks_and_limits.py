"""``Office(..., hooks=..., max_turns=...)``: runner options reach every employee; a limit is a failed reply with its code."""

from __future__ import annotations

import pytest

from elynav_nb.agents import ToolResult
from elynav_nb.agents.hooks import HookCall, deny

from .conftest import worker

pytestmark = pytest.mark.anyio


async def test_hooks_and_budgets_reach_every_employee(make_office):
    seen: list[tuple[str, str]] = []

    def office_policy(call: HookCall):
        seen.append((call.tool_name, call.tool_input.get("command", "")))
        return deny("the office says no")

    office = await make_office([worker("w-a")], hooks={"PreToolUse": office_policy}, max_turns=2)
    denied = await office.ask("w-a", "@standin bash echo hi")
    limited = await office.ask("w-a", "@standin bash echo one\n@standin bash echo two")
    assert denied.outcome == "done", (denied.error_code, denied.error)
    [result] = [event for event in denied.events if isinstance(event, ToolResult)]
    assert result.is_error and result.text.endswith("the office says no")
    assert seen[0] == ("Bash", "echo hi")
    assert limited.outcome == "failed" and limited.error_code == "MAX_TURNS_REACHED", limited.error
