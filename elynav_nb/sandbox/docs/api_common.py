"""What every DocsSandbox REST route shares: errors, bodies, pages, ordering and the object check.

Where it sits: under the route modules of ``DocsSandbox`` (``server``, ``tree_routes``,
``lifecycle_routes``). It turns a Starlette request into what Django REST framework would
see, and Docs' refusals into the answers Docs gives (La Suite Docs v5.4.1 with DRF 3.17):

* ``permitted_document``: Docs' ``DocumentPermission`` on one document: 404 ``Not found.`` for an
  id that is not a UUID, past the trash window, or trashed and the caller is no owner; 404 ``No
  Document matches the given query.`` for an unknown id; then the action's ability, refused with
  401 for anonymous callers and 403 for the others;
* ``paginate``: ``PageNumberPagination`` (``page_size`` up to 200, default 20, ``page=last``,
  404 ``Invalid page.``, ``next``/``previous`` links keeping the other parameters, sorted);
* ``ordered``: ``OrderingFilter`` (unknown fields ignored, nulls last ascending);
* ``json_body``: DRF's JSON parser (an empty body is ``{}``, another content type is 415);
* ``write_body``: Docs' "not connected => read-only" rule for REST writes of content and title.

How data flows: a route calls ``permitted_document`` (or reads a list), filters, then
``paginate(request, items, render)``; every refusal is a ready ``Response``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Sequence
from math import ceil
from typing import Any, Final, Protocol, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from elynav_nb.sandbox.docs.collaboration import CollaborationHub
from elynav_nb.sandbox.docs.store import SandboxDocument, SandboxStore, SandboxUser

__all__ = [
    "MAX_PAGE_SIZE",
    "PAGE_SIZE",
    "Handler",
    "SandboxSite",
    "decode_content_or_error",
    "denied",
    "json_body",
    "json_error",
    "ordered",
    "paginate",
    "permitted_document",
    "write_body",
]

PAGE_SIZE: Final = 20
MAX_PAGE_SIZE: Final = 200
NOT_AUTHENTICATED: Final = "Authentication credentials were not provided."
PERMISSION_DENIED: Final = "You do not have permission to perform this action."

ItemT = TypeVar("ItemT")


class SandboxSite(Protocol):
    """What the route modules use of a ``DocsSandbox``: it is handed to them, they never import
    ``server`` (which imports them), so no module of the sandbox imports another in a circle."""

    store: SandboxStore
    hub: CollaborationHub
    api_version: int
    api_key: str
    not_connected_read_only: bool
    send_pings: bool

    @property
    def ws_url(self) -> str: ...

    @property
    def allowed_origins(self) -> tuple[str, ...]: ...

    def user_of(self, request: Request) -> SandboxUser | None: ...


Handler = Callable[[Request, SandboxSite], Awaitable[Response]]
"""A REST route of the sandbox: the request and the sandbox in, Docs' answer out."""


def json_error(status: int, detail: Any) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status)


def denied(user: SandboxUser | None, detail: str = PERMISSION_DENIED) -> JSONResponse:
    """DRF's ``permission_denied``: 401 with a ``Session`` challenge for anonymous callers, else 403."""
    if user is None:
        return JSONResponse(
            {"detail": NOT_AUTHENTICATED}, status_code=401, headers={"WWW-Authenticate": "Session"}
        )
    return json_error(403, detail)


async def json_body(request: Request) -> dict[str, Any] | Response:
    """``request.data`` as DRF's JSON parser gives it, or the 400/415 answer."""
    raw = await request.body()
    if not raw:
        return {}
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != "application/json":
        return json_error(415, f'Unsupported media type "{content_type}" in request.')
    try:
        body = json.loads(raw)
    except ValueError as error:
        return json_error(400, f"JSON parse error - {error}")
    if not isinstance(body, dict):
        return JSONResponse(
            {"non_field_errors": [f"Invalid data. Expected a dictionary, but got {type(body).__name__}."]},
            status_code=400,
        )
    return body


def permitted_document(
    sandbox: SandboxSite, request: Request, action: str
) -> tuple[SandboxDocument, SandboxUser | None] | Response:
    """The document of the URL if ``action`` is allowed on it, else Docs' refusal."""
    store = sandbox.store
    user = sandbox.user_of(request)
    try:
        document_id = str(uuid.UUID(request.path_params["document_id"]))
    except ValueError:
        return json_error(404, "Not found.")
    document = store.find_document(document_id)
    if document is None:
        return json_error(404, "No Document matches the given query.")
    hidden_since = document.ancestors_deleted_at
    if hidden_since is not None and hidden_since < store.trash_cutoff():
        return json_error(404, "Not found.")
    allowed = bool(store.abilities(document, user).get(action, False))
    if hidden_since is not None and store.role_of(document, user) != "owner":
        return json_error(404, "Not found.")
    if not allowed:
        return denied(user)
    return document, user


def _page_size(request: Request) -> int:
    raw = request.query_params.get("page_size")
    if raw is None:
        return PAGE_SIZE
    try:
        size = int(raw)
    except ValueError:
        return PAGE_SIZE
    return PAGE_SIZE if size <= 0 else min(size, MAX_PAGE_SIZE)


def _with_page(url: str, page: int | None) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if page is None:
        query.pop("page", None)
    else:
        query["page"] = str(page)
    return urlunsplit(
        (parts.scheme, parts.netloc, parts.path, urlencode(sorted(query.items())), parts.fragment)
    )


def paginate(request: Request, items: Sequence[ItemT], render: Callable[[ItemT], dict[str, Any]]) -> Response:
    """One page of ``items`` as ``{count, next, previous, results}``."""
    size = _page_size(request)
    pages = max(1, ceil(len(items) / size))
    raw_page = request.query_params.get("page", "1")
    try:
        number = pages if raw_page == "last" else int(raw_page)
    except ValueError:
        return json_error(404, "Invalid page.")
    if number < 1 or number > pages:
        return json_error(404, "Invalid page.")
    url = str(request.url)
    previous = None
    if number > 1:
        previous = _with_page(url, None if number == 2 else number - 1)
    return JSONResponse(
        {
            "count": len(items),
            "next": _with_page(url, number + 1) if number < pages else None,
            "previous": previous,
            "results": [render(item) for item in items[(number - 1) * size : number * size]],
        }
    )


def ordered(
    request: Request,
    documents: list[SandboxDocument],
    allowed_fields: Sequence[str],
    default: Sequence[str],
) -> list[SandboxDocument]:
    """``OrderingFilter``: ``?ordering=-title,created_at`` among ``allowed_fields``, else ``default``."""
    wanted = [term.strip() for term in request.query_params.get("ordering", "").split(",")]
    terms = [term for term in wanted if term and term.lstrip("-") in allowed_fields] or list(default)
    result = list(documents)
    for term in reversed(terms):
        field = term.lstrip("-")
        descending = term.startswith("-")
        present = [document for document in result if _sort_value(document, field) is not None]
        missing = [document for document in result if _sort_value(document, field) is None]
        present.sort(key=lambda document: _sort_value(document, field), reverse=descending)
        result = missing + present if descending else present + missing  # nulls last ascending
    return result


def _sort_value(document: SandboxDocument, field: str) -> Any:
    if field == "title":
        return document.title.casefold() if document.title is not None else None
    return getattr(document, field)


# --- writes of content and title -------------------------------------------------------------


def websocket_flag_refusal(
    sandbox: SandboxSite, document: SandboxDocument, request: Request, flag: object
) -> Response | None:
    """Docs' "not connected => read-only" rule for REST writes (design note §3.4)."""
    if flag or not sandbox.not_connected_read_only:
        return None
    session_key = request.cookies.get("docs_sessionid") or ""
    connected = sandbox.hub.session_has_writer(document.id, session_key)
    if connected is None:  # nobody connected: the first REST editor takes the lock
        holder = sandbox.store.rest_editor_locks.setdefault(document.id, session_key)
        if holder == session_key:
            return None
        return json_error(403, "You are not allowed to edit this document.")
    return None if connected else json_error(403, "You are not allowed to edit this document.")


async def write_body(
    request: Request, sandbox: SandboxSite, document: SandboxDocument
) -> dict[str, Any] | Response:
    """The JSON body of a write, or the refusal: 400/415 for a bad body, 403 by the websocket-flag rule."""
    body = await json_body(request)
    if isinstance(body, Response):
        return body
    refusal = websocket_flag_refusal(sandbox, document, request, body.get("websocket"))
    return body if refusal is None else refusal


def decode_content_or_error(body: dict[str, Any]) -> bytes | Response:
    try:
        return SandboxStore.decode_content(body.get("content"))
    except ValueError as error:
        return JSONResponse({"content": [str(error)]}, status_code=400)
