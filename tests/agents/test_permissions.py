"""Permission prompts (``can_use_tool`` over stdio): answered from code, by a handler, or denied on expiry."""

from __future__ import annotations

import asyncio

import pytest

from elynav_nb.agents.events import PermissionRequest, PermissionWithdrawn, ToolResult
from elynav_nb.agents.runner import AgentRunner

from .helpers import fake_cli_command


def make_runner(tmp_path, **options) -> AgentRunner:
    return AgentRunner(
        None,
        tmp_path,
        executable=fake_cli_command(),
        environment={"FAKE_CLI_MODE": "permission"},
        permission_prompts=True,
        **options,
    )


def tool_result(result) -> ToolResult:
    return next(event for event in result.events if isinstance(event, ToolResult))


@pytest.mark.anyio
async def test_allow_from_code_with_updated_input(tmp_path):
    runner = make_runner(tmp_path)
    turn = runner.send("make a file")
    async for event in turn:
        if isinstance(event, PermissionRequest):
            assert event.tool_name == "Bash" and event.input == {"command": "touch created.txt"}
            assert runner.pending_permissions == [event]
            event.allow({"command": "touch other.txt"})
    result = await turn
    assert tool_result(result).content == "ran touch other.txt" and not tool_result(result).is_error
    assert PermissionWithdrawn(request_id="perm-1", decision="allowed", by="the user") in result.events
    assert runner.pending_permissions == []
    assert "--permission-prompt-tool" in runner.process.argv
    await runner.stop()


@pytest.mark.anyio
async def test_deny_from_code_reaches_the_cli_with_its_message(tmp_path):
    runner = make_runner(tmp_path)
    turn = runner.send("make a file")
    async for event in turn:
        if isinstance(event, PermissionRequest):
            event.deny("not today")
            event.allow()  # a second answer is ignored: the request is closed
    result = await turn
    assert tool_result(result).is_error and tool_result(result).content == "not today"
    await runner.stop()


@pytest.mark.anyio
async def test_unanswered_prompt_is_denied_after_the_timeout(tmp_path):
    runner = make_runner(tmp_path, permission_timeout=0.3)
    result = await asyncio.wait_for(runner.send("make a file"), timeout=20)
    assert tool_result(result).is_error and "No answer within 0.3 s" in tool_result(result).content
    assert PermissionWithdrawn(request_id="perm-1", decision="expired") in result.events
    await runner.stop()


@pytest.mark.anyio
async def test_async_handler_decides(tmp_path):
    asked: list[str] = []

    async def handler(request: PermissionRequest) -> bool:
        asked.append(request.tool_name)
        return request.input["command"].startswith("touch")

    runner = AgentRunner(
        None,
        tmp_path,
        executable=fake_cli_command(),
        environment={"FAKE_CLI_MODE": "permission"},
        permission_handler=handler,
    )
    result = await runner.send("make a file")
    assert asked == ["Bash"]
    assert tool_result(result).content == "ran touch created.txt"
    closed = [event for event in result.events if isinstance(event, PermissionWithdrawn)]
    assert [event.summary() for event in closed] == [
        "perm-1: allowed by the permission handler"
    ]  # who said yes
    await runner.stop()
