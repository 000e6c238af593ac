"""DocsSandbox's comment threads and versions, as La Suite Docs 5.4.1 serves them.

Where it sits: Starlette handlers ``(request, sandbox) -> Response`` that ``server.build_app``
wraps (CSRF, throttle) from ``DISCUSSION_ROUTES``; their state lives on the store
(``store.threads``, ``document.versions``). Facts (``core/api/viewsets.py`` ``ThreadViewSet``,
``CommentViewSet``, ``DocumentViewSet.versions_list`` / ``versions_detail``; ``core/models.py``
``Thread``, ``Comment``, ``Reaction``, ``Document.get_versions_slice``; ``core/api/permissions.py``
``CommentPermission``; ``docs/docs-comments-versions.md`` in this repository says more):

* threads are listed newest first, unpaginated; a thread's comments oldest first, each with its
  author ``{full_name, short_name}``, ``body`` (the comment editor's BlockNote JSON, stored as given),
  ``reactions`` and ``abilities``. Creating or listing needs the document's ``comment`` ability
  (401 anonymous, 403 otherwise); resolving, unresolving and deleting a thread need to be its
  creator or an owner/administrator of the document; a comment's reactions need ``comment`` and a
  signed-in user (at most 15 distinct emojis per comment, one per user and emoji).
* a version is an object version of the saved content: every save that changes the content makes
  one. The list (``versions_list``: a role on the document, not only a link; anonymous 403
  "Authentication required.") leaves out the latest, newest first, with
  ``{next_version_id_marker, is_truncated, versions: [{etag, is_latest, last_modified,
  version_id}], count}``; ``versions/<id>/`` gives ``{content, last_modified, id}`` (the base64 Yjs
  state) and 404 for an id that is not one of this document's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from elynav_nb.sandbox.docs.api_common import (
    SandboxSite,
    denied,
    json_body,
    json_error,
    paginate,
    permitted_document,
)
from elynav_nb.sandbox.docs.records import format_datetime
from elynav_nb.sandbox.docs.store import SandboxDocument, SandboxStore, SandboxUser, Version

__all__ = ["DISCUSSION_ROUTES", "SandboxComment", "SandboxThread"]

API: Final = "/api/v1.0"
REACTIONS_MAX_PER_COMMENT: Final = 15
VERSIONS_PAGE_SIZE: Final = 50


@dataclass
class SandboxComment:
    id: str
    user_id: str | None
    body: Any
    created_at: str
    updated_at: str
    reactions: dict[str, list[str]] = field(default_factory=dict)  # emoji -> user ids, in order


@dataclass
class SandboxThread:
    id: str
    document_id: str
    creator_id: str | None
    created_at: str
    updated_at: str
    comments: list[SandboxComment] = field(default_factory=list)
    resolved: bool = False
    resolved_at: str | None = None
    resolved_by: str | None = None


def _user_light(store: SandboxStore, user_id: str | None) -> dict[str, str] | None:
    user = store.users.get(user_id) if user_id else None
    if user is None:
        return None
    return {"full_name": user.full_name, "short_name": user.full_name.split(" ")[0]}


def _moderator(store: SandboxStore, document: SandboxDocument, user: SandboxUser | None) -> bool:
    return store.role_of(document, user) in ("owner", "administrator")


def _comment_json(
    store: SandboxStore, document: SandboxDocument, comment: SandboxComment, user: SandboxUser | None
) -> dict[str, Any]:
    can_comment = bool(store.abilities(document, user).get("comment"))
    is_author = user is not None and comment.user_id == user.id
    return {
        "id": comment.id,
        "user": _user_light(store, comment.user_id),
        "body": comment.body,
        "created_at": comment.created_at,
        "updated_at": comment.updated_at,
        "reactions": [
            {
                "id": str(uuid.uuid5(uuid.NAMESPACE_OID, comment.id + emoji)),
                "emoji": emoji,
                "created_at": comment.created_at,
                "users": [_user_light(store, user_id) for user_id in users],
            }
            for emoji, users in comment.reactions.items()
        ],
        "abilities": {
            "destroy": is_author or _moderator(store, document, user),
            "update": is_author,
            "partial_update": is_author,
            "reactions": can_comment and user is not None,
            "retrieve": can_comment,
        },
    }


def _thread_json(
    store: SandboxStore, document: SandboxDocument, thread: SandboxThread, user: SandboxUser | None
) -> dict[str, Any]:
    write = (user is not None and thread.creator_id == user.id) or _moderator(store, document, user)
    return {
        "id": thread.id,
        "created_at": thread.created_at,
        "updated_at": thread.updated_at,
        "creator": _user_light(store, thread.creator_id),
        "abilities": {
            "destroy": write,
            "update": write,
            "partial_update": write,
            "resolve": write,
            "unresolve": write,
            "retrieve": bool(store.abilities(document, user).get("comment")),
        },
        "comments": [_comment_json(store, document, comment, user) for comment in thread.comments],
        "resolved": thread.resolved,
        "resolved_at": thread.resolved_at,
        "resolved_by": thread.resolved_by,
        "metadata": {},
    }


def _commentable(
    sandbox: SandboxSite, request: Request
) -> tuple[SandboxDocument, SandboxUser | None] | Response:
    """``CommentPermission``: the document (404 "Document not found.") and its ``comment`` ability."""
    user = sandbox.user_of(request)
    try:
        document = sandbox.store.get_document(str(uuid.UUID(request.path_params["document_id"])))
    except ValueError:
        document = None
    if document is None:
        return json_error(404, "Document not found.")
    if not sandbox.store.abilities(document, user).get("comment"):
        return denied(user)
    return document, user


def _thread(sandbox: SandboxSite, document: SandboxDocument, request: Request) -> SandboxThread | Response:
    thread_id = request.path_params.get("thread_id", "")
    for thread in sandbox.store.threads.get(document.id, []):
        if isinstance(thread, SandboxThread) and thread.id == thread_id:
            return thread
    return json_error(404, "No Thread matches the given query.")


def _body_or_error(body: dict[str, Any] | Response) -> Any:
    if isinstance(body, Response):
        return body
    if "body" not in body:
        return JSONResponse({"body": ["This field is required."]}, status_code=400)
    return body["body"]


async def threads(request: Request, sandbox: SandboxSite) -> Response:
    found = _commentable(sandbox, request)
    if isinstance(found, Response):
        return found
    document, user = found
    store = sandbox.store
    if request.method == "GET":
        listed = sorted(store.threads.get(document.id, []), key=lambda item: item.created_at, reverse=True)
        return JSONResponse([_thread_json(store, document, thread, user) for thread in listed])
    body = _body_or_error(await json_body(request))
    if isinstance(body, Response):
        return body
    stamp = store.stamp()
    thread = SandboxThread(str(uuid.uuid4()), document.id, user.id if user else None, stamp, stamp)
    thread.comments.append(SandboxComment(str(uuid.uuid4()), user.id if user else None, body, stamp, stamp))
    store.threads.setdefault(document.id, []).append(thread)
    return JSONResponse(_thread_json(store, document, thread, user), status_code=201)


async def thread_detail(request: Request, sandbox: SandboxSite) -> Response:
    found = _commentable(sandbox, request) if request.method == "GET" else _document_only(sandbox, request)
    if isinstance(found, Response):
        return found
    document, user = found
    thread = _thread(sandbox, document, request)
    if isinstance(thread, Response):
        return thread
    store = sandbox.store
    if request.method == "GET":
        return JSONResponse(_thread_json(store, document, thread, user))
    if not _thread_json(store, document, thread, user)["abilities"]["destroy"]:
        return denied(user)
    store.threads[document.id].remove(thread)
    return Response(status_code=204)


def _document_only(
    sandbox: SandboxSite, request: Request
) -> tuple[SandboxDocument, SandboxUser | None] | Response:
    user = sandbox.user_of(request)
    document = sandbox.store.get_document(request.path_params["document_id"])
    if document is None:
        return json_error(404, "Document not found.")
    return document, user


def _resolution(resolved: bool) -> Any:
    async def handler(request: Request, sandbox: SandboxSite) -> Response:
        found = _document_only(sandbox, request)
        if isinstance(found, Response):
            return found
        document, user = found
        thread = _thread(sandbox, document, request)
        if isinstance(thread, Response):
            return thread
        store = sandbox.store
        if not _thread_json(store, document, thread, user)["abilities"]["resolve"]:
            return denied(user)
        if thread.resolved != resolved:
            thread.resolved = resolved
            thread.resolved_at = store.stamp() if resolved else None
            thread.resolved_by = user.id if resolved and user else None
        return Response(status_code=204)

    return handler


async def comments(request: Request, sandbox: SandboxSite) -> Response:
    found = _commentable(sandbox, request)
    if isinstance(found, Response):
        return found
    document, user = found
    thread = _thread(sandbox, document, request)
    if isinstance(thread, Response):
        return thread
    store = sandbox.store
    if request.method == "GET":
        return paginate(request, thread.comments, lambda item: _comment_json(store, document, item, user))
    body = _body_or_error(await json_body(request))
    if isinstance(body, Response):
        return body
    stamp = store.stamp()
    comment = SandboxComment(str(uuid.uuid4()), user.id if user else None, body, stamp, stamp)
    thread.comments.append(comment)
    thread.updated_at = stamp
    return JSONResponse(_comment_json(store, document, comment, user), status_code=201)


async def reactions(request: Request, sandbox: SandboxSite) -> Response:
    found = _document_only(sandbox, request)
    if isinstance(found, Response):
        return found
    document, user = found
    thread = _thread(sandbox, document, request)
    if isinstance(thread, Response):
        return thread
    comment = next((item for item in thread.comments if item.id == request.path_params["comment_id"]), None)
    if comment is None:
        return json_error(404, "No Comment matches the given query.")
    store = sandbox.store
    if user is None or not _comment_json(store, document, comment, user)["abilities"]["reactions"]:
        return denied(user)
    body = await json_body(request)
    if isinstance(body, Response):
        return body
    emoji = body.get("emoji")
    if not isinstance(emoji, str) or emoji.isascii() or not 1 <= len(emoji) <= 8:
        return JSONResponse({"emoji": ["Reaction must be a single valid emoji."]}, status_code=400)
    if request.method == "POST":
        if emoji not in comment.reactions and len(comment.reactions) >= REACTIONS_MAX_PER_COMMENT:
            message = f"A comment can have a maximum of {REACTIONS_MAX_PER_COMMENT} distinct reactions."
            return JSONResponse({"emoji": [message]}, status_code=400)
        users = comment.reactions.setdefault(emoji, [])
        if user.id in users:
            return JSONResponse({"user_already_reacted": True}, status_code=400)
        users.append(user.id)
        return Response(status_code=201)
    users = comment.reactions.get(emoji, [])
    if user.id not in users:
        return json_error(404, "Reaction not found.")
    users.remove(user.id)
    if not users:
        del comment.reactions[emoji]
    return Response(status_code=204)


def _version_json(version: Version, *, latest: bool) -> dict[str, Any]:
    return {
        "etag": version.etag,
        "is_latest": latest,
        "last_modified": format_datetime(version.last_modified.replace(microsecond=0)),
        "version_id": version.version_id,
    }


async def versions(request: Request, sandbox: SandboxSite) -> Response:
    if sandbox.user_of(request) is None:
        return json_error(403, "Authentication required.")
    found = permitted_document(sandbox, request, "versions_list")
    if isinstance(found, Response):
        return found
    document, _user = found
    try:
        page_size = int(request.query_params.get("page_size", "20"))
    except ValueError:
        return JSONResponse({"page_size": ["A valid integer is required."]}, status_code=400)
    if not 1 <= page_size <= 50:
        return JSONResponse({"page_size": ["Ensure this value is between 1 and 50."]}, status_code=400)
    older = list(reversed(sandbox.store.versions.get(document.id, [])[:-1]))  # newest first, latest out
    marker = request.query_params.get("version_id", "")
    if marker:
        ids = [version.version_id for version in older]
        older = older[ids.index(marker) + 1 :] if marker in ids else []
    size = min(page_size, VERSIONS_PAGE_SIZE)
    results = older[:size]
    truncated = len(older) > size
    return JSONResponse(
        {
            "next_version_id_marker": results[-1].version_id if truncated else "",
            "is_truncated": truncated,
            "versions": [_version_json(version, latest=False) for version in results],
            "count": len(results),
        }
    )


async def version_detail(request: Request, sandbox: SandboxSite) -> Response:
    found = permitted_document(sandbox, request, "versions_retrieve")
    if isinstance(found, Response):
        return found
    document, _user = found
    version_id = request.path_params["version_id"]
    for version in sandbox.store.versions.get(document.id, []):
        if version.version_id == version_id:
            return JSONResponse(
                {
                    "content": version.content,
                    "last_modified": format_datetime(version.last_modified.replace(microsecond=0)),
                    "id": version_id,
                }
            )
    return json_error(404, "Not found.")


_THREAD: Final = f"{API}/documents/{{document_id}}/threads/{{thread_id}}"

DISCUSSION_ROUTES: Final[list[tuple[str, Any, list[str]]]] = [
    (f"{API}/documents/{{document_id}}/threads/", threads, ["GET", "POST"]),
    (f"{_THREAD}/", thread_detail, ["GET", "DELETE"]),
    (f"{_THREAD}/resolve/", _resolution(True), ["POST"]),
    (f"{_THREAD}/unresolve/", _resolution(False), ["POST"]),
    (f"{_THREAD}/comments/", comments, ["GET", "POST"]),
    (f"{_THREAD}/comments/{{comment_id}}/reactions/", reactions, ["POST", "DELETE"]),
    (f"{API}/documents/{{document_id}}/versions/", versions, ["GET"]),
    (f"{API}/documents/{{document_id}}/versions/{{version_id}}/", version_detail, ["GET"]),
]
