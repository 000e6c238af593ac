"""A peer nobody here wrote in the same room: Datalayer's jupyter-nbmodel-client writes beside LiveNotebook.

jupyter-nbmodel-client finds rooms through jupyter-collaboration's session endpoint only, so this runs on
that backend. Both write at once, each into the other's cells too; afterwards a third peer reads the room:
every cell there once, every text as its last writer left it, and the saved file is valid.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from elynav_nb.notebook import LiveNotebook
from tests.tiers import needs

from .servers import LIVE, RawPeer, live_missing, wait_until

pytestmark = [needs(LIVE, live_missing()), pytest.mark.live, pytest.mark.anyio]


async def test_nbmodel_client_and_the_agent_write_in_the_same_room(live_server, notebook_path):
    if live_server.backend != "collaboration":
        pytest.skip(
            "jupyter-nbmodel-client finds rooms through jupyter-collaboration's session endpoint only"
        )
    from jupyter_nbmodel_client import NbModelClient, get_jupyter_notebook_websocket_url

    url = await asyncio.to_thread(
        get_jupyter_notebook_websocket_url, live_server.base_url, notebook_path, live_server.token
    )
    async with LiveNotebook.open(
        notebook_path, server_url=live_server.base_url, token=live_server.token
    ) as nb:
        other = NbModelClient(url, username="nbmodel")
        await other.start()
        try:
            agent_ids: list[str] = []
            for number in range(10):
                other.add_code_cell(f"from_nbmodel_{number} = {number}")
                agent_ids.append(await nb.insert_cell(f"from_agent_{number} = {number}"))
            await wait_until(lambda: len(nb.cells) == 22, what="the agent sees the other writer's cells")
            their_cell = next(cell for cell in nb.cells if cell.source == "from_nbmodel_0 = 0")
            await nb.update_cell(their_cell.id, "from_nbmodel_0 = 'edited by the agent'")
            ours_index = [cell.id for cell in nb.cells].index(agent_ids[0])
            await wait_until(lambda: len(other) == 22, what="nbmodel sees the agent's cells")
            other.set_cell_source(ours_index, "from_agent_0 = 'edited by nbmodel'")
            await wait_until(
                lambda: nb.cell(agent_ids[0]).source == "from_agent_0 = 'edited by nbmodel'",
                what="the agent sees nbmodel's edit",
            )
            await asyncio.sleep(0.5)  # nbmodel's client has no acknowledgement: let its last update leave
        finally:
            await other.stop()
        async with RawPeer.join(live_server, notebook_path) as checker:
            cells = checker.cells
        ids = [cell["id"] for cell in cells]
        sources = [cell["source"] for cell in cells]
        assert len(ids) == len(set(ids)) == 22
        assert sorted(source for source in sources if source.startswith("from_nbmodel_")) == sorted(
            ["from_nbmodel_0 = 'edited by the agent'"] + [f"from_nbmodel_{n} = {n}" for n in range(1, 10)]
        )
        assert sorted(source for source in sources if source.startswith("from_agent_")) == sorted(
            ["from_agent_0 = 'edited by nbmodel'"] + [f"from_agent_{n} = {n}" for n in range(1, 10)]
        )

    import nbformat

    def saved_sources() -> list[str]:
        return [
            "".join(cell["source"])
            for cell in json.loads((live_server.root_dir / notebook_path).read_text())["cells"]
        ]

    await wait_until(lambda: sorted(saved_sources()) == sorted(sources), 15, "the save")
    nbformat.validate(nbformat.reads((live_server.root_dir / notebook_path).read_text(), as_version=4))
