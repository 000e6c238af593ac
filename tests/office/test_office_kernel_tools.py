"""Kernel tools for office employees: ``Office(tools={agent: ...})`` serves them to that employee only."""

from __future__ import annotations

import json

import pytest

from elynav_nb.agents.tools import agent_tool
from elynav_nb.errors import InvalidInput
from elynav_nb.office import Office

from .conftest import worker
from .helpers import tool_text

pytestmark = pytest.mark.anyio


@agent_tool
def quota(region: str) -> int:
    """This quarter's quota of a region."""
    return {"north": 120, "south": 80}[region]


def call(tool: str, arguments: dict[str, object]) -> str:
    return f"@standin mcp kernel {tool} {json.dumps(arguments)}"


async def test_an_employee_calls_its_kernel_tools_and_another_employee_has_none(make_office):
    office = await make_office([worker("sdr"), worker("analyst")], tools={"sdr": [quota]})
    reply = await office.ask("sdr", call("quota", {"region": "north"}))
    assert reply.ok, reply.error
    assert "120" in tool_text(reply)
    assert office.employee("sdr").runner.tool_endpoint is not None
    assert office.employee("sdr").runner.tool_endpoint.calls == 1
    assert office.employee("analyst").runner.tool_endpoint is None
    other = await office.ask("analyst", call("quota", {"region": "north"}))
    assert "No such tool available: mcp__kernel__quota" in tool_text(
        other
    )  # the analyst has no kernel server


async def test_tools_for_an_agent_the_office_does_not_have_are_refused_at_start(make_office):
    with pytest.raises(InvalidInput, match="nobody"):
        await make_office([worker("sdr")], tools={"nobody": [quota]})


def test_bad_tools_are_refused_when_the_office_is_made(tmp_path):
    with pytest.raises(InvalidInput):
        Office(tmp_path, [worker("sdr")], tools={"sdr": []})
