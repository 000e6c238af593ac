"""DocsSandbox(hocuspocus_version=4): the Hocuspocus 4 differences our client must survive.

Idle close 4408 (design note §1.9, §6.1), echo after ack, retryable denials, Ping/Pong. The same
behaviour is compared with the real Node Hocuspocus 4.7.0 in ``tests/interop/test_hocuspocus4_parity.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import websockets
from pycrdt import Doc

from elynav_nb.docs.blocknote import insert_block, read_blocks
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.docs.live.frames import (
    Authenticated,
    AuthToken,
    Close,
    PermissionDenied,
    Ping,
    SyncStatus,
    SyncStep1,
    SyncUpdate,
    decode_message,
    encode_message,
)
from elynav_nb.docs.session import DocsSession
from elynav_nb.errors import InvalidInput
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio

TIMEOUT = 0.5


def connection_to(sandbox: DocsSandbox, room: str, **options: Any) -> DocsConnection:
    return DocsConnection(
        Doc(),
        url=sandbox.ws_url,
        document_name=room,
        origin=sandbox.url,
        cookie=sandbox.cookie,
        backoff_initial=0.05,
        **options,
    )


async def raw_socket(sandbox: DocsSandbox, room: str) -> Any:
    return await websockets.connect(
        f"{sandbox.ws_url}?room={room}", additional_headers={"Origin": sandbox.url, "Cookie": sandbox.cookie}
    )


def test_only_versions_3_and_4_are_known() -> None:
    with pytest.raises(InvalidInput):
        DocsSandbox(hocuspocus_version=5)


async def test_presence_refresh_keeps_a_quiet_connection_open() -> None:
    async with DocsSandbox(hocuspocus_version=4, collaboration_timeout=TIMEOUT) as sandbox:
        room = sandbox.create_document("quiet").id
        connection = connection_to(sandbox, room, awareness_interval=0.15)
        await connection.open()
        try:
            await asyncio.sleep(TIMEOUT * 5)
            assert connection.reconnect_count == 0 and connection.reset_count == 0
            insert_block(connection.doc, "still here")
            await connection.await_flush(timeout=5)
        finally:
            await connection.close()


async def test_an_idle_close_is_recovered_without_losing_an_edit() -> None:
    async with DocsSandbox(hocuspocus_version=4, collaboration_timeout=TIMEOUT) as sandbox:
        room = sandbox.create_document("idle").id
        connection = connection_to(sandbox, room, awareness_interval=60)
        keeper = connection_to(sandbox, room, awareness_interval=0.15)  # keeps the room alive
        await keeper.open()
        await connection.open()
        try:
            await asyncio.sleep(TIMEOUT * 5)  # no keepalive: the sandbox closes us with 4408
            assert connection.reconnect_count >= 1
            insert_block(connection.doc, "after the idle close")
            await connection.await_flush(timeout=10)
            for _ in range(100):
                if read_blocks(keeper.doc):
                    break
                await asyncio.sleep(0.02)
            assert [block.text for block in read_blocks(keeper.doc)] == ["after the idle close"]
        finally:
            await connection.close()
            await keeper.close()


async def test_a_session_survives_idle_closes_and_keeps_every_edit() -> None:
    async with DocsSandbox(hocuspocus_version=4, collaboration_timeout=TIMEOUT) as sandbox:
        document = sandbox.create_document("session")
        async with DocsSession.open(document.id, sandbox.credentials(), save_debounce=0.05) as doc:
            first_id = await doc.insert_block("before")
            await asyncio.sleep(TIMEOUT * 4)  # awareness every 15 s: idle-closed at least once
            await doc.insert_block("after", after=first_id)
            assert doc.connection is not None and doc.connection.reconnect_count >= 1
            assert [block.text for block in doc.blocks] == ["before", "after"]
        async with DocsSession.open(document.id, sandbox.credentials()) as reopened:
            assert [block.text for block in reopened.blocks] == ["before", "after"]


async def test_a_socket_that_never_authenticates_is_closed_4408_without_a_close_message() -> None:
    async with DocsSandbox(hocuspocus_version=4, collaboration_timeout=TIMEOUT) as sandbox:
        room = sandbox.create_document("never").id
        async with await raw_socket(sandbox, room) as ws:
            received: list[Any] = []
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    received.append(decode_message(await asyncio.wait_for(ws.recv(), 10)))
            assert received == []
            assert closed.value.rcvd is not None
            assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (4408, "Connection Timeout")


async def test_an_established_idle_socket_gets_close_then_4408() -> None:
    async with DocsSandbox(hocuspocus_version=4, collaboration_timeout=TIMEOUT) as sandbox:
        room = sandbox.create_document("established").id
        async with await raw_socket(sandbox, room) as ws:
            await ws.send(encode_message(AuthToken(room, "")))
            received: list[Any] = []
            with pytest.raises(websockets.ConnectionClosed) as closed:
                while True:
                    received.append(decode_message(await asyncio.wait_for(ws.recv(), 10)))
            assert received == [Authenticated(room, "read-write"), Close(room, "Connection Timeout")]
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4408


async def test_the_echo_comes_after_the_ack() -> None:
    async with DocsSandbox(hocuspocus_version=4) as sandbox:
        room = sandbox.create_document("echo").id
        async with await raw_socket(sandbox, room) as ws:
            await ws.send(encode_message(AuthToken(room, "")))
            assert decode_message(await ws.recv()) == Authenticated(room, "read-write")
            doc: Doc[Any] = Doc()
            insert_block(doc, "hello")
            await ws.send(encode_message(SyncUpdate(room, doc.get_update())))
            first = decode_message(await ws.recv())
            second = decode_message(await ws.recv())
            assert first == SyncStatus(room, True)
            assert isinstance(second, SyncUpdate)


async def test_a_denied_name_can_be_retried() -> None:
    async with DocsSandbox(hocuspocus_version=4) as sandbox:
        room = sandbox.create_document("denied").id
        other = sandbox.create_document("other").id
        async with await raw_socket(sandbox, room) as ws:
            await ws.send(encode_message(AuthToken(other, "")))  # name != ?room=: denied
            assert decode_message(await ws.recv()) == PermissionDenied(other, "permission-denied")
            await ws.send(encode_message(AuthToken(other, "")))
            assert decode_message(await ws.recv()) == PermissionDenied(other, "permission-denied")


async def test_pings_are_answered_and_the_pong_keeps_the_socket_open() -> None:
    async with DocsSandbox(hocuspocus_version=4, collaboration_timeout=TIMEOUT, send_pings=True) as sandbox:
        room = sandbox.create_document("pings").id
        connection = connection_to(sandbox, room, awareness_interval=60)
        await connection.open()
        try:
            await asyncio.sleep(TIMEOUT * 5)  # only our Pong (0a) answers the sandbox's Ping (09)
            assert connection.reconnect_count == 0 and connection.reset_count == 0
        finally:
            await connection.close()
        async with await raw_socket(sandbox, room) as ws:
            await ws.send(encode_message(Ping()))
            assert await asyncio.wait_for(ws.recv(), 5) == b"\x0a"


async def test_version_3_keeps_the_echo_before_the_ack_and_never_idles_out() -> None:
    async with DocsSandbox(collaboration_timeout=TIMEOUT) as sandbox:
        room = sandbox.create_document("v3").id
        async with await raw_socket(sandbox, room) as ws:
            await ws.send(encode_message(AuthToken(room, "")))
            await ws.send(encode_message(SyncStep1(room, b"\x00")))
            for _ in range(3):
                await ws.recv()
            await asyncio.sleep(TIMEOUT * 3)
            doc: Doc[Any] = Doc()
            insert_block(doc, "hello")
            await ws.send(encode_message(SyncUpdate(room, doc.get_update())))
            assert isinstance(decode_message(await ws.recv()), SyncUpdate)
            assert decode_message(await ws.recv()) == SyncStatus(room, True)


async def test_an_overlong_pre_auth_queue_closes_the_socket_4205() -> None:
    async with DocsSandbox(hocuspocus_version=4) as sandbox:
        room = sandbox.create_document("queue").id
        async with await raw_socket(sandbox, room) as ws:
            for _ in range(1001):  # Hocuspocus 4 queues at most 1000 messages per name before Auth
                await ws.send(encode_message(SyncStep1(room, b"\x00")))
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 10)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4205
