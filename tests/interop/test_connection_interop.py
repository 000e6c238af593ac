"""DocsConnection against a real Hocuspocus 3.4.4 server with the Docs y-provider checks, and a real
``@hocuspocus/provider`` peer standing in for a browser."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from pycrdt import Doc

from elynav_nb.docs.blocknote import insert_block, read_blocks, update_block_text
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.errors import AuthRequired, DocReadonly, NotAllowed
from tests.interop.conftest import ALLOWED_ORIGIN, ProviderPeer

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


def new_connection(
    server: Any, room: str, cookie: str = "docs_sessionid=alice", **options: Any
) -> DocsConnection:
    return DocsConnection(
        Doc(), url=server.ws_url, document_name=room, origin=ALLOWED_ORIGIN, cookie=cookie, **options
    )


async def connected_peer(server: Any, room: str, cookie: str = "docs_sessionid=browser") -> ProviderPeer:
    peer = await ProviderPeer.start()
    answer = await peer.call(
        "connect", url=server.ws_url, room=room, origin=ALLOWED_ORIGIN, cookie=cookie, user={"name": "Alice"}
    )
    assert answer["ok"], answer
    return peer


async def test_python_write_is_seen_live_by_a_node_provider(hocuspocus_server: Any) -> None:
    room = str(uuid.uuid4())
    connection = new_connection(hocuspocus_server, room)
    await connection.open()
    peer = await connected_peer(hocuspocus_server, room)
    try:
        assert connection.scope == "read-write"
        insert_block(connection.doc, "Live **bold** title", type="heading", level=2)
        await connection.await_flush(timeout=5)
        seen = await peer.call("wait_for", contains="Live ", timeout_ms=5000)
        assert seen["ok"], seen["xml"]
        blocks = await peer.call("blocks")
        assert blocks["blocks"][0]["type"] == "heading"
        assert blocks["blocks"][0]["props"]["level"] == 2
        assert blocks["markdown"].strip() == "## Live **bold** title"
        presence = await peer.call("awareness")
        assert {"name": "Elynav bot", "color": "#0b7285"} in [
            state.get("user") for state in presence["states"]
        ]
    finally:
        await peer.stop()
        await connection.close()


async def test_node_edits_reach_python_and_own_echoes_are_not_sent_back(hocuspocus_server: Any) -> None:
    room = str(uuid.uuid4())
    peer = await connected_peer(hocuspocus_server, room)
    connection = new_connection(hocuspocus_server, room)
    changes: list[int] = []
    connection.add_remote_listener(lambda: changes.append(1))
    try:
        written = await peer.call(
            "write_blocks",
            blocks=[
                {"type": "heading", "props": {"level": 3}, "content": "Typed by a person"},
                {
                    "type": "paragraph",
                    "content": [
                        {"type": "text", "text": "plain ", "styles": {}},
                        {"type": "text", "text": "bold", "styles": {"bold": True}},
                        {"type": "text", "text": " and ", "styles": {}},
                        {"type": "text", "text": "code", "styles": {"code": True}},
                    ],
                },
            ],
        )
        assert written["ok"], written
        await connection.open()
        blocks = read_blocks(connection.doc)
        assert [(block.type, block.text) for block in blocks] == [
            ("heading", "Typed by a person"),
            ("paragraph", "plain **bold** and `code`"),
        ]
        assert blocks[0].props["level"] == 3
        before = len(changes)
        update_block_text(connection.doc, blocks[1].id, "plain **bold** and `code`!")
        await connection.await_flush(timeout=5)
        await asyncio.sleep(0.2)  # the echo arrives; it must not count as a remote change
        assert len(changes) == before
        assert connection.unsynced == 0
    finally:
        await peer.stop()
        await connection.close()


async def test_concurrent_edits_of_one_block_from_both_sides_survive(hocuspocus_server: Any) -> None:
    room = str(uuid.uuid4())
    connection = new_connection(hocuspocus_server, room)
    await connection.open()
    peer = await connected_peer(hocuspocus_server, room)
    try:
        block_id = insert_block(connection.doc, "The quick fox")
        await connection.await_flush(timeout=5)
        assert (await peer.call("wait_for", contains="quick fox"))["ok"]
        # both sides edit the same block at the same time, before seeing each other's change
        node_edit = asyncio.ensure_future(peer.call("text_insert", block_id=block_id, offset=4, text="very "))
        update_block_text(connection.doc, block_id, "The quick brown fox")
        assert (await node_edit)["ok"]
        await connection.await_flush(timeout=5)
        assert (await peer.call("wait_for", contains="brown", timeout_ms=5000))["ok"]
        for _ in range(100):
            if "very" in read_blocks(connection.doc)[0].text:
                break
            await asyncio.sleep(0.02)
        python_text = read_blocks(connection.doc)[0].text
        node_blocks = await peer.call("blocks")
        assert python_text == "The very quick brown fox"
        assert node_blocks["markdown"].strip() == "The very quick brown fox"
    finally:
        await peer.stop()
        await connection.close()


async def test_read_only_scope_gives_doc_readonly_quickly(hocuspocus_server: Any) -> None:
    room = str(uuid.uuid4())
    writer = new_connection(hocuspocus_server, room)
    await writer.open()
    reader = new_connection(hocuspocus_server, room, cookie="docs_sessionid=bob; readonly=1")
    try:
        insert_block(writer.doc, "written by the editor")
        await writer.await_flush()
        await reader.open()
        assert reader.scope == "readonly" and reader.read_only
        assert read_blocks(reader.doc)[0].text == "written by the editor"
        insert_block(reader.doc, "a reader cannot write this")
        with pytest.raises(DocReadonly) as raised:  # not SYNC_TIMEOUT: refused, not waited out
            await reader.await_flush(timeout=10)
        assert raised.value.code == "DOC_READONLY"
        await asyncio.sleep(0.2)
        assert "cannot write" not in str(read_blocks(writer.doc))
    finally:
        await reader.close()
        await writer.close()


async def test_server_reset_recovers_without_losing_an_edit(hocuspocus_server: Any) -> None:
    room = str(uuid.uuid4())
    connection = new_connection(hocuspocus_server, room)
    await connection.open()
    peer: ProviderPeer | None = None
    try:
        insert_block(connection.doc, "before the reset")
        await connection.await_flush()
        async with httpx.AsyncClient() as client:
            response = await client.post(
                f"{hocuspocus_server.http_url}/collaboration/api/reset-connections/", params={"room": room}
            )
        assert response.status_code == 200
        insert_block(connection.doc, "written while the server forgot us")
        await connection.await_flush(timeout=10)
        assert connection.reset_count == 1
        assert connection.scope == "read-write"
        # the reset emptied the room; a browser joining now sees both edits, pushed again by our resync
        peer = await connected_peer(hocuspocus_server, room)
        seen = await peer.call("wait_for", contains="server forgot us", timeout_ms=5000)
        assert seen["ok"], seen["xml"]
        assert "before the reset" in seen["xml"]
        assert seen["xml"].count("<blockgroup>") == 1
    finally:
        if peer is not None:
            await peer.stop()
        await connection.close()


@pytest.mark.parametrize(
    ("origin", "cookie", "error_class", "code"),
    [
        ("https://evil.example", "docs_sessionid=alice", NotAllowed, "NOT_ALLOWED"),
        (ALLOWED_ORIGIN, "", AuthRequired, "AUTH_REQUIRED"),
        (ALLOWED_ORIGIN, "docs_sessionid=alice; deny=1", NotAllowed, "NOT_ALLOWED"),
    ],
)
async def test_gate_and_denials_are_typed_errors(
    hocuspocus_server: Any, origin: str, cookie: str, error_class: type[Exception], code: str
) -> None:
    connection = DocsConnection(
        Doc(),
        url=hocuspocus_server.ws_url,
        document_name=str(uuid.uuid4()),
        origin=origin,
        cookie=cookie,
        open_timeout=10,
    )
    with pytest.raises(error_class) as raised:
        await connection.open()
    assert raised.value.code == code  # type: ignore[attr-defined]
    assert "alice" not in str(raised.value) and "alice" not in repr(connection)


async def test_a_v1_uuid_room_is_denied_in_band(hocuspocus_server: Any) -> None:
    connection = new_connection(hocuspocus_server, str(uuid.uuid1()), open_timeout=10)
    with pytest.raises(NotAllowed) as raised:
        await connection.open()
    assert raised.value.details["reason"] == "permission-denied"
