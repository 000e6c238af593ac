"""MCP's streamable HTTP transport, server side, as rules over one parsed request: who may call, what it answers.

Where it sits: between ``loopback_server.py`` (the I/O: sockets, HTTP/1.1 framing with h11) and
``McpToolEndpoint`` (MCP's JSON-RPC over a ``KernelToolSet``). The server hands each complete
request here as an ``HttpRequest`` (method, target, headers, body) and writes back the
``HttpAnswer``; nothing here touches a socket, and nothing here parses MCP (the endpoint does).

How a request flows::

    HttpRequest -> Host is loopback with our port, Origin (if any) is loopback (DNS-rebinding guard: 403)
      -> Authorization: Bearer <the runner's secret>, compared in constant time (401)
      -> the path is ``/mcp`` (404) -> the method:
           POST   -> Content-Type application/json (415) -> JSON (400) -> MCP-Protocol-Version known (400)
                     -> initialize: a new Mcp-Session-Id; any other: a known session (400 missing, 404 unknown)
                     -> endpoint.handle(each message) -> 200 application/json, or 202 (notifications only)
           DELETE -> the session ends (204; 404 unknown)
           GET    -> 405 (no server-to-client stream: the kernel tools send no notification)

What the transport spec (2025-06-18, "Streamable HTTP") asks and how it is met: a POST whose
messages are all notifications or responses is answered ``202 Accepted`` with no body; a POST with
requests is answered with one JSON body (a batch, from 2025-03-26 clients, gets an array) and no
SSE, which the spec allows (``Content-Type: application/json``); the session id is visible ASCII,
made by ``secrets``; at most ``MAX_SESSIONS`` live at once (the least recently used ends first: a
CLI per turn opens one per process and may never send DELETE).

Security: the secret is the only thing that lets a local process in (every port on 127.0.0.1 is
open to every local user); it is never logged, never put in an answer. The Host/Origin check keeps
a web page in a browser on this machine from reaching the server through a rebound DNS name.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from elynav_nb.agents._jsonrpc import INVALID_REQUEST, JSON_RPC, PARSE_ERROR
from elynav_nb.agents.tools.mcp_endpoint import PROTOCOL_VERSIONS, McpToolEndpoint

__all__ = [
    "LOOPBACK_HOSTS",
    "MAX_SESSIONS",
    "MCP_PATH",
    "HttpAnswer",
    "HttpRequest",
    "McpHttpRules",
]

MCP_PATH = "/mcp"
MAX_SESSIONS = 64
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
_SESSION_HEADER = "mcp-session-id"
_VERSION_HEADER = "mcp-protocol-version"
_DEFAULT_VERSION = "2025-03-26"  # what the spec says to assume when a client sends no version header


@dataclass(frozen=True)
class HttpRequest:
    """One complete HTTP request: ``headers`` keys are lower case (a repeated header's values joined by ``, ``)."""

    method: str
    target: str
    headers: Mapping[str, str]
    body: bytes = b""


@dataclass(frozen=True)
class HttpAnswer:
    """What to write back: a status, headers (beyond the framing ones) and a body."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    close: bool = False  # end the connection after this answer

    @classmethod
    def json(cls, status: int, value: Any, *, headers: tuple[tuple[str, str], ...] = ()) -> HttpAnswer:
        body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return cls(status, (("content-type", "application/json"), *headers), body)

    @classmethod
    def refusal(cls, status: int, message: str, *, headers: tuple[tuple[str, str], ...] = ()) -> HttpAnswer:
        """A refused request: a JSON-RPC error body (``id`` null), as the MCP SDK's server answers them."""
        return cls.json(
            status,
            JSON_RPC.error(None, INVALID_REQUEST, message),
            headers=headers,
        )


@dataclass
class McpHttpRules:
    """The rules of one loopback server: its secret, its port (for the Host check), its sessions."""

    endpoint: McpToolEndpoint
    secret: str
    port: int = 0  # set once the socket is bound
    max_sessions: int = MAX_SESSIONS
    sessions: OrderedDict[str, str] = field(default_factory=OrderedDict)  # id -> protocol version

    def __post_init__(self) -> None:
        self._expected_token = self.secret.encode("utf-8")

    async def answer(self, request: HttpRequest) -> HttpAnswer:
        """The answer to ``request`` (see the module docstring for the order of the checks)."""
        refused = self.refusal_of(request)
        if refused is not None:
            return refused
        if request.method == "POST":
            return await self._post(request)
        if request.method == "DELETE":
            return self._delete(request)
        return HttpAnswer(405, (("allow", "POST, DELETE"),))

    def refusal_of(self, request: HttpRequest) -> HttpAnswer | None:
        """The answer that refuses ``request`` before any MCP is read (None: it may go on)."""
        if not self._host_is_ours(request.headers.get("host", "")):
            return HttpAnswer.refusal(403, "the Host header must name this loopback server")
        origin = request.headers.get("origin")
        if origin is not None and not _is_loopback_origin(origin):
            return HttpAnswer.refusal(403, "requests from a web origin other than loopback are refused")
        if not self.authorized(request.headers.get("authorization", "")):
            return HttpAnswer.refusal(
                401, "a bearer token is required", headers=(("www-authenticate", "Bearer"),)
            )
        path = request.target.split("?", 1)[0]
        if path != MCP_PATH:
            return HttpAnswer.refusal(404, f"no MCP endpoint at {path[:100]!r}: it is {MCP_PATH}")
        return None

    def authorized(self, header: str) -> bool:
        """Whether ``Authorization`` holds ``Bearer <secret>`` (the token compared in constant time)."""
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer":
            hmac.compare_digest(self._expected_token, self._expected_token)  # the same work either way
            return False
        return hmac.compare_digest(token.strip().encode("utf-8", "replace"), self._expected_token)

    def _host_is_ours(self, host: str) -> bool:
        name, port = _split_host(host.strip().lower())
        if name not in LOOPBACK_HOSTS:
            return False
        return port is None or self.port == 0 or port == self.port

    async def _post(self, request: HttpRequest) -> HttpAnswer:
        content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            return HttpAnswer.refusal(415, "the body must be application/json")
        try:
            parsed = json.loads(request.body)
        except (ValueError, UnicodeDecodeError, RecursionError):  # deep nesting: an answer, not a drop
            return HttpAnswer.json(400, JSON_RPC.error(None, PARSE_ERROR, "parse error"))
        messages = parsed if isinstance(parsed, list) else [parsed]
        if not messages:
            return HttpAnswer.refusal(400, "an empty batch")
        version = request.headers.get(_VERSION_HEADER)
        if version is not None and version not in PROTOCOL_VERSIONS:
            return HttpAnswer.refusal(400, f"unsupported MCP-Protocol-Version {version[:40]!r}")
        initializing = any(
            isinstance(message, dict) and message.get("method") == "initialize" for message in messages
        )
        extra_headers: tuple[tuple[str, str], ...] = ()
        if initializing:
            if len(messages) != 1:
                return HttpAnswer.refusal(400, "initialize must be sent alone")
            session_id = self._new_session(version or _DEFAULT_VERSION)
            extra_headers = (("mcp-session-id", session_id),)
        else:
            session_id = request.headers.get(_SESSION_HEADER, "")
            if not session_id:
                return HttpAnswer.refusal(400, "Mcp-Session-Id is required after initialize")
            if session_id not in self.sessions:
                return HttpAnswer.refusal(404, "unknown or ended MCP session: initialize again")
            self.sessions.move_to_end(session_id)
        answers = []
        for message in messages:
            answer = await self.endpoint.handle(message)
            if answer is not None:
                answers.append(answer)
        if initializing and answers and "result" in answers[0]:
            self.sessions[session_id] = str(answers[0]["result"].get("protocolVersion", _DEFAULT_VERSION))
        if not answers:
            return HttpAnswer(202, extra_headers)
        body = answers if isinstance(parsed, list) else answers[0]
        return HttpAnswer.json(200, body, headers=extra_headers)

    def _delete(self, request: HttpRequest) -> HttpAnswer:
        session_id = request.headers.get(_SESSION_HEADER, "")
        if not session_id:
            return HttpAnswer.refusal(400, "Mcp-Session-Id is required")
        if self.sessions.pop(session_id, None) is None:
            return HttpAnswer.refusal(404, "unknown or ended MCP session")
        return HttpAnswer(204)

    def _new_session(self, version: str) -> str:
        session_id = secrets.token_urlsafe(24)
        self.sessions[session_id] = version
        while len(self.sessions) > self.max_sessions:
            self.sessions.popitem(last=False)
        return session_id


def _split_host(host: str) -> tuple[str, int | None]:
    """``"127.0.0.1:8000"`` -> ``("127.0.0.1", 8000)``; ``"[::1]:80"`` -> ``("[::1]", 80)``; a bad port: ``("", None)``."""
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return "", None
        name, rest = host[: end + 1], host[end + 1 :]
    else:
        name, _, port_text = host.partition(":")
        rest = f":{port_text}" if port_text else ""
    if not rest:
        return name, None
    if not rest.startswith(":") or not rest[1:].isdigit():
        return "", None
    return name, int(rest[1:])


def _is_loopback_origin(origin: str) -> bool:
    """``http://127.0.0.1:PORT``, ``http://localhost``, ``http://[::1]:PORT`` (``null`` and other sites: no)."""
    scheme, separator, rest = origin.strip().lower().partition("://")
    if not separator or scheme not in ("http", "https"):
        return False
    name, _ = _split_host(rest.split("/", 1)[0])
    return name in LOOPBACK_HOSTS
