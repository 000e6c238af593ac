"""The sandbox's ack-holding test hook: acks kept back, sent late after a reset's Close, released.

It exists so that the stale-ack trap (design note §1.5: an ack of the old handshake arriving after
``Close "Reset Connection"``) can be shown on the embedded sandbox, which otherwise handles each
frame to the end before the next. Checked at the wire level, then with ``DocsConnection``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import websockets
from pycrdt import Doc
from websockets.asyncio.client import ClientConnection

from elynav_nb.docs.blocknote import insert_block
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.docs.live.frames import (
    Authenticated,
    AuthToken,
    AwarenessUpdate,
    Close,
    Message,
    SyncStatus,
    SyncStep1,
    SyncStep2,
    SyncUpdate,
    decode_message,
    encode_message,
)
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sandbox() -> AsyncIterator[DocsSandbox]:
    async with DocsSandbox() as running:
        yield running


async def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def next_message(socket: ClientConnection) -> Message:
    """The next server message that is not awareness (bounded)."""
    while True:
        message = decode_message(await asyncio.wait_for(socket.recv(), 10))
        if not isinstance(message, AwarenessUpdate):
            return message


async def messages_until(socket: ClientConnection, stop: Callable[[list[Message]], bool]) -> list[Message]:
    seen: list[Message] = []
    while not stop(seen):
        seen.append(await next_message(socket))
    return seen


def one_paragraph(text: str) -> bytes:
    doc: Doc[Any] = Doc()
    insert_block(doc, text)
    return doc.get_update()


def count_of(kind: type, messages: list[Message]) -> int:
    return sum(1 for message in messages if isinstance(message, kind))


async def authenticated_socket(sandbox: DocsSandbox, room: str) -> ClientConnection:
    socket = await websockets.connect(
        f"{sandbox.ws_url}?room={room}", origin=sandbox.url, additional_headers={"Cookie": sandbox.cookie}
    )
    await socket.send(encode_message(AuthToken(room, "")))
    await socket.send(encode_message(SyncStep1(room, Doc().get_state())))
    await messages_until(socket, lambda seen: count_of(SyncStep2, seen) == 1)
    return socket


async def test_held_acks_are_sent_only_when_released(sandbox: DocsSandbox) -> None:
    room = sandbox.create_document("Hold").id
    socket = await authenticated_socket(sandbox, room)
    try:
        sandbox.hub.hold_acks(room)
        await socket.send(encode_message(SyncUpdate(room, one_paragraph("held"))))
        await socket.send(encode_message(SyncStep1(room, Doc().get_state())))  # a probe answered in order
        seen = await messages_until(socket, lambda seen: count_of(SyncStep2, seen) == 1)
        assert [type(message) for message in seen] == [SyncUpdate, SyncStep1, SyncStep2]  # echo, no ack
        assert sandbox.hub.held_ack_count(room) == 1
        assert "held" in (sandbox.room_text(room) or "")  # applied: only its ack waits

        assert sandbox.hub.release_acks(room) == 1
        assert await next_message(socket) == SyncStatus(room, applied=True)
        assert sandbox.hub.held_ack_count(room) == 0
        await socket.send(encode_message(SyncUpdate(room, one_paragraph("not held"))))
        after_release = await messages_until(socket, lambda seen: count_of(SyncStatus, seen) == 1)
        assert after_release[-1] == SyncStatus(room, applied=True)  # holding stopped
    finally:
        await socket.close()


async def test_a_reset_sends_the_held_ack_after_its_close_and_keeps_holding(sandbox: DocsSandbox) -> None:
    room = sandbox.create_document("Stale").id
    socket = await authenticated_socket(sandbox, room)
    try:
        sandbox.hub.hold_acks(room)
        ours: Doc[Any] = Doc()
        insert_block(ours, "typed before the reset")
        await socket.send(encode_message(SyncUpdate(room, ours.get_update())))
        await messages_until(socket, lambda seen: count_of(SyncUpdate, seen) == 1)  # the echo
        assert sandbox.hub.reset(room) == 1

        after_reset = [await next_message(socket), await next_message(socket)]
        assert after_reset == [Close(room, "Reset Connection"), SyncStatus(room, applied=True)]
        assert sandbox.hub.held_ack_count(room) == 0
        assert sandbox.room_text(room) is None  # the reset emptied the room

        await socket.send(encode_message(AuthToken(room, "")))
        await socket.send(encode_message(SyncStep1(room, ours.get_state())))
        handshake = await messages_until(socket, lambda seen: count_of(SyncStep1, seen) == 1)
        assert isinstance(handshake[0], Authenticated)
        await socket.send(encode_message(SyncStep2(room, ours.get_update())))  # carries the edit again
        await socket.send(encode_message(SyncStep1(room, ours.get_state())))  # a probe answered in order
        await messages_until(socket, lambda seen: count_of(SyncStep1, seen) == 1)
        assert sandbox.hub.held_ack_count(room) == 1  # the new SyncStep2's ack: still held
        assert "typed before the reset" in (sandbox.room_text(room) or "")
        assert sandbox.hub.release_acks(room) == 1
    finally:
        await socket.close()


async def test_docs_connection_ignores_the_stale_ack_and_waits_for_the_real_one(sandbox: DocsSandbox) -> None:
    room = sandbox.create_document("Library").id
    connection = DocsConnection(
        Doc(), url=sandbox.ws_url, document_name=room, origin=sandbox.url, cookie=sandbox.cookie
    )
    await connection.open()
    try:
        sandbox.hub.hold_acks(room)
        insert_block(connection.doc, "typed before the reset")
        await wait_until(lambda: sandbox.hub.held_ack_count(room) == 1)
        sandbox.reset(room)  # Close, then the stale ack of that update
        await wait_until(lambda: connection.reset_count == 1 and connection.scope == "read-write")
        # The stale ack came before the new Authenticated: ignored, the new SyncStep2 still counts.
        assert connection.unsynced == 1
        await wait_until(lambda: sandbox.hub.held_ack_count(room) == 1)  # that SyncStep2's ack, held

        assert sandbox.hub.release_acks(room) == 1
        await connection.await_flush(timeout=10)
        assert connection.unsynced == 0
        assert "typed before the reset" in (sandbox.room_text(room) or "")
    finally:
        await connection.close()
