"""One Docs instance over HTTP: headers, throttle, deadline, retries, body limits, typed errors.

Where it sits: the shared HTTP layer of ``elynav_nb.docs.rest``. Every REST client of the package
(``documents.DocsRestClient``, ``tree_client.DocsTreeClient``, the threads and versions calls, the
MCP service's credential check) sends through one ``DocsHttp``; none reaches into another's
private methods. It parses nothing beyond JSON and text (``read_json``, ``read_text``).

How data flows::

    request(method, path, what, json_body=, params=, refusal=)
        -> our throttle (80 a minute per user and instance, ``shared_throttle``)
        -> the credentials' headers: the Cookie (writes: + Content-Type, Origin, Referer,
           X-CSRFToken), or a bearer token renewed when about to expire (``oidc``)
        -> one exchange, body streamed and counted -> 2xx: the response
        -> 429 / 5xx / network error: retried (GETs only; ``Retry-After`` up to 5 s), within the deadline
        -> other statuses: ``refusal(response)`` may name a precise error, else ``error_for_status``:
           401 ``AUTH_REQUIRED``, 403 ``NOT_ALLOWED``, 404 ``DOC_NOT_FOUND``, 429 ``RATE_LIMITED``
           (with ``retry_after_seconds``), 5xx ``SERVICE_ERROR``, other 4xx ``INVALID_INPUT``;
           a 401 with a token that can be renewed: renewed, then tried once more

Bounds against slow or hostile servers (values and reasons in ``_limits``):

- ``deadline`` (30 s): each call, its retries and their waits included, ends within it, however
  the server paces its bytes (httpx's ``timeout`` is per read only). It runs from the moment our
  throttle lets the call go: waiting for our own 80-a-minute slot is not the server's slowness.
  Past it: ``DEADLINE_EXCEEDED``.
- ``Retry-After`` is honoured up to 5 s; a longer one, or a wait that would pass the deadline,
  ends the call at once with the server's error (``RATE_LIMITED``, ``SERVICE_ERROR``).
- ``max_response_bytes`` (32 MiB): bodies are streamed and counted, never read whole first; a
  larger one (announced or sent) is ``RESPONSE_TOO_LARGE`` at once, without retries. Error
  answers are read for at most 64 KiB; redirects and 5xx answers not at all.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable
from typing import Any, Final, Protocol

import httpx

from elynav_nb.docs._limits import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_REQUEST_DEADLINE,
    Deadline,
    checked_deadline,
    checked_limit,
    response_too_large,
    retry_after_seconds,
    retry_wait,
)
from elynav_nb.docs.addressing import normalize_instance_origin
from elynav_nb.errors import (
    AuthRequired,
    DocNotFound,
    ElynavError,
    InvalidInput,
    NotAllowed,
    RateLimited,
    ServiceError,
)

__all__ = [
    "API_PREFIX",
    "DEFAULT_THROTTLE_PER_MINUTE",
    "DocsHttp",
    "HeaderSource",
    "Refusal",
    "VersionedApi",
    "RequestThrottle",
    "error_for_status",
    "read_json",
    "read_text",
    "send_blocking",
    "shared_throttle",
]

API_PREFIX: Final = "/api/v1.0"
DEFAULT_THROTTLE_PER_MINUTE: Final = 80
_RETRYABLE_STATUSES: Final = frozenset({429, 500, 502, 503, 504})
_ERROR_BODY_BYTES: Final = 64 * 1024
"""How much of a 4xx answer is read (for the precise refusal); the rest is dropped."""
_BODY_FRAMING_HEADERS: Final = frozenset({"content-encoding", "content-length", "transfer-encoding"})

Refusal = Callable[[httpx.Response], ElynavError | None]
"""Reads a 4xx answer and names a more precise error than its status alone (or ``None``)."""


class HeaderSource(Protocol):
    """What gives a request its credentials: ``DocsCredentials`` (the session cookie, under
    ``/api/v1.0``) or ``oidc.OidcCredentials`` (a bearer token, under ``/external_api/v1.0``).
    Secrets leave only through ``request_headers``."""

    @property
    def is_anonymous(self) -> bool: ...

    @property
    def api_prefix(self) -> str: ...

    def identity_key(self) -> str: ...

    def settle(self, origin: str) -> str: ...

    def request_headers(self, origin: str, *, write: bool) -> dict[str, str]: ...

    async def prepare(self) -> None: ...

    async def renew(self) -> bool: ...


class VersionedApi(Protocol):
    """What the clients built beside ``DocsRestClient`` (the tree, threads, versions) use of it:
    its ``DocsHttp`` and the instance's major version (endpoints moved between Docs 4 and 5)."""

    @property
    def http(self) -> DocsHttp: ...

    async def major_version(self) -> int: ...


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


def shared_throttle(instance: str, credentials: HeaderSource) -> RequestThrottle:
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


def error_for_status(response: httpx.Response, what: str) -> ElynavError:
    """The typed error of a refused answer; a 429 or 503 carries the ``Retry-After`` it asked for
    (``retry_after_seconds``), which the callers that may wait (saves) honour."""
    status = response.status_code
    details: dict[str, Any] = {"status": status}
    if status in (429, 503):
        retry_after = retry_after_seconds(response.headers.get("Retry-After"))
        if retry_after is not None:
            details["retry_after_seconds"] = retry_after
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


class DocsHttp:
    """The HTTP exchanges with one Docs instance (``async with`` or ``aclose()``).

    ``timeout`` (15 s) bounds each network read; ``deadline`` (30 s, ``_limits``) bounds each whole
    call, retries included (``DEADLINE_EXCEEDED``); ``max_response_bytes`` (32 MiB) bounds each
    body (``RESPONSE_TOO_LARGE``). A 401 with credentials that can renew themselves (an OIDC
    token) is tried once more with the renewed token.
    """

    def __init__(
        self,
        instance: str,
        credentials: HeaderSource,
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
        self.credentials = credentials
        self.credentials.settle(self.instance)
        self.deadline = checked_deadline(deadline)
        self.max_response_bytes = checked_limit(max_response_bytes, "max_response_bytes")
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.throttle = throttle if throttle is not None else shared_throttle(self.instance, credentials)
        self._client = httpx.AsyncClient(
            base_url=self.instance, timeout=timeout, transport=transport, follow_redirects=False
        )

    def __repr__(self) -> str:
        return f"<DocsHttp instance={self.instance!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a Docs HTTP client holds credentials and cannot be pickled")

    async def aclose(self) -> None:
        await self._client.aclose()

    @property
    def api_prefix(self) -> str:
        """Where the document API is for these credentials (``/api/v1.0`` or ``/external_api/v1.0``)."""
        return self.credentials.api_prefix

    def headers_for(self, method: str, accept: str) -> dict[str, str]:
        headers = self.credentials.request_headers(self.instance, write=method != "GET")
        headers["Accept"] = accept
        return headers

    async def json(
        self,
        method: str,
        path: str,
        what: str,
        *,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        throttled: bool = True,
        refusal: Refusal | None = None,
    ) -> Any:
        """``request`` and its body read as JSON (``SERVICE_ERROR`` when it is not)."""
        response = await self.request(
            method, path, what, json_body=json_body, params=params, throttled=throttled, refusal=refusal
        )
        return read_json(response, f"the request to {what}")

    async def request(
        self,
        method: str,
        path: str,
        what: str,
        *,
        json_body: Any = None,
        params: dict[str, Any] | None = None,
        throttled: bool = True,
        accept: str = "application/json",
        refusal: Refusal | None = None,
    ) -> httpx.Response:
        """One call with the instance's headers, retried (GETs only), every failure typed, ended
        within ``self.deadline`` (from the moment the throttle lets it go); ``refusal`` may read a
        4xx answer first and name a more precise error."""
        await self.credentials.prepare()  # a token about to expire is renewed first
        if throttled:
            await self.throttle.acquire()
        deadline = Deadline.start(self.deadline, what)
        renewed = False
        while True:
            headers = self.headers_for(method, accept)
            call = self._attempts(
                method, path, what, deadline, headers, json_body, params, throttled, refusal
            )
            try:
                return await deadline.run(call)
            except AuthRequired:
                # once more with a renewed token; a cookie, or a token given as is, cannot renew
                if renewed or not await self.credentials.renew():
                    raise
                renewed = True

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
        refusal: Refusal | None,
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
                    raise precise or error_for_status(response, what)
                failure = error_for_status(response, what)
                retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            if last_try:
                raise failure
            wait = retry_wait(attempt, self.retry_backoff, retry_after, deadline)
            if wait is None:  # the server asks for longer than we wait, or the deadline comes first
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
        request = self._client.build_request(method, path, headers=headers, json=json_body, params=params)
        streamed = await self._client.send(request, stream=True)
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


def send_blocking(
    http: DocsHttp, method: str, path: str, what: str, *, json_body: Any, timeout: float
) -> None:
    """One write sent without an event loop (``httpx.Client``), for the saves made at interpreter
    exit, when no loop may be left to run the async client. Same headers and typed errors as
    ``DocsHttp.request``; no retry, no throttle (the caller waits for ``Retry-After``)."""
    headers = http.headers_for(method, "application/json")
    try:
        with httpx.Client(base_url=http.instance, timeout=timeout, follow_redirects=False) as client:
            response = client.request(method, path, headers=headers, json=json_body)
    except httpx.TimeoutException:
        raise ServiceError(f"Docs did not answer in time while trying to {what}") from None
    except httpx.HTTPError as error:
        raise ServiceError(f"cannot reach Docs to {what} ({type(error).__name__})") from None
    if response.status_code >= 300:
        raise error_for_status(response, what)


def read_text(response: httpx.Response) -> str:
    """The body as text in its announced charset, or as UTF-8 when that charset cannot read it."""
    try:
        return response.text
    except (ValueError, LookupError):  # e.g. "charset=utf-16" without a BOM
        return response.content.decode("utf-8", errors="replace")


def read_json(response: httpx.Response, what: str) -> Any:
    """The body as JSON; ``SERVICE_ERROR`` when it is not JSON or too deeply nested to read."""
    try:
        return response.json()
    except (ValueError, RecursionError):
        raise ServiceError(
            f"Docs answered {what} with something that is not JSON (or nested too deeply to "
            "read): is this a Docs instance?"
        ) from None
