"""``notebook_tools(nb)`` and ``elynav mcp notebook`` (a real MCP client over stdio) on real servers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters, stdio_client

from elynav_nb.errors import InvalidInput
from elynav_nb.notebook import LiveNotebook, notebook_tools
from elynav_nb.notebook.tools import TOOL_NAMES
from tests.tiers import needs

from .servers import LIVE, RawPeer, live_missing

pytestmark = [needs(LIVE, live_missing()), pytest.mark.live, pytest.mark.anyio]


def open_live(server, path, **options):
    return LiveNotebook.open(path, server_url=server.base_url, token=server.token, **options)


async def test_the_tools_read_write_and_run_the_live_notebook(live_server, notebook_path):
    async with open_live(live_server, notebook_path) as nb:
        tools = notebook_tools(nb)
        assert tools.names == list(TOOL_NAMES)
        first, second = (cell.id for cell in nb.cells)

        listing = await tools.call("read_notebook", {})
        assert (
            not listing.is_error
            and f"(id {first}, code)" in listing.structured
            and "y = 2" in listing.structured
        )
        added = await tools.call("add_cell", {"content": "z = x + y\nz", "cell_id": first})
        new_id = added.structured
        assert [cell.id for cell in nb.cells] == [first, new_id, second]
        above = await tools.call(
            "add_cell", {"content": "# title", "cell_id": first, "add_above": True, "cell_type": "markdown"}
        )
        assert nb.cells[0].id == above.structured and nb.cells[0].cell_type == "markdown"
        inserted = await tools.call("insert_cell", {"content": "w = 4", "insert_index": 1})
        assert nb.cells[1].id == inserted.structured
        edited = await tools.call("edit_cell", {"cell_id": new_id, "content": "z = x + y + 1\nz"})
        assert "edited" in edited.structured and nb.cell(new_id).source == "z = x + y + 1\nz"
        await tools.call("move_cell", {"cell_id": inserted.structured, "insert_index": 4})
        assert nb.cells[4].id == inserted.structured
        await tools.call("run_cell", {"cell_id": first})
        await tools.call("run_cell", {"cell_id": second})
        ran = await tools.call("run_cell", {"cell_id": new_id})
        assert not ran.is_error and ran.structured.endswith("\n4"), ran.content
        assert (await tools.call("get_cell_outputs", {"cell_id": new_id})).structured == "4"
        cell_text = (await tools.call("read_cell", {"cell_id": new_id})).structured
        assert "outputs:" in cell_text and "execution count" in cell_text
        await tools.call("delete_cell", {"cell_id": above.structured})
        assert above.structured not in [cell.id for cell in nb.cells]

        missing = await tools.call("edit_cell", {"cell_id": "nope", "content": "x"})
        assert missing.is_error and missing.code == "CELL_NOT_FOUND"
        wrong_type = await tools.call("insert_cell", {"content": "x", "cell_type": "sql"})
        assert wrong_type.is_error and wrong_type.code == "INVALID_INPUT"
        markdown = nb.cells[0].id
        refused = (
            await tools.call("run_cell", {"cell_id": markdown}) if nb.cells[0].cell_type != "code" else None
        )
        assert refused is None or refused.code == "INVALID_INPUT"
        with pytest.raises(InvalidInput):
            notebook_tools("not a notebook")  # type: ignore[arg-type]


async def test_elynav_mcp_notebook_over_stdio(live_server, notebook_path, tmp_path: Path):
    environment = {**os.environ, "JUPYTER_TOKEN": live_server.token}
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "elynav_nb",
            "mcp",
            "notebook",
            "--path",
            notebook_path,
            "--url",
            live_server.base_url,
            "--name",
            "MCP agent",
        ],
        env=environment,
    )
    with open(tmp_path / "stderr.log", "w") as errlog:
        async with Client(stdio_client(parameters, errlog=errlog)) as client:
            listed = await client.list_tools()
            assert [tool.name for tool in listed.tools] == list(TOOL_NAMES)
            inserted = await client.call_tool("insert_cell", {"content": "print('from mcp')"})
            cell_id = inserted.content[0].text.strip('"')
            ran = await client.call_tool("run_cell", {"cell_id": cell_id})
            assert not ran.is_error and "from mcp" in ran.content[0].text
            missing = await client.call_tool("delete_cell", {"cell_id": "nope"})
            assert missing.is_error and missing.content[0].text.startswith("CELL_NOT_FOUND")
    async with RawPeer.join(live_server, notebook_path) as peer:
        cell = next(cell for cell in peer.cells if cell["id"] == cell_id)
        assert cell["outputs"][0]["text"] == "from mcp\n" and cell["execution_count"] is not None
    assert live_server.token not in (tmp_path / "stderr.log").read_text()
