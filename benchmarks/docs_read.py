"""Docs read benchmark: a 10,000-block document to blocks and markdown, ours vs BlockNote in Node
(``yDocToBlocks`` + ``blocksToMarkdownLossy`` from ``@blocknote/server-util`` 0.51.4), and our peak memory.

Run: ``python benchmarks/docs_read.py`` (needs ``tests/interop/node_modules``). ``--blocks 2000`` for a
quick look; ``--phases`` adds where a first read's time goes. The document mixes headings, paragraphs
with bold/italic/code/link runs and list items, as written by our writer (so both readers see the same
bytes). Times are medians of 3 runs after the document is loaded; Node's process start-up and editor
creation are not counted. Peak memory is tracemalloc's peak over loading and reading (Python
allocations; a separate, untimed run), plus the process RSS.

First reads are made on a fresh ``Doc`` with the remembered inline renderings forgotten, as Node's
are. The reader remembers each document's blocks per unchanged subtree (``blocknote.reader``): "re-read"
is a second read of the unchanged document (a live view on a change elsewhere), "re-read after an
edit" a read after one block's text was changed (what a session does after each write). Both are
compared with Node's first read, which is all ``yDocToBlocks`` does on every call.
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
from pycrdt import Doc, XmlFragment
from pycrdt._pycrdt import XmlElement as NativeElement
from pycrdt._pycrdt import XmlText as NativeText

from elynav_nb.docs.blocknote import (
    DOCUMENT_FRAGMENT,
    blocks_to_markdown,
    insert_block,
    read_blocks,
    update_block_text,
)
from elynav_nb.docs.markdown.inline import clear_render_cache

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


def python_read(update: bytes, repeats: int) -> dict[str, Any]:
    """Per repetition: a timed first read on a fresh document (the renderings remembered from an
    earlier read forgotten first), its markdown, a re-read, and a read after one edit; then one
    traced run for the peak of Python allocations."""
    result: dict[str, Any] = {"to_blocks": [], "to_markdown": [], "reread": [], "after_edit": []}
    for _ in range(repeats):
        clear_render_cache()
        doc: Doc[Any] = Doc()
        doc.apply_update(update)
        started = time.perf_counter()
        blocks = read_blocks(doc)
        result["to_blocks"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        blocks_to_markdown(blocks)
        result["to_markdown"].append((time.perf_counter() - started) * 1000)
        result["count"] = len(blocks)
        started = time.perf_counter()
        read_blocks(doc)  # a live view on a change elsewhere
        result["reread"].append((time.perf_counter() - started) * 1000)
        middle = blocks[len(blocks) // 2]
        update_block_text(doc, middle.id, "edited **text**")
        started = time.perf_counter()
        edited = read_blocks(doc)  # what a session does after each write
        result["after_edit"].append((time.perf_counter() - started) * 1000)
        assert edited[len(blocks) // 2].text == "edited **text**"
    clear_render_cache()
    tracemalloc.start()
    doc = Doc()
    doc.apply_update(update)
    blocks_to_markdown(read_blocks(doc))
    result["peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return result


def _native_calls_only(transaction: Any, node: Any) -> None:
    """The native calls a first read makes (children, tag, attributes, diff), results dropped."""
    for child in node.children(transaction):
        if type(child) is NativeElement:
            child.tag()  # type: ignore[attr-defined]
            child.attributes(transaction)
            _native_calls_only(transaction, child)
        elif type(child) is NativeText:
            child.diff(transaction)


def _public_calls_only(node: Any) -> None:
    """The same reads through pycrdt's public wrappers, results dropped."""
    for child in node.children:
        if isinstance(child, XmlFragment) or hasattr(child, "tag"):
            _ = child.tag
            list(child.attributes)
            _public_calls_only(child)
        else:
            child.diff()


def _timed(timings: dict[str, list[float]], label: str, action: Any) -> None:
    started = time.perf_counter()
    action()
    timings.setdefault(label, []).append((time.perf_counter() - started) * 1000)


def _phases_once(update: bytes, timings: dict[str, list[float]]) -> None:
    doc: Doc[Any] = Doc()
    _timed(timings, "apply_update (not in the reads)", lambda: doc.apply_update(update))
    fragment = doc.get(DOCUMENT_FRAGMENT, type=XmlFragment)
    _timed(timings, "str(fragment): one native call", lambda: str(fragment))

    def native_only() -> None:
        with doc.transaction() as transaction:
            _native_calls_only(transaction._txn, fragment._integrated)

    def public_only() -> None:
        with doc.transaction():
            _public_calls_only(fragment)

    _timed(timings, "native calls alone", native_only)
    _timed(timings, "public wrappers alone", public_only)
    clear_render_cache()
    _timed(timings, "first read (read_blocks)", lambda: read_blocks(doc))
    clear_render_cache()
    _timed(timings, "first read, public wrappers", lambda: read_blocks(doc, native=False))


def phases(update: bytes, repeats: int) -> None:
    """Where a first read's time goes: medians of ``repeats`` runs, in ms."""
    timings: dict[str, list[float]] = {}
    for _ in range(repeats):
        _phases_once(update, timings)
    print(f"\nwhere a first read's time goes (medians of {repeats} runs)")
    for label, values in timings.items():
        print(f"{label:<36}{statistics.median(values):>10.1f} ms")


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
    ours = python_read(update, 3)
    node = node_read(update, 3)
    assert node["blocks"] == ours["count"] == arguments.blocks, (node["blocks"], ours["count"])
    node_blocks = statistics.median(node["to_blocks_ms"])
    node_markdown = statistics.median(node["to_markdown_ms"])
    ours_blocks = statistics.median(ours["to_blocks"])
    ours_markdown = statistics.median(ours["to_markdown"])
    rows = [
        ("to blocks (ms)", ours_blocks, node_blocks),
        ("to markdown (ms)", ours_markdown, node_markdown),
        ("blocks + markdown (ms)", ours_blocks + ours_markdown, node_blocks + node_markdown),
        ("re-read to blocks (ms)", statistics.median(ours["reread"]), node_blocks),
        ("re-read after an edit (ms)", statistics.median(ours["after_edit"]), node_blocks),
    ]
    print(f"{arguments.blocks}-block document ({len(update) / 1e6:.2f} MB Yjs update), medians of 3")
    print("(node has no re-read: its column repeats its first read, yDocToBlocks' cost on every call)")
    print(f"{'measure':<28}{'elynav_nb':>12}{'node':>12}{'ratio':>8}")
    for label, mine, theirs in rows:
        print(f"{label:<28}{mine:>12.1f}{theirs:>12.1f}{mine / theirs:>8.2f}")
    runs = " / ".join(f"{value:.0f}" for value in ours["to_blocks"])
    node_runs = " / ".join(f"{value:.0f}" for value in node["to_blocks_ms"])
    print(f"{'to blocks, each run (ms)':<28}{runs:>12}{node_runs:>16}")
    rss = psutil.Process().memory_info().rss / 1e6
    print(f"{'peak Python alloc (MB)':<28}{ours['peak_mb']:>12.1f}{'-':>12}{'-':>8}")
    print(f"{'process RSS (MB)':<28}{rss:>12.1f}{node['heap_used_mb']:>12.1f}{'(node heap)':>8}")
    if arguments.phases:
        phases(update, 5)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--blocks", type=int, default=10_000)
    parser.add_argument("--phases", action="store_true", help="also show where a first read's time goes")
    main(parser.parse_args())
