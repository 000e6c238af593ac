"""A hostile La Suite Docs server for tests: REST and collaboration WebSocket on loopback, wrong on purpose.

Where it sits: test support for ``test_hostile_server.py`` and ``test_rest_limits.py``. One
``HostileDocs(case)`` serves one document the way Docs would (``/api/v1.0/config/``, the document,
its empty content, a WebSocket upgrade on ``/collaboration/ws/``) except for one misbehaviour, named
by ``case`` (``CASES`` lists them with what they do). HTTP and WebSocket are written by hand on raw
sockets, so the server can do what no framework allows: drip headers, lie in ``Content-Length``,
send a frame header that claims more bytes than follow.

Bounded on every side: it binds 127.0.0.1 only; a connection lasts at most ``CONNECTION_LIFETIME``
seconds; a body or a message stops after ``MAX_SENT_BYTES``; what a client sends is read up to
64 KiB per request or frame; the server stops itself after ``lifetime`` seconds (and on leaving the
``async with``). Run alone, ``python -m tests.docs.hostile_server <case> [lifetime]`` prints the
instance URL and the document link as one JSON line, serves, and exits.

How data flows::

    client GET /api/v1.0/config/                 -> config (COLLABORATION_WS_URL: this server)
    client GET /api/v1.0/documents/<id>/          -> the document (public, editable by link)
    client GET /api/v1.0/documents/<id>/content/  -> "" (never saved)
    client GET /collaboration/ws/?room=<id>       -> 101, then the case's frames
    ... the route named by the case's ``target`` gets the case's behaviour instead.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from elynav_nb.docs.live.frames import (
    SCOPE_READ_WRITE,
    Authenticated,
    SyncStep2,
    encode_message,
    encode_var_string,
    encode_var_uint,
)

__all__ = ["CASES", "CONNECTION_LIFETIME", "DRIP_INTERVAL", "MAX_SENT_BYTES", "Case", "HostileDocs"]

DRIP_INTERVAL: Final = 0.5
"""Seconds between two dripped bytes: far below httpx's 15 s per-read timeout, so only a deadline helps."""
CONNECTION_LIFETIME: Final = 30.0
MAX_SENT_BYTES: Final = 300 * 1024 * 1024
_CHUNK: Final = 1024 * 1024
_MAX_REQUEST_BYTES: Final = 64 * 1024
_WEBSOCKET_GUID: Final = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_OPCODE_CONTINUATION: Final = 0x0
_OPCODE_BINARY: Final = 0x2
_OPCODE_CLOSE: Final = 0x8


@dataclass(frozen=True)
class Case:
    """One misbehaviour: which route it replaces (``config``, ``document``, ``content``,
    ``upgrade``, ``websocket``) and what it does there."""

    target: str
    description: str
    anonymous: bool = False


CASES: Final = {
    "drip-headers": Case("document", "the status line, then one header byte every 0.5 s, for ever"),
    "drip-body": Case("content", "Content-Length: 1000000, then one body byte every 0.5 s"),
    "retry-after": Case("document", "503 with Retry-After: 86400 (a day), every time"),
    "huge-body": Case("content", "a chunked body of 300 MiB of base64 characters"),
    "claimed-huge-length": Case("content", "Content-Length: 10 GiB, 1 MiB of body, then silence"),
    "short-body": Case("content", "Content-Length: 1000, 10 bytes of body, then the socket closes"),
    "absurd-length": Case("content", "a Content-Length of 5000 digits"),
    "deep-json": Case("document", "a JSON array nested 100000 deep"),
    "deep-json-config": Case("config", "the configuration as JSON objects nested 50000 deep"),
    "wrong-types": Case("document", "every field of the document of another JSON type", anonymous=True),
    "ws-drip-upgrade": Case("upgrade", "the 101 answer to the WebSocket upgrade, one byte every 0.5 s"),
    "ws-invalid-yjs": Case("websocket", "Authenticated, then a SyncStep2 whose update is not Yjs"),
    "ws-frame-claims-more": Case("websocket", "a frame header claiming 1 MiB, 10 bytes, then silence"),
    "ws-oversized-frame": Case("websocket", "a frame header claiming 1 TiB"),
    "ws-oversized-message": Case("websocket", "one message of 300 MiB, in fragments of 1 MiB"),
    "ws-lying-length": Case("websocket", "a Hocuspocus SyncStep2 whose length claims 2**40 bytes"),
}


@dataclass
class _Request:
    method: str
    path: str
    headers: dict[str, str]


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    """One HTTP/1.1 request head (its body, if any, is read and dropped); ``None`` at EOF."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = (lines[0].split(" ") + ["", "", ""])[:3]
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length", "0")
    if length.isdigit() and 0 < int(length) <= _MAX_REQUEST_BYTES:
        await reader.readexactly(int(length))
    return _Request(method, path, headers)


def _answer(status: str, body: bytes, content_type: str = "application/json", **extra: str) -> bytes:
    headers = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
    headers.extend(f"{name.replace('_', '-')}: {value}" for name, value in extra.items())
    return ("\r\n".join(headers) + "\r\n\r\n").encode("latin-1") + body


def _frame_header(opcode: int, length: int, *, final: bool = True) -> bytes:
    """A server (unmasked) WebSocket frame header announcing ``length`` payload bytes."""
    first = (0x80 if final else 0) | opcode
    if length < 126:
        return bytes([first, length])
    if length < 65536:
        return bytes([first, 126]) + length.to_bytes(2, "big")
    return bytes([first, 127]) + length.to_bytes(8, "big")


def _binary_frame(payload: bytes) -> bytes:
    return _frame_header(_OPCODE_BINARY, len(payload)) + payload


class HostileDocs:
    """``async with HostileDocs("drip-body") as server``: ``server.instance``, ``server.link``."""

    def __init__(self, case: str, *, lifetime: float = 120.0) -> None:
        if case not in CASES:
            raise ValueError(f"unknown hostile case {case!r}; known: {', '.join(CASES)}")
        self.case = case
        self.behaviour = CASES[case]
        self.lifetime = lifetime
        self.document_id = str(uuid.uuid4())
        self.requests: list[str] = []
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._stopper: asyncio.TimerHandle | None = None
        self.port = 0

    @property
    def instance(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def link(self) -> str:
        return f"{self.instance}/docs/{self.document_id}/"

    async def __aenter__(self) -> HostileDocs:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=_MAX_REQUEST_BYTES)
        self.port = self._server.sockets[0].getsockname()[1]
        self._stopper = asyncio.get_running_loop().call_later(self.lifetime, self._stop_listening)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._stopper is not None:
            self._stopper.cancel()
        self._stop_listening()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _stop_listening(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()

    # --- HTTP -----------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            async with asyncio.timeout(CONNECTION_LIFETIME):
                while (request := await _read_request(reader)) is not None:
                    self.requests.append(f"{request.method} {request.path}")
                    if not await self._answer_request(request, reader, writer):
                        break
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:  # the server is stopping: this connection just ends
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _route(self, request: _Request) -> str:
        if request.path.startswith("/api/v1.0/config/"):
            return "config"
        if request.path.startswith(f"/api/v1.0/documents/{self.document_id}/content/"):
            return "content"
        if request.path.startswith(f"/api/v1.0/documents/{self.document_id}/"):
            return "document"
        if request.path.startswith("/collaboration/ws/"):
            return "upgrade"
        return "unknown"

    async def _answer_request(
        self, request: _Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; False when the connection must end."""
        route = self._route(request)
        if route == self.behaviour.target:
            return await self._misbehave(request, reader, writer)
        if route == "upgrade":
            writer.write(self._switching_protocols(request))
            await writer.drain()
            if self.behaviour.target == "websocket":
                await self._misbehave(request, reader, writer)
            return False
        writer.write(self._honest_answer(route))
        await writer.drain()
        return True

    def _honest_answer(self, route: str) -> bytes:
        if route == "config":
            ws_url = f"ws://127.0.0.1:{self.port}/collaboration/ws/"
            body = {"RELEASE_VERSION": "v5.4.1", "COLLABORATION_WS_URL": ws_url}
            return _answer("200 OK", json.dumps(body).encode())
        if route == "document":
            return _answer("200 OK", json.dumps(self._document()).encode())
        if route == "content":
            return _answer("200 OK", b"", "text/plain")
        return _answer("404 Not Found", b'{"detail": "Not found."}')

    def _document(self) -> dict[str, object]:
        return {
            "id": self.document_id,
            "title": "Hostile",
            "link_reach": "public",
            "link_role": "editor",
            "computed_link_reach": "public",
            "computed_link_role": "editor",
            "abilities": {"retrieve": True, "update": True, "content_retrieve": True, "content_patch": True},
        }

    def _switching_protocols(self, request: _Request) -> bytes:
        key = request.headers.get("sec-websocket-key", "")
        accept = base64.b64encode(hashlib.sha1((key + _WEBSOCKET_GUID).encode()).digest()).decode()
        return (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept}\r\n\r\n"
        ).encode("latin-1")

    # --- the misbehaviours ------------------------------------------------------------------------

    async def _misbehave(
        self, request: _Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        if self.behaviour.target == "websocket":
            await self._hostile_websocket(reader, writer)
            return False
        http_cases: dict[str, Callable[[asyncio.StreamWriter], Awaitable[bool]]] = {
            "drip-headers": self._drip_headers,
            "drip-body": self._drip_body,
            "retry-after": self._retry_after,
            "huge-body": self._huge_body,
            "claimed-huge-length": self._claimed_huge_length,
            "short-body": self._short_body,
            "absurd-length": self._absurd_length,
            "deep-json": self._deep_json,
            "deep-json-config": self._deep_json_config,
            "wrong-types": self._wrong_types,
            "ws-drip-upgrade": self._drip_upgrade,
        }
        return await http_cases[self.case](writer)

    @staticmethod
    async def _drip(writer: asyncio.StreamWriter, text: bytes) -> None:
        for index in range(len(text)):
            writer.write(text[index : index + 1])
            await writer.drain()
            await asyncio.sleep(DRIP_INTERVAL)

    async def _drip_headers(self, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\n")
        await self._drip(writer, b"X-Drip: " + b"a" * 10_000)
        return False

    async def _drip_body(self, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\n")
        await self._drip(writer, b"A" * 1_000_000)
        return False

    async def _retry_after(self, writer: asyncio.StreamWriter) -> bool:
        writer.write(_answer("503 Service Unavailable", b"", "text/plain", Retry_After="86400"))
        await writer.drain()
        return True

    async def _huge_body(self, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"QUFB" * (_CHUNK // 4)
        for _ in range(MAX_SENT_BYTES // _CHUNK):
            writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return False

    async def _claimed_huge_length(self, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10737418240\r\n\r\n")
        writer.write(b"A" * _CHUNK)
        await writer.drain()
        await asyncio.sleep(CONNECTION_LIFETIME)
        return False

    async def _short_body(self, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nAAAAAAAAAA")
        await writer.drain()
        return False

    async def _absurd_length(self, writer: asyncio.StreamWriter) -> bool:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n"
        )
        writer.write(b"A" * 1000)
        await writer.drain()
        return False

    async def _deep_json(self, writer: asyncio.StreamWriter) -> bool:
        writer.write(_answer("200 OK", b"[" * 100_000 + b"]" * 100_000))
        await writer.drain()
        return True

    async def _deep_json_config(self, writer: asyncio.StreamWriter) -> bool:
        writer.write(_answer("200 OK", b'{"a":' * 50_000 + b"1" + b"}" * 50_000))
        await writer.drain()
        return True

    async def _wrong_types(self, writer: asyncio.StreamWriter) -> bool:
        document = {
            "id": 12,
            "title": ["a", "list"],
            "abilities": "everything",
            "link_reach": {"public": True},
            "computed_link_reach": 1.5,
            "link_role": ["editor"],
            "created_at": {"day": 1},
            "updated_at": False,
        }
        writer.write(_answer("200 OK", json.dumps(document).encode()))
        await writer.drain()
        return True

    async def _drip_upgrade(self, writer: asyncio.StreamWriter) -> bool:
        await self._drip(
            writer, b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n" + b"X" * 10_000
        )
        return False

    # --- WebSocket --------------------------------------------------------------------------------

    async def _hostile_websocket(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Send the case's frames while reading (and dropping) the client's; end on its close frame
        or its EOF (the connection is then closed by ``_serve``, never while a frame is written)."""
        loop = asyncio.get_running_loop()
        listener = loop.create_task(self._read_client_frames(reader))
        sender = loop.create_task(self._send_hostile_frames(writer))
        try:
            await listener
        finally:
            for task in (sender, listener):
                task.cancel()
            for task in (sender, listener):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _send_hostile_frames(self, writer: asyncio.StreamWriter) -> None:
        name = self.document_id
        if self.case == "ws-invalid-yjs":
            writer.write(_binary_frame(encode_message(Authenticated(name, SCOPE_READ_WRITE))))
            writer.write(_binary_frame(encode_message(SyncStep2(name, b"\xff\xfe not a yjs update"))))
        elif self.case == "ws-lying-length":
            writer.write(_binary_frame(encode_message(Authenticated(name, SCOPE_READ_WRITE))))
            lying = encode_var_string(name) + b"\x00\x01" + encode_var_uint(2**40) + b"abc"
            writer.write(_binary_frame(lying))
        elif self.case == "ws-frame-claims-more":
            writer.write(_frame_header(_OPCODE_BINARY, _CHUNK) + b"0123456789")
        elif self.case == "ws-oversized-frame":
            writer.write(_frame_header(_OPCODE_BINARY, 2**40) + b"0123456789")
        elif self.case == "ws-oversized-message":
            fragment = b"\x00" * _CHUNK
            count = MAX_SENT_BYTES // _CHUNK
            for number in range(count):
                opcode = _OPCODE_BINARY if number == 0 else _OPCODE_CONTINUATION
                writer.write(_frame_header(opcode, len(fragment), final=number == count - 1) + fragment)
                await writer.drain()
        await writer.drain()

    @staticmethod
    async def _read_client_frames(reader: asyncio.StreamReader) -> None:
        """Read masked client frames until its close frame (or EOF)."""
        while True:
            head = await reader.readexactly(2)
            opcode, length = head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = int.from_bytes(await reader.readexactly(2), "big")
            elif length == 127:
                length = int.from_bytes(await reader.readexactly(8), "big")
            if length > _MAX_REQUEST_BYTES:
                break
            mask_size = 4 if head[1] & 0x80 else 0
            await reader.readexactly(mask_size + length)
            if opcode == _OPCODE_CLOSE:
                break


async def _serve_alone(case: str, lifetime: float) -> None:
    async with HostileDocs(case, lifetime=lifetime) as server:
        print(json.dumps({"case": case, "instance": server.instance, "link": server.link}), flush=True)
        await asyncio.sleep(lifetime)


if __name__ == "__main__":
    chosen = sys.argv[1] if len(sys.argv) > 1 else "drip-body"
    asyncio.run(_serve_alone(chosen, float(sys.argv[2]) if len(sys.argv) > 2 else 60.0))
