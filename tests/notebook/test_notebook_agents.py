"""An agent inserts and runs a cell of the live notebook through notebook_tools, on the claude stand-in.

The stand-in reaches the runner's kernel tools as the real claude does (a real MCP client over
``mcp_message`` control requests); the real claude, codex and gemini run the same in
``tests/real_cli/test_notebook_tools_real.py``.
"""

from __future__ import annotations

import json

import pytest

from elynav_nb.agents import AgentRunner, ToolResult
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.notebook import LiveNotebook, notebook_tools
from tests.tiers import needs

from .servers import LIVE, RawPeer, live_missing

pytestmark = [needs(LIVE, live_missing()), pytest.mark.live, pytest.mark.anyio]


@pytest.fixture(autouse=True)
def isolated_standin_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    monkeypatch.delenv("ELYNAV_STANDIN_VERSION", raising=False)


def directive(tool: str, arguments: dict[str, object]) -> str:
    return f"@standin mcp kernel {tool} {json.dumps(arguments)}"


async def test_an_agent_inserts_and_runs_a_cell_beside_the_person(live_server, notebook_path, tmp_path):
    definition = AgentDefinition(
        name="elynav-test", description="A test agent.", prompt="Test.", tools=("Read",)
    )
    async with LiveNotebook.open(
        notebook_path, server_url=live_server.base_url, token=live_server.token
    ) as nb:
        runner = AgentRunner(definition, tmp_path, executable="standin", tools=notebook_tools(nb))
        async with runner:
            inserted = await runner.send(directive("insert_cell", {"content": "print('agent says', 6 * 7)"}))
            [insert_result] = [event for event in inserted.events if isinstance(event, ToolResult)]
            assert not insert_result.is_error, insert_result.text
            cell_id = insert_result.text.strip()
            ran = await runner.send(directive("run_cell", {"cell_id": cell_id}))
            [run_result] = [event for event in ran.events if isinstance(event, ToolResult)]
            assert not run_result.is_error and "agent says 42" in run_result.text
            refused = await runner.send(directive("edit_cell", {"cell_id": "gone", "content": "x"}))
            [refusal] = [event for event in refused.events if isinstance(event, ToolResult)]
            assert refusal.is_error and "CELL_NOT_FOUND" in refusal.text
    async with RawPeer.join(live_server, notebook_path) as peer:
        [cell] = [cell for cell in peer.cells if cell["id"] == cell_id]
        assert cell["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "agent says 42\n"}]
        assert cell["execution_count"] is not None
