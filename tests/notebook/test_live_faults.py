"""Faults on real servers of both backends: a room that does not answer, a crash and restart mid-burst."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest

from elynav_nb.errors import RoomReset, SyncTimeout
from elynav_nb.notebook import LiveNotebook
from tests.tiers import needs

from .servers import LIVE, RawPeer, live_missing, restart, start_server, wait_until, write_notebook

pytestmark = [needs(LIVE, live_missing()), pytest.mark.live, pytest.mark.anyio]


async def test_a_write_returns_only_once_the_room_has_it(live_server, notebook_path):
    """The server is frozen (SIGSTOP): the write cannot be acknowledged, so it must not return."""
    async with LiveNotebook.open(
        notebook_path,
        server_url=live_server.base_url,
        token=live_server.token,
        ack_timeout=1.0,
    ) as nb:
        os.kill(live_server.process.pid, signal.SIGSTOP)
        try:
            with pytest.raises(SyncTimeout):
                await nb.insert_cell("late = True")
        finally:
            os.kill(live_server.process.pid, signal.SIGCONT)
        late_id = nb.cells[-1].id
        await nb.update_cell(late_id, "late = 'acknowledged'")  # the next write carries both
        async with RawPeer.join(live_server, notebook_path) as peer:
            sources = [cell["source"] for cell in peer.cells]
        assert sources == ["x = 1", "y = 2", "late = 'acknowledged'"]


@pytest.mark.parametrize(
    ("backend", "forget_store"),
    [("collaboration", False), ("collaboration", True), ("documents", False)],
    ids=["collaboration-store-kept", "collaboration-store-lost", "documents"],
)
async def test_a_crash_and_restart_in_a_burst_loses_and_duplicates_nothing(tmp_path, backend, forget_store):
    """Killed mid-burst: with its update store the room comes back and loads the older file over our
    last writes; without it the room is new (a reset). Either way every write is there once."""
    folder = tmp_path / "root"
    write_notebook(folder / "burst.ipynb", ["x = 1"])
    server = start_server(backend, folder)
    try:
        async with LiveNotebook.open(
            "burst.ipynb",
            server_url=server.base_url,
            token=server.token,
            ack_timeout=60.0,
            reconnect_timeout=60.0,
        ) as nb:
            written: list[str] = []
            for number in range(10):
                written.append(await nb.insert_cell(f"before_{number} = {number}"))
            await nb.update_cell(written[0], "before_0 = 'edited before the crash'")

            restarted = asyncio.Event()

            async def burst() -> None:  # writes before, during and after the crash (at most 200)
                for number in range(200):
                    written.append(await nb.insert_cell(f"during_{number} = {number}"))
                    if restarted.is_set() and number >= 15:
                        return

            task = asyncio.get_running_loop().create_task(burst())
            await wait_until(lambda: len(written) >= 15, what="the burst to start")
            await asyncio.to_thread(
                restart, server, forget_store=forget_store
            )  # SIGKILL: the last second of writes was never saved
            restarted.set()
            await asyncio.wait_for(task, 90)
            assert nb.connection is not None and nb.connection.reconnections >= 1
            if forget_store:
                assert nb.connection.resets >= 1
            async with RawPeer.join(server, "burst.ipynb") as peer:
                ids = [cell["id"] for cell in peer.cells]
                sources = [cell["source"] for cell in peer.cells]
            assert len(ids) == len(set(ids)) == len(written) + 1, sources
            assert ids[1:] == written
            assert sources[1] == "before_0 = 'edited before the crash'"
            lost = [cell_id for cell_id in written if cell_id not in ids]
            assert lost == []

        def saved() -> list[str]:
            return [cell["id"] for cell in json.loads((server.root_dir / "burst.ipynb").read_text())["cells"]]

        await wait_until(lambda: saved()[1:] == written, 20, "the save of every cell")
    finally:
        server.stop()


async def test_a_server_gone_for_good_fails_the_waiting_write_as_room_reset(tmp_path):
    folder = tmp_path / "root"
    write_notebook(folder / "gone.ipynb", ["x = 1"])
    server = start_server("collaboration", folder)
    try:
        async with LiveNotebook.open(
            "gone.ipynb",
            server_url=server.base_url,
            token=server.token,
            ack_timeout=30.0,
            reconnect_timeout=2.0,
        ) as nb:
            os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait(timeout=30)
            with pytest.raises(RoomReset) as raised:
                await nb.insert_cell("never acknowledged")
            assert raised.value.code == "ROOM_RESET" and raised.value.details["unacknowledged_writes"] == 1
            with pytest.raises(RoomReset):
                await nb.update_cell(nb.cells[0].id, "x = 2")  # the notebook stays failed: typed, no hang
    finally:
        server.stop()
