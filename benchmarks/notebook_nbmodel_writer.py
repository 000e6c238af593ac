"""jupyter-nbmodel-client as the second writer of ``notebook_live.py``, in a process of its own.

Why a process: in one event loop, each client handles the other's updates while it waits for its
own, so their timings mix; a person's JupyterLab and an agent are separate processes too. Measured
2026-12-06, our acknowledged insert took the same either way (4.2-4.4 ms in the benchmark, where the
server relays it to two other peers before it answers our probe; ~2.7 ms with no other peer).

Run by the benchmark as ``python benchmarks/notebook_nbmodel_writer.py BASE_URL TOKEN PATH [KERNEL_ID]``.
Lines in (JSON), each answered by one line once done, with ``time.perf_counter()`` stamps (on Linux
``CLOCK_MONOTONIC``, the same in every process):

- ``{"insert": text}`` -> ``{"started", "returned", "index", "id"}`` (``add_code_cell``);
- ``{"edit": cell_id, "text": text}`` -> ``{"started", "returned"}`` (``set_cell_source``);
- ``{"run": cell_id}`` -> ``{"started", "returned", "result"}`` (``execute_cell`` with
  ``jupyter_kernel_client``, and what it returned);
- any of them with ``"until_found": {"text": t, "where": "source" | "outputs"}``: after the call, a fresh
  client is connected until it finds ``t`` (nbmodel has no acknowledgement: the cheapest way its user
  knows the room holds a write), and ``"found"`` is stamped.

``{"ready": true}`` once connected.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from jupyter_nbmodel_client import NbModelClient, get_jupyter_notebook_websocket_url


async def finds(url: str, text: str, where: str) -> bool:
    fresh = NbModelClient(url, username="nbmodel-check")
    await fresh.start()
    try:
        for index in range(len(fresh)):
            cell = fresh[index]
            if where == "source" and "".join(cell["source"]) == text:
                return True
            outputs = cell.get("outputs", []) if where == "outputs" else []
            if any(text in "".join(output.get("text", "")) for output in outputs):
                return True
        return False
    finally:
        await fresh.stop()


def index_of(client: NbModelClient, cell_id: str) -> int:
    """The cell's index now (nbmodel's calls take indexes, which others' inserts move)."""
    return next(index for index in range(len(client)) if client[index]["id"] == cell_id)


async def answer(client: NbModelClient, kernel: Any, url: str, request: dict[str, Any]) -> dict[str, Any]:
    index = (
        index_of(client, request.get("edit") or request.get("run") or "") if "insert" not in request else 0
    )
    started = time.perf_counter()
    reply: dict[str, Any] = {}
    if "insert" in request:
        reply["index"] = client.add_code_cell(request["insert"])
    elif "edit" in request:
        client.set_cell_source(index, request["text"])
    elif "run" in request:
        reply["result"] = await asyncio.to_thread(client.execute_cell, index, kernel)  # it blocks
    reply.update(started=started, returned=time.perf_counter())
    if "index" in reply:
        reply["id"] = client[reply["index"]]["id"]
    if "until_found" in request:
        wanted = request["until_found"]
        while not await finds(url, wanted["text"], wanted.get("where", "source")):
            pass
        reply["found"] = time.perf_counter()
    return reply


async def main(base_url: str, token: str, path: str, kernel_id: str | None) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    url = await asyncio.to_thread(get_jupyter_notebook_websocket_url, base_url, path, token)
    client = NbModelClient(url, username="nbmodel")
    await client.start()
    kernel = None
    if kernel_id:
        from jupyter_kernel_client import JupyterKernelClient

        kernel = JupyterKernelClient(server_url=base_url, token=token, kernel_id=kernel_id)
        kernel.start()
    try:
        print(json.dumps({"ready": True}), flush=True)
        while line := await reader.readline():
            print(json.dumps(await answer(client, kernel, url, json.loads(line))), flush=True)
    finally:
        if kernel is not None:
            kernel.stop(shutdown_kernel=False)
        await client.stop()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None))
