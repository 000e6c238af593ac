"""DocsSandbox's routes of one document's content and sharing, and of the instance's configuration.

Where it sits: a route module of ``DocsSandbox`` (``server.build_app`` mounts it), beside
``tree_routes``, ``lifecycle_routes`` and ``discussion_routes``. As La Suite Docs 5.4.1 answers:
``GET /config/`` (the collaboration URL, the "not connected => read-only" flag), ``GET
/users/me/``, ``GET``/``PATCH .../content/`` (v5 only: base64 Yjs, ETag/304, the REST write rule of
``api_common.write_body``), ``PUT .../link-configuration/`` (which resets the room, as Docs does)
and ``GET .../can-edit/``.

How data flows: a request and the sandbox (``api_common.SandboxSite``) -> the document of the URL
and its caller, or Docs' 404/401/403 -> the store's abilities -> the store read or written -> JSON.
"""

from __future__ import annotations

import base64

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from elynav_nb.sandbox.docs.api_common import (
    SandboxSite,
    decode_content_or_error,
    json_body,
    json_error,
    write_body,
)
from elynav_nb.sandbox.docs.store import LINK_REACHES, LINK_ROLES, SandboxDocument, SandboxStore, SandboxUser

__all__ = ["can_edit", "config", "content", "link_configuration", "users_me"]


async def config(request: Request, sandbox: SandboxSite) -> Response:
    release = "v5.4.1" if sandbox.api_version >= 5 else "v4.8.6"
    return JSONResponse(
        {
            "RELEASE_VERSION": release,
            "COLLABORATION_WS_URL": sandbox.ws_url,
            "COLLABORATION_WS_NOT_CONNECTED_READ_ONLY": sandbox.not_connected_read_only,
            "COLLABORATION_WS_INACTIVITY_TIMEOUT": 30000,
            "LANGUAGES": [["en-us", "English"], ["fr-fr", "Français"]],
            "ENVIRONMENT": "sandbox",
        }
    )


async def users_me(request: Request, sandbox: SandboxSite) -> Response:
    user = sandbox.user_of(request)
    if user is None:
        return json_error(401, "Authentication credentials were not provided.")
    return JSONResponse(user.as_json())


def _retrievable_document(
    request: Request, sandbox: SandboxSite
) -> tuple[SandboxDocument, SandboxUser | None] | Response:
    """The document named by the URL and the caller, or the 404/401/403 answer that refuses it."""
    user = sandbox.user_of(request)
    document = sandbox.store.get_document(request.path_params["document_id"])
    refusal = _missing_or_denied(sandbox, document, user)
    if refusal is not None:
        return refusal
    assert document is not None
    return document, user


def _missing_or_denied(
    sandbox: SandboxSite, document: SandboxDocument | None, user: SandboxUser | None
) -> Response | None:
    if document is None:
        return json_error(404, "No Document matches the given query.")
    if not sandbox.store.abilities(document, user)["retrieve"]:
        if user is None:
            return json_error(401, "Authentication credentials were not provided.")
        return json_error(403, "You do not have permission to perform this action.")
    return None


async def content(request: Request, sandbox: SandboxSite) -> Response:
    if sandbox.api_version < 5:
        return json_error(404, "Not found.")
    found = _retrievable_document(request, sandbox)
    if isinstance(found, Response):
        return found
    document, user = found
    if request.method == "GET":
        etag = SandboxStore.content_etag(document)
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        encoded = base64.b64encode(document.content).decode("ascii") if document.content else ""
        return PlainTextResponse(encoded, headers={"ETag": etag, "Last-Modified": document.updated_at})
    if not sandbox.store.abilities(document, user)["content_patch"]:
        return json_error(403, "You do not have permission to perform this action.")
    body = await write_body(request, sandbox, document)
    if isinstance(body, Response):
        return body
    decoded = decode_content_or_error(body)
    if isinstance(decoded, Response):
        return decoded
    sandbox.store.save_content(document, decoded)
    return Response(status_code=204)


async def link_configuration(request: Request, sandbox: SandboxSite) -> Response:
    found = _retrievable_document(request, sandbox)
    if isinstance(found, Response):
        return found
    document, user = found
    if not sandbox.store.abilities(document, user)["link_configuration"]:
        return json_error(403, "You do not have permission to perform this action.")
    body = await json_body(request)
    if isinstance(body, Response):
        return body
    reach, role = body.get("link_reach"), body.get("link_role")
    if reach not in LINK_REACHES or role not in LINK_ROLES:
        return JSONResponse({"link_reach": ["invalid choice"]}, status_code=400)
    document.link_reach, document.link_role = str(reach), str(role)
    sandbox.hub.reset(document.id)  # Docs resets the room's connections after a link change
    return JSONResponse({"link_reach": reach, "link_role": role})


async def can_edit(request: Request, sandbox: SandboxSite) -> Response:
    found = _retrievable_document(request, sandbox)
    if isinstance(found, Response):
        return found
    document, user = found
    return JSONResponse({"can_edit": sandbox.store.abilities(document, user)["update"]})
