"""DocsSandbox's resource-server API: ``/external_api/v1.0/`` with an OIDC bearer token.

Where it sits: beside ``server`` (which mounts ``external_routes`` when the sandbox is given an OIDC
provider, ``DocsSandbox(oidc=ResourceServer(...))``). Facts (Docs 5.4.1 ``core/urls.py``,
``core/external_api/``, settings ``EXTERNAL_API`` and ``OIDC_RS_*``; django-lasuite
``oidc_resource_server/authentication.py`` and ``backend.py``):

* the token is introspected at the provider (RFC 7662, ``client_id``/``client_secret`` of the
  resource server); Docs wants it ``active``, ``iss`` = the provider, a ``scope`` sharing one of
  ``OIDC_RS_SCOPES`` (default ``openid``), an audience claim (``client_id``) among
  ``OIDC_RS_ALLOWED_AUDIENCES``, and a ``sub`` of an existing user (never created). Any failure is
  401 ``{"detail": "Login failed"}`` (an unknown ``sub``: "Login failed: No user found for the
  given access token.");
* only the actions ``EXTERNAL_API`` lists are served: by default documents ``list``,
  ``retrieve``, ``create``, ``children``, and ``users/me``; any other is 403. No CSRF (no session).

The document routes are the sandbox's own (same rights, throttle and answers), with the user the
token names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from elynav_nb.sandbox.docs.api_common import Handler, SandboxSite
from elynav_nb.sandbox.docs.store import SandboxUser

__all__ = ["EXTERNAL_API", "ResourceServer"]

EXTERNAL_API: Final = "/external_api/v1.0"
_LOGIN_FAILED: Final = "Login failed"
_NO_USER: Final = "Login failed: No user found for the given access token."


class ResourceServer:
    """Docs as an OIDC resource server: how it checks a bearer token, and whose token it is."""

    def __init__(
        self,
        issuer: str,
        client_id: str,
        client_secret: str,
        *,
        scopes: Sequence[str] = ("openid",),
        allowed_audiences: Sequence[str] = (),
    ) -> None:
        self.issuer = issuer.rstrip("/")
        self.client_id = client_id
        self._client_secret = client_secret
        self.scopes = tuple(scopes)
        self.allowed_audiences = tuple(allowed_audiences)
        self.subjects: dict[str, str] = {}  # OIDC sub -> sandbox user id
        self.introspections = 0
        self._endpoint: str | None = None

    def __repr__(self) -> str:
        return f"<ResourceServer issuer={self.issuer!r} client_id={self.client_id!r}>"

    def link(self, subject: str, user: SandboxUser) -> None:
        """Make the OIDC subject ``subject`` this Docs user (Docs matches users by ``sub``)."""
        self.subjects[subject] = user.id

    async def _introspect(self, token: str) -> dict[str, Any] | None:
        async with httpx.AsyncClient(timeout=10.0) as client:
            if self._endpoint is None:
                configuration = (await client.get(f"{self.issuer}/.well-known/openid-configuration")).json()
                self._endpoint = str(configuration["introspection_endpoint"])
            response = await client.post(
                self._endpoint, data={"token": token}, auth=(self.client_id, self._client_secret)
            )
        self.introspections += 1
        answer = response.json() if response.status_code == 200 else None
        return answer if isinstance(answer, dict) else None

    async def user_for(self, request: Request, users: dict[str, SandboxUser]) -> SandboxUser | Response:
        """The user a request's bearer token names, or Docs' 401."""
        header = request.headers.get("authorization", "")
        if not header.lower().startswith("bearer ") or not header[7:].strip():
            return _failed("Authentication credentials were not provided.")
        info = await self._introspect(header[7:].strip())
        if info is None or info.get("active") is not True or info.get("iss") != self.issuer:
            return _failed(_LOGIN_FAILED)
        scopes = str(info.get("scope") or "").split(" ")
        audience = info.get("client_id")
        if set(scopes).isdisjoint(self.scopes) or audience not in self.allowed_audiences:
            return _failed(_LOGIN_FAILED)
        user_id = self.subjects.get(str(info.get("sub")))
        user = users.get(user_id) if user_id else None
        return user if user is not None else _failed(_NO_USER)


def _failed(detail: str) -> JSONResponse:
    return JSONResponse(
        {"detail": detail}, status_code=401, headers={"WWW-Authenticate": 'Bearer realm="api"'}
    )


def external_routes(
    routes: Sequence[tuple[str, Handler, list[str]]],
) -> list[tuple[str, Handler, list[str]]]:
    """The external API: the sandbox's own handlers for the actions Docs serves there by default."""
    served = {
        "/api/v1.0/documents/": {"GET", "POST"},  # list, create
        "/api/v1.0/documents/{document_id}/": {"GET"},  # retrieve
        "/api/v1.0/documents/{document_id}/children/": {"GET", "POST"},  # children
        "/api/v1.0/users/me/": {"GET"},  # get_me
    }
    external: list[tuple[str, Handler, list[str]]] = []
    for path, handler, methods in routes:
        allowed = served.get(path, set())
        external.append((EXTERNAL_API + path.removeprefix("/api/v1.0"), _only(handler, allowed), methods))
    return external


def _only(handler: Handler, allowed: set[str]) -> Handler:
    async def endpoint(request: Request, sandbox: SandboxSite) -> Response:
        if request.method not in allowed:  # ResourceServerClientPermission: not an external action
            return JSONResponse(
                {"detail": "You do not have permission to perform this action."}, status_code=403
            )
        return await handler(request, sandbox)

    return endpoint
