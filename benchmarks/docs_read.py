"""Docs read benchmark: a 10,000-block document to blocks and markdown, ours vs BlockNote in Node
(``yDocToBlocks`` + ``blocksToMarkdownLossy`` from ``@blocknote/server-util`` 0.51.4), and our peak memory.

Run: ``python benchmarks/docs_read.py`` (needs ``tests/interop/node_modules``). ``--blocks 2000`` for a
quick look. The document mixes headings, paragraphs with bold/italic/code/link runs and list items, as
written by our writer (so both readers see the same bytes). Times are medians of 3 runs after the
document is loaded; Node's process start-up and editor creation are not counted. Peak memory is
tracemalloc's peak over loading and reading (Python allocations; a separate, untimed run), plus the process RSS.
The reader remembers the markdown of inline runs it rendered: the timed reads forget it first (a
first read, as Node's); "re-read" is a second read of the unchanged document, as a session does
after each write and a live view on each change.
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import subprocess
import time
import tracemalloc
from pathlib import Path
from typing import Any

import psutil
from pycrdt import Doc

from elynav_nb.docs.blocknote import blocks_to_markdown, insert_block, read_blocks
from elynav_nb.docs.inline_markdown import clear_render_cache

INTEROP = Path(__file__).resolve().parent.parent / "tests" / "interop"


def build_document(count: int) -> bytes:
    """Blocks are inserted at the top in reverse order: each insert is O(1), the order is as listed."""
    doc: Doc[Any] = Doc()
    for index in reversed(range(count)):
        kind = index % 5
        if kind == 0:
            insert_block(doc, f"Section {index}", type="heading", level=2)
        elif kind == 1:
            insert_block(doc, f"item {index} with *emphasis*", type="bulletListItem")
        else:
            insert_block(
                doc, f"Paragraph {index}: plain, **bold**, `code` and a [link](https://example.org/{index})."
            )
    return doc.get_update()


def python_read(update: bytes, repeats: int) -> tuple[list[float], list[float], int, float, float]:
    """Timed first reads (the renderings remembered from an earlier read are forgotten first), one
    timed re-read of an unchanged document, then one traced run for the peak of Python allocations."""
    to_blocks: list[float] = []
    to_markdown: list[float] = []
    count = 0
    for _ in range(repeats):
        clear_render_cache()
        doc: Doc[Any] = Doc()
        doc.apply_update(update)
        started = time.perf_counter()
        blocks = read_blocks(doc)
        to_blocks.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        blocks_to_markdown(blocks)
        to_markdown.append((time.perf_counter() - started) * 1000)
        count = len(blocks)
    started = time.perf_counter()
    read_blocks(doc)  # what a session does after each write, or a view on each change
    reread = (time.perf_counter() - started) * 1000
    clear_render_cache()
    tracemalloc.start()
    doc = Doc()
    doc.apply_update(update)
    blocks_to_markdown(read_blocks(doc))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return to_blocks, to_markdown, count, peak / 1e6, reread


def node_read(update: bytes, repeats: int) -> dict[str, Any]:
    completed = subprocess.run(
        ["node", str(INTEROP / "node" / "bench_read.mjs")],
        cwd=INTEROP,
        capture_output=True,
        text=True,
        check=False,
        input=json.dumps({"update": base64.b64encode(update).decode(), "repeats": repeats}),
        timeout=600,
    )
    if completed.returncode != 0:
        raise SystemExit(completed.stderr[-2000:])
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def main(arguments: argparse.Namespace) -> None:
    update = build_document(arguments.blocks)
    ours_blocks, ours_markdown, count, peak_mb, reread_ms = python_read(update, 3)
    node = node_read(update, 3)
    assert node["blocks"] == count == arguments.blocks, (node["blocks"], count)
    rows = [
        ("to blocks (ms)", statistics.median(ours_blocks), statistics.median(node["to_blocks_ms"])),
        ("to markdown (ms)", statistics.median(ours_markdown), statistics.median(node["to_markdown_ms"])),
    ]
    total_ours = rows[0][1] + rows[1][1]
    total_node = rows[0][2] + rows[1][2]
    rows.append(("blocks + markdown (ms)", total_ours, total_node))
    print(f"{arguments.blocks}-block document ({len(update) / 1e6:.2f} MB Yjs update), medians of 3")
    print(f"{'measure':<28}{'elynav_nb':>12}{'node':>12}{'ratio':>8}")
    for label, ours, theirs in rows:
        print(f"{label:<28}{ours:>12.1f}{theirs:>12.1f}{ours / theirs:>8.2f}")
    node_blocks = statistics.median(node["to_blocks_ms"])
    print(f"{'re-read to blocks (ms)':<28}{reread_ms:>12.1f}{node_blocks:>12.1f}{reread_ms / node_blocks:>8.2f}")
    rss = psutil.Process().memory_info().rss / 1e6
    print(f"{'peak Python alloc (MB)':<28}{peak_mb:>12.1f}{'-':>12}{'-':>8}")
    print(f"{'process RSS (MB)':<28}{rss:>12.1f}{node['heap_used_mb']:>12.1f}{'(node heap)':>8}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--blocks", type=int, default=10_000)
    main(parser.parse_args())
