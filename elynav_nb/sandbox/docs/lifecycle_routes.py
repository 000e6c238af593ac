"""DocsSandbox's write routes of the document tree, and the table of every tree route.

Where it sits: Starlette handlers ``(request, sandbox) -> Response`` that ``server.build_app``
wraps (CSRF, throttle) from ``TREE_ROUTES``. They check the object as Docs does
(``permitted_document``), validate the body like DRF, then change the store through the pure
``tree`` and ``lifecycle`` (La Suite Docs v5.4.1 ``DocumentViewSet``):

* ``POST documents/`` a new last root owned by the caller (401 anonymous), ``POST
  {id}/children/`` a child with no access of its own (ability ``children_create``);
* ``PATCH``/``PUT {id}/`` title and excerpt (``partial_update``/``update``; the "not connected =>
  read-only" rule; v4: the ``content`` field), ``DELETE {id}/`` to the trash (``destroy``);
* ``POST {id}/move/`` (six positions, the target checks, "Cannot move a document to its own
  descendant."), ``{id}/duplicate/``, ``{id}/restore/``, ``POST``/``DELETE {id}/favorite/``.

How data flows: request -> ``permitted_document`` -> ``json_body`` -> ``lifecycle`` checks
-> the store -> ``document_json`` or Docs' short message.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from elynav_nb.sandbox.docs import tree_routes as reads
from elynav_nb.sandbox.docs.abilities import document_json
from elynav_nb.sandbox.docs.api_common import (
    Handler,
    SandboxSite,
    decode_content_or_error,
    denied,
    json_body,
    json_error,
    permitted_document,
    websocket_flag_refusal,
)
from elynav_nb.sandbox.docs.lifecycle import (
    FieldError,
    FieldErrors,
    clean_boolean,
    clean_document_fields,
    clean_move,
    duplicate_document,
    move_document,
)
from elynav_nb.sandbox.docs.store import SandboxDocument, SandboxUser
from elynav_nb.sandbox.docs.tree import InvalidMove, OrphanedParent

__all__ = ["TREE_ROUTES", "Handler"]

API: Final = "/api/v1.0"
_CHILD_POSITIONS: Final = ("first-child", "last-child")


def _created(sandbox: SandboxSite, document: SandboxDocument, user: SandboxUser | None) -> Response:
    """201 with the document as Docs serialises a new instance: no ``is_favorite``."""
    return JSONResponse(document_json(sandbox.store, document, user, favorite=None), status_code=201)


def _server_error() -> Response:
    return PlainTextResponse("Server Error (500)", status_code=500)


async def _new_document_fields(request: Request, sandbox: SandboxSite) -> dict[str, Any] | Response:
    body = await json_body(request)
    if isinstance(body, Response):
        return body
    try:
        fields = clean_document_fields(body, creating=True, store=sandbox.store)
    except FieldErrors as errors:
        return JSONResponse(errors.errors, status_code=400)
    if "websocket" in fields:  # Docs passes it on to the model and fails
        return _server_error()
    return fields


async def create_document(request: Request, sandbox: SandboxSite) -> Response:
    user = sandbox.user_of(request)
    if user is None:
        return denied(user)
    fields = await _new_document_fields(request, sandbox)
    if isinstance(fields, Response):
        return fields
    document = sandbox.store.create_document(
        fields.get("title"), user, document_id=fields.get("id"), excerpt=fields.get("excerpt")
    )
    return _created(sandbox, document, user)


async def create_child(request: Request, sandbox: SandboxSite) -> Response:
    found = permitted_document(sandbox, request, "children_create")
    if isinstance(found, Response):
        return found
    parent, user = found
    fields = await _new_document_fields(request, sandbox)
    if isinstance(fields, Response):
        return fields
    try:
        child = sandbox.store.create_document(
            fields.get("title"),
            user,
            document_id=fields.get("id"),
            excerpt=fields.get("excerpt"),
            parent=parent,
        )
    except OrphanedParent:  # Docs 5.4.1 fails the same way (tree.OrphanedParent)
        return _server_error()
    return _created(sandbox, child, user)


async def update_document(request: Request, sandbox: SandboxSite) -> Response:
    action = "partial_update" if request.method == "PATCH" else "update"
    found = permitted_document(sandbox, request, action)
    if isinstance(found, Response):
        return found
    document, user = found
    body = await json_body(request)
    if isinstance(body, Response):
        return body
    try:
        fields = clean_document_fields(body, creating=False, store=sandbox.store)
    except FieldErrors as errors:
        return JSONResponse(errors.errors, status_code=400)
    v4 = sandbox.api_version < 5
    content = None
    if v4 and "content" in body:  # v5 silently drops a content field here, as Docs does
        decoded = decode_content_or_error(body)
        if isinstance(decoded, Response):
            return decoded
        content = decoded
    refusal = websocket_flag_refusal(sandbox, document, request, body.get("websocket"))
    if refusal is not None:
        return refusal
    for name in ("title", "excerpt"):
        if name in fields:
            setattr(document, name, fields[name])
    if content is not None:
        sandbox.store.save_content(document, content)
    if fields or content is not None:
        document.updated_at = sandbox.store.stamp()
    return JSONResponse(sandbox.store.document_json(document, user, with_content=v4))


async def delete_document(request: Request, sandbox: SandboxSite) -> Response:
    found = permitted_document(sandbox, request, "destroy")
    if isinstance(found, Response):
        return found
    document, _ = found
    sandbox.store.tree.soft_delete(document, sandbox.store.now(), sandbox.store.stamp())
    sandbox.hub.reset(document.id)
    return Response(status_code=204)


async def move(request: Request, sandbox: SandboxSite) -> Response:
    found = permitted_document(sandbox, request, "move")
    if isinstance(found, Response):
        return found
    document, user = found
    body = await json_body(request)
    if isinstance(body, Response):
        return body
    try:
        target_id, position = clean_move(body)
    except FieldErrors as errors:
        return JSONResponse(errors.errors, status_code=400)
    store = sandbox.store
    target = store.get_document(target_id)
    if target is None:
        return JSONResponse({"target_document_id": "Target parent document does not exist."}, status_code=400)
    message = None
    if position in _CHILD_POSITIONS:
        if not store.abilities(target, user)["move"]:
            message = "You do not have permission to move documents as a child to this target document."
    elif target.depth > 1:
        target_parent = store.tree.parent(target)
        if target_parent is None or not store.abilities(target_parent, user)["move"]:
            message = "You do not have permission to move documents as a sibling of this target document."
    if message:
        return JSONResponse({"target_document_id": message}, status_code=400)
    try:
        move_document(store, document, target, position)
    except InvalidMove:
        return JSONResponse(
            {"target_document_id": "Cannot move a document to its own descendant."}, status_code=400
        )
    except OrphanedParent:  # Docs 5.4.1 fails the same way (tree.OrphanedParent)
        return _server_error()
    return JSONResponse({"message": "Document moved successfully."})


async def duplicate(request: Request, sandbox: SandboxSite) -> Response:
    if sandbox.user_of(request) is None:
        return denied(None)
    found = permitted_document(sandbox, request, "duplicate")
    if isinstance(found, Response):
        return found
    document, user = found
    assert user is not None
    body = await json_body(request)
    if isinstance(body, Response):
        return body
    options: dict[str, bool] = {}
    errors: dict[str, list[str]] = {}
    for name in ("with_accesses", "with_descendants"):
        try:
            options[name] = clean_boolean(body[name]) if name in body else False
        except FieldError as error:
            errors[name] = [error.message]
    if errors:
        return JSONResponse(errors, status_code=400)
    copy = duplicate_document(
        sandbox.store,
        document,
        user,
        with_accesses=options["with_accesses"],
        with_descendants=options["with_descendants"],
    )
    return JSONResponse({"id": copy.id}, status_code=201)


async def restore(request: Request, sandbox: SandboxSite) -> Response:
    found = permitted_document(sandbox, request, "restore")
    if isinstance(found, Response):
        return found
    document, _ = found
    try:
        sandbox.store.tree.restore(document)
    except RuntimeError as error:
        return JSONResponse({"detail": str(error)}, status_code=400)
    return JSONResponse({"detail": "Document has been successfully restored."})


async def favorite(request: Request, sandbox: SandboxSite) -> Response:
    found = permitted_document(sandbox, request, "favorite")
    if isinstance(found, Response):
        return found
    document, user = found
    assert user is not None  # the ability needs a signed-in user
    key = (user.id, document.id)
    favorites = sandbox.store.favorites
    if request.method == "POST":
        if key in favorites:
            return JSONResponse({"detail": "Document already marked as favorite"})
        favorites.add(key)
        return JSONResponse({"detail": "Document marked as favorite"}, status_code=201)
    if key in favorites:
        favorites.discard(key)
        return Response(status_code=204)
    return JSONResponse({"detail": "Document was already not marked as favorite"})


def _by_method(handlers: dict[str, Handler]) -> Handler:
    async def dispatch(request: Request, sandbox: SandboxSite) -> Response:
        handler = handlers.get(request.method)
        if handler is None:
            return json_error(405, f'Method "{request.method}" not allowed.')
        return await handler(request, sandbox)

    return dispatch


_DETAIL: Final = f"{API}/documents/{{document_id}}"

# (path, handler, methods); the fixed paths come before ``documents/{document_id}/``.
TREE_ROUTES: Final[list[tuple[str, Handler, list[str]]]] = [
    (
        f"{API}/documents/",
        _by_method({"GET": reads.list_documents, "POST": create_document}),
        ["GET", "POST"],
    ),
    (f"{API}/documents/all/", reads.all_documents, ["GET"]),
    (f"{API}/documents/search/", reads.search_documents, ["GET"]),
    (f"{API}/documents/trashbin/", reads.trashbin, ["GET"]),
    (f"{API}/documents/favorite_list/", reads.favorite_list, ["GET"]),
    (
        f"{_DETAIL}/",
        _by_method(
            {
                "GET": reads.retrieve_document,
                "PATCH": update_document,
                "PUT": update_document,
                "DELETE": delete_document,
            }
        ),
        ["GET", "PATCH", "PUT", "DELETE"],
    ),
    (
        f"{_DETAIL}/children/",
        _by_method({"GET": reads.children_list, "POST": create_child}),
        ["GET", "POST"],
    ),
    (f"{_DETAIL}/descendants/", reads.descendants_v4, ["GET"]),
    (f"{_DETAIL}/tree/", reads.document_tree, ["GET"]),
    (f"{_DETAIL}/move/", move, ["POST"]),
    (f"{_DETAIL}/duplicate/", duplicate, ["POST"]),
    (f"{_DETAIL}/restore/", restore, ["POST"]),
    (f"{_DETAIL}/favorite/", favorite, ["POST", "DELETE"]),
]
