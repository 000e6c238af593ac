"""The floors under ``notebook_live.py``'s figures: what the server and the kernel take, with no client work.

Both clients' "seen" and "run" figures go through the same server path; a ratio against
jupyter-nbmodel-client cannot go below what that path takes alone. Measured in the same run:

- relay: a cell insert prepared beforehand (its y-websocket update message built on a replica), sent
  on a bare WebSocket in the room, seen by the observer. No client does less.
- kernel: ``execute_request`` to its ``idle`` status and reply on the kernel WebSocket (our
  ``KernelClient``, nothing written to the notebook): the wait every run to its end shares.

So the end of a run, seen, cannot come sooner than kernel + relay, whoever writes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from typing import Any

import websockets
from jupyter_ydoc import YNotebook
from pycrdt import Doc

from elynav_nb.notebook import wire
from elynav_nb.notebook.kernel import KernelClient
from elynav_nb.notebook.server_api import JupyterServerApi
from tests.browser.lab_server import LabServer, write_notebook
from tests.notebook.servers import RawPeer, room_url


def _prepared_insert(peer: RawPeer, text: str) -> bytes:
    """The update message that inserts a cell reading ``text``, built on a replica of the room."""
    replica = YNotebook(Doc())
    replica.ydoc.apply_update(peer.notebook.ydoc.get_update())
    updates: list[bytes] = []
    replica.ydoc.observe(lambda event: updates.append(bytes(event.update)))
    replica.append_cell({"cell_type": "code", "source": text, "metadata": {}, "id": uuid.uuid4().hex})
    return wire.update_message(updates[-1])


async def relay_floor(server: LabServer, rounds: int, observer: Any, quiet: Any) -> list[float]:
    """Seconds from a prepared insert's send on a bare WebSocket to the observer seeing it, per round."""
    write_notebook(server.root_dir / "floor.ipynb", ["x = 1"])
    url = await room_url(server, "floor.ipynb")
    figures: list[float] = []
    async with (
        observer.join(server, "floor.ipynb") as seen_by,
        RawPeer.join_url(url, "floor.ipynb") as peer,
        websockets.connect(url, max_size=None) as bare,
    ):

        async def drain() -> None:
            with contextlib.suppress(websockets.ConnectionClosed):
                async for _ in bare:
                    pass

        reader = asyncio.get_running_loop().create_task(drain())
        try:
            for round_number in range(rounds + 2):
                text = f"floor_{uuid.uuid4().hex}"
                message = _prepared_insert(peer, text)
                await quiet()
                started = time.perf_counter()
                await bare.send(message)
                seen = await seen_by.source_seen(text)
                if round_number >= 2:
                    figures.append(seen - started)
        finally:
            reader.cancel()
    return figures


async def kernel_floor(server: LabServer, kernel_id: str, rounds: int, quiet: Any) -> list[float]:
    """Seconds from ``execute_request`` to its idle and reply on the kernel WebSocket, per round."""
    client = KernelClient(JupyterServerApi(server.base_url, server.token), kernel_id)
    figures: list[float] = []
    try:
        for round_number in range(rounds + 2):
            await quiet()
            started = time.perf_counter()
            await client.run(f"print('kernel', 'round-{round_number}-')", timeout=30)
            if round_number >= 2:
                figures.append(time.perf_counter() - started)
    finally:
        await client.close()
    return figures
