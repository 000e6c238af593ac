"""DocsConnection against misbehaving servers: each fault gives a typed error in bounded time, and a
dropped socket is recovered without losing an edit. Small in-test servers, no Node needed."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from pycrdt import Doc
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from elynav_nb.docs.blocknote import insert_block, read_blocks
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.docs.live.frames import (
    Authenticated,
    AuthToken,
    AwarenessUpdate,
    Close,
    Ping,
    Pong,
    SyncStatus,
    SyncStep1,
    SyncStep2,
    SyncUpdate,
    decode_message,
    encode_message,
)
from elynav_nb.errors import ElynavError, ProtocolError, SyncTimeout

pytestmark = pytest.mark.anyio

Handler = Callable[[ServerConnection], Awaitable[None]]


@asynccontextmanager
async def websocket_server(handler: Handler) -> AsyncIterator[str]:
    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/collaboration/ws/"


def new_connection(url: str, room: str | None = None, **options: Any) -> DocsConnection:
    return DocsConnection(
        Doc(),
        url=url,
        document_name=room or str(uuid.uuid4()),
        origin="http://localhost:3000",
        cookie="docs_sessionid=secret-value",
        **options,
    )


async def test_a_server_that_never_answers_the_upgrade_times_out() -> None:
    async def accept_and_sit(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    server = await asyncio.start_server(accept_and_sit, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        connection = new_connection(f"ws://127.0.0.1:{port}/collaboration/ws/", open_timeout=0.5)
        with pytest.raises(SyncTimeout):
            await asyncio.wait_for(connection.open(), 10)
    finally:
        server.close()


async def test_a_server_that_never_authenticates_times_out() -> None:
    async def silent(websocket: ServerConnection) -> None:
        async for _frame in websocket:
            pass  # like Hocuspocus without Auth: nothing is ever sent back

    async with websocket_server(silent) as url:
        connection = new_connection(url, open_timeout=0.5)
        with pytest.raises(SyncTimeout) as raised:
            await asyncio.wait_for(connection.open(), 10)
        assert raised.value.code == "SYNC_TIMEOUT"


@pytest.mark.parametrize("garbage", [b"\xff\xff\xff\xff\xff\xff\xff\xff\xff", b"\x05ab", "a text frame"])
async def test_garbage_frames_give_a_protocol_error(garbage: bytes | str) -> None:
    async def garbage_sender(websocket: ServerConnection) -> None:
        await websocket.recv()
        await websocket.send(garbage)
        await websocket.wait_closed()

    async with websocket_server(garbage_sender) as url:
        connection = new_connection(url, open_timeout=5)
        with pytest.raises(ProtocolError) as raised:
            await asyncio.wait_for(connection.open(), 10)
        assert "secret-value" not in str(raised.value)


async def test_an_invalid_yjs_update_gives_a_protocol_error_and_leaves_the_document_untouched() -> None:
    async def bad_update(websocket: ServerConnection) -> None:
        auth = decode_message(await websocket.recv())
        assert isinstance(auth, AuthToken)
        await websocket.send(encode_message(Authenticated(auth.document_name, "read-write")))
        await websocket.send(encode_message(SyncStep2(auth.document_name, b"\x01\x02\x03garbage")))
        await websocket.wait_closed()

    async with websocket_server(bad_update) as url:
        connection = new_connection(url, open_timeout=5)
        with pytest.raises(ProtocolError):
            await asyncio.wait_for(connection.open(), 10)
        assert read_blocks(connection.doc) == []


class FlakyHocuspocus:
    """A minimal Hocuspocus room that drops the first socket right after the first local update."""

    def __init__(self) -> None:
        self.room = Doc()
        self.sockets = 0
        self.dropped = False

    async def handle(self, websocket: ServerConnection) -> None:
        self.sockets += 1
        async for frame in websocket:
            message = decode_message(frame)  # type: ignore[arg-type]
            name = getattr(message, "document_name", "")
            if isinstance(message, AuthToken):
                await websocket.send(encode_message(Authenticated(name, "read-write")))
            elif isinstance(message, SyncStep1):
                await websocket.send(encode_message(SyncStep1(name, self.room.get_state())))
                await websocket.send(
                    encode_message(SyncStep2(name, self.room.get_update(message.state_vector)))
                )
            elif isinstance(message, SyncUpdate) and not self.dropped:
                self.dropped = True
                websocket.transport.abort()  # a dropped socket, no close frame
                return
            elif isinstance(message, (SyncStep2, SyncUpdate)):
                self.room.apply_update(message.update)
                await websocket.send(encode_message(SyncStatus(name, True)))


async def test_a_dropped_socket_is_reconnected_and_the_unacknowledged_edit_is_resent() -> None:
    flaky = FlakyHocuspocus()
    async with websocket_server(flaky.handle) as url:
        connection = new_connection(url, open_timeout=5, backoff_initial=0.05)
        await connection.open()
        try:
            insert_block(connection.doc, "must survive the drop")
            await connection.await_flush(timeout=10)
            assert flaky.dropped and flaky.sockets == 2
            assert connection.reconnect_count == 1
            assert [block.text for block in read_blocks(flaky.room)] == ["must survive the drop"]
        finally:
            await connection.close()


async def test_reconnect_attempts_are_bounded_and_typed() -> None:
    flaky = FlakyHocuspocus()
    server_context = websocket_server(flaky.handle)
    url = await server_context.__aenter__()
    connection = new_connection(url, open_timeout=1, max_reconnect_attempts=2, backoff_initial=0.05)
    await connection.open()
    await server_context.__aexit__(None, None, None)  # the server goes away for good
    insert_block(connection.doc, "nobody will ack this")
    with pytest.raises(ElynavError) as raised:
        await connection.await_flush(timeout=10)
    assert getattr(raised.value, "code", None) in {"SERVICE_ERROR", "SYNC_TIMEOUT"}
    assert "secret-value" not in repr(connection)
    await connection.close()


async def test_awareness_presence_is_refreshed_on_its_interval() -> None:
    awareness_updates: list[bytes] = []

    async def counting_server(websocket: ServerConnection) -> None:
        async for frame in websocket:
            message = decode_message(frame)  # type: ignore[arg-type]
            name = getattr(message, "document_name", "")
            if isinstance(message, AwarenessUpdate):
                awareness_updates.append(message.update)
            elif isinstance(message, AuthToken):
                await websocket.send(encode_message(Authenticated(name, "read-write")))
            elif isinstance(message, SyncStep1):
                await websocket.send(encode_message(SyncStep1(name, b"\x00")))
                await websocket.send(encode_message(SyncStep2(name, b"\x00\x00")))
            elif isinstance(message, SyncStep2):
                await websocket.send(encode_message(SyncStatus(name, True)))

    async with websocket_server(counting_server) as url:
        connection = new_connection(url, open_timeout=5, awareness_interval=0.1)
        await connection.open()
        await asyncio.sleep(0.55)
        await connection.close()
    assert len(awareness_updates) >= 4  # one right after Auth, then one every 0.1 s
    assert b"Elynav bot" in awareness_updates[-1]


class MinimalHocuspocus:
    """Answers the handshake and acks every update; ``split`` sends each message in fragments."""

    def __init__(self, *, split: bool = False) -> None:
        self.split = split
        self.room: Doc[Any] = Doc()
        self.received: list[object] = []
        self.sockets: list[ServerConnection] = []

    async def broadcast(self, name: str, update: bytes) -> None:
        """A change typed by somebody else: applied to the room and sent to every client."""
        self.room.apply_update(update)
        for websocket in self.sockets:
            await self.send(websocket, encode_message(SyncUpdate(name, update)))

    async def send(self, websocket: ServerConnection, frame: bytes) -> None:
        if self.split:  # a fragmented WebSocket message: one byte, then the rest in two parts
            middle = 1 + (len(frame) - 1) // 2
            await websocket.send([frame[:1], frame[1:middle], frame[middle:]])
        else:
            await websocket.send(frame)

    async def handle(self, websocket: ServerConnection) -> None:
        self.sockets.append(websocket)
        with contextlib.suppress(ConnectionClosed):  # the client may leave in the middle of an answer
            async for frame in websocket:
                message = decode_message(frame)  # type: ignore[arg-type]
                self.received.append(message)
                await self.answer(websocket, message, getattr(message, "document_name", ""))

    async def answer(self, websocket: ServerConnection, message: object, name: str) -> None:
        if isinstance(message, AuthToken):
            await self.send(websocket, encode_message(Authenticated(name, "read-write")))
            await self.send(websocket, encode_message(Ping()))
        elif isinstance(message, SyncStep1):
            await self.send(websocket, encode_message(SyncStep1(name, self.room.get_state())))
            await self.send(
                websocket, encode_message(SyncStep2(name, self.room.get_update(message.state_vector)))
            )
        elif isinstance(message, (SyncStep2, SyncUpdate)):
            self.room.apply_update(message.update)
            await self.send(websocket, encode_message(SyncStatus(name, True)))


async def test_fragmented_messages_are_joined_and_a_ping_gets_a_pong() -> None:
    server = MinimalHocuspocus(split=True)
    async with websocket_server(server.handle) as url:
        connection = new_connection(url, open_timeout=5)
        await connection.open()
        try:
            insert_block(connection.doc, "sent whole, acknowledged in fragments")
            await connection.await_flush(timeout=5)
            assert [block.text for block in read_blocks(server.room)] == [
                "sent whole, acknowledged in fragments"
            ]
            assert any(isinstance(message, Pong) for message in server.received)
        finally:
            await connection.close()


async def test_a_failing_remote_listener_does_not_cut_the_connection() -> None:
    server = MinimalHocuspocus()
    async with websocket_server(server.handle) as url:
        connection = new_connection(url, open_timeout=5)
        await connection.open()
        calls: list[int] = []

        def broken_view() -> None:
            calls.append(1)
            raise RuntimeError("a bug in a view")

        connection.add_remote_listener(broken_view)
        try:
            insert_block(connection.doc, "ours")
            await connection.await_flush(timeout=5)
            somebody: Doc[Any] = Doc()
            somebody.apply_update(server.room.get_update())
            insert_block(somebody, "typed by somebody else")
            await server.broadcast(connection.document_name, somebody.get_update(server.room.get_state()))
            for _ in range(100):
                if calls:
                    break
                await asyncio.sleep(0.01)
            assert calls == [1]
            assert connection.is_open and connection.failure is None
            assert [block.text for block in read_blocks(connection.doc)] == ["typed by somebody else", "ours"]
            insert_block(connection.doc, "still writing")
            await connection.await_flush(timeout=5)
        finally:
            await connection.close()


class ResettingHocuspocus(MinimalHocuspocus):
    """Resets the room on the first update, then sends that update's (stale) ack; acks the next
    handshake's SyncStep2 only after a pause, noting when it applied it."""

    def __init__(self) -> None:
        super().__init__()
        self.reset_sent = False
        self.step2_applied_at: float | None = None

    async def answer(self, websocket: ServerConnection, message: object, name: str) -> None:
        if isinstance(message, SyncUpdate) and not self.reset_sent:
            self.reset_sent = True
            self.room.apply_update(message.update)
            await websocket.send(encode_message(Close(name, "Reset Connection")))
            await websocket.send(encode_message(SyncStatus(name, True)))  # belongs to the old handshake
        elif isinstance(message, SyncStep2) and self.reset_sent and self.step2_applied_at is None:
            await asyncio.sleep(0.3)
            self.room.apply_update(message.update)
            self.step2_applied_at = asyncio.get_running_loop().time()
            await websocket.send(encode_message(SyncStatus(name, True)))
        else:
            await super().answer(websocket, message, name)


async def test_an_ack_left_over_from_before_a_reset_does_not_end_the_new_handshake() -> None:
    server = ResettingHocuspocus()
    async with websocket_server(server.handle) as url:
        connection = new_connection(url, open_timeout=5)
        await connection.open()
        try:
            insert_block(connection.doc, "before the reset")
            insert_block(connection.doc, "also before the reset")  # unacknowledged: carried by SyncStep2
            await connection.await_flush(timeout=10)
            flushed_at = asyncio.get_running_loop().time()
            assert connection.reset_count == 1
            assert server.step2_applied_at is not None and flushed_at >= server.step2_applied_at
            assert {block.text for block in read_blocks(server.room)} == {
                "before the reset",
                "also before the reset",
            }
        finally:
            await connection.close()


async def test_a_document_of_several_megabytes_arrives_whole() -> None:
    server = MinimalHocuspocus()
    with server.room.transaction():
        for number in range(6000):  # ~2 MB of Yjs update: many socket reads for one message
            insert_block(server.room, f"paragraphe {number} " + "x" * 300)
    assert len(server.room.get_update()) > 2_000_000
    async with websocket_server(server.handle) as url:
        connection = new_connection(url, open_timeout=30)
        await connection.open()
        try:
            blocks = read_blocks(connection.doc)
            assert len(blocks) == 6000 and blocks[0].text.startswith("paragraphe 5999 ")
        finally:
            await connection.close()
