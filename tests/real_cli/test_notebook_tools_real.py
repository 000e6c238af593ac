"""The real claude, codex and gemini insert a cell of a live notebook and run it, through notebook_tools.

The fake model API plays the model: it asks for ``insert_cell``, reads the new cell's id in the tool
result it receives, asks for ``run_cell`` on it, then ends the turn. The notebook is served by a real
jupyter-collaboration server; the cell and its outputs must be in the room afterwards, once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from elynav_nb.agents import AgentRunner, ToolResult
from elynav_nb.notebook import LiveNotebook, notebook_tools
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import ModelRequest, Reply
from tests.browser.lab_server import LabServer
from tests.notebook.servers import LIVE, RawPeer, live_missing, start_server, write_notebook
from tests.tiers import needs

from .runner_setups import make_runner
from .setups import TEST_AGENT_PROMPT, plain_workspace
from .test_claude_real import _environment

pytestmark = [pytest.mark.real_cli, pytest.mark.live, needs(LIVE, live_missing()), pytest.mark.anyio]

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")  # a cell id: uuid4
CODE = "print('ran by the agent:', 6 * 7)"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    folder = tmp_path_factory.mktemp("real-cli-notebooks")
    write_notebook(folder / "agent.ipynb", ["x = 1"])
    started = start_server("collaboration", folder)
    try:
        yield started
    finally:
        started.stop()


class InsertThenRun:
    """The model's part: insert, then run the id the tool answered, then say it is done.

    A request that brings nothing new (codex's ``tool_search`` step before an MCP call) gets the same
    reply again, as the fake API's own queue does."""

    def __init__(self) -> None:
        self.first_ids: set[str] | None = None
        self.cell_id: str | None = None
        self.last: Reply | None = None

    def __call__(self, request: ModelRequest) -> Reply | None:
        self.last = self._choose(request)
        return self.last

    def _choose(self, request: ModelRequest) -> Reply:
        body = json.dumps(request.body)
        ids = set(UUID.findall(body))
        if self.first_ids is None:  # ids of the session itself, not of a cell
            self.first_ids = ids
            return Reply.mcp("kernel", "insert_cell", {"content": CODE})
        if "ran by the agent: 42" in body:
            return Reply.say("The cell ran.")
        new = sorted(ids - self.first_ids)
        if self.cell_id is None and len(new) == 1:
            self.cell_id = new[0]
            return Reply.mcp("kernel", "run_cell", {"cell_id": self.cell_id})
        if self.last is not None and not new or new == [self.cell_id]:
            return self.last
        return Reply.say(f"unexpected request; new ids {new}")


async def check_the_room(server: LabServer, cell_id: str | None) -> None:
    assert cell_id is not None, "the model never saw the new cell's id"
    async with RawPeer.join(server, "agent.ipynb") as peer:
        cells = [cell for cell in peer.cells if cell["id"] == cell_id]
    assert len(cells) == 1 and cells[0]["source"] == CODE
    assert cells[0]["outputs"] == [
        {"output_type": "stream", "name": "stdout", "text": "ran by the agent: 42\n"}
    ]
    assert cells[0]["execution_count"] is not None


def tool_results(result) -> list[ToolResult]:
    return [event for event in result.events if isinstance(event, ToolResult)]


async def test_claude_inserts_and_runs_a_cell(server, claude_cli, says_version, isolated_home, tmp_path):
    from elynav_nb.agents.definitions import AgentDefinition

    says_version(claude_cli)
    model = InsertThenRun()
    async with LiveNotebook.open("agent.ipynb", server_url=server.base_url, token=server.token) as nb:
        async with FakeModelApi([], chooser=model) as api:
            definition = AgentDefinition(
                name="elynav-test", description="A test agent.", prompt=TEST_AGENT_PROMPT, tools=("Read",)
            )
            runner = AgentRunner(
                definition,
                plain_workspace(tmp_path),
                executable=claude_cli.argv[0],
                fallback_to_standin=False,
                environment=_environment(api, isolated_home),
                tools=notebook_tools(nb),
            )
            async with runner:
                result = await runner.send("add a cell that prints 6 * 7 and run it")
    assert result.outcome == "completed", f"{result.error} {result.stderr_tail[-1500:]}"
    assert [event.is_error for event in tool_results(result)] == [False, False]
    assert result.text == "The cell ran."
    await check_the_room(server, model.cell_id)


async def test_codex_and_gemini_insert_and_run_a_cell(
    server, per_turn_cli, says_version, isolated_home, tmp_path
):
    cli = per_turn_cli
    says_version(cli)
    model = InsertThenRun()
    async with LiveNotebook.open("agent.ipynb", server_url=server.base_url, token=server.token) as nb:
        async with FakeModelApi([], chooser=model) as api:
            runner = make_runner(cli, api, plain_workspace(tmp_path), isolated_home, tools=notebook_tools(nb))
            async with runner:
                result = await runner.send("add a cell that prints 6 * 7 and run it")
    assert result.outcome == "completed", f"{result.error} {result.stderr_tail[-1500:]}"
    assert result.text == "The cell ran.", [event.kind for event in result.events]
    await check_the_room(server, model.cell_id)
