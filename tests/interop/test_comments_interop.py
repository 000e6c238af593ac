"""Comment marks, presence and version diffs against the real BlockNote 0.51.4 and
@hocuspocus/provider 3.4.4 (issue 31): BlockNote, with its comments extension on as Docs' editor
runs it, reads our marks as comments and deletes nothing; we read a thread BlockNote's editor
opened; a live provider and our connection see each other's presence (and Docs' comment ping); a
version diff's two sides are the markdown BlockNote itself writes."""

from __future__ import annotations

import base64
import difflib
import uuid
from typing import Any

import pytest
from pycrdt import Doc

from elynav_nb.docs.blocknote import insert_block, read_blocks
from elynav_nb.docs.blocknote.builder import insert_markdown
from elynav_nb.docs.blocknote.comments import comment_anchors, comment_mark_key, mark_comment
from elynav_nb.docs.blocknote.version_diff import diff_states, read_state
from elynav_nb.docs.blocknote.writers import update_block_text
from elynav_nb.docs.live.connection import DocsConnection
from tests.interop.conftest import ALLOWED_ORIGIN, NodeRunner, ProviderPeer

pytestmark = pytest.mark.interop


def encoded(doc: Doc[Any]) -> str:
    return base64.b64encode(doc.get_update()).decode("ascii")


def test_blocknote_reads_our_comment_marks_as_comments(node_peer: NodeRunner) -> None:
    doc: Doc[Any] = Doc()
    first = insert_block(doc, "Le budget **2027** est à revoir.")
    second = insert_block(doc, "Deux lignes\nici", after=first)
    whole, span = str(uuid.uuid4()), str(uuid.uuid4())
    mark_comment(doc, first, span, quote="budget 2027")
    mark_comment(doc, second, whole)
    [result] = node_peer("comments_oracle.mjs", {"read": [encoded(doc)]})["results"]
    assert result["ysync_transactions"] == 0  # nothing of ours was deleted
    marks = {(mark["threadId"], mark["orphan"], mark["text"]) for mark in result["marks"]}
    assert marks == {
        (span, False, "budget "),
        (span, False, "2027"),
        (whole, False, "Deux lignes"),
        (whole, False, "ici"),
    }
    texts = [block["content"][0]["text"] for block in result["blocks"]]  # blocks JSON leaves the
    assert texts == ["Le budget ", "Deux lignes\nici"]  # comment marks out (blocknoteIgnore)


def test_we_read_a_thread_blocknotes_editor_opened(node_peer: NodeRunner) -> None:
    doc: Doc[Any] = Doc()
    block_id = insert_block(doc, "Un paragraphe **à commenter**")
    thread_id = str(uuid.uuid4())
    written = node_peer(
        "comments_oracle.mjs",
        {"write": {"update": encoded(doc), "block_id": block_id, "thread_id": thread_id}},
    )["written"]
    doc.apply_update(base64.b64decode(written["diff"]))
    anchors = comment_anchors(doc)
    assert anchors[thread_id].block_id == block_id
    assert anchors[thread_id].text == "Un paragraphe à commenter" and not anchors[thread_id].orphan
    keys = {key for _, attributes in _runs(doc) for key in attributes if key.startswith("comment--")}
    assert keys == {comment_mark_key(thread_id)}  # the very key we write
    assert read_blocks(doc)[0].text == "Un paragraphe **à commenter**"


def _runs(doc: Doc[Any]) -> list[tuple[str, dict[str, Any]]]:
    from pycrdt import XmlFragment, XmlText

    runs: list[tuple[str, dict[str, Any]]] = []
    pending = list(doc.get("document-store", type=XmlFragment).children)
    while pending:
        node = pending.pop()
        if isinstance(node, XmlText):
            runs.extend((chunk, dict(attributes or {})) for chunk, attributes in node.diff())
        elif hasattr(node, "children"):
            pending.extend(node.children)
    return runs


def test_a_version_diff_compares_what_blocknote_itself_writes(node_peer: NodeRunner) -> None:
    doc: Doc[Any] = Doc()
    ids = insert_markdown(doc, "# Plan\n\nPremier **jet**.\n\n- un\n- deux\n\n1. a\n2. b")
    old_state = doc.get_update()
    update_block_text(doc, ids[1], "Premier **jet**, relu.")
    insert_block(doc, "Conclusion", after=ids[-1])
    new_state = doc.get_update()
    results = node_peer(
        "oracle.mjs",
        {"updates": [base64.b64encode(old_state).decode(), base64.b64encode(new_state).decode()]},
    )["results"]
    old, new = read_state(old_state, "v1"), read_state(new_state, "v2")
    assert [old.markdown, new.markdown] == [result["markdown"] for result in results]
    theirs = "".join(
        difflib.unified_diff(
            results[0]["markdown"].splitlines(keepends=True),
            results[1]["markdown"].splitlines(keepends=True),
            fromfile="v1",
            tofile="v2",
        )
    )
    diff = diff_states(old, new)
    assert diff.markdown == theirs
    assert [(change.change, change.new_text) for change in diff.changes] == [
        ("changed", "Premier **jet**, relu."),
        ("added", "Conclusion"),
    ]


async def agent_and_browser(server: Any, room: str) -> tuple[DocsConnection, ProviderPeer]:
    """Our connection as "Agent Plume" and a real provider as "Alice", both in ``room``."""
    connection = DocsConnection(
        Doc(),
        url=server.ws_url,
        document_name=room,
        origin=ALLOWED_ORIGIN,
        cookie="docs_sessionid=agent",
        user_name="Agent Plume",
    )
    await connection.open()
    peer = await ProviderPeer.start()
    answer = await peer.call(
        "connect",
        url=server.ws_url,
        room=room,
        origin=ALLOWED_ORIGIN,
        cookie="docs_sessionid=browser",
        user={"name": "Alice", "color": "#ff0000"},
    )
    assert answer["ok"], answer
    return connection, peer


@pytest.mark.anyio
async def test_presence_and_the_comment_ping_cross_a_real_provider(hocuspocus_server: Any) -> None:
    room = str(uuid.uuid4())
    connection, peer = await agent_and_browser(hocuspocus_server, room)
    try:
        ping = {"at": 1767225600000, "docId": room, "threadId": str(uuid.uuid4())}
        connection.set_presence("commentsPing", ping)
        import asyncio

        async with asyncio.timeout(10):
            while True:
                states = (await peer.call("awareness"))["states"]
                if any(state.get("commentsPing") == ping for state in states):
                    break
                await asyncio.sleep(0.05)
            while not connection.peers():
                await asyncio.sleep(0.02)
        assert {"name": "Agent Plume", "color": "#0b7285"} in [state.get("user") for state in states]
        assert [state.get("user") for state in connection.peers().values()] == [
            {"name": "Alice", "color": "#ff0000"}
        ]
    finally:
        await peer.stop()
        await connection.close()


@pytest.mark.anyio
async def test_cursors_cross_a_real_provider_both_ways(hocuspocus_server: Any) -> None:
    from elynav_nb.docs.live.presence import CursorPlaces, people_from_states

    room = str(uuid.uuid4())
    connection, peer = await agent_and_browser(hocuspocus_server, room)
    try:
        first = insert_block(connection.doc, "Premier bloc")
        second = insert_block(connection.doc, "Le bloc que l'agent écrit", after=first)
        await connection.await_flush(5)
        import asyncio

        async with asyncio.timeout(10):  # the browser places our cursor where we wrote
            while True:
                cursors = (await peer.call("cursor_blocks"))["cursors"]
                if cursors and cursors[0]["block"] == second:
                    break
                await asyncio.sleep(0.05)
        assert cursors == [
            {"name": "Agent Plume", "block": second, "index": len("Le bloc que l'agent écrit")}
        ]
        assert (await peer.call("set_cursor", block_id=first, offset=3))["ok"]
        places = CursorPlaces(connection.doc)  # as people() keeps it: each look adds what changed
        async with asyncio.timeout(10):  # and we read which block the person's cursor is in
            while True:
                people = people_from_states(connection.peers(), places.index())
                if people and people[0].block_id == first:
                    break
                await asyncio.sleep(0.05)
        assert people[0].name == "Alice"
    finally:
        await peer.stop()
        await connection.close()
