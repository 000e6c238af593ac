"""DocsSandbox's collaboration endpoints: the WebSocket of the rooms and the y-provider's HTTP API.

Where it sits: a route module of ``DocsSandbox`` (``server.build_app`` mounts it), in front of
``collaboration.CollaborationHub``. As Docs' y-provider does: ``/collaboration/ws/?room=`` accepts
the upgrade, then closes with 4001 a socket whose Origin is not allowed or that has no cookie;
``reset-connections`` and ``get-connections`` need the API key; ``/ping``; anything else under
``/collaboration/`` is 403. With Hocuspocus 4, idle sockets are closed (4408) and, with
``send_pings``, pinged.

How data flows::

    WebSocket -> gate (Origin, Cookie) -> hub.attach(SocketAdapter, room, cookie) -> SocketSession
      each binary message -> session.receive; a text frame -> close 4401
      hub sends -> SocketAdapter queue -> one writer task -> the socket (the close frame last)
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from elynav_nb.docs.live.frames import Ping, encode_message
from elynav_nb.sandbox.docs.api_common import SandboxSite
from elynav_nb.sandbox.docs.collaboration import SocketSession

__all__ = [
    "SocketAdapter",
    "collaboration_socket",
    "forbidden",
    "get_connections",
    "ping",
    "reset_connections",
]


class SocketAdapter:
    """Serialises the hub's sends on one Starlette WebSocket through a queue and a writer task."""

    def __init__(self, websocket: WebSocket) -> None:
        self.websocket = websocket
        self.outgoing: asyncio.Queue[bytes | tuple[int, str]] = asyncio.Queue()
        self.closing = False

    def send(self, frame: bytes) -> None:
        if not self.closing:
            self.outgoing.put_nowait(frame)

    def close(self, code: int, reason: str) -> None:
        if not self.closing:
            self.closing = True
            self.outgoing.put_nowait((code, reason))

    async def write_loop(self) -> None:
        while True:
            item = await self.outgoing.get()
            if isinstance(item, tuple):
                await self.websocket.close(code=item[0], reason=item[1])
                return
            await self.websocket.send_bytes(item)


async def ping(request: Request) -> Response:
    return JSONResponse({"message": "pong"})


async def forbidden(request: Request) -> Response:
    return JSONResponse({"error": "Forbidden"}, status_code=403)


def _api_key_ok(request: Request, sandbox: SandboxSite) -> bool:
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    return secrets.compare_digest(given, sandbox.api_key)


def reset_connections(sandbox: SandboxSite) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        if not _api_key_ok(request, sandbox):
            return JSONResponse({"error": "Forbidden"}, status_code=403)
        room = request.query_params.get("room")
        if not room:
            return JSONResponse({"error": "Room name not provided"}, status_code=400)
        sandbox.hub.reset(room)
        return JSONResponse({"message": "Connections reset"})

    return endpoint


def get_connections(sandbox: SandboxSite) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        if not _api_key_ok(request, sandbox):
            return JSONResponse({"error": "Forbidden"}, status_code=403)
        counts = sandbox.hub.connection_counts(
            request.query_params.get("room", ""), request.query_params.get("sessionKey")
        )
        if counts is None:
            return JSONResponse({"error": "Room not found"}, status_code=404)
        return JSONResponse(counts)

    return endpoint


async def _watch_idle(
    session: SocketSession, adapter: SocketAdapter, timeout: float, send_pings: bool
) -> None:
    """Hocuspocus 4's check every ``timeout``: close an idle socket (4408); pings every half ``timeout``."""
    half_ticks = 0
    while not session.closed:
        await asyncio.sleep(timeout / 2)
        half_ticks += 1
        if half_ticks % 2 == 0 and session.idle_expired(time.monotonic()):
            session.time_out()
            return
        if send_pings:
            adapter.send(encode_message(Ping()))


def collaboration_socket(sandbox: SandboxSite) -> Callable[[WebSocket], Awaitable[None]]:
    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()  # the y-provider closes after the upgrade, never before
        origin = websocket.headers.get("origin")
        if not origin or origin not in sandbox.allowed_origins:
            await websocket.close(code=4001, reason="Origin not allowed")
            return
        cookie = websocket.headers.get("cookie", "")
        if not cookie.strip():
            await websocket.close(code=4001, reason="No cookies")
            return
        adapter = SocketAdapter(websocket)
        session: SocketSession = sandbox.hub.attach(adapter, websocket.query_params.get("room", ""), cookie)
        loop = asyncio.get_running_loop()
        writer = loop.create_task(adapter.write_loop())
        watcher = None
        if sandbox.hub.timeout is not None:
            watcher = loop.create_task(_watch_idle(session, adapter, sandbox.hub.timeout, sandbox.send_pings))
        try:
            while not writer.done():
                received = await websocket.receive()
                if received["type"] == "websocket.disconnect":
                    break
                data = received.get("bytes")
                if data is None:
                    adapter.close(4401, "Unauthorized")  # Hocuspocus frames are binary
                    break
                await session.receive(data)
                if session.closed:
                    break
        except WebSocketDisconnect:
            pass
        finally:
            if watcher is not None:
                watcher.cancel()
            session.disconnect()
            if adapter.closing:  # let the writer send what is queued, then the close frame
                with contextlib.suppress(asyncio.CancelledError, TimeoutError, Exception):
                    await asyncio.wait_for(asyncio.shield(writer), 1.0)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer

    return endpoint
