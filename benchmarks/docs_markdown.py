"""Whole-markdown writing benchmark: ``insert_markdown`` of a 1,000-block markdown file, time until the
server acknowledged it, against BlockNote (``tryParseMarkdownToBlocks``, the 0.51.4 name of
``markdownToBlocks``, then ``blocksToYXmlFragment`` into a live ``@hocuspocus/provider`` document),
both on the same local Hocuspocus 3.4.4 server.

Run: ``python benchmarks/docs_markdown.py`` (needs ``tests/interop/node_modules``: run the interop tests
once, or ``npm ci`` in ``tests/interop``). ``--repeats 4`` for a quick look. One table is printed; the
figure to read is the ratio of medians, ours / Node (below 1.0: we are faster).

What is timed, per client and per repetition, in a fresh empty room joined beforehand (the
handshake is not timed): from the markdown text to the server's acknowledgement of the one update
that carries the blocks. Ours: ``insert_markdown(doc, markdown)`` (parse, validate, build the nodes in
one pycrdt transaction) then ``await_flush()``. Node: parse with BlockNote, write the blocks into the
provider's fragment (one Yjs transaction), wait for ``unsyncedChanges`` to reach 0. The parse column
is measured apart (ours: ``parse_markdown`` + ``prepare_blocks``; Node: ``tryParseMarkdownToBlocks``).
Both clients warm up first, unmeasured (V8 gets faster over the first runs), then alternate in
ABBA order so background load hits both alike.
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

from elynav_nb.docs.blocknote import read_blocks
from elynav_nb.docs.blocknote.builder import insert_markdown, prepare_blocks
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.docs.markdown.blocks import parse_markdown

INTEROP = Path(__file__).resolve().parent.parent / "tests" / "interop"
ORIGIN = "http://localhost:3000"
COOKIE = "docs_sessionid=bench"


def make_markdown(block_count: int) -> str:
    """A document of exactly ``block_count`` blocks (nested ones included) of every supported type."""
    pieces: list[str] = []
    count = 0
    section = 0
    patterns: list[tuple[int, str]] = [
        (1, "## Section {n}"),
        (
            1,
            "A paragraph about item {n} with **bold**, *italic*, `code` and [a link](https://example.org/{n}).",
        ),
        (4, "- first point {n}\n  - a detail\n- second point\n- third point"),
        (3, "1. step one\n2. step two\n3. step three"),
        (2, "- [ ] to do {n}\n- [x] done"),
        (1, "> A quote worth keeping, number {n}."),
        (1, "```python\ndef f_{n}(x):\n    return x * 2\n```"),
        (1, "| Name | Role | Since |\n|---|:-:|--:|\n| Ana | dev | 2021 |\n| Bo {n} | ops | 2023 |"),
        (1, "---"),
        (1, "![Figure {n}](https://example.org/figure-{n}.png)"),
    ]
    while count < block_count:
        section += 1
        for size, pattern in patterns:
            if count + size > block_count:
                size, pattern = 1, "Closing paragraph {n}."
            pieces.append(pattern.format(n=section))
            count += size
            if count >= block_count:
                break
    return "\n\n".join(pieces) + "\n"


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


async def start_node_peer() -> Any:
    return await asyncio.create_subprocess_exec(
        "node",
        str(INTEROP / "node" / "provider_peer.mjs"),
        cwd=INTEROP,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,
    )


async def node_peer_call(process: Any, op: str, **arguments: Any) -> dict[str, Any]:
    process.stdin.write((json.dumps({"op": op, **arguments}) + "\n").encode())
    await process.stdin.drain()
    answer: dict[str, Any] = json.loads(await process.stdout.readline())
    if not answer.get("ok"):
        raise RuntimeError(f"node peer {op}: {answer}")
    return answer


Run = tuple[float, float, float, int]
"""(ms from markdown to acknowledged, ms parsing, ms building the Yjs nodes, blocks written)"""


async def node_run(peer: Any, ws_url: str, markdown: str) -> Run:
    """BlockNote in a fresh room."""
    await node_peer_call(peer, "connect", url=ws_url, room=str(uuid.uuid4()), origin=ORIGIN, cookie=COOKIE)
    answer = await node_peer_call(peer, "bench_markdown", markdown=markdown)
    return (
        float(answer["total_ms"]),
        float(answer["parse_ms"]),
        float(answer["write_ms"]),
        int(answer["blocks"]),
    )


async def python_run(ws_url: str, markdown: str) -> Run:
    """``insert_markdown`` in a fresh room (the build time is the insert's, less the parse's)."""
    started = time.perf_counter()
    prepare_blocks(parse_markdown(markdown))
    parse_ms = (time.perf_counter() - started) * 1000
    client = DocsConnection(Doc(), url=ws_url, document_name=str(uuid.uuid4()), origin=ORIGIN, cookie=COOKIE)
    await client.open()
    try:
        started = time.perf_counter()
        ids = insert_markdown(client.doc, markdown)
        inserted = time.perf_counter()
        await client.await_flush(timeout=60)
        total_ms = (time.perf_counter() - started) * 1000
        assert len(read_blocks(client.doc)) > 0
    finally:
        await client.close()
    return total_ms, parse_ms, (inserted - started) * 1000 - parse_ms, len(ids)


async def main(arguments: argparse.Namespace) -> None:
    markdown = make_markdown(arguments.blocks)
    server, ws_url = start_server()
    peer = await start_node_peer()
    ours: list[Run] = []
    node: list[Run] = []
    try:
        for _ in range(arguments.warmup):
            await node_run(peer, ws_url, markdown)
            await python_run(ws_url, markdown)
        our_blocks = node_blocks = 0
        for repeat in range(arguments.repeats):  # ABBA order: neither client always goes first
            for python_turn in (True, False) if repeat % 4 in (0, 3) else (False, True):
                if python_turn:
                    ours.append(await python_run(ws_url, markdown))
                    our_blocks = ours[-1][3]
                else:
                    node.append(await node_run(peer, ws_url, markdown))
                    node_blocks = node[-1][3]
        await node_peer_call(peer, "quit")
        await peer.wait()
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    print(
        f"Hocuspocus 3.4.4 on loopback; {len(markdown):,} bytes of markdown, {our_blocks} blocks "
        f"(BlockNote: {node_blocks} top-level); {arguments.repeats} runs per client after "
        f"{arguments.warmup} unmeasured, each in a fresh room"
    )
    print(f"{'measure (median ms)':<44}{'elynav_nb':>12}{'BlockNote':>12}{'ratio':>8}")
    for label, column in [
        ("markdown -> acknowledged (total)", 0),
        ("  of which: parse", 1),
        ("  of which: build the nodes (1 transaction)", 2),
    ]:
        ours_median = statistics.median(run[column] for run in ours)
        node_median = statistics.median(run[column] for run in node)
        print(f"{label:<44}{ours_median:>12.1f}{node_median:>12.1f}{ours_median / node_median:>8.2f}")
    our_totals = [run[0] for run in ours]
    node_totals = [run[0] for run in node]
    spread = f"{min(our_totals):.0f} .. {max(our_totals):.0f}"
    print(f"{'total, min .. max':<44}{spread:>12}{f'{min(node_totals):.0f} .. {max(node_totals):.0f}':>12}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--blocks", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=12, help="runs per client, in ABBA order")
    parser.add_argument("--warmup", type=int, default=4, help="unmeasured runs per client first")
    asyncio.run(main(parser.parse_args()))
