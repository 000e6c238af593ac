"""OIDC sign-in for Docs' resource-server API: a person's login (code + PKCE), a service's client
credentials, or a token given; tokens in memory, refreshed, never shown.

Where it sits: the sign-in edge of ``elynav_nb.docs``, beside ``credentials`` (the session-cookie
path, kept for the sandbox, live sessions and existing users). ``DocsCredentials.oidc(...)``
builds one; ``DocsRestClient`` sends through it like through cookie credentials (``rest.http``
asks ``prepare()`` before each request and ``renew()`` after a 401).

What Docs offers a token (5.4.1, ``core/urls.py``, ``core/external_api/``, django-lasuite
``oidc_resource_server``): only ``/external_api/v1.0/`` and only when the instance enables
``OIDC_RESOURCE_SERVER_ENABLED``; by default documents ``list``, ``retrieve``, ``create``,
``children`` and ``users/me`` (``EXTERNAL_API`` setting). Docs introspects the token at the
provider (RFC 7662) and wants it ``active``, from its issuer, with a scope it accepts
(``OIDC_RS_SCOPES``, default ``openid``), a ``client_id`` among ``OIDC_RS_ALLOWED_AUDIENCES``, and
a ``sub`` of a known Docs user. The collaboration WebSocket takes only the session cookie, so a
token opens no live session (``DocsSession.open`` says so).

How data flows::

    person:   sign_in(open_browser) -> discovery -> a loopback listener on 127.0.0.1 (RFC 8252)
              -> the authorization URL in the browser (state, nonce, S256 code challenge)
              -> the redirect's code -> token endpoint (code + verifier) -> tokens in memory
    service:  client_credentials at the token endpoint, on first use and when expired
    given:    the access token as given (never refreshed: when Docs refuses it, AUTH_REQUIRED)
    each request: prepare() refreshes a token that expires within 30 s; a 401 renews once

Secrets (tokens, client secret, PKCE verifier, authorization code) live in private slots: no repr,
log line or error carries them; an error from the provider keeps only its ``error`` code.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import time
import webbrowser
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from elynav_nb.docs.addressing import normalize_instance_origin, settle_origin
from elynav_nb.errors import AuthRequired, InvalidInput, ServiceError, SyncTimeout

__all__ = ["EXTERNAL_API_PREFIX", "OidcCredentials"]

EXTERNAL_API_PREFIX: Final = "/external_api/v1.0"
_REFRESH_MARGIN: Final = 30.0
"""A token expiring within this many seconds is refreshed before the request."""
_LOGIN_PAGE: Final = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"<!doctype html><title>Signed in</title><p>Signed in to Docs for elynav. You can close this tab.</p>"
)

OpenBrowser = Callable[[str], Awaitable[None] | None]


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class OidcCredentials:
    """Docs credentials from an OIDC provider, for the resource-server API (``/external_api/``)."""

    __slots__ = (
        "_access_token",
        "_client_secret",
        "_expires_at",
        "_instance",
        "_lock",
        "_metadata",
        "_refresh_token",
        "client_id",
        "flow",
        "issuer",
        "login_timeout",
        "refreshes",
        "scopes",
    )

    def __init__(
        self,
        issuer: str | None,
        client_id: str | None,
        *,
        flow: str,
        client_secret: str | None = None,
        scopes: Sequence[str] = ("openid",),
        instance: str | None = None,
        access_token: str | None = None,
        login_timeout: float = 300.0,
    ) -> None:
        if flow not in ("authorization_code", "client_credentials", "token"):
            raise InvalidInput("flow must be authorization_code, client_credentials or token")
        if flow != "token" and (not issuer or not client_id):
            raise InvalidInput("an OIDC sign-in needs the provider's issuer URL and a client id")
        if flow == "client_credentials" and not client_secret:
            raise InvalidInput("the client credentials flow needs the client secret")
        if flow == "token" and not access_token:
            raise InvalidInput("give the access token to use")
        self.issuer = issuer.rstrip("/") if issuer else None
        self.client_id = client_id
        self.flow = flow
        self.scopes = tuple(scopes)
        self.login_timeout = login_timeout
        self.refreshes = 0
        self._client_secret = client_secret
        self._instance = normalize_instance_origin(instance) if instance else None
        self._access_token = access_token
        self._refresh_token: str | None = None
        self._expires_at: float | None = None
        self._metadata: dict[str, Any] | None = None
        self._lock = asyncio.Lock()

    # --- what may be shown -------------------------------------------------------------------

    def __repr__(self) -> str:
        state = "signed in" if self._access_token else "not signed in"
        who = f"issuer={self.issuer!r}, client_id={self.client_id!r}, " if self.issuer else ""
        return f"OidcCredentials({who}flow={self.flow!r}, instance={self._instance!r}, {state})"

    __str__ = __repr__

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("OIDC credentials are kept in memory only and cannot be pickled")

    def __copy__(self) -> OidcCredentials:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> OidcCredentials:
        return self

    @property
    def instance(self) -> str | None:
        return self._instance

    @property
    def is_anonymous(self) -> bool:
        return False

    @property
    def api_prefix(self) -> str:
        return EXTERNAL_API_PREFIX

    @property
    def live_sessions(self) -> bool:
        """False: Docs' collaboration server takes only the session cookie, never a token."""
        return False

    @property
    def signed_in(self) -> bool:
        return self._access_token is not None

    def identity_key(self) -> str:
        """Whose requests these are, for the per-user throttle (no secret in it)."""
        seed = f"{self.issuer}|{self.client_id}|{self.flow}" if self.issuer else f"token|{id(self)}"
        return "oidc-" + hashlib.sha256(seed.encode()).hexdigest()[:16]

    def settle(self, origin: str) -> str:
        """Settle on ``origin`` if not yet settled; raise ``InstanceMismatch`` for any other origin."""
        self._instance = settle_origin(self._instance, origin)
        return self._instance

    # --- headers (the only place the token leaves this object) -------------------------------

    def request_headers(self, origin: str, *, write: bool) -> dict[str, str]:
        self.settle(origin)
        if self._access_token is None:
            raise AuthRequired("not signed in yet: call await credentials.sign_in() first")
        headers = {"Authorization": f"Bearer {self._access_token}"}
        if write:
            headers["Content-Type"] = "application/json"
        return headers

    async def prepare(self) -> None:
        """Before a request: a token that is missing (service) or about to expire is renewed."""
        if self.flow == "client_credentials" and self._access_token is None:
            await self.renew()
        elif self._expires_at is not None and self._expires_at - time.monotonic() < _REFRESH_MARGIN:
            await self.renew()

    async def renew(self) -> bool:
        """Get a fresh token (refresh token, or client credentials); False when there is no way to
        (a token given as is). A refusal is ``AUTH_REQUIRED`` with only the provider's error code."""
        async with self._lock:
            if self.flow == "client_credentials":
                await self._token_request(
                    {"grant_type": "client_credentials", "scope": " ".join(self.scopes)}
                )
            elif self.flow == "authorization_code" and self._refresh_token is not None:
                await self._token_request(
                    {"grant_type": "refresh_token", "refresh_token": self._refresh_token}
                )
            else:
                return False
            self.refreshes += 1
            return True

    # --- the provider ------------------------------------------------------------------------

    async def _discover(self, client: httpx.AsyncClient) -> dict[str, Any]:
        if self._metadata is None:
            try:
                response = await client.get(f"{self.issuer}/.well-known/openid-configuration")
                data = response.json() if response.status_code == 200 else None
            except (httpx.HTTPError, ValueError):
                data = None
            if not isinstance(data, dict) or not isinstance(data.get("token_endpoint"), str):
                raise ServiceError(
                    "the OIDC provider's configuration cannot be read (.well-known/openid-configuration)"
                )
            self._metadata = data
        return self._metadata

    async def _token_request(self, form: dict[str, str]) -> None:
        async with httpx.AsyncClient(timeout=15.0, follow_redirects=False) as client:
            metadata = await self._discover(client)
            body = dict(form)
            try:
                if self._client_secret:
                    basic = httpx.BasicAuth(self.client_id or "", self._client_secret)
                    response = await client.post(metadata["token_endpoint"], data=body, auth=basic)
                else:
                    body["client_id"] = self.client_id or ""
                    response = await client.post(metadata["token_endpoint"], data=body)
            except httpx.HTTPError as error:
                raise ServiceError(f"cannot reach the OIDC provider ({type(error).__name__})") from None
        try:
            answer = response.json()
        except ValueError:
            answer = None
        data: dict[str, Any] = answer if isinstance(answer, dict) else {}
        if response.status_code != 200 or not isinstance(data.get("access_token"), str):
            said = data.get("error")
            code = said[:64] if isinstance(said, str) else "no_token"
            self._access_token = None
            grant = form["grant_type"].replace("_", " ")
            raise AuthRequired(
                f"the OIDC provider refused the {grant} request ({code}): sign in again",
                details={"error": code, "status": response.status_code},
            )
        self._access_token = data["access_token"]
        if isinstance(data.get("refresh_token"), str):
            self._refresh_token = data["refresh_token"]
        expires_in = data.get("expires_in")
        self._expires_at = (
            time.monotonic() + float(expires_in) if isinstance(expires_in, (int, float)) else None
        )

    async def sign_in(self, open_browser: OpenBrowser | None = None) -> None:
        """A person's login: the provider's page opens in the browser (``open_browser(url)``, by
        default the system browser), and the redirect comes back to a listener on 127.0.0.1.
        Returns once the tokens are in memory; ``SYNC_TIMEOUT``-coded after ``login_timeout``."""
        if self.flow != "authorization_code":
            raise InvalidInput("sign_in is for a person's login (flow='authorization_code')")
        verifier = _b64url(secrets.token_bytes(48))
        state = _b64url(secrets.token_bytes(16))
        arrived: asyncio.Future[dict[str, list[str]]] = asyncio.get_running_loop().create_future()

        async def on_redirect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                request_line = await asyncio.wait_for(reader.readline(), 10)
                parts = request_line.decode("latin-1").split(" ")
                query = parse_qs(urlsplit(parts[1]).query) if len(parts) > 1 else {}
                writer.write(_LOGIN_PAGE)
                await writer.drain()
                if query.get("state") == [state] and not arrived.done():
                    arrived.set_result(query)
            except (OSError, TimeoutError, UnicodeDecodeError):
                pass
            finally:
                writer.close()

        listener = await asyncio.start_server(on_redirect, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        redirect_uri = f"http://127.0.0.1:{port}/callback"
        try:
            async with httpx.AsyncClient(timeout=15.0) as client:
                metadata = await self._discover(client)
            authorization = metadata.get("authorization_endpoint")
            if not isinstance(authorization, str):
                raise ServiceError("the OIDC provider names no authorization endpoint")
            url = (
                authorization
                + "?"
                + urlencode(
                    {
                        "response_type": "code",
                        "client_id": self.client_id,
                        "redirect_uri": redirect_uri,
                        "scope": " ".join(self.scopes),
                        "state": state,
                        "nonce": _b64url(secrets.token_bytes(16)),
                        "code_challenge": _b64url(hashlib.sha256(verifier.encode()).digest()),
                        "code_challenge_method": "S256",
                    }
                )
            )
            opened = (open_browser or _system_browser)(url)
            if opened is not None:
                await opened
            try:
                query = await asyncio.wait_for(arrived, self.login_timeout)
            except TimeoutError:
                raise SyncTimeout(f"no login came back within {self.login_timeout:g} s") from None
        finally:
            listener.close()
        if "code" not in query:
            error = (query.get("error") or ["no_code"])[0][:64]
            raise AuthRequired(f"the OIDC provider did not sign you in ({error})", details={"error": error})
        async with self._lock:
            await self._token_request(
                {
                    "grant_type": "authorization_code",
                    "code": query["code"][0],
                    "redirect_uri": redirect_uri,
                    "code_verifier": verifier,
                }
            )


def _system_browser(url: str) -> Awaitable[None]:
    async def opened() -> None:
        await asyncio.get_running_loop().run_in_executor(None, webbrowser.open, url)

    return opened()
