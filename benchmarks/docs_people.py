"""``DocsSession.people()`` on a 10,000-block document: ours vs decoding the whole document each call.

Run: ``python benchmarks/docs_people.py`` (``--blocks 2000`` for a quick look). On the Docs sandbox,
two sessions share one document: "Alice" writes (her cursor follows her last character, as a
browser's does) and the agent asks ``people()`` where she is. The peer (1.0x) is what ``people()``
did before: decode the whole document state (``ydoc.get_update()`` -> ``ItemIndex``) on every call
that has a cursor to place, then place each cursor. Both give the same people with the same blocks
(checked on every call).

Three cases, medians in milliseconds: the first look (nothing remembered yet), a look at an
unchanged document (a notebook loop waiting for a cursor), and a look after each of Alice's edits
(a live view following a person who types).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from pycrdt import Doc

from elynav_nb.docs.blocknote import insert_block
from elynav_nb.docs.live._yjs_items import ItemIndex
from elynav_nb.docs.live.presence import Person, people_from_states
from elynav_nb.docs.session import DocsSession
from elynav_nb.sandbox.docs.server import DocsSandbox


def build_document(count: int) -> bytes:
    """Headings, paragraphs and list items; inserted at the top in reverse order (O(1) each)."""
    doc: Doc[Any] = Doc()
    for index in reversed(range(count)):
        if index % 5 == 0:
            insert_block(doc, f"Section {index}", type="heading", level=2)
        elif index % 5 == 1:
            insert_block(doc, f"item {index} with *emphasis*", type="bulletListItem")
        else:
            insert_block(doc, f"Paragraph {index}: plain, **bold** and `code`.")
    return doc.get_update()


def whole_document_people(doc: DocsSession) -> list[Person]:
    """The peer: the whole state decoded on every call."""
    assert doc.connection is not None
    states = doc.connection.peers()
    return people_from_states(states, ItemIndex(doc.ydoc.get_update()))


def timed(call: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


async def cursor_moves(agent: DocsSession, before: Any) -> None:
    assert agent.connection is not None
    async with asyncio.timeout(10):
        while True:
            cursors = [state.get("cursor") for state in agent.connection.peers().values()]
            if any(cursor is not None and cursor != before for cursor in cursors):
                return
            await asyncio.sleep(0.005)


def current_cursor(agent: DocsSession) -> Any:
    assert agent.connection is not None
    cursors = [state.get("cursor") for state in agent.connection.peers().values()]
    return next((cursor for cursor in cursors if cursor is not None), None)


async def run(blocks: int, edits: int, looks: int) -> None:
    async with DocsSandbox(throttle_per_minute=10**9) as sandbox:
        document = sandbox.create_document("Presence")
        sandbox.store.save_content(document, build_document(blocks))
        link = sandbox.document_link(document.id)
        options: dict[str, Any] = {"save_debounce": 3600, "deadline": 120, "open_timeout": 60}
        async with (
            DocsSession.open(link, sandbox.credentials(), user_name="Agent", **options) as agent,
            DocsSession.open(link, sandbox.credentials(), user_name="Alice", **options) as alice,
        ):
            targets = [block.id for block in alice.blocks[blocks // 3 :: max(1, blocks // (edits + 2))]]
            await alice.update_block(targets[0], "Alice starts here")
            await cursor_moves(agent, None)
            first_ours, people = timed(agent.people)
            first_peer, reference = timed(lambda: whole_document_people(agent))
            assert people == reference and people[0].block_id == targets[0], (people, reference)

            unchanged_ours = [timed(agent.people)[0] for _ in range(looks)]
            unchanged_peer = [timed(lambda: whole_document_people(agent))[0] for _ in range(looks)]

            after_edit_ours: list[float] = []
            after_edit_peer: list[float] = []
            for number, block_id in enumerate(targets[1 : edits + 1]):
                before = current_cursor(agent)
                await alice.update_block(block_id, f"Alice typed here ({number})")
                await cursor_moves(agent, before)
                spent, people = timed(agent.people)
                after_edit_ours.append(spent)
                spent, reference = timed(lambda: whole_document_people(agent))
                after_edit_peer.append(spent)
                assert people == reference and people[0].block_id == block_id, (people, reference)

    print(f"DocsSession.people() on a {blocks:,}-block document, one person with a cursor (medians, ms)")
    print(f"{'case':<32}{'whole document (peer)':>24}{'ours':>10}{'ours/peer':>12}")
    rows = [
        ("first look", [first_peer], [first_ours]),
        (f"unchanged document (x{looks})", unchanged_peer, unchanged_ours),
        (f"after each edit (x{len(after_edit_ours)})", after_edit_peer, after_edit_ours),
    ]
    for name, peer, ours in rows:
        peer_median, ours_median = statistics.median(peer), statistics.median(ours)
        print(f"{name:<32}{peer_median:>24.2f}{ours_median:>10.3f}{ours_median / peer_median:>11.4f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=10_000)
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--looks", type=int, default=20)
    arguments = parser.parse_args()
    asyncio.run(run(arguments.blocks, arguments.edits, arguments.looks))


if __name__ == "__main__":
    main()
