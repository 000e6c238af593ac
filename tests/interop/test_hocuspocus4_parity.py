"""The same short scenario on ``DocsSandbox(hocuspocus_version=4)`` and on the real Node
``@hocuspocus/server`` 4.7.0: identical outcomes prove the v4 mode faithful where a client feels it
(idle close 4408 with and without Auth, echo after ack, recovery of an idle-closed DocsConnection).

The Node server is the plain one of ``hocuspocus4/`` (no Docs gate), so the scenario sends a valid
Origin, Cookie and UUID v4 room to both and never exercises the gate or denials."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import websockets
from pycrdt import Doc

from elynav_nb.docs.blocknote import insert_block, read_blocks
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.docs.live.frames import AuthToken, SyncStep1, SyncUpdate, decode_message, encode_message
from elynav_nb.sandbox.docs.server import DocsSandbox
from tests.interop.conftest import ALLOWED_ORIGIN, NodeServer
from tests.interop.test_sandbox_parity import describe, frames_within

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

TIMEOUT_SECONDS = 1.0


@dataclass
class Target:
    ws_url: str
    origin: str
    cookie: str
    new_room: Callable[[], str]


@pytest.fixture(scope="module")
def hocuspocus4_parity_server(hocuspocus4_installed: Path) -> Any:
    server = NodeServer(
        "hocuspocus4_server.mjs", {"timeout": int(TIMEOUT_SECONDS * 1000)}, directory=hocuspocus4_installed
    )
    yield server
    server.stop()


async def until_closed(websocket: Any, seconds: float) -> tuple[list[str], str]:
    """Every non-awareness frame until the socket closes, and the close code and reason."""
    labels: list[str] = []
    try:
        while True:
            message = decode_message(await asyncio.wait_for(websocket.recv(), seconds))
            if type(message).__name__ != "AwarenessUpdate":
                labels.append(describe(message))
    except websockets.ConnectionClosed as closed:
        assert closed.rcvd is not None
        return labels, f"{closed.rcvd.code} {closed.rcvd.reason}"
    except TimeoutError:
        return labels, "still open"


async def run_scenario(target: Target) -> dict[str, Any]:
    headers = {"Origin": target.origin, "Cookie": target.cookie}
    outcome: dict[str, Any] = {}

    room = target.new_room()
    async with websockets.connect(f"{target.ws_url}?room={room}", additional_headers=headers) as ws:
        outcome["never authenticated"] = await until_closed(ws, TIMEOUT_SECONDS * 4)

    room = target.new_room()
    async with websockets.connect(f"{target.ws_url}?room={room}", additional_headers=headers) as ws:
        doc: Doc[Any] = Doc()
        await ws.send(encode_message(AuthToken(room, "")))
        await ws.send(encode_message(SyncStep1(room, doc.get_state())))
        outcome["handshake"] = sorted(await frames_within(ws, 3, until=3))
        insert_block(doc, "hello")
        await ws.send(encode_message(SyncUpdate(room, doc.get_update())))
        outcome["update (ordered)"] = await frames_within(ws, 3, until=2)
        outcome["idle after auth"] = await until_closed(ws, TIMEOUT_SECONDS * 4)

    room = target.new_room()

    def connection() -> DocsConnection:
        return DocsConnection(
            Doc(),
            url=target.ws_url,
            document_name=room,
            origin=target.origin,
            cookie=target.cookie,
            backoff_initial=0.05,
            awareness_interval=60,
        )

    quiet = connection()
    await quiet.open()
    try:
        await asyncio.sleep(TIMEOUT_SECONDS * 2.6)  # idle-closed; the room empties with it
        insert_block(quiet.doc, "after the idle close")
        await quiet.await_flush(timeout=10)
        outcome["idle close recovered"] = quiet.reconnect_count >= 1 and quiet.failure is None
        checker = connection()
        await checker.open()
        outcome["edit kept"] = [block.text for block in read_blocks(checker.doc)]
        await checker.close()
    finally:
        await quiet.close()
    return outcome


async def test_v4_sandbox_and_node_hocuspocus4_give_identical_outcomes(
    hocuspocus4_parity_server: NodeServer,
) -> None:
    node_target = Target(
        ws_url=hocuspocus4_parity_server.ws_url,
        origin=ALLOWED_ORIGIN,
        cookie="docs_sessionid=alice",
        new_room=lambda: str(uuid.uuid4()),
    )
    node_outcome = await run_scenario(node_target)

    async with DocsSandbox(hocuspocus_version=4, collaboration_timeout=TIMEOUT_SECONDS) as sandbox:
        sandbox_target = Target(
            ws_url=sandbox.ws_url,
            origin=sandbox.url,
            cookie=sandbox.cookie,
            new_room=lambda: sandbox.create_document("parity v4").id,
        )
        sandbox_outcome = await run_scenario(sandbox_target)

    assert node_outcome["never authenticated"] == ([], "4408 Connection Timeout")
    assert node_outcome["update (ordered)"] == ["SyncStatus:1", "SyncUpdate:data"]
    assert node_outcome["idle after auth"] == (["Close:Connection Timeout"], "4408 Connection Timeout")
    assert node_outcome["edit kept"] == ["after the idle close"]
    assert sandbox_outcome == node_outcome
