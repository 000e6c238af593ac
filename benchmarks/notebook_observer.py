"""The observer of ``notebook_live.py``: a third peer in a notebook's room, in a process of its own.

Why a process: in the writer's process, the observer's socket waits while the writer's own client
handles its messages (ours its acknowledgement), so "seen" charged the writer's work to the
server's path. A person's browser is another process too.

Run by the benchmark as ``python benchmarks/notebook_observer.py ROOM_URL PATH``. It joins the room
with pycrdt's own ``Provider`` (``tests.notebook.servers.RawPeer``) and keeps, for each fact a
measure waits for, the ``time.perf_counter()`` of the first change that showed it (on Linux the
clock is ``CLOCK_MONOTONIC``, the same in every process):

- ``("source", text)``: a cell holds ``text``;
- ``("output", cell_id, text)``: that cell's stream outputs read ``text`` (a run's outputs seen);
- ``("run", cell_id, execution_count)``: that cell has outputs and that count (a run's end seen: both
  clients write the count last, as JupyterLab does).

Lines in (JSON): ``{"source": text}``, ``{"output": cell_id, "contains": text}``, ``{"run": cell_id,
"after": count}`` (a count above ``after``), ``{"count": cell_id}`` (its count now). Each is answered by one line ``{"at": seconds}``
or ``{"count": n}``, once the fact is there. ``{"ready": true}`` once synced.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.notebook.servers import RawPeer  # noqa: E402


class FirstSeen:
    """The facts of the room, each with the time of the first change that showed it."""

    def __init__(self, peer: RawPeer) -> None:
        self.peer = peer
        self.seen: dict[tuple[Any, ...], float] = {}
        self.changed = asyncio.Event()
        peer.notebook.ydoc.observe(self._on_change)
        self._record(time.perf_counter())

    def _on_change(self, _event: Any) -> None:  # inside the commit: timed now, read just after it
        now = time.perf_counter()
        asyncio.get_running_loop().call_soon(self._record, now)

    def _record(self, now: float) -> None:
        for cell in self.peer.cells:
            facts = [("source", cell.get("source"))]
            if cell.get("outputs"):
                facts.append(("run", cell.get("id"), cell.get("execution_count")))
                streams = [output for output in cell["outputs"] if output.get("output_type") == "stream"]
                facts.append(("output", cell.get("id"), "".join(str(output["text"]) for output in streams)))
            for fact in facts:
                self.seen.setdefault(fact, now)
        self.changed.set()

    async def first(self, matches: Any) -> float:
        while True:
            times = [at for fact, at in self.seen.items() if matches(fact)]
            if times:
                return min(times)
            self.changed.clear()
            await self.changed.wait()

    def count(self, cell_id: str) -> Any:
        return next(
            (cell.get("execution_count") for cell in self.peer.cells if cell.get("id") == cell_id), None
        )


def later(count: Any, after: Any) -> bool:
    """A count of a run after the one that gave ``after`` (a kernel's counts only grow)."""
    return count is not None and (after is None or count > after)


async def answer(seen: FirstSeen, request: dict[str, Any]) -> dict[str, Any]:
    if "source" in request:
        return {"at": await seen.first(lambda fact: fact == ("source", request["source"]))}
    if "output" in request:
        return {
            "at": await seen.first(
                lambda fact: (
                    fact[0] == "output" and fact[1] == request["output"] and request["contains"] in fact[2]
                )
            )
        }
    if "run" in request:
        return {
            "at": await seen.first(
                lambda fact: (
                    fact[0] == "run" and fact[1] == request["run"] and later(fact[2], request["after"])
                )
            )
        }
    return {"count": seen.count(request["count"])}


async def main(url: str, path: str) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    async with RawPeer.join_url(url, path) as peer:
        seen = FirstSeen(peer)
        print(json.dumps({"ready": True}), flush=True)
        while line := await reader.readline():
            print(json.dumps(await answer(seen, json.loads(line))), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
