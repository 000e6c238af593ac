"""Docs tree benchmark: a whole workspace of 2,000 documents into a DataFrame, and how many requests it
takes, against walking the tree one ``children/`` request per document that has children.

Run: ``python benchmarks/docs_tree.py [--documents 2000] [--rounds 3]``.

What runs: a ``DocsSandbox`` in a child process of this script (``--serve``; Docs' throttle off so the
requests themselves are timed) holding ``--documents`` documents owned by Alice: 20 top documents,
each with a subtree of random fan-out (1-6 children a level, 5 levels at most). In this process,
three ways to get every document, each ending in ``DocumentTree.to_frame()`` (one row per document):

* ``all/``: ``rest.tree.workspace_tree()``, ``GET documents/all/`` 200 a page (what we do);
* ``search/?document=``: ``list_documents()`` then ``descendants(top)`` for each top document (our
  fallback where an instance turned ``all/`` off: Docs 5's replacement of ``descendants/``);
* ``children walk`` (the peer): ``list_documents()`` then ``children(d)`` for every document whose
  ``numchild`` is not 0, level by level: what a client without ``all/`` or ``search/?document=``
  must do (Docs removed ``descendants/`` in 5.0).

After one untimed pass of each, rounds alternate the three (ABC, CBA...). Columns: wall time (median of the rounds, client and
server together), this process's CPU time, requests sent, and the shortest time the same requests
take on a real Docs that allows 80 requests a minute per user (``(requests - 1) // 80`` minutes).
The frame row: ``DocumentTree.from_nodes`` + ``to_frame()`` alone on the fetched nodes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.rest import DocsRestClient, RequestThrottle
from elynav_nb.docs.rest.tree import DocumentNode, DocumentTree
from elynav_nb.docs.rest.tree_client import DocsTreeClient

TOP_DOCUMENTS = 20
MAX_FAN_OUT = 6
MAX_DEPTH = 5
DOCS_THROTTLE_PER_MINUTE = 80


def build_workspace(sandbox: Any, documents: int, seed: int) -> None:
    """``documents`` documents: ``TOP_DOCUMENTS`` roots, then children under random open parents."""
    chooser = random.Random(seed)
    tops = [sandbox.create_document(f"Espace {number}") for number in range(TOP_DOCUMENTS)]
    open_parents = list(tops)
    made = len(tops)
    while made < documents:
        parent = chooser.choice(open_parents)
        for _ in range(chooser.randint(1, MAX_FAN_OUT)):
            if made >= documents:
                break
            child = sandbox.store.create_document(f"Page {made}", sandbox.default_user, parent=parent)
            made += 1
            if child.depth < MAX_DEPTH:
                open_parents.append(child)
        if parent.numchild >= MAX_FAN_OUT:
            open_parents.remove(parent)


async def serve(documents: int, seed: int) -> None:
    from elynav_nb.sandbox.docs.server import DocsSandbox

    async with DocsSandbox(throttle_per_minute=10**9) as sandbox:
        build_workspace(sandbox, documents, seed)
        print(
            json.dumps({"url": sandbox.url, "session": sandbox.session_id, "csrf": sandbox.csrf_token}),
            flush=True,
        )
        await asyncio.get_running_loop().run_in_executor(
            None, sys.stdin.read
        )  # until the parent closes stdin


async def by_all_endpoint(tree: DocsTreeClient) -> DocumentTree:
    return await tree.workspace_tree()


async def by_search_per_top(tree: DocsTreeClient) -> DocumentTree:
    nodes: list[DocumentNode] = []
    for top in await tree.list_documents():
        nodes.extend(await tree.descendants(top))
    return DocumentTree.from_nodes(nodes)


async def by_children_walk(tree: DocsTreeClient) -> DocumentTree:
    level = list(await tree.list_documents())
    nodes = list(level)
    while level:
        below: list[DocumentNode] = []
        for node in level:
            if node.numchild:
                below.extend(await tree.children(node))
        nodes.extend(below)
        level = below
    return DocumentTree.from_nodes(nodes)


WAYS: dict[str, Callable[[DocsTreeClient], Awaitable[DocumentTree]]] = {
    "all/ (ours)": by_all_endpoint,
    "search/?document= per top (our fallback)": by_search_per_top,
    "children walk (peer)": by_children_walk,
}


async def measure(
    url: str, credentials: DocsCredentials, rounds: int
) -> tuple[dict[str, dict[str, list[float]]], int]:
    results: dict[str, dict[str, list[float]]] = {
        name: {"wall": [], "cpu": [], "requests": [], "rows": []} for name in WAYS
    }
    frame_seconds: list[float] = []
    async with DocsRestClient(url, credentials, throttle=RequestThrottle(10**9), timeout=120) as rest:
        await rest.config()
        names = list(WAYS)
        for name in names:  # one untimed pass each: first requests warm both processes up
            await WAYS[name](DocsTreeClient(rest))
        for round_number in range(rounds):
            order = names if round_number % 2 == 0 else list(reversed(names))
            for name in order:
                tree = DocsTreeClient(rest)
                wall, cpu = time.perf_counter(), time.process_time()
                frame = (await WAYS[name](tree)).to_frame()
                results[name]["wall"].append(time.perf_counter() - wall)
                results[name]["cpu"].append(time.process_time() - cpu)
                results[name]["requests"].append(tree.requests_sent)
                results[name]["rows"].append(len(frame))
        fetched = list(await DocsTreeClient(rest).workspace_tree())
        for _ in range(max(5, rounds)):
            started = time.perf_counter()
            DocumentTree.from_nodes(fetched).to_frame()
            frame_seconds.append(time.perf_counter() - started)
        results["frame only"] = {
            "wall": frame_seconds,
            "cpu": frame_seconds,
            "requests": [0],
            "rows": [len(fetched)],
        }
    return results, len(fetched)


def throttled_minutes(requests: int) -> int:
    return max(0, requests - 1) // DOCS_THROTTLE_PER_MINUTE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve:
        asyncio.run(serve(arguments.documents, arguments.seed))
        return
    server = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            "--documents",
            str(arguments.documents),
            "--seed",
            str(arguments.seed),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        started = json.loads(server.stdout.readline())
        credentials = DocsCredentials(started["session"], started["csrf"], instance=started["url"])
        results, fetched = asyncio.run(measure(started["url"], credentials, arguments.rounds))
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)
    print(
        f"{fetched} documents ({TOP_DOCUMENTS} tops, fan-out 1-{MAX_FAN_OUT}, depth <= {MAX_DEPTH}), {arguments.rounds} rounds"
    )
    header = f"{'way':44} {'wall median':>12} {'(min-max)':>17} {'client CPU':>11} {'requests':>9} {'rows':>6} {'at 80/min':>10}"
    print(header)
    peer_wall = statistics.median(results["children walk (peer)"]["wall"])
    for name, values in results.items():
        wall = statistics.median(values["wall"])
        requests = int(statistics.median(values["requests"]))
        spread = f"({min(values['wall']):.3f}-{max(values['wall']):.3f})"
        at_throttle = "—" if name == "frame only" else f">= {throttled_minutes(requests)} min"
        print(
            f"{name:44} {wall:10.3f} s {spread:>17} {statistics.median(values['cpu']):9.3f} s "
            f"{requests:9d} {int(values['rows'][0]):6d} {at_throttle:>10}  ({wall / peer_wall:.2f}x the walk)"
        )


if __name__ == "__main__":
    main()
