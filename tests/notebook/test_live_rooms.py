"""LiveNotebook against real servers of both backends: read, write acknowledged, awareness, faults.

The other peer is pycrdt's own Provider (``servers.RawPeer``), which plays the person.
"""

from __future__ import annotations

import asyncio
import json
import pickle

import pytest

from elynav_nb.errors import AuthRequired, CellNotFound, InvalidInput, NotebookNotFound
from elynav_nb.notebook import LiveNotebook
from elynav_nb.notebook.render import cells_frame
from tests.browser.lab_server import LabServer
from tests.tiers import needs

from .servers import LIVE, RawPeer, live_missing, wait_until

pytestmark = [needs(LIVE, live_missing()), pytest.mark.live, pytest.mark.anyio]


def open_live(server: LabServer, path: str, **options: object) -> object:
    return LiveNotebook.open(path, server_url=server.base_url, token=server.token, **options)


def saved_cells(server: LabServer, path: str) -> list[dict[str, object]]:
    return json.loads((server.root_dir / path).read_text())["cells"]


async def test_open_reads_the_cells_as_a_frame(live_server, notebook_path):
    async with open_live(live_server, notebook_path) as nb:
        assert (
            nb.backend
            == {"collaboration": "jupyter-collaboration", "documents": "jupyter-server-documents"}[
                live_server.backend
            ]
        )
        frame = nb.to_frame()
        assert list(frame.columns) == list(
            cells_frame([], {}).columns
        )  # the columns: tests/notebook/test_render.py
        assert frame["source"].tolist() == ["x = 1", "y = 2"]
        assert frame["type"].tolist() == ["code", "code"]
        assert live_server.token not in repr(nb) and live_server.token not in repr(nb.api)
        with pytest.raises(TypeError):
            pickle.dumps(nb.connection)


async def test_every_write_is_in_the_room_when_it_returns(live_server, notebook_path):
    async with open_live(live_server, notebook_path) as nb:
        first = nb.cells[0].id
        new_id = await nb.insert_cell("print('agent')", after=first)
        await nb.update_cell(first, "x = 10")
        await nb.move_cell(new_id, 2)
        await nb.set_outputs(new_id, [{"output_type": "stream", "name": "stdout", "text": "agent\n"}], 7)
        # a peer that joins now reads the room's state: every write is there, without waiting
        async with RawPeer.join(live_server, notebook_path) as peer:
            cells = peer.cells
            assert [cell["source"] for cell in cells] == ["x = 10", "y = 2", "print('agent')"]
            assert cells[2]["id"] == new_id and cells[2]["execution_count"] == 7
            assert cells[2]["outputs"][0]["text"] == "agent\n"
        await nb.delete_cell(new_id)
        async with RawPeer.join(live_server, notebook_path) as peer:
            assert [cell["id"] for cell in peer.cells] == [cell.id for cell in nb.cells]
            assert len(peer.cells) == 2
    await wait_until(
        lambda: [c["source"] for c in saved_cells(live_server, notebook_path)] == [["x = 10"], ["y = 2"]],
        15,
        "the save to disk",
    )


async def test_a_person_typing_in_the_same_cell_keeps_their_characters(live_server, notebook_path):
    async with (
        open_live(live_server, notebook_path) as nb,
        RawPeer.join(live_server, notebook_path) as person,
    ):
        cell_id = nb.cells[0].id
        await nb.update_cell(cell_id, "x = 1\nprint(x)\n")
        await wait_until(
            lambda: str(person.cell(cell_id)["source"]) == "x = 1\nprint(x)\n",
            what="the person sees the edit",
        )
        # the person types at the start while the agent rewrites the end, neither seeing the other yet
        person.cell(cell_id)["source"].insert(0, "# mine\n")
        changed = await nb.update_cell(cell_id, "x = 1\nprint(x * 2)\n")
        assert changed < 10  # a minimal diff: the untouched characters stay
        expected = "# mine\nx = 1\nprint(x * 2)\n"
        await wait_until(lambda: nb.cell(cell_id).source == expected, what="the agent sees the merge")
        await wait_until(
            lambda: str(person.cell(cell_id)["source"]) == expected, what="the person sees the merge"
        )


async def test_a_person_deleting_the_cell_being_edited_is_a_typed_error(live_server, notebook_path):
    async with (
        open_live(live_server, notebook_path) as nb,
        RawPeer.join(live_server, notebook_path) as person,
    ):
        cell_id = nb.cells[1].id
        del person.notebook.ycells[1]
        await wait_until(lambda: len(nb.cells) == 1, what="the delete reaches the agent")
        with pytest.raises(CellNotFound) as raised:
            await nb.update_cell(cell_id, "y = 3")
        assert raised.value.code == "CELL_NOT_FOUND" and raised.value.details["cell_id"] == cell_id
        with pytest.raises(CellNotFound):
            await nb.run_cell("no-such-cell")
        with pytest.raises(InvalidInput):
            await nb.insert_cell("z", cell_type="sql")
        assert [cell.source for cell in nb.cells] == ["x = 1"]


async def test_watch_yields_the_persons_changes_with_their_name(live_server, notebook_path):
    async with (
        open_live(live_server, notebook_path) as nb,
        RawPeer.join(live_server, notebook_path) as person,
    ):
        cell_id = nb.cells[0].id
        changes = nb.watch(timeout=10)
        source = person.cell(cell_id)["source"]
        source += "  # checked"
        change = await changes.__anext__()
        assert change.changed_cell_ids == [cell_id]
        assert nb.cell(cell_id).source == "x = 1  # checked"
        assert nb.to_frame().set_index("id").loc[cell_id, "last_editor"] != ""

        ours = await nb.insert_cell("y = 2")  # the room's echo of our own write is no one's change
        await wait_until(
            lambda: any(cell.get("id") == ours for cell in person.cells), what="our cell at the person"
        )
        index = next(number for number, cell in enumerate(person.cells) if cell["id"] == ours)
        del person.notebook.ycells[index]  # a deletion alone: no state vector moves
        change = await changes.__anext__()
        assert change.changed_cell_ids == [] and change.removed_cell_ids == [ours]
        await changes.aclose()


async def test_the_agent_is_announced_with_its_name_colour_and_cursor(live_server, notebook_path):
    async with open_live(live_server, notebook_path, user_name="Agent Smith", color="#ff0000") as nb:
        async with open_live(live_server, notebook_path, user_name="Watcher") as watcher:
            cell_id = nb.cells[0].id
            await nb.update_cell(cell_id, "x = 2")

            def agent_state() -> dict[str, object] | None:
                for state in watcher.connection.awareness.states.values():
                    if (state.get("user") or {}).get("display_name") == "Agent Smith" and state.get(
                        "cursors"
                    ):
                        return state
                return None

            await wait_until(lambda: agent_state() is not None, what="the agent's awareness with a cursor")
            state = agent_state()
            assert state["user"]["color"] == "#ff0000" and state["user"]["initials"] == "AS"
            cursor = state["cursors"][0]
            assert cursor["primary"] and cursor["empty"] and "item" in cursor["head"]
            assert "Agent Smith" in watcher.collaborators()
            assert nb.presence is not None and nb.presence.is_open  # the globalAwareness room


async def test_a_missing_notebook_and_a_wrong_token_are_typed(live_server, notebook_path):
    with pytest.raises(NotebookNotFound):
        await LiveNotebook.open("nope.ipynb", server_url=live_server.base_url, token=live_server.token)
    with pytest.raises(AuthRequired) as raised:
        await LiveNotebook.open(notebook_path, server_url=live_server.base_url, token="wrong-token")
    assert "wrong-token" not in str(raised.value)
    with pytest.raises(InvalidInput):
        await LiveNotebook.open("../etc/passwd", server_url=live_server.base_url, token="t")


async def test_a_notebook_deleted_under_the_agent_is_typed(live_server, notebook_path):
    async with open_live(live_server, notebook_path, reconnect_timeout=5.0) as nb:
        await nb.api.request("DELETE", f"api/contents/{notebook_path}")
        # the socket is cut (as by a restart): the next connection finds the file gone
        assert nb.connection is not None and nb.connection._socket is not None
        await nb.connection._socket.close()
        await wait_until(lambda: nb.connection.failure is not None, 15, "the connection to give up")
        with pytest.raises(NotebookNotFound):
            await nb.insert_cell("lost?")


async def test_two_writers_in_a_burst_lose_nothing(live_server, notebook_path):
    async with (
        open_live(live_server, notebook_path) as nb,
        RawPeer.join(live_server, notebook_path) as person,
    ):
        person_id = nb.cells[0].id
        agent_ids = []
        for number in range(20):
            person_text = person.cell(person_id)["source"]
            person_text += f"\n# person {number}"
            agent_ids.append(await nb.insert_cell(f"agent_{number} = {number}"))
            await asyncio.sleep(0)
        expected_person = "x = 1" + "".join(f"\n# person {number}" for number in range(20))
        await wait_until(
            lambda: nb.cell(person_id).source == expected_person, what="the person's text at the agent"
        )
        async with RawPeer.join(live_server, notebook_path) as checker:
            ids = [cell["id"] for cell in checker.cells]
            assert len(ids) == len(set(ids)) == 22
            assert ids[2:] == agent_ids
