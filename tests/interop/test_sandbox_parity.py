"""The same byte-level scenario against DocsSandbox and against the Node Docs-like server
(Hocuspocus 3.4.4 + y-provider checks): identical outcomes prove the sandbox faithful."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import websockets
from pycrdt import Doc
from websockets.asyncio.client import ClientConnection

from elynav_nb.docs.blocknote import insert_block
from elynav_nb.docs.live.frames import (
    AuthToken,
    Message,
    SyncStep1,
    SyncUpdate,
    decode_message,
    encode_message,
)
from elynav_nb.sandbox.docs.server import DocsSandbox
from tests.interop.conftest import ALLOWED_ORIGIN, NodeServer

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

EMPTY_UPDATE = bytes([0, 0])


@dataclass
class Target:
    ws_url: str
    origin: str
    editor_cookie: str
    reader_cookie: str
    new_room: Callable[[], str]
    reset: Callable[[str], Awaitable[None]]


def describe(message: Message) -> str:
    """A server message as a short, comparable label."""
    name = type(message).__name__
    if hasattr(message, "scope"):
        return f"{name}:{message.scope}"
    if hasattr(message, "reason"):
        return f"{name}:{message.reason}"
    if hasattr(message, "applied"):
        return f"{name}:{int(message.applied)}"
    if hasattr(message, "update"):
        kind = "empty" if message.update == EMPTY_UPDATE else "data"
        return f"{name}:{kind}"
    return name


async def frames_within(
    websocket: ClientConnection, seconds: float, *, until: int | None = None
) -> list[str]:
    labels: list[str] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while until is None or len(labels) < until:
        remaining = deadline - loop.time()
        if remaining <= 0:
            break
        try:
            frame = await asyncio.wait_for(websocket.recv(), remaining)
        except TimeoutError:
            break
        message = decode_message(frame)  # type: ignore[arg-type]
        if type(message).__name__ != "AwarenessUpdate":
            labels.append(describe(message))
    return labels


async def gate_outcome(target: Target, origin: str | None, cookie: str | None) -> str:
    headers = {}
    if origin:
        headers["Origin"] = origin
    if cookie:
        headers["Cookie"] = cookie
    async with websockets.connect(
        f"{target.ws_url}?room={target.new_room()}", additional_headers=headers
    ) as ws:
        try:
            await asyncio.wait_for(ws.recv(), 5)
        except websockets.ConnectionClosed as closed:
            assert closed.rcvd is not None
            return f"{closed.rcvd.code} {closed.rcvd.reason}"
    return "open"


async def run_scenario(target: Target) -> dict[str, Any]:
    outcome: dict[str, Any] = {
        "no origin": await gate_outcome(target, None, target.editor_cookie),
        "wrong origin": await gate_outcome(target, "https://evil.example", target.editor_cookie),
        "no cookie": await gate_outcome(target, target.origin, None),
    }
    headers = {"Origin": target.origin, "Cookie": target.editor_cookie}
    room = target.new_room()

    async def denied(document_name: str, room_parameter: str) -> list[str]:
        async with websockets.connect(
            f"{target.ws_url}?room={room_parameter}", additional_headers=headers
        ) as ws:
            await ws.send(encode_message(AuthToken(document_name, "")))
            return await frames_within(ws, 3, until=1)

    outcome["room mismatch"] = await denied(str(uuid.uuid4()), room)
    v1_room = str(uuid.uuid1())
    outcome["uuid v1"] = await denied(v1_room, v1_room)

    async with websockets.connect(f"{target.ws_url}?room={room}", additional_headers=headers) as ws:
        doc: Doc[Any] = Doc()
        await ws.send(encode_message(SyncStep1(room, doc.get_state())))
        outcome["sync before auth"] = await frames_within(ws, 0.7)
        await ws.send(encode_message(AuthToken(room, "")))
        outcome["late auth"] = sorted(await frames_within(ws, 3, until=3))
        insert_block(doc, "hello")
        await ws.send(encode_message(SyncUpdate(room, doc.get_update())))
        outcome["update"] = await frames_within(ws, 3, until=2)

        reader_headers = {"Origin": target.origin, "Cookie": target.reader_cookie}
        async with websockets.connect(
            f"{target.ws_url}?room={room}", additional_headers=reader_headers
        ) as reader:
            await reader.send(encode_message(AuthToken(room, "")))
            await reader.send(encode_message(SyncStep1(room, b"\x00")))
            outcome["reader handshake"] = sorted(await frames_within(reader, 3, until=3))
            other: Doc[Any] = Doc()
            insert_block(other, "from a reader")
            await reader.send(encode_message(SyncUpdate(room, other.get_update())))
            outcome["reader update"] = await frames_within(reader, 3, until=1)
            outcome["editor sees reader update"] = await frames_within(ws, 0.5)

        await target.reset(room)
        outcome["reset"] = await frames_within(ws, 3, until=1)
        await ws.send(encode_message(AuthToken(room, "")))
        await ws.send(encode_message(SyncStep1(room, doc.get_state())))
        outcome["re-auth after reset"] = sorted(await frames_within(ws, 3, until=3))
    await asyncio.sleep(0.3)
    async with websockets.connect(f"{target.ws_url}?room={room}", additional_headers=headers) as ws:
        await ws.send(encode_message(AuthToken(room, "")))
        await ws.send(encode_message(SyncStep1(room, b"\x00")))
        outcome["room after everyone left"] = sorted(await frames_within(ws, 3, until=3))
    return outcome


async def test_sandbox_and_node_server_give_identical_outcomes(hocuspocus_server: NodeServer) -> None:
    async def reset_node(room: str) -> None:
        async with httpx.AsyncClient() as client:
            await client.post(
                f"{hocuspocus_server.http_url}/collaboration/api/reset-connections/", params={"room": room}
            )

    node_target = Target(
        ws_url=hocuspocus_server.ws_url,
        origin=ALLOWED_ORIGIN,
        editor_cookie="docs_sessionid=alice",
        reader_cookie="docs_sessionid=rita; readonly=1",
        new_room=lambda: str(uuid.uuid4()),
        reset=reset_node,
    )
    node_outcome = await run_scenario(node_target)

    async with DocsSandbox() as sandbox:
        reader, reader_session = sandbox.create_user("Rita Reader")

        def new_sandbox_room() -> str:
            document = sandbox.create_document("parity")
            document.accesses[reader.id] = "reader"
            return document.id

        async def reset_sandbox(room: str) -> None:
            async with httpx.AsyncClient() as client:
                await client.post(
                    f"{sandbox.url}/collaboration/api/reset-connections/",
                    params={"room": room},
                    headers={"Authorization": sandbox.api_key},
                )

        sandbox_target = Target(
            ws_url=sandbox.ws_url,
            origin=sandbox.url,
            editor_cookie=sandbox.cookie,
            reader_cookie=f"docs_sessionid={reader_session}",
            new_room=new_sandbox_room,
            reset=reset_sandbox,
        )
        sandbox_outcome = await run_scenario(sandbox_target)

    assert node_outcome["wrong origin"] == "4001 Origin not allowed"
    assert node_outcome["no cookie"] == "4001 No cookies"
    assert node_outcome["sync before auth"] == []
    assert node_outcome["reset"] == ["Close:Reset Connection"]
    assert sandbox_outcome == node_outcome
