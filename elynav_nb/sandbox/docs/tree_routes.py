"""DocsSandbox's read routes of the document tree: lists, search, children, tree, trash, favourites.

Where it sits: Starlette handlers ``(request, sandbox) -> Response`` wired by ``server``
through ``lifecycle_routes.TREE_ROUTES``; they read ``SandboxStore`` and answer as
La Suite Docs v5.4.1's ``DocumentViewSet`` does (``core/api/viewsets.py``):

* ``GET documents/``: the highest documents among those with a direct access or a link trace on
  a non-restricted document (``filter_root_paths``), not trashed; ``title``, ``q``,
  ``is_creator_me``, ``is_favorite``, ``ordering`` (default ``-updated_at``); anonymous: empty;
* ``GET documents/all/``: the same documents and everything under them;
* ``GET documents/search/?q=``: titles under the user's highest documents, each with its top
  ``parent``; ``&document=<id>``: the document and its descendants by path (replaces the
  ``descendants/`` route Docs removed in 5.0, served here only with ``api_version=4``);
* ``GET documents/{id}/``, ``.../children/`` (by path), ``.../tree/`` (from the highest ancestor
  readable per se down to the document, each level with its children);
* ``GET documents/trashbin/`` (owners, within 30 days, ``-deleted_at``) and ``favorite_list/``.

How data flows: request -> ``permitted_document`` or the visible set -> filters -> ordering ->
``paginate`` -> ``abilities.document_json`` per document.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from elynav_nb.sandbox.docs.abilities import LinkDefinition, document_json, title_matches
from elynav_nb.sandbox.docs.api_common import (
    SandboxSite,
    denied,
    json_error,
    ordered,
    paginate,
    permitted_document,
)
from elynav_nb.sandbox.docs.store import SandboxDocument, SandboxStore, SandboxUser
from elynav_nb.sandbox.docs.tree import STEP_LENGTH, filter_root_paths, parent_path

__all__ = [
    "all_documents",
    "children_list",
    "descendants_v4",
    "document_tree",
    "favorite_list",
    "list_documents",
    "retrieve_document",
    "search_documents",
    "trashbin",
]

LIST_ORDERING_FIELDS: Final = ("created_at", "updated_at", "title")
DEFAULT_ORDERING: Final = ("-updated_at",)
_TRUE: Final = frozenset({"true", "1", "yes", "on"})
_FALSE: Final = frozenset({"false", "0", "no", "off"})


def _renderer(
    store: SandboxStore, user: SandboxUser | None, *, annotated: bool = True
) -> Callable[[SandboxDocument], dict[str, Any]]:
    def render(document: SandboxDocument) -> dict[str, Any]:
        favorite = store.is_favorite(document, user) if annotated else None
        return document_json(store, document, user, favorite=favorite)

    return render


def _boolean(value: str | None) -> bool | None:
    lowered = (value or "").strip().lower()
    return True if lowered in _TRUE else False if lowered in _FALSE else None


def _readable_documents(store: SandboxStore, user: SandboxUser | None) -> list[SandboxDocument]:
    """Docs' list queryset: direct access, or traced and not restricted; never trashed."""
    if user is None:
        return []
    return [
        document
        for document in store.documents.values()
        if document.ancestors_deleted_at is None
        and (
            user.id in document.accesses
            or ((user.id, document.id) in store.link_traces and document.link_reach != "restricted")
        )
    ]


def _title_filtered(request: Request, documents: Iterable[SandboxDocument]) -> list[SandboxDocument]:
    title = request.query_params.get("title", "")
    query = request.query_params.get("q", "")
    return [
        document
        for document in documents
        if title_matches(document.title, title) and title_matches(document.title, query)
    ]


def _list_filtered(
    request: Request, store: SandboxStore, user: SandboxUser | None, documents: Iterable[SandboxDocument]
) -> list[SandboxDocument]:
    kept = _title_filtered(request, documents)
    creator_is_me = _boolean(request.query_params.get("is_creator_me"))
    if creator_is_me is not None and user is not None:
        kept = [document for document in kept if (document.creator_id == user.id) == creator_is_me]
    return kept


def _favorite_filtered(
    request: Request, store: SandboxStore, user: SandboxUser | None, documents: list[SandboxDocument]
) -> list[SandboxDocument]:
    wanted = _boolean(request.query_params.get("is_favorite"))
    if wanted is None or user is None:
        return documents
    return [document for document in documents if store.is_favorite(document, user) == wanted]


def _highest_paths(documents: Iterable[SandboxDocument]) -> list[str]:
    return filter_root_paths(sorted(document.path for document in documents))


def _under_any(path: str, prefixes: set[str]) -> str | None:
    """The prefix among ``prefixes`` that ``path`` starts with (they are disjoint), if any."""
    for depth in range(1, len(path) // STEP_LENGTH + 1):
        candidate = path[: depth * STEP_LENGTH]
        if candidate in prefixes:
            return candidate
    return None


async def list_documents(request: Request, sandbox: SandboxSite) -> Response:
    store, user = sandbox.store, sandbox.user_of(request)
    candidates = _list_filtered(request, store, user, _readable_documents(store, user))
    highest = set(_highest_paths(candidates))
    documents = [document for document in candidates if document.path in highest]
    documents = _favorite_filtered(request, store, user, documents)
    documents = ordered(request, documents, LIST_ORDERING_FIELDS, DEFAULT_ORDERING)
    return paginate(request, documents, _renderer(store, user))


async def all_documents(request: Request, sandbox: SandboxSite) -> Response:
    store, user = sandbox.store, sandbox.user_of(request)
    accessible = {document.path for document in _readable_documents(store, user)}
    if not accessible:
        return paginate(request, [], _renderer(store, user))
    under = [
        document
        for document in store.documents.values()
        if document.ancestors_deleted_at is None and _under_any(document.path, accessible) is not None
    ]
    documents = _favorite_filtered(request, store, user, _list_filtered(request, store, user, under))
    documents = ordered(request, documents, LIST_ORDERING_FIELDS, DEFAULT_ORDERING)
    return paginate(request, documents, _renderer(store, user))


async def search_documents(request: Request, sandbox: SandboxSite) -> Response:
    store, user = sandbox.store, sandbox.user_of(request)
    if "q" not in request.query_params:
        return JSONResponse({"q": ["This field is required."]}, status_code=400)
    wanted_document = request.query_params.get("document")
    if wanted_document:
        try:
            parent_id = str(uuid.UUID(wanted_document))
        except ValueError:
            return JSONResponse({"document": ["Must be a valid UUID."]}, status_code=400)
        return _search_descendants(request, sandbox, parent_id)
    top_paths = set(_highest_paths(_readable_documents(store, user)))
    found = [
        document
        for document in store.documents.values()
        if document.ancestors_deleted_at is None and _under_any(document.path, top_paths) is not None
    ]
    found = ordered(request, _title_filtered(request, found), LIST_ORDERING_FIELDS, DEFAULT_ORDERING)
    render = _renderer(store, user)

    def render_with_parent(document: SandboxDocument) -> dict[str, Any]:
        data = render(document)
        top = _under_any(document.path, top_paths)
        data["parent"] = render(store.tree.by_path[top]) if top and top != document.path else None
        return data

    return paginate(request, found, render_with_parent)


def _search_descendants(request: Request, sandbox: SandboxSite, parent_id: str) -> Response:
    store, user = sandbox.store, sandbox.user_of(request)
    parent = store.find_document(parent_id)
    if parent is None:
        return json_error(404, "Document not found.")
    if not store.abilities(parent, user)["search"]:
        # raised as PermissionDenied by the view itself: 403 even for anonymous callers
        return json_error(403, "You do not have permission to search within this document.")
    found = [
        document
        for document in store.tree.descendants(parent, include_self=True)
        if document.ancestors_deleted_at is None
    ]
    render = _renderer(store, user)
    parent_json = render(parent)

    def render_with_parent(document: SandboxDocument) -> dict[str, Any]:
        data = render(document)
        data["parent"] = None if document is parent else parent_json
        return data

    return paginate(request, _title_filtered(request, found), render_with_parent)


async def descendants_v4(request: Request, sandbox: SandboxSite) -> Response:
    """Docs 4.x's ``GET documents/{id}/descendants/`` (gone in 5.0: 404 there)."""
    if sandbox.api_version >= 5:
        return json_error(404, "Not found.")
    found = permitted_document(sandbox, request, "descendants")
    if isinstance(found, Response):
        return found
    document, user = found
    below = [d for d in sandbox.store.tree.descendants(document) if d.ancestors_deleted_at is None]
    return paginate(request, _title_filtered(request, below), _renderer(sandbox.store, user))


async def retrieve_document(request: Request, sandbox: SandboxSite) -> Response:
    found = permitted_document(sandbox, request, "retrieve")
    if isinstance(found, Response):
        return found
    document, user = found
    if user is not None:
        sandbox.store.link_traces.add((user.id, document.id))
    return JSONResponse(sandbox.store.document_json(document, user, with_content=sandbox.api_version < 5))


async def children_list(request: Request, sandbox: SandboxSite) -> Response:
    found = permitted_document(sandbox, request, "children_list")
    if isinstance(found, Response):
        return found
    document, user = found
    children = [c for c in sandbox.store.tree.children(document) if c.ancestors_deleted_at is None]
    return paginate(request, _title_filtered(request, children), _renderer(sandbox.store, user))


def _readable_per_se(document: SandboxDocument, user: SandboxUser | None) -> bool:
    if user is None:
        return document.link_reach == "public"
    return user.id in document.accesses or document.link_reach != "restricted"


async def document_tree(request: Request, sandbox: SandboxSite) -> Response:
    store, user = sandbox.store, sandbox.user_of(request)
    try:
        document_id = str(uuid.UUID(request.path_params["document_id"]))
    except ValueError:
        # Docs' exception handler passes Django's un-interpolated message on (``exc.message``)
        return JSONResponse(["“%(value)s” is not a valid UUID."], status_code=400)
    current = store.find_document(document_id)
    if current is None:
        return json_error(404, "Not found.")
    if current.ancestors_deleted_at is not None:
        if store.role_of(current, user) != "owner":
            return denied(user)
        chain = [current]
        highest = current
    else:
        chain = [*store.tree.ancestors(current), current]
        readable = [ancestor for ancestor in chain if _readable_per_se(ancestor, user)]
        if not readable:
            return denied(user)
        highest = readable[0]
    links_by_path: dict[str, list[LinkDefinition]] = {}
    links: list[LinkDefinition] = []
    shown: dict[str, SandboxDocument] = {}
    for ancestor in chain:
        links.append((ancestor.link_reach, ancestor.link_role))
        links_by_path[ancestor.path] = list(links)
        if ancestor.depth < highest.depth:
            continue
        shown[ancestor.path] = ancestor
        for child in store.tree.descendants(ancestor):
            if child.depth == ancestor.depth + 1 and child.deleted_at is None:
                shown[child.path] = child
    nodes: dict[str, dict[str, Any]] = {}
    top: dict[str, Any] | None = None
    for path in sorted(shown):
        document = shown[path]
        data = document_json(
            store,
            document,
            user,
            favorite=store.is_favorite(document, user),
            links=links_by_path.get(parent_path(path), []),
        )
        data["children"] = []
        nodes[path] = data
        if parent_path(path) in nodes:
            nodes[parent_path(path)]["children"].append(data)
        elif top is None:
            top = data
    return JSONResponse(top)


async def trashbin(request: Request, sandbox: SandboxSite) -> Response:
    store, user = sandbox.store, sandbox.user_of(request)
    render = _renderer(store, user, annotated=False)
    if user is None:
        return paginate(request, [], render)
    owned = {
        document.path for document in store.documents.values() if document.accesses.get(user.id) == "owner"
    }
    cutoff = store.trash_cutoff()
    trashed = [
        document
        for document in store.documents.values()
        if document.deleted_at is not None
        and document.deleted_at >= cutoff
        and _under_any(document.path, owned) is not None
    ]
    return paginate(request, ordered(request, trashed, ("deleted_at",), ("-deleted_at",)), render)


async def favorite_list(request: Request, sandbox: SandboxSite) -> Response:
    store, user = sandbox.store, sandbox.user_of(request)
    if user is None:
        return denied(user)
    top_paths = set(_highest_paths(_readable_documents(store, user)))
    favorites = [
        document
        for document in store.documents.values()
        if document.ancestors_deleted_at is None
        and store.is_favorite(document, user)
        and _under_any(document.path, top_paths) is not None
    ]
    favorites.sort(key=lambda document: document.updated_at, reverse=True)
    return paginate(request, favorites, _renderer(store, user))
