"""The La Suite Docs REST client (httpx, async): documents, abilities, and the saved Yjs content.

Where it sits: the HTTP I/O layer of ``elynav_nb.docs`` (design note §3, §6.2, §7 steps 2, 3, 8).
The session calls it to check rights, hydrate the document before the WebSocket sync, and save the
full state after each acknowledged write. It parses nothing beyond JSON and base64.

How data flows::

    config()            GET  /api/v1.0/config/          RELEASE_VERSION -> v5 (/content/) or v4 (field)
    list_documents()    GET  /api/v1.0/documents/?page_size=100
    retrieve(id)        GET  /api/v1.0/documents/{id}/  -> DocumentInfo (title, link_*, abilities)
    create_document()   POST /api/v1.0/documents/       {"title", "id": <uuid v4>} -> 201
    load_content(id)    GET  /documents/{id}/content/   (v5, text/plain base64) | "content" field (v4)
    save_content(id)    PATCH /documents/{id}/content/  {"content": base64, "websocket": true} -> 204
                        (v4: PATCH /documents/{id}/ with the same body)

The tree and lifecycle calls (children, move, duplicate, trash...) are ``client.tree``
(``rest_tree.DocsTreeClient``), on the same connection, credentials and throttle.

Every request carries the Cookie of the settled instance (``DocsCredentials``); writes add
Content-Type, Origin, Referer and X-CSRFToken. Statuses map to typed errors: 401 ``AUTH_REQUIRED``,
403 ``NOT_ALLOWED``, 404 ``DOC_NOT_FOUND``, 429 ``RATE_LIMITED``, 5xx ``SERVICE_ERROR``, other 4xx
``INVALID_INPUT``. Only idempotent GETs are retried (429, 5xx, network errors; bounded backoff).
A client-side window keeps us under Docs' document throttle (80 requests per minute per user),
shared by every client of the same user and instance in the process (``shared_throttle``).

Bounds against slow or hostile servers (values and reasons in ``limits``):

- ``deadline`` (30 s): each call, its retries and their waits included, ends within it, however
  the server paces its bytes (httpx's ``timeout`` is per read only). It runs from the moment our
  throttle lets the call go: waiting for our own 80-a-minute slot is not the server's slowness.
  Past it: ``DEADLINE_EXCEEDED``.
- ``Retry-After`` is honoured up to 5 s; a longer one, or a wait that would pass the deadline,
  ends the call at once with the server's error (``RATE_LIMITED``, ``SERVICE_ERROR``).
- ``max_response_bytes`` (32 MiB): bodies are streamed and counted, never read whole first; a
  larger one (announced or sent) is ``RESPONSE_TOO_LARGE`` at once, without retries. Error
  answers are read for at most 64 KiB; redirects and 5xx answers not at all.
- Answers are JSON read defensively: unreadable or too deeply nested JSON is ``SERVICE_ERROR``,
  fields of an unexpected type are read as missing. Every failure leaves typed.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import collections
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Self

import httpx

from elynav_nb.docs.addressing import is_uuid_v4, normalize_instance_origin
from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.limits import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_REQUEST_DEADLINE,
    Deadline,
    checked_deadline,
    checked_limit,
    response_too_large,
    retry_after_seconds,
    retry_wait,
)
from elynav_nb.errors import (
    AuthRequired,
    DocNotFound,
    ElynavError,
    InvalidInput,
    NotAllowed,
    RateLimited,
    ServiceError,
)

if TYPE_CHECKING:
    from elynav_nb.docs.rest_tree import DocsTreeClient

__all__ = ["API_PREFIX", "DocsRestClient", "DocumentInfo", "RequestThrottle", "shared_throttle"]

API_PREFIX: Final = "/api/v1.0"
DEFAULT_THROTTLE_PER_MINUTE: Final = 80
_VERSION_PATTERN: Final = re.compile(r"v?(\d{1,6})(?:\.(\d{1,6}))?")
_RETRYABLE_STATUSES: Final = frozenset({429, 500, 502, 503, 504})
_ERROR_BODY_BYTES: Final = 64 * 1024
"""How much of a 4xx answer is read (for the precise refusal); the rest is dropped."""
_BODY_FRAMING_HEADERS: Final = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def _text_or_none(value: Any) -> str | None:
    """A JSON string field as itself; anything else (a number, a list, an object) as missing."""
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class DocumentInfo:
    """What clients read from a Docs document: identity, title, link settings and abilities."""

    id: str
    title: str
    link_reach: str | None
    link_role: str | None
    abilities: dict[str, Any] = field(default_factory=dict)
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DocumentInfo:
        """A document from Docs' JSON; a field of an unexpected type is read as missing."""
        if not isinstance(data, dict):
            raise ServiceError("Docs answered with something that is not a document")
        abilities = data.get("abilities")
        return cls(
            id=_text_or_none(data.get("id")) or "",
            title=_text_or_none(data.get("title")) or "",
            link_reach=_text_or_none(data.get("computed_link_reach"))
            or _text_or_none(data.get("link_reach")),
            link_role=_text_or_none(data.get("computed_link_role")) or _text_or_none(data.get("link_role")),
            abilities=dict(abilities) if isinstance(abilities, dict) else {},
            created_at=_text_or_none(data.get("created_at")),
            updated_at=_text_or_none(data.get("updated_at")),
            raw=dict(data),
        )

    @property
    def can_read(self) -> bool:
        return bool(self.abilities.get("retrieve", True))

    @property
    def can_edit(self) -> bool:
        return bool(self.abilities.get("update", False))

    def as_metadata(self) -> dict[str, Any]:
        """The fields ``get_document_metadata`` returns."""
        return {
            "id": self.id,
            "title": self.title,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "link_reach": self.link_reach,
            "link_role": self.link_role,
            "abilities": {key: value for key, value in self.abilities.items() if isinstance(value, bool)},
        }


class RequestThrottle:
    """At most ``limit`` requests in any ``period`` seconds: ``acquire`` sleeps until one is free.

    Usable from several event loops and threads at once (a notebook's loop and the private loop of
    the ``*_sync`` calls): the window is guarded by a thread lock that is never held while sleeping.
    """

    def __init__(self, limit: int = DEFAULT_THROTTLE_PER_MINUTE, period: float = 60.0) -> None:
        if limit < 1:
            raise InvalidInput("the request throttle needs a limit of at least 1")
        self.limit = limit
        self.period = period
        self._sent: collections.deque[float] = collections.deque()
        self._lock = threading.Lock()
        self.waited_seconds = 0.0

    async def acquire(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                while self._sent and now - self._sent[0] >= self.period:
                    self._sent.popleft()
                if len(self._sent) < self.limit:
                    self._sent.append(now)
                    return
                pause = self.period - (now - self._sent[0])
                self.waited_seconds += pause
            await asyncio.sleep(pause)


_shared_throttles: dict[tuple[str, str], RequestThrottle] = {}
_shared_throttles_lock = threading.Lock()


def shared_throttle(instance: str, credentials: DocsCredentials) -> RequestThrottle:
    """The one throttle of these credentials' user on ``instance``, for every client in this process.

    Docs counts its 80 requests a minute per user, not per connection: the sessions of a pool and
    the MCP tools working on many documents must share one budget, or together they get 429s.
    """
    key = (normalize_instance_origin(instance), credentials.identity_key())
    with _shared_throttles_lock:
        throttle = _shared_throttles.get(key)
        if throttle is None:
            throttle = _shared_throttles[key] = RequestThrottle()
        return throttle


def _error_for_status(response: httpx.Response, what: str) -> ElynavError:
    status = response.status_code
    details = {"status": status}
    if status == 401:
        return AuthRequired(f"Docs needs a signed-in session to {what} (HTTP 401)", details=details)
    if status == 403:
        return NotAllowed(f"Docs does not allow these credentials to {what} (HTTP 403)", details=details)
    if status == 404:
        return DocNotFound(f"Docs found nothing to {what} (HTTP 404)", details=details)
    if status == 429:
        return RateLimited(f"Docs throttled the request to {what} (HTTP 429)", details=details)
    if status >= 500:
        return ServiceError(f"Docs failed to {what} (HTTP {status})", details=details)
    return InvalidInput(f"Docs refused the request to {what} (HTTP {status})", details=details)


def _checked_document_id(document_id: str) -> str:
    if not isinstance(document_id, str) or not is_uuid_v4(document_id):
        raise InvalidInput(
            "the document id must be a UUID v4", details={"document_id": str(document_id)[:64]}
        )
    return document_id.lower()


class DocsRestClient:
    """Async REST client for one Docs instance; ``async with DocsRestClient(origin, credentials)``.

    ``timeout`` (15 s) bounds each network read; ``deadline`` (30 s, ``limits``) bounds each whole
    call, retries included (``DEADLINE_EXCEEDED``); ``max_response_bytes`` (32 MiB) bounds each
    body (``RESPONSE_TOO_LARGE``).
    """

    def __init__(
        self,
        instance: str,
        credentials: DocsCredentials | None = None,
        *,
        timeout: float = 15.0,
        deadline: float = DEFAULT_REQUEST_DEADLINE,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_retries: int = 2,
        retry_backoff: float = 0.5,
        throttle: RequestThrottle | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.instance = normalize_instance_origin(instance)
        self.credentials = credentials if credentials is not None else DocsCredentials.anonymous()
        self.credentials.settle(self.instance)
        self.deadline = checked_deadline(deadline)
        self.max_response_bytes = checked_limit(max_response_bytes, "max_response_bytes")
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.throttle = throttle if throttle is not None else shared_throttle(self.instance, self.credentials)
        self._http = httpx.AsyncClient(
            base_url=self.instance, timeout=timeout, transport=transport, follow_redirects=False
        )
        self._config: dict[str, Any] | None = None
        self._tree: DocsTreeClient | None = None

    @property
    def tree(self) -> DocsTreeClient:
        """The document tree and lifecycle calls (``rest_tree.DocsTreeClient``) on this client."""
        if self._tree is None:
            from elynav_nb.docs.rest_tree import DocsTreeClient

            self._tree = DocsTreeClient(self)
        return self._tree

    def __repr__(self) -> str:
        return f"<DocsRestClient instance={self.instance!r} {'anonymous' if self.credentials.is_anonymous else 'signed in'}>"

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a Docs REST client holds credentials and cannot be pickled")

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # --- plumbing ------------------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        what: str,
        *,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        throttled: bool = True,
        accept: str = "application/json",
        refusal: Callable[[httpx.Response], ElynavError | None] | None = None,
    ) -> httpx.Response:
        """One call with the instance's headers, retried (GETs only), every failure typed, ended
        within ``self.deadline`` (from the moment the throttle lets it go); ``refusal`` may read a
        4xx answer first and name a more precise error."""
        if method == "GET":
            headers = {"Cookie": self.credentials.cookie_header(self.instance), "Accept": accept}
        else:
            headers = self.credentials.write_headers(self.instance)
            headers["Accept"] = accept
        if throttled:
            await self.throttle.acquire()
        deadline = Deadline.start(self.deadline, what)
        call = self._attempts(method, path, what, deadline, headers, json_body, params, throttled, refusal)
        return await deadline.run(call)

    async def _attempts(
        self,
        method: str,
        path: str,
        what: str,
        deadline: Deadline,
        headers: dict[str, str],
        json_body: Any,
        params: dict[str, Any] | None,
        throttled: bool,
        refusal: Callable[[httpx.Response], ElynavError | None] | None,
    ) -> httpx.Response:
        attempts = 1 + (self.max_retries if method == "GET" else 0)
        for attempt in range(attempts):
            if throttled and attempt > 0:
                await self.throttle.acquire()
            last_try = attempt == attempts - 1
            retry_after: float | None = None
            try:
                response = await self._send_once(method, path, what, headers, json_body, params)
            except httpx.TimeoutException:
                failure: ElynavError = ServiceError(f"Docs did not answer in time while trying to {what}")
            except httpx.HTTPError as error:
                failure = ServiceError(f"cannot reach Docs to {what} ({type(error).__name__})")
            else:
                if response.status_code < 300:
                    return response
                if response.status_code < 400:
                    raise ServiceError(
                        f"Docs redirected the request to {what}: is this the instance origin?",
                        details={"status": response.status_code},
                    )
                if response.status_code not in _RETRYABLE_STATUSES or last_try:
                    precise = (
                        refusal(response) if refusal is not None and response.status_code < 500 else None
                    )
                    raise precise or _error_for_status(response, what)
                failure = _error_for_status(response, what)
                retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            if last_try:
                raise failure
            wait = retry_wait(attempt, self.retry_backoff, retry_after, deadline)
            if wait is None:  # the server asks for longer than we wait, or the deadline comes first
                if retry_after is not None:
                    failure.details["retry_after_seconds"] = retry_after
                raise failure
            await asyncio.sleep(wait)
        raise ServiceError(f"Docs could not {what}")  # not reached: the last try raises or returns

    async def _send_once(
        self,
        method: str,
        path: str,
        what: str,
        headers: dict[str, str],
        json_body: Any,
        params: dict[str, Any] | None,
    ) -> httpx.Response:
        """One HTTP exchange, its body streamed and counted: a 2xx body up to
        ``max_response_bytes`` (``RESPONSE_TOO_LARGE`` beyond), a 4xx body up to 64 KiB (cut
        there), no body for other statuses (only the status and headers are used)."""
        request = self._http.build_request(method, path, headers=headers, json=json_body, params=params)
        streamed = await self._http.send(request, stream=True)
        try:
            status = streamed.status_code
            if status < 300:
                body = await self._read_limited(streamed, what)
            elif 400 <= status < 500:
                body = await self._read_head(streamed)
            else:
                body = b""
        finally:
            await streamed.aclose()
        kept_headers = [
            (name, value)
            for name, value in streamed.headers.multi_items()
            if name.lower() not in _BODY_FRAMING_HEADERS
        ]
        return httpx.Response(status, headers=kept_headers, content=body, request=request)

    async def _read_limited(self, streamed: httpx.Response, what: str) -> bytes:
        limit = self.max_response_bytes
        declared = streamed.headers.get("Content-Length", "").strip()
        if declared.isdigit() and (len(declared) > 18 or int(declared) > limit):
            announced = int(declared) if len(declared) <= 18 else None
            raise response_too_large(what, limit, "max_response_bytes", declared=announced)
        chunks: list[bytes] = []
        received = 0
        async for chunk in streamed.aiter_bytes():
            received += len(chunk)
            if received > limit:
                raise response_too_large(what, limit, "max_response_bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    @staticmethod
    async def _read_head(streamed: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        received = 0
        async for chunk in streamed.aiter_bytes():
            chunks.append(chunk[: _ERROR_BODY_BYTES - received])
            received += len(chunk)
            if received >= _ERROR_BODY_BYTES:
                break
        return b"".join(chunks)

    @staticmethod
    def _text(response: httpx.Response) -> str:
        """The body as text in its announced charset, or as UTF-8 when that charset cannot read it."""
        try:
            return response.text
        except (ValueError, LookupError):  # e.g. "charset=utf-16" without a BOM
            return response.content.decode("utf-8", errors="replace")

    @staticmethod
    def _json(response: httpx.Response, what: str) -> Any:
        """The body as JSON; ``SERVICE_ERROR`` when it is not JSON or too deeply nested to read."""
        try:
            return response.json()
        except (ValueError, RecursionError):
            raise ServiceError(
                f"Docs answered {what} with something that is not JSON (or nested too deeply to "
                "read): is this a Docs instance?"
            ) from None

    # --- endpoints -----------------------------------------------------------------------------

    async def config(self) -> dict[str, Any]:
        """``GET /api/v1.0/config/`` (cached): the release and the collaboration URL."""
        if self._config is None:
            try:
                response = await self._request(
                    "GET", f"{API_PREFIX}/config/", "read the instance configuration", throttled=False
                )
            except DocNotFound:
                raise ServiceError(
                    "this host has no /api/v1.0/config/: it is not a La Suite Docs instance"
                ) from None
            data = self._json(response, "the configuration request")
            if not isinstance(data, dict):
                raise ServiceError("this host's /api/v1.0/config/ is not a Docs configuration")
            self._config = data
        return self._config

    async def major_version(self) -> int:
        """The Docs major version from ``RELEASE_VERSION`` (5 when it cannot be read)."""
        release = _text_or_none((await self.config()).get("RELEASE_VERSION")) or ""
        match = _VERSION_PATTERN.match(release)
        return int(match.group(1)) if match else 5

    async def content_endpoint(self) -> bool:
        """True for Docs >= 5 (``/content/`` endpoint), False for v4 (``content`` field)."""
        return await self.major_version() >= 5

    async def websocket_url(self) -> str:
        """The collaboration WebSocket URL, without ``?room=``."""
        configured = (await self.config()).get("COLLABORATION_WS_URL")
        if isinstance(configured, str) and configured.startswith(("ws://", "wss://")):
            return configured.split("?", 1)[0]
        scheme = "wss" if self.instance.startswith("https://") else "ws"
        return f"{scheme}://{self.instance.split('://', 1)[1]}/collaboration/ws/"

    async def list_documents(self, *, page_size: int = 100, max_pages: int = 5) -> list[DocumentInfo]:
        """Documents the credentials can list, newest first (follows ``next`` up to ``max_pages``)."""
        documents: list[DocumentInfo] = []
        params: dict[str, Any] | None = {"page_size": page_size}
        path = f"{API_PREFIX}/documents/"
        for page_number in range(1, max_pages + 1):
            response = await self._request("GET", path, "list documents", params=params)
            data = self._json(response, "the document list")
            results = data.get("results") if isinstance(data, dict) else None
            for item in results if isinstance(results, list) else []:
                if isinstance(item, dict):
                    documents.append(DocumentInfo.from_json(item))
            if not isinstance(data, dict) or not data.get("next"):
                break
            params = {"page_size": page_size, "page": page_number + 1}
        return documents

    async def retrieve(self, document_id: str) -> DocumentInfo:
        """Metadata and abilities of one document."""
        checked = _checked_document_id(document_id)
        response = await self._request("GET", f"{API_PREFIX}/documents/{checked}/", "read this document")
        data = self._json(response, "the document request")
        if not isinstance(data, dict):
            raise ServiceError("Docs answered the document request with something that is not a document")
        return DocumentInfo.from_json(data)

    async def create_document(self, title: str, *, document_id: str | None = None) -> DocumentInfo:
        """Create a document with a UUID v4 id (the only ids the collaboration server accepts)."""
        if not isinstance(title, str) or not title.strip():
            raise InvalidInput("the document title is empty")
        new_id = _checked_document_id(document_id) if document_id else str(uuid.uuid4())
        response = await self._request(
            "POST", f"{API_PREFIX}/documents/", "create a document", json_body={"title": title, "id": new_id}
        )
        data = self._json(response, "the create request")
        return DocumentInfo.from_json(data if isinstance(data, dict) else {"id": new_id, "title": title})

    async def load_content(self, document_id: str) -> bytes:
        """The saved Yjs state (an update), ``b""`` when the document was never saved."""
        checked = _checked_document_id(document_id)
        if await self.content_endpoint():
            response = await self._request(
                "GET",
                f"{API_PREFIX}/documents/{checked}/content/",
                "load the document content",
                accept="text/plain,application/json",
            )
            encoded = self._text(response).strip()
            if encoded.startswith('"') and encoded.endswith('"'):
                encoded = encoded[1:-1]
        else:
            response = await self._request(
                "GET", f"{API_PREFIX}/documents/{checked}/", "load the document content"
            )
            data = self._json(response, "the document request")
            encoded = (_text_or_none(data.get("content")) or "") if isinstance(data, dict) else ""
        if not encoded:
            return b""
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ServiceError("Docs returned document content that is not base64") from None

    async def save_content(self, document_id: str, state: bytes, *, websocket: bool = True) -> None:
        """Save the full Yjs state. ``websocket=True``: we are connected to the room as this session."""
        checked = _checked_document_id(document_id)
        body = {"content": base64.b64encode(state).decode("ascii"), "websocket": websocket}
        if await self.content_endpoint():
            path = f"{API_PREFIX}/documents/{checked}/content/"
        else:
            path = f"{API_PREFIX}/documents/{checked}/"
        await self._request("PATCH", path, "save the document content", json_body=body)
