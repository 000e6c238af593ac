"""Docs live benchmark: acked-insert latency of our client vs a Node ``@hocuspocus/provider`` client,
and the time to open a 1000-block document, all on the same local Hocuspocus 3.4.4 server.

Run: ``python benchmarks/docs_live.py`` (needs ``tests/interop/node_modules``: run the interop tests once,
or ``npm ci`` in ``tests/interop``). ``--inserts 200`` for a quick look. One table is printed; the
figure to read is the ratio of medians, ours / Node (target <= 1.0). Each client inserts one
paragraph block per transaction and waits until the server acknowledged it (SyncStatus), sequentially;
each client is one long-lived connection in its own room. After an unmeasured warm-up of both
(the Node server and the Node peer get faster for several hundred inserts as V8 optimises), each
client runs ``--inserts`` sequential inserts in turn, ``--repeats`` times, in ABBA order, so
neither always meets a warmer server and background load hits both alike. Node keeps speeding up
over long runs (``--inserts 4000``): the ratio depends on how warm V8 is, and the table says which
protocol produced it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

from pycrdt import Doc

from elynav_nb.docs.blocknote import insert_block, read_blocks
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.docs.markdown.inline import clear_render_cache

INTEROP = Path(__file__).resolve().parent.parent / "tests" / "interop"
ORIGIN = "http://localhost:3000"


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        ["node", str(INTEROP / "node" / "hocuspocus_server.mjs"), json.dumps({"allowed_origins": [ORIGIN]})],
        cwd=INTEROP,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    port = json.loads(process.stdout.readline())["port"]
    return process, f"ws://127.0.0.1:{port}/collaboration/ws/"


async def node_peer_call(process: Any, op: str, **arguments: Any) -> dict[str, Any]:
    process.stdin.write((json.dumps({"op": op, **arguments}) + "\n").encode())
    await process.stdin.drain()
    answer: dict[str, Any] = json.loads(await process.stdout.readline())
    return answer


def connection(ws_url: str, room: str) -> DocsConnection:
    return DocsConnection(Doc(), url=ws_url, document_name=room, origin=ORIGIN, cookie="docs_sessionid=bench")


async def python_latencies(client: DocsConnection, count: int) -> list[float]:
    latencies: list[float] = []
    for index in range(count):
        started = time.perf_counter()
        insert_block(client.doc, f"python insert {index}")
        await client.await_flush(timeout=10)
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


async def start_node_peer(ws_url: str) -> Any:
    process = await asyncio.create_subprocess_exec(
        "node",
        str(INTEROP / "node" / "provider_peer.mjs"),
        cwd=INTEROP,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,
    )
    connected = await node_peer_call(
        process, "connect", url=ws_url, room=str(uuid.uuid4()), origin=ORIGIN, cookie="docs_sessionid=bench"
    )
    assert connected["ok"], connected
    return process


async def node_latencies(process: Any, count: int) -> list[float]:
    answer = await node_peer_call(process, "bench_inserts", count=count)
    return [float(value) for value in answer["latencies_ms"]]


async def open_times(ws_url: str, blocks: int, repeats: int) -> tuple[list[float], list[float]]:
    room = str(uuid.uuid4())
    keeper = connection(ws_url, room)  # keeps the room alive with its blocks
    await keeper.open()
    with keeper.doc.transaction():  # one update for the whole document
        for index in reversed(range(blocks)):
            insert_block(keeper.doc, f"block {index} with **bold** and `code`")
    await keeper.await_flush(timeout=30)
    handshakes: list[float] = []
    reads: list[float] = []
    for _ in range(repeats):
        reader = connection(ws_url, room)
        started = time.perf_counter()
        await reader.open()
        handshakes.append((time.perf_counter() - started) * 1000)
        clear_render_cache()  # a first read: nothing remembered from the previous repetition
        started = time.perf_counter()
        assert len(read_blocks(reader.doc)) == blocks
        reads.append((time.perf_counter() - started) * 1000)
        await reader.close()
    await keeper.close()
    return handshakes, reads


async def main(arguments: argparse.Namespace) -> None:
    server, ws_url = start_server()
    try:
        # One long-lived client each, in its own room: both stay warm (the Node peer's JIT, our
        # interpreter caches) and both documents grow alike. The server's own JIT gets faster for
        # several hundred inserts, so both clients warm up first, unmeasured.
        peer = await start_node_peer(ws_url)
        client = connection(ws_url, str(uuid.uuid4()))
        await client.open()
        await node_latencies(peer, arguments.warmup)
        await python_latencies(client, arguments.warmup)
        node: list[float] = []
        ours: list[float] = []
        for repeat in range(arguments.repeats):  # ABBA order: neither client always goes first
            if repeat % 2 == 0:
                ours += await python_latencies(client, arguments.inserts)
                node += await node_latencies(peer, arguments.inserts)
            else:
                node += await node_latencies(peer, arguments.inserts)
                ours += await python_latencies(client, arguments.inserts)
        await client.close()
        await node_peer_call(peer, "quit")
        await peer.wait()
        handshakes, reads = await open_times(ws_url, arguments.blocks, 5)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    ours_median, node_median = statistics.median(ours), statistics.median(node)
    print(
        f"Hocuspocus 3.4.4 on loopback, {arguments.repeats} x {arguments.inserts} sequential acked inserts "
        f"per client, after {arguments.warmup} unmeasured"
    )
    print(f"{'measure':<42}{'elynav_nb':>12}{'node':>12}{'ratio':>8}")
    print(
        f"{'acked insert, median (ms)':<42}{ours_median:>12.3f}{node_median:>12.3f}{ours_median / node_median:>8.2f}"
    )
    p95_ours = statistics.quantiles(ours, n=20)[-1]
    p95_node = statistics.quantiles(node, n=20)[-1]
    print(f"{'acked insert, p95 (ms)':<42}{p95_ours:>12.3f}{p95_node:>12.3f}{p95_ours / p95_node:>8.2f}")
    label = f"open {arguments.blocks}-block doc: handshake (ms)"
    print(f"{label:<42}{statistics.median(handshakes):>12.1f}{'-':>12}{'-':>8}")
    label = f"open {arguments.blocks}-block doc: read blocks (ms)"
    print(f"{label:<42}{statistics.median(reads):>12.1f}{'-':>12}{'-':>8}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--inserts", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2, help="runs of --inserts per client, in ABBA order")
    parser.add_argument("--warmup", type=int, default=300, help="unmeasured inserts per client first")
    asyncio.run(main(parser.parse_args()))
