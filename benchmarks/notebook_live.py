"""Live-notebook benchmark: ``LiveNotebook`` against Datalayer's jupyter-nbmodel-client, same server, same run.

Run: ``python benchmarks/notebook_live.py`` from the repository root, in a venv with the live extra
(``pip install -e '.[test,live]' jupyter-kernel-client``). It starts a real JupyterLab with
jupyter-collaboration on loopback (the tests' harness), and an observer peer (pycrdt's own Provider)
in each room, in a process of its own (``notebook_observer.py``: it timestamps what it sees, so the
writers' own work in this process is not charged to what the server takes to relay). nbmodel's
client writes from a process of its own too (``notebook_nbmodel_writer.py``, which says why). Rounds
alternate the two clients (ABAB). Figures (medians, ms):

- insert, returned: the call's return. Ours returns once the room acknowledged the write (a probe
  answered); nbmodel's ``add_code_cell`` returns at once, before anything was sent.
- insert, held (known to the writer): ours as above; nbmodel has no acknowledgement, so the cheapest
  way its user can know is a fresh ``NbModelClient`` that finds the cell (what the facts note suggests).
- 1,000-character edit held, run to its outputs held: the same criterion (ours: ``update_cell`` and
  ``run_cell`` return acknowledged; nbmodel: its call, then a fresh client that finds the text).
- insert / 1,000-character edit, seen by the observer: the same criterion for both (the server applied
  and broadcast it).
- a run at the observer: ours ``run_cell`` (kernel WebSocket); nbmodel ``execute_cell`` with
  ``jupyter_kernel_client`` on the same kernel (it blocks, so it runs on a thread). Both show a run as
  JupyterLab does (cleared, outputs as they come, the count last), so two figures: its outputs seen
  (each round prints its own token) and its end seen (the outputs with the new count).
- the ``.ipynb`` written through the contents API (GET, add a cell, PUT), as tools without RTC do.
- each measured write starts after ``QUIET_SECONDS`` of quiet (see ``quiet``), so that neither client's
  trailing traffic is charged to the other.
- floors (``notebook_floors.py``): the server's relay alone and the kernel alone, which no client goes below.
- lost edits: a burst of inserts by each client with the server killed (SIGKILL) and restarted in the
  middle; the count of inserts that returned but are not in the room afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from notebook_floors import kernel_floor, relay_floor  # noqa: E402

from elynav_nb.notebook import LiveNotebook  # noqa: E402
from tests.browser.lab_server import LabServer, write_notebook  # noqa: E402
from tests.notebook.servers import RawPeer, restart, room_url  # noqa: E402


class Helper:
    """A helper script of this folder in a process of its own, asked by JSON lines (one answer each)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    @contextlib.asynccontextmanager
    async def start(cls, script: str, *arguments: str) -> AsyncIterator[Any]:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(Path(__file__).with_name(script)),
            *arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        helper = cls(process)
        try:
            if not (await helper._line()).get("ready"):
                raise RuntimeError(f"{script} did not start")
            yield helper
        finally:
            process.stdin.close()  # type: ignore[union-attr]
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:  # stuck on a request that failed: do not wait for ever
                process.kill()
                await process.wait()

    async def _line(self) -> dict[str, Any]:
        line = await asyncio.wait_for(self.process.stdout.readline(), 60)  # type: ignore[union-attr]
        if not line:
            raise RuntimeError("the helper ended")
        return json.loads(line)

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        self.process.stdin.write((json.dumps(request) + "\n").encode())  # type: ignore[union-attr]
        return await self._line()


class Observer(Helper):
    """A third peer in the room (``notebook_observer.py``, which says why it has a process of its own)."""

    @classmethod
    def join(cls, server: LabServer, path: str) -> contextlib.AbstractAsyncContextManager[Observer]:
        @contextlib.asynccontextmanager
        async def joined() -> AsyncIterator[Observer]:
            async with cls.start("notebook_observer.py", await room_url(server, path), path) as observer:
                yield observer

        return joined()

    async def source_seen(self, text: str) -> float:
        """When a cell holding ``text`` was first seen (``time.perf_counter``, shared by the processes)."""
        return (await self.ask({"source": text}))["at"]

    async def count(self, cell_id: str) -> Any:
        return (await self.ask({"count": cell_id}))["count"]

    async def output_seen(self, cell_id: str, text: str) -> float:
        """When the cell's stream outputs were first seen holding ``text``."""
        return (await self.ask({"output": cell_id, "contains": text}))["at"]

    async def run_seen(self, cell_id: str, after: Any) -> float:
        """When the cell was first seen with outputs and an execution count above ``after``."""
        return (await self.ask({"run": cell_id, "after": after}))["at"]


def nbmodel_writer(
    server: LabServer, path: str, kernel_id: str = ""
) -> contextlib.AbstractAsyncContextManager[Helper]:
    """jupyter-nbmodel-client in a process of its own (``notebook_nbmodel_writer.py``, which says why)."""
    return Helper.start("notebook_nbmodel_writer.py", server.base_url, server.token, path, kernel_id)


QUIET_SECONDS = 0.4


async def quiet() -> None:
    """A pause before each measured write: the server leaves Nagle on, so a message it relays to the
    observer right after another one waits for the observer's delayed TCP ACK (up to 40 ms). Without the
    pause, one client's trailing messages (our cursor, sent 0.25 s after a burst) land on the other's
    measure: the figures before 2026-12-05 charged nbmodel ~40 ms that way."""
    await asyncio.sleep(QUIET_SECONDS)


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.2f}" if values else "-"


async def nbmodel_client(server: LabServer, path: str) -> Any:
    from jupyter_nbmodel_client import NbModelClient, get_jupyter_notebook_websocket_url

    url = await asyncio.to_thread(get_jupyter_notebook_websocket_url, server.base_url, path, server.token)
    client = NbModelClient(url, username="nbmodel")
    await client.start()
    return client, url


async def inserts_and_edits(server: LabServer, rounds: int) -> dict[str, list[float]]:
    write_notebook(server.root_dir / "edits.ipynb", ["x = 1"])
    figures: dict[str, list[float]] = {}
    add = lambda key, value: figures.setdefault(key, []).append(value)  # noqa: E731
    async with (
        Observer.join(server, "edits.ipynb") as observer,
        nbmodel_writer(server, "edits.ipynb") as theirs,
    ):
        ours = await LiveNotebook.open("edits.ipynb", server_url=server.base_url, token=server.token)
        try:
            for round_number in range(rounds + 2):  # two warm-up rounds, not counted
                counted = round_number >= 2
                checked = counted and round_number < 7  # nbmodel held: a fresh connection per check
                text = f"ours_{uuid.uuid4().hex}"
                await quiet()
                started = time.perf_counter()
                cell_id = await ours.insert_cell(text)
                returned = time.perf_counter()
                seen = await observer.source_seen(text)
                if counted:
                    add("insert returned/ours", returned - started)
                    add("insert held/ours", returned - started)
                    add("insert seen/ours", seen - started)

                text = f"nbmodel_{uuid.uuid4().hex}"
                await quiet()
                done = await theirs.ask({"insert": text})
                their_id = done["id"]
                seen = await observer.source_seen(text)
                if counted:
                    add("insert returned/nbmodel", done["returned"] - done["started"])
                    add("insert seen/nbmodel", seen - done["started"])
                if checked:
                    text = f"nbmodel_{uuid.uuid4().hex}"
                    await quiet()
                    done = await theirs.ask({"insert": text, "until_found": {"text": text}})
                    add("insert held/nbmodel", done["found"] - done["started"])

                long_text = "".join(chr(97 + (round_number + n) % 26) for n in range(1000))
                await quiet()
                started = time.perf_counter()
                await ours.update_cell(cell_id, long_text)
                returned = time.perf_counter()
                seen = await observer.source_seen(long_text)
                if counted:
                    add("1,000-char edit returned/ours", returned - started)
                    add("1,000-char edit held/ours", returned - started)
                    add("1,000-char edit seen/ours", seen - started)
                long_text = long_text[::-1]
                await quiet()
                done = await theirs.ask({"edit": their_id, "text": long_text})
                seen = await observer.source_seen(long_text)
                if counted:
                    add("1,000-char edit returned/nbmodel", done["returned"] - done["started"])
                    add("1,000-char edit seen/nbmodel", seen - done["started"])
                if checked:
                    long_text = long_text.upper()
                    await quiet()
                    done = await theirs.ask(
                        {"edit": their_id, "text": long_text, "until_found": {"text": long_text}}
                    )
                    add("1,000-char edit held/nbmodel", done["found"] - done["started"])
        finally:
            await ours.close()
    return figures


async def runs(server: LabServer, rounds: int) -> dict[str, list[float]]:
    write_notebook(server.root_dir / "runs.ipynb", ["x = 1"])
    figures: dict[str, list[float]] = {}
    add = lambda key, value: figures.setdefault(key, []).append(value)  # noqa: E731
    ours = await LiveNotebook.open("runs.ipynb", server_url=server.base_url, token=server.token)
    kernel_id = await ours.api.start_kernel_for("runs.ipynb")
    try:
        async with (
            Observer.join(server, "runs.ipynb") as observer,
            nbmodel_writer(server, "runs.ipynb", kernel_id) as theirs,
        ):
            our_cell = await ours.insert_cell("print('ours', 6 * 7)")
            their_id = (await theirs.ask({"insert": "print('nbmodel', 6 * 7)"}))["id"]
            await observer.source_seen("print('nbmodel', 6 * 7)")
            for round_number in range(rounds + 2):
                counted = round_number >= 2
                token = f"round-{round_number}-"  # this round's output, told from the round before
                await ours.update_cell(our_cell, f"print('ours', '{token}')")
                count_before = await observer.count(our_cell)
                await quiet()
                started = time.perf_counter()
                await ours.run_cell(our_cell)
                returned = time.perf_counter()
                output_seen = await observer.output_seen(our_cell, token)
                seen = await observer.run_seen(our_cell, count_before)
                if counted:
                    add("run to its outputs held/ours", returned - started)
                    add("run to outputs seen/ours", output_seen - started)
                    add("run to its end seen/ours", seen - started)
                await theirs.ask({"edit": their_id, "text": f"print('nbmodel', '{token}')"})
                count_before = await observer.count(their_id)
                await quiet()
                done = await theirs.ask({"run": their_id})
                output_seen = await observer.output_seen(their_id, token)
                seen = await observer.run_seen(their_id, count_before)
                if counted:
                    add("run to outputs seen/nbmodel", output_seen - done["started"])
                    add("run to its end seen/nbmodel", seen - done["started"])
                if counted and round_number < 7:  # a fresh connection per check: a few rounds only
                    token = f"held-{round_number}-"
                    await theirs.ask({"edit": their_id, "text": f"print('nbmodel', '{token}')"})
                    await quiet()
                    done = await theirs.ask(
                        {"run": their_id, "until_found": {"text": token, "where": "outputs"}}
                    )
                    add("run to its outputs held/nbmodel", done["found"] - done["started"])
        figures["floor: the kernel alone"] = await kernel_floor(server, kernel_id, rounds, quiet)
    finally:
        await ours.close()
    return figures


async def contents_write(server: LabServer, rounds: int) -> dict[str, list[float]]:
    write_notebook(server.root_dir / "contents.ipynb", ["x = 1"])
    figures: dict[str, list[float]] = {}
    async with LiveNotebook.open("contents.ipynb", server_url=server.base_url, token=server.token) as ours:
        for _ in range(rounds):
            started = time.perf_counter()
            model = (await ours.api.request("GET", "api/contents/contents.ipynb")).json()
            content = model["content"]
            content["cells"].append(
                {
                    "cell_type": "code",
                    "source": "y = 2",
                    "metadata": {},
                    "outputs": [],
                    "execution_count": None,
                    "id": uuid.uuid4().hex[:8],
                }
            )
            await ours.api.save_as_ipynb("contents.ipynb", content)
            figures.setdefault(".ipynb via contents API (GET + PUT)", []).append(
                time.perf_counter() - started
            )
            started = time.perf_counter()
            await ours.insert_cell("y = 2")
            figures.setdefault(".ipynb via contents API (GET + PUT)/ours insert", []).append(
                time.perf_counter() - started
            )
    return figures


async def lost_in_a_burst(server: LabServer, writer: str, inserts: int) -> tuple[int, int]:
    """(returned, lost): inserts that returned, and those of them missing from the room afterwards."""
    path = f"burst-{writer}.ipynb"
    write_notebook(server.root_dir / path, ["x = 1"])
    written: list[str] = []
    if writer == "ours":
        nb = await LiveNotebook.open(
            path, server_url=server.base_url, token=server.token, ack_timeout=90, reconnect_timeout=90
        )
        try:
            for number in range(inserts):
                if number == inserts // 2:
                    await asyncio.to_thread(restart, server)
                text = f"ours_burst_{number}"
                await nb.insert_cell(text)
                written.append(text)
        finally:
            await nb.close()
    else:
        client, _ = await nbmodel_client(server, path)
        try:
            for number in range(inserts):
                if number == inserts // 2:
                    await asyncio.to_thread(restart, server)
                text = f"nbmodel_burst_{number}"
                try:
                    client.add_code_cell(text)
                    written.append(text)
                except Exception:  # its model after the socket died: counted as not written
                    pass
                await asyncio.sleep(0.005)
        finally:
            await client.stop()
    await asyncio.sleep(1.0)
    async with RawPeer.join(server, path) as peer:
        present = {cell["source"] for cell in peer.cells}
    return len(written), sum(1 for text in written if text not in present)


async def main(arguments: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="elynav-bench-notebooks-"))
    server = LabServer.start(folder)
    try:
        figures: dict[str, list[float]] = {}
        figures.update(await inserts_and_edits(server, arguments.rounds))
        figures["floor: the relay alone"] = await relay_floor(server, arguments.rounds, Observer, quiet)
        figures.update(await runs(server, arguments.run_rounds))
        figures.update(await contents_write(server, arguments.run_rounds))
        losses = {
            writer: await lost_in_a_burst(server, writer, arguments.burst) for writer in ("ours", "nbmodel")
        }
    finally:
        server.stop()
    print(
        f"\nlive notebooks, jupyter-collaboration, {arguments.rounds} rounds (runs: {arguments.run_rounds}); medians in ms\n"
    )
    print("| measure | ours | jupyter-nbmodel-client | ratio |\n|---|---|---|---|")
    for measure in (
        "insert returned",
        "insert held",
        "insert seen",
        "1,000-char edit returned",
        "1,000-char edit held",
        "1,000-char edit seen",
        "run to its outputs held",
        "run to outputs seen",
        "run to its end seen",
    ):
        ours_values, their_values = figures.get(f"{measure}/ours", []), figures.get(f"{measure}/nbmodel", [])
        ratio = (
            f"{statistics.median(ours_values) / statistics.median(their_values):.2f}x"
            if ours_values and their_values
            else "-"
        )
        print(f"| {measure} | {median_ms(ours_values)} | {median_ms(their_values)} | {ratio} |")
    relay, kernel = figures["floor: the relay alone"], figures["floor: the kernel alone"]
    print(
        f"| floor: the server's relay alone (a prepared insert on a bare WebSocket), seen | {median_ms(relay)} | "
        f"half of nbmodel's insert seen: {statistics.median(figures['insert seen/nbmodel']) * 500:.2f} | |"
    )
    print(
        f"| floor: the kernel alone (execute_request to idle) + the relay | {median_ms(kernel)} + {median_ms(relay)} | "
        f"half of nbmodel's run to its end seen: {statistics.median(figures['run to its end seen/nbmodel']) * 500:.2f} | |"
    )
    contents = figures[".ipynb via contents API (GET + PUT)"]
    ours_insert = figures[".ipynb via contents API (GET + PUT)/ours insert"]
    print(
        f"| one cell via the contents API (GET + PUT) vs our acknowledged insert | {median_ms(ours_insert)} | {median_ms(contents)} (contents API) | {statistics.median(ours_insert) / statistics.median(contents):.2f}x |"
    )
    for writer, (returned, lost) in losses.items():
        print(
            f"| lost in a burst of {arguments.burst} with a crash and restart: {writer} | {lost} of {returned} returned | | |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--run-rounds", type=int, default=10)
    parser.add_argument("--burst", type=int, default=40)
    asyncio.run(main(parser.parse_args()))
