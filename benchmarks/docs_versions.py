"""Version diff benchmark: two 10,000-block versions compared, ours vs BlockNote + difflib.

Run: ``python benchmarks/docs_versions.py`` (needs ``tests/interop/node_modules``); ``--blocks
2000`` for a quick look. Version 2 is version 1 with 5% of the blocks edited, 1% deleted and 1%
added (as a day of an agent's work might leave it).

Ours: ``version_diff.diff_states(read_state(v1), read_state(v2))``: both states applied to fresh
pycrdt documents, read as blocks (inline renderings forgotten first, as on a first read), written as
markdown, the unified markdown diff and the per-block changes. The peer, in the same run:
``@blocknote/server-util`` 0.51.4 reading both versions (``yDocToBlocks`` + ``blocksToMarkdownLossy``,
its Yjs load not timed) plus Python's ``difflib.unified_diff`` of its two markdowns (what one would
write without us). Medians of 3 runs. Goal (issue 31): ours <= 0.5x the peer.
"""

from __future__ import annotations

import argparse
import base64
import difflib
import json
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from pycrdt import Doc

from elynav_nb.docs.blocknote import delete_block, insert_block, read_blocks, update_block_text
from elynav_nb.docs.blocknote.version_diff import diff_states, read_state
from elynav_nb.docs.markdown.inline import clear_render_cache

INTEROP = Path(__file__).resolve().parent.parent / "tests" / "interop"


def build_versions(count: int) -> tuple[bytes, bytes]:
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
    first = doc.get_update()
    ids = [block.id for block in read_blocks(doc)]
    for position in range(0, len(ids), 20):  # 5% edited
        update_block_text(doc, ids[position], f"Edited {position}: **new** text")
    for position in range(7, len(ids), 100):  # 1% deleted
        delete_block(doc, ids[position])
    for position in range(13, len(ids), 100):  # 1% added
        insert_block(doc, f"Added after {position}", after=ids[position])
    return first, doc.get_update()


def ours(first: bytes, second: bytes) -> tuple[float, int]:
    clear_render_cache()
    started = time.perf_counter()
    diff = diff_states(read_state(first, "v1"), read_state(second, "v2"))
    return time.perf_counter() - started, len(diff.changes)


def peer(first: bytes, second: bytes, repeats: int) -> tuple[float, int]:
    markdowns: list[str] = []
    node_seconds = 0.0
    for update in (first, second):
        completed = subprocess.run(
            ["node", str(INTEROP / "node" / "bench_read.mjs")],
            cwd=INTEROP,
            input=json.dumps(
                {"update": base64.b64encode(update).decode(), "repeats": repeats, "markdown": True}
            ),
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        answer = json.loads(completed.stdout)
        node_seconds += (
            statistics.median(answer["to_blocks_ms"]) + statistics.median(answer["to_markdown_ms"])
        ) / 1000
        markdowns.append(answer["markdown"])
    started = time.perf_counter()
    lines = list(
        difflib.unified_diff(markdowns[0].splitlines(keepends=True), markdowns[1].splitlines(keepends=True))
    )
    return node_seconds + (time.perf_counter() - started), len(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    first, second = build_versions(options.blocks)
    runs = [ours(first, second) for _ in range(options.repeats)]
    our_seconds = statistics.median(seconds for seconds, _ in runs)
    peer_seconds, diff_lines = peer(first, second, options.repeats)
    print(f"{options.blocks} blocks, {runs[0][1]} changed blocks, {diff_lines} diff lines (BlockNote's)")
    print(f"{'':38}{'seconds':>10}")
    print(f"{'elynav_nb diff_states':38}{our_seconds:>10.3f}")
    print(f"{'BlockNote read x2 + difflib':38}{peer_seconds:>10.3f}")
    print(f"ratio ours/peer: {our_seconds / peer_seconds:.2f}x (goal <= 0.5x)")


if __name__ == "__main__":
    main()
