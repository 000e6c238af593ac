"""Forward compatibility: DocsConnection against a plain ``@hocuspocus/server`` 4.7.0.

Hocuspocus 4 sends the echo after the ack and closes (4408) a socket that sent no application
message within ``timeout``; our awareness keepalive must keep a quiet session open, and a closed one
must come back without losing an edit."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from pycrdt import Doc

from elynav_nb.docs.blocknote import insert_block, read_blocks
from elynav_nb.docs.live.connection import DocsConnection
from tests.interop.conftest import NodeServer

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


@pytest.fixture(scope="module")
def hocuspocus4_server(hocuspocus4_installed: Path) -> Any:
    server = NodeServer("hocuspocus4_server.mjs", {"timeout": 1000}, directory=hocuspocus4_installed)
    yield server
    server.stop()


def new_connection(server: Any, room: str, **options: Any) -> DocsConnection:
    return DocsConnection(
        Doc(),
        url=server.ws_url,
        document_name=room,
        origin="http://localhost:3000",
        cookie="docs_sessionid=bot",
        backoff_initial=0.05,
        **options,
    )


async def test_write_is_acked_and_seen_by_a_second_client(hocuspocus4_server: Any) -> None:
    room = str(uuid.uuid4())
    writer = new_connection(hocuspocus4_server, room, awareness_interval=0.5)
    reader = new_connection(hocuspocus4_server, room, awareness_interval=0.5)
    await writer.open()
    await reader.open()
    try:
        insert_block(writer.doc, "hello **v4**", type="heading", level=2)
        await writer.await_flush(timeout=5)
        for _ in range(100):
            if read_blocks(reader.doc):
                break
            await asyncio.sleep(0.02)
        assert [(block.type, block.text) for block in read_blocks(reader.doc)] == [
            ("heading", "hello **v4**")
        ]
    finally:
        await reader.close()
        await writer.close()


async def test_awareness_keepalive_keeps_a_quiet_session_open(hocuspocus4_server: Any) -> None:
    connection = new_connection(hocuspocus4_server, str(uuid.uuid4()), awareness_interval=0.3)
    await connection.open()
    try:
        await asyncio.sleep(2.6)  # more than twice the server's 1 s timeout, without any edit
        assert connection.reconnect_count == 0 and connection.failure is None
        insert_block(connection.doc, "still here")
        await connection.await_flush(timeout=5)
    finally:
        await connection.close()


async def test_a_timed_out_session_reconnects_without_losing_an_edit(hocuspocus4_server: Any) -> None:
    room = str(uuid.uuid4())
    connection = new_connection(hocuspocus4_server, room, awareness_interval=60)
    await connection.open()
    try:
        await asyncio.sleep(2.6)  # no keepalive: the server closes us with 4408
        insert_block(connection.doc, "after the timeout")
        await connection.await_flush(timeout=10)
        assert connection.reconnect_count >= 1 or connection.reset_count >= 1
        checker = new_connection(hocuspocus4_server, room, awareness_interval=0.5)
        await checker.open()
        assert [block.text for block in read_blocks(checker.doc)] == ["after the timeout"]
        await checker.close()
    finally:
        await connection.close()
