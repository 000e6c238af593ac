"""``DocsSandbox``: a local La Suite Docs stand-in (REST + collaboration WebSocket) on one port.

Where it sits: the embedded default Docs instance of elynav_nb's notebooks and tests, and the
``elynav sandbox docs --port N`` command. It serves a Starlette app with uvicorn (``build_app``
mounts the route modules); the state lives in ``store.SandboxStore`` and the live rooms in
``collaboration.CollaborationHub``. This module holds the instance (its settings, users and
sessions, the checks every REST request passes: caller, CSRF, throttle) and its life cycle.

How data flows::

    REST  /api/v1.0/...             -> caller, CSRF, throttle (here) -> a route module
                                       (``document_routes``, ``tree_routes``, ``lifecycle_routes``,
                                       ``discussion_routes``) -> SandboxStore (content only by PATCH)
    WS    /collaboration/ws/?room=  -> ``collaboration_routes``: gate (Origin allowlist, Cookie)
                                       -> CollaborationHub (which asks ``_authorize`` here)
    HTTP  /collaboration/api/...    -> reset-connections, get-connections (API key); /ping

Use it in-process::

    async with DocsSandbox() as sandbox:
        credentials = sandbox.credentials()            # a minted docs_sessionid for "Alice Martin"
        document = sandbox.create_document("Notes")    # owned by Alice
        ... sandbox.url, sandbox.ws_url, sandbox.reset(document.id) ...

Reproduced (design note §9): 401 for anonymous requests that need a user, CSRF (``csrftoken`` cookie =
``X-CSRFToken`` + matching Origin or same-origin Referer) on writes of a session, pagination,
abilities, v5 ``/content/`` (or the v4 ``content`` field with ``api_version=4``), ETag/304, the
"not connected => read-only" rule, the 80/min document throttle per user (``throttle``: 429 with
Retry-After, shared with the collaboration gate's own check of each connect; ``X-Y-Provider-Key`` exempt),
automatic resets after ``link-configuration``. The document tree and lifecycle (list, all, search,
children, tree, move, duplicate, trash and restore, favourites; design note ``docs-tree-api.md``)
are served by ``tree_routes`` and ``lifecycle_routes`` on the store's materialised path.
Comment threads (with comments and reactions) and versions (one per save that changes the
content) are served by ``discussion_routes``; with ``oidc=ResourceServer(...)``, the resource-server
API (``/external_api/v1.0/``, bearer tokens introspected at a real OIDC provider) by
``resource_server``. Out of scope: OIDC login for the web app, teams, y-prosemirror's deletions.

``DocsSandbox(hocuspocus_version=4)`` makes the collaboration layer behave like Hocuspocus 4.7.0
(idle close 4408 after ``collaboration_timeout`` seconds without a frame, echo after ack, denials
that can be retried, a bounded pre-Auth queue); ``send_pings=True`` also pings clients with ``09``
every half ``collaboration_timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from typing import Final, Self

import uvicorn
from pycrdt import XmlFragment
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute

from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.errors import InvalidInput, ServiceError
from elynav_nb.sandbox.docs import collaboration_routes as collaboration
from elynav_nb.sandbox.docs import document_routes as documents
from elynav_nb.sandbox.docs.api_common import Handler, json_error
from elynav_nb.sandbox.docs.collaboration import CollaborationHub
from elynav_nb.sandbox.docs.discussion_routes import DISCUSSION_ROUTES
from elynav_nb.sandbox.docs.lifecycle_routes import TREE_ROUTES
from elynav_nb.sandbox.docs.resource_server import ResourceServer, external_routes
from elynav_nb.sandbox.docs.store import SandboxDocument, SandboxStore, SandboxUser
from elynav_nb.sandbox.docs.throttle import UserThrottle, throttled_detail

__all__ = ["DocsSandbox", "build_app"]

API: Final = "/api/v1.0"
DEFAULT_USER_NAME: Final = "Alice Martin"
_UNSAFE_METHODS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _cookies(header: str) -> dict[str, str]:
    cookies: dict[str, str] = {}
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            cookies[name] = value
    return cookies


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: an embedded sandbox must not swallow a notebook's Ctrl-C."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class DocsSandbox:
    """A local Docs instance: ``async with DocsSandbox() as sandbox`` (or ``await sandbox.start()``)."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        api_version: int = 5,
        throttle_per_minute: int = 80,
        not_connected_read_only: bool = True,
        extra_allowed_origins: tuple[str, ...] = (),
        api_key: str | None = None,
        hocuspocus_version: int = 3,
        collaboration_timeout: float = 60.0,
        send_pings: bool = False,
        throttle_period: float = 60.0,
        collaboration_exempt: bool = False,
        oidc: ResourceServer | None = None,
    ) -> None:
        """``hocuspocus_version`` 3 (Docs v4.0-v5.4) or 4; ``collaboration_timeout`` and
        ``send_pings`` apply to version 4 only. The document throttle allows
        ``throttle_per_minute`` requests per user in ``throttle_period`` seconds (``throttle``);
        the collaboration gate's own check of each connect counts in the user's bucket unless
        ``collaboration_exempt`` (Docs' ``X-Y-Provider-Key`` exemption, when its keys match).
        ``oidc`` (a ``resource_server.ResourceServer``) serves ``/external_api/v1.0/`` to bearer
        tokens of that provider, as Docs with ``OIDC_RESOURCE_SERVER_ENABLED``."""
        if hocuspocus_version not in (3, 4):
            raise InvalidInput("hocuspocus_version must be 3 or 4")
        if collaboration_timeout <= 0:
            raise InvalidInput("collaboration_timeout must be positive")
        self.host = host
        self.port = port
        self.api_version = api_version
        self.throttle_per_minute = throttle_per_minute
        self.throttle = UserThrottle(throttle_per_minute, throttle_period)
        self.collaboration_exempt = collaboration_exempt
        self.oidc = oidc
        self.request_log: deque[tuple[str, str, int, int]] = deque(maxlen=1000)
        """The last REST requests: method, path, status, live connections to the document's room."""
        self.not_connected_read_only = not_connected_read_only
        self.extra_allowed_origins = tuple(extra_allowed_origins)
        self.api_key = api_key or secrets.token_hex(16)
        self.store = SandboxStore()
        self.hocuspocus_version = hocuspocus_version
        self.send_pings = send_pings and hocuspocus_version >= 4
        self.hub = CollaborationHub(
            self._authorize, hocuspocus_version=hocuspocus_version, timeout=collaboration_timeout
        )
        self.default_user: SandboxUser = self.store.create_user(DEFAULT_USER_NAME)
        self.session_id = self.store.mint_session(self.default_user)
        self.csrf_token = secrets.token_hex(16)
        self._server: uvicorn.Server | None = None
        self._serve_task: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        state = "running" if self._server is not None else "stopped"
        return f"<DocsSandbox url={self.url if self._server else None!r} {state} documents={len(self.store.documents)}>"

    # --- addresses ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The instance origin, e.g. ``http://127.0.0.1:8071``."""
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/collaboration/ws/"

    @property
    def allowed_origins(self) -> tuple[str, ...]:
        return (self.url, f"http://localhost:{self.port}", *self.extra_allowed_origins)

    @property
    def cookie(self) -> str:
        """A ``Cookie`` header value for the default user (for raw WebSocket tests)."""
        return f"docs_sessionid={self.session_id}; csrftoken={self.csrf_token}"

    def credentials(self, session_id: str | None = None) -> DocsCredentials:
        """Credentials for the default user (or ``session_id``), settled on this sandbox."""
        return DocsCredentials(session_id or self.session_id, self.csrf_token, instance=self.url)

    def document_link(self, document_id: str) -> str:
        return f"{self.url}/docs/{document_id}/"

    # --- test and notebook helpers -----------------------------------------------------------

    def create_user(self, full_name: str) -> tuple[SandboxUser, str]:
        """A new user and a session id for it."""
        user = self.store.create_user(full_name)
        return user, self.store.mint_session(user)

    def create_document(
        self,
        title: str,
        *,
        owner: SandboxUser | None = None,
        link_reach: str = "restricted",
        link_role: str = "reader",
        document_id: str | None = None,
        parent: str | None = None,
    ) -> SandboxDocument:
        """A root owned by ``owner`` (Alice by default) or, with ``parent`` (an id), its last child,
        created by ``owner`` and with no access of its own, as Docs makes sub-pages."""
        return self.store.create_document(
            title,
            owner or self.default_user,
            document_id=document_id,
            link_reach=link_reach,
            link_role=link_role,
            parent=self._document_or_error(parent) if parent is not None else None,
        )

    def share(self, document_id: str, user: SandboxUser, role: str) -> None:
        document = self._document_or_error(document_id)
        document.accesses[user.id] = role
        self.hub.reset(document.id)

    def reset(self, room: str | None = None) -> int:
        """What Docs does after a link or access change: reset the room's live connections."""
        return self.hub.reset(room)

    def room_text(self, room: str) -> str | None:
        """The live room's XML (``None`` when nobody is connected)."""
        live = self.hub.rooms.get(room)
        if live is None:
            return None
        return str(live.doc.get("document-store", type=XmlFragment))

    def _document_or_error(self, document_id: str) -> SandboxDocument:
        document = self.store.get_document(document_id)
        if document is None:
            raise InvalidInput(f"no sandbox document {document_id!r}")
        return document

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> DocsSandbox:
        if self._server is not None:
            return self
        config = uvicorn.Config(
            build_app(self),
            host=self.host,
            port=self.port,
            log_level="warning",
            access_log=False,
            ws="websockets-sansio",
            ws_max_size=512 * 1024 * 1024,
            ws_ping_interval=30.0,
            ws_ping_timeout=30.0,
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        server = _EmbeddedServer(config)
        self._serve_task = asyncio.get_running_loop().create_task(server.serve(), name="elynav-docs-sandbox")
        deadline = time.monotonic() + 10
        while not server.started:
            if self._serve_task.done() or time.monotonic() > deadline:
                await self._cancel_serve_task()
                raise ServiceError(f"the Docs sandbox could not start on {self.host}:{self.port}")
            await asyncio.sleep(0.01)
        self._server = server
        if self.port == 0:
            self.port = server.servers[0].sockets[0].getsockname()[1]
        return self

    async def _cancel_serve_task(self) -> None:
        task = self._serve_task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def stop(self) -> None:
        server = self._server
        if server is not None:
            server.should_exit = True
            task = self._serve_task
            if task is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(task), 5)
                except TimeoutError:
                    await self._cancel_serve_task()
        self._server = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # --- the backend check the y-provider makes --------------------------------------------

    async def _authorize(self, document_name: str, cookie: str) -> tuple[bool, bool] | None:
        """The y-provider's ``GET /documents/<id>/`` with the client's cookie: it counts in the
        user's throttle bucket, and a 429 there is a backend error, so the connect is refused."""
        user = self.store.user_for_session(_cookies(cookie).get("docs_sessionid"))
        if not self.collaboration_exempt and self.throttle.check(self._throttle_key(user, "collaboration")):
            return None
        document = self.store.get_document(document_name)
        if document is None:
            return None
        abilities = self.store.abilities(document, user)
        return abilities["retrieve"], abilities["update"]

    # --- request helpers ---------------------------------------------------------------------

    def user_of(self, request: Request) -> SandboxUser | None:
        """The caller: the user a bearer token named (external API), else the session cookie's."""
        token_user = getattr(request.state, "token_user", None)
        if isinstance(token_user, SandboxUser):
            return token_user
        return self.store.user_for_session(request.cookies.get("docs_sessionid"))

    def csrf_refusal(self, request: Request, user: SandboxUser | None) -> Response | None:
        if request.method not in _UNSAFE_METHODS or user is None:
            return None
        if getattr(request.state, "token_user", None) is not None:
            return None  # a bearer token: no session, no CSRF
        cookie_token = request.cookies.get("csrftoken")
        if not cookie_token or request.headers.get("x-csrftoken") != cookie_token:
            return json_error(403, "CSRF Failed: CSRF token missing or incorrect.")
        origin = request.headers.get("origin")
        if origin is not None:
            if origin not in self.allowed_origins:
                return json_error(403, "CSRF Failed: Origin checking failed.")
        else:
            referer = request.headers.get("referer", "")
            if not any(referer.startswith(allowed + "/") for allowed in self.allowed_origins):
                return json_error(403, "CSRF Failed: Referer checking failed.")
        return None

    @staticmethod
    def _throttle_key(user: SandboxUser | None, address: str) -> str:
        return f"user-{user.id}" if user is not None else f"address-{address}"

    def throttled(self, request: Request, user: SandboxUser | None) -> Response | None:
        """Docs' document throttle: the 429 it answers, or ``None`` when the request may go on."""
        if request.headers.get("x-y-provider-key") == self.api_key:
            return None
        address = request.client.host if request.client else "anonymous"
        wait = self.throttle.check(self._throttle_key(user, address))
        if wait is None:
            return None
        return JSONResponse(
            {"detail": throttled_detail(wait)}, status_code=429, headers={"Retry-After": str(wait)}
        )

    def log_request(self, request: Request, status: int) -> None:
        document_id = request.path_params.get("document_id")
        live = self.hub.connection_counts(document_id, None) if isinstance(document_id, str) else None
        count = int(live["count"]) if isinstance(live, dict) else 0
        self.request_log.append((request.method, request.url.path, status, count))


# =============================================================================================
# The ASGI app
# =============================================================================================


def build_app(sandbox: DocsSandbox) -> Starlette:
    """The Starlette app serving ``sandbox`` (REST, collaboration WS and API)."""

    def route(handler: Handler, *, document_scope: bool = True) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            user = sandbox.user_of(request)
            refusal = sandbox.csrf_refusal(request, user)
            if refusal is not None:
                return refusal
            throttled = sandbox.throttled(request, user) if document_scope else None
            response = throttled if throttled is not None else await handler(request, sandbox)
            sandbox.log_request(request, response.status_code)
            return response

        return endpoint

    def token_route(
        handler: Handler, *, document_scope: bool = True
    ) -> Callable[[Request], Awaitable[Response]]:
        inner = route(handler, document_scope=document_scope)

        async def endpoint(request: Request) -> Response:
            if sandbox.oidc is None:
                return JSONResponse({"detail": "Not found."}, status_code=404)
            found = await sandbox.oidc.user_for(request, sandbox.store.users)
            if isinstance(found, Response):
                return found
            request.state.token_user = found
            return await inner(request)

        return endpoint

    own_routes: list[tuple[str, Handler, list[str]]] = [
        *TREE_ROUTES,
        *DISCUSSION_ROUTES,
        (f"{API}/documents/{{document_id}}/content/", documents.content, ["GET", "PATCH"]),
        (f"{API}/users/me/", documents.users_me, ["GET"]),
    ]
    routes = [
        *[
            Route(path, token_route(handler, document_scope=not path.endswith("/users/me/")), methods=methods)
            for path, handler, methods in external_routes(own_routes)
        ],
        Route(f"{API}/config/", route(documents.config, document_scope=False), methods=["GET"]),
        Route(f"{API}/users/me/", route(documents.users_me, document_scope=False), methods=["GET"]),
        *[Route(path, route(handler), methods=methods) for path, handler, methods in TREE_ROUTES],
        *[Route(path, route(handler), methods=methods) for path, handler, methods in DISCUSSION_ROUTES],
        Route(
            f"{API}/documents/{{document_id}}/content/", route(documents.content), methods=["GET", "PATCH"]
        ),
        Route(
            f"{API}/documents/{{document_id}}/link-configuration/",
            route(documents.link_configuration),
            methods=["PUT"],
        ),
        Route(f"{API}/documents/{{document_id}}/can-edit/", route(documents.can_edit), methods=["GET"]),
        Route(
            "/collaboration/api/reset-connections/",
            collaboration.reset_connections(sandbox),
            methods=["POST"],
        ),
        Route("/collaboration/api/get-connections/", collaboration.get_connections(sandbox), methods=["GET"]),
        Route("/ping", collaboration.ping, methods=["GET"]),
        WebSocketRoute("/collaboration/ws/", collaboration.collaboration_socket(sandbox)),
        Route(
            "/collaboration/{rest:path}",
            collaboration.forbidden,
            methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        ),
    ]
    return Starlette(routes=routes)
