"""The Docs document tree and a document's lifecycle over REST (async): ``client.tree``.

Where it sits: the HTTP calls of the tree, on a ``DocsRestClient``'s ``http.DocsHttp`` (its
connection, credentials, retries and 80-per-minute throttle); answers become the typed records of
``tree`` (pure).
Endpoints are La Suite Docs 5.4.1's (design note ``docs-tree-api.md``)::

    list_documents()   GET  documents/?page_size=...           your highest documents
    all_documents()    GET  documents/all/                      ... and everything under them
    search(q)          GET  documents/search/?q=                titles, each with its top parent
    retrieve(d)        GET  documents/{id}/
    children(d)        GET  documents/{id}/children/            by path
    descendants(d)     GET  documents/search/?q=&document={id}  (v4: {id}/descendants/)
    tree(d) ancestors  GET  documents/{id}/tree/                from the highest readable ancestor
    workspace_tree()   GET  documents/all/ (else list + descendants of each)
    create(t, parent)  POST documents/ | documents/{parent}/children/   {"title", "id": uuid4}
    update_title(d,t)  PATCH documents/{id}/                    {"title", "websocket": true}
    move(d, target)    POST documents/{id}/move/                {"target_document_id", "position"}
    duplicate(d)       POST documents/{id}/duplicate/           {"with_accesses", "with_descendants"}
    delete / restore   DELETE documents/{id}/ | POST documents/{id}/restore/
    trash()            GET  documents/trashbin/
    add_favorite ...   POST/DELETE documents/{id}/favorite/, GET documents/favorite_list/

A document is named by its id, its link (``https://host/docs/<id>/``; another host is
``INSTANCE_MISMATCH`` before anything is sent) or a ``DocumentNode``. Given a node, the abilities
Docs served with it are checked first: ``NOT_ALLOWED`` with no request. Refusals are typed:
``NOT_ALLOWED`` (403, or a move target you may not move into), ``AUTH_REQUIRED`` (401),
``DOC_NOT_FOUND`` (404, or a move target that does not exist), ``DUPLICATE`` (an id taken),
``INVALID_INPUT`` (a move into the document's own subtree, bad fields), ``RATE_LIMITED`` (429).

Listings follow pages (``page``, up to 200 a page) until ``next`` is null, a page is empty, or
``limit`` is reached; ``requests`` on each answer says how many requests it took. A server that
keeps announcing pages is stopped after ``MAX_LISTING_PAGES`` (500, i.e. 100,000 documents at 200 a
page) with ``SERVICE_ERROR``. Each request has the REST client's deadline and body limit.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Final

import httpx

from elynav_nb.docs.addressing import parse_docs_url
from elynav_nb.docs.rest.http import VersionedApi, read_json
from elynav_nb.docs.rest.tree import (
    MOVE_POSITIONS,
    DocumentChange,
    DocumentList,
    DocumentNode,
    DocumentTree,
    nodes_from_nested,
    require_ability,
)
from elynav_nb.errors import (
    AuthRequired,
    DocNotFound,
    Duplicate,
    ElynavError,
    InstanceMismatch,
    InvalidInput,
    NotAllowed,
    ServiceError,
    redact_secrets,
)

__all__ = ["DocsTreeClient", "DocumentRef"]

DocumentRef = str | DocumentNode
MAX_PAGE_SIZE: Final = 200
MAX_LISTING_PAGES: Final = 500
TITLE_MAX_LENGTH: Final = 255
_CHILD_POSITIONS: Final = ("first-child", "last-child")
_MOVE_INTO_DESCENDANT: Final = "Cannot move a document to its own descendant."
_MOVE_TARGET_MISSING: Final = "Target parent document does not exist."


def _server_message(response: httpx.Response) -> tuple[str, Any]:
    """A short, secret-free text of a 4xx answer, and its JSON (``None`` when not JSON, or nested
    too deeply to read)."""
    try:
        data = response.json()
        shown = json.dumps(data, ensure_ascii=False)[:300]
    except (ValueError, RecursionError):  # not JSON (nor, maybe, text in its announced charset)
        return redact_secrets(response.content[:200].decode("utf-8", errors="replace")), None
    return redact_secrets(shown), data


def _message_field(data: Any, key: str) -> str | None:
    """The server's ``message``/``detail`` text of an answer (``None`` when absent or not text)."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _refusal(response: httpx.Response, what: str) -> ElynavError | None:
    """Docs' 400 answers that mean something more precise than "invalid input"."""
    message, data = _server_message(response)
    details = {"status": response.status_code, "server_message": message}
    if response.status_code != 400 or not isinstance(data, dict):
        return None
    target = data.get("target_document_id")
    if target == _MOVE_TARGET_MISSING:
        return DocNotFound(
            f"the target document does not exist (or is in the trash): cannot {what}", details=details
        )
    if isinstance(target, str) and target.startswith("You do not have permission"):
        return NotAllowed(f"Docs does not allow moving documents there: cannot {what}", details=details)
    if target == _MOVE_INTO_DESCENDANT:
        details["reason"] = "MOVE_INTO_OWN_DESCENDANT"
        return InvalidInput(
            f"a document cannot go into itself or its own descendant: cannot {what}", details=details
        )
    identifier = data.get("id")
    if isinstance(identifier, list) and any(
        isinstance(item, str) and "already exists" in item for item in identifier
    ):
        return Duplicate("a document with this id already exists", details=details)
    return InvalidInput(f"Docs refused the request to {what} (HTTP 400)", details=details)


def _checked_title(title: str | None) -> str | None:
    if title is None:
        return None
    if not isinstance(title, str):
        raise InvalidInput("the document title must be a string")
    text = title.strip()
    if len(text) > TITLE_MAX_LENGTH:
        raise InvalidInput(
            f"the document title is longer than Docs' {TITLE_MAX_LENGTH} characters",
            details={"length": len(text)},
        )
    return text


def _checked_limit(limit: int | None) -> int | None:
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise InvalidInput("limit must be a positive integer (or None for everything)")
    return limit


class DocsTreeClient:
    """Tree and lifecycle calls on one ``DocsRestClient`` (use ``rest.tree``)."""

    def __init__(self, rest: VersionedApi) -> None:
        self.rest = rest
        self.requests_sent = 0

    @property
    def _documents(self) -> str:
        return f"{self.rest.http.api_prefix}/documents"

    def __repr__(self) -> str:
        return f"<DocsTreeClient instance={self.rest.http.instance!r} requests_sent={self.requests_sent}>"

    # --- plumbing ------------------------------------------------------------------------------

    def _resolve(self, reference: DocumentRef) -> tuple[str, DocumentNode | None]:
        """``(document id, node or None)``; another instance is refused before anything is sent."""
        if isinstance(reference, DocumentNode):
            if reference.instance is not None and reference.instance != self.rest.http.instance:
                raise InstanceMismatch(
                    f"this document belongs to {reference.instance}, not to {self.rest.http.instance}",
                    details={
                        "document_origin": reference.instance,
                        "instance_origin": self.rest.http.instance,
                    },
                )
            return parse_docs_url(reference.id, instance=self.rest.http.instance).document_id, reference
        if not isinstance(reference, str):
            raise InvalidInput("a document is named by its id, its link or a DocumentNode")
        return parse_docs_url(reference, instance=self.rest.http.instance).document_id, None

    def _require_signed_in(self, what: str) -> None:
        if self.rest.http.credentials.is_anonymous:
            raise AuthRequired(f"Docs needs a signed-in session to {what}")

    async def _send(
        self, method: str, path: str, what: str, *, body: Any = None, params: dict[str, Any] | None = None
    ) -> httpx.Response:
        self.requests_sent += 1
        return await self.rest.http.request(
            method,
            path,
            what,
            json_body=body,
            params=params,
            refusal=lambda response: _refusal(response, what),
        )

    async def _json(
        self, method: str, path: str, what: str, *, body: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        response = await self._send(method, path, what, body=body, params=params)
        return read_json(response, f"the request to {what}")

    def _node(self, data: Any, what: str) -> DocumentNode:
        if not isinstance(data, dict):
            raise ServiceError(f"Docs answered the request to {what} with something that is not a document")
        return DocumentNode.from_json(data, instance=self.rest.http.instance)

    async def _collect(
        self,
        path: str,
        what: str,
        params: dict[str, Any],
        *,
        limit: int | None = None,
        page: int | None = None,
        page_size: int = MAX_PAGE_SIZE,
    ) -> DocumentList:
        """Every page (or only ``page``) of a Docs listing, up to ``limit`` documents."""
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise InvalidInput(f"page_size must be between 1 and {MAX_PAGE_SIZE}")
        limit = _checked_limit(limit)
        nodes: list[DocumentNode] = []
        count: int | None = None
        requests = 0
        number = page or 1
        while True:
            data = await self._json(
                "GET", path, what, params={**params, "page_size": page_size, "page": number}
            )
            requests += 1
            if not isinstance(data, dict) or not isinstance(data.get("results"), list):
                raise ServiceError(f"Docs answered the request to {what} with something that is not a page")
            count = data.get("count") if isinstance(data.get("count"), int) else count
            results = data["results"]
            for item in results:
                if isinstance(item, dict):
                    nodes.append(DocumentNode.from_json(item, instance=self.rest.http.instance))
            if page is not None or not data.get("next") or not results:
                break
            if limit is not None and len(nodes) >= limit:
                break
            if requests >= MAX_LISTING_PAGES:
                raise ServiceError(
                    f"Docs kept announcing more pages to {what} after {MAX_LISTING_PAGES} pages",
                    details={"pages": requests},
                )
            number += 1
        return DocumentList(tuple(nodes[:limit] if limit is not None else nodes), count, requests)

    # --- reading -------------------------------------------------------------------------------

    async def list_documents(
        self,
        *,
        title: str | None = None,
        created_by_me: bool | None = None,
        favorites: bool | None = None,
        ordering: str | None = None,
        limit: int | None = None,
        page: int | None = None,
        page_size: int = MAX_PAGE_SIZE,
    ) -> DocumentList:
        """Your documents at the top of what is shared with you (``GET documents/``), newest first
        unless ``ordering`` (``title``, ``-created_at``...). Every page unless ``page`` or ``limit``."""
        params: dict[str, Any] = {}
        if title:
            params["title"] = title
        if created_by_me is not None:
            params["is_creator_me"] = "true" if created_by_me else "false"
        if favorites is not None:
            params["is_favorite"] = "true" if favorites else "false"
        if ordering:
            params["ordering"] = ordering
        return await self._collect(
            f"{self._documents}/", "list documents", params, limit=limit, page=page, page_size=page_size
        )

    async def all_documents(
        self, *, title: str | None = None, limit: int | None = None, page_size: int = MAX_PAGE_SIZE
    ) -> DocumentList:
        """Your documents and everything under them (``GET documents/all/``), oldest first."""
        params: dict[str, Any] = {"ordering": "created_at"}  # stable across pages
        if title:
            params["title"] = title
        return await self._collect(
            f"{self._documents}/all/", "list all documents", params, limit=limit, page_size=page_size
        )

    async def search(self, query: str, *, limit: int | None = None) -> DocumentList:
        """Documents whose title contains ``query`` (accents and case ignored), anywhere in your
        tree; each node's ``parent_id`` is its top parent (``None`` for a top document)."""
        if not isinstance(query, str):
            raise InvalidInput("the search query must be a string")
        return await self._collect(
            f"{self._documents}/search/", "search documents", {"q": query}, limit=limit
        )

    async def retrieve(self, document: DocumentRef) -> DocumentNode:
        """One document, with your abilities on it (Docs records that you opened it)."""
        document_id, _ = self._resolve(document)
        what = "read this document"
        return self._node(await self._json("GET", f"{self._documents}/{document_id}/", what), what)

    async def children(
        self, document: DocumentRef, *, title: str | None = None, limit: int | None = None
    ) -> DocumentList:
        """The document's children (not in the trash), in tree order."""
        document_id, node = self._resolve(document)
        if node is not None:
            require_ability(node, "children_list", "list this document's children")
        params = {"title": title} if title else {}
        return await self._collect(
            f"{self._documents}/{document_id}/children/", "list the children", params, limit=limit
        )

    async def descendants(
        self, document: DocumentRef, *, max_depth: int | None = None, include_self: bool = True
    ) -> DocumentTree:
        """The document's subtree (not in the trash) down to ``max_depth`` levels below it.

        One level: ``children/`` (plus the document); deeper: Docs 5's ``search/?document=``
        (every descendant, by path, 200 a page), or ``descendants/`` on Docs 4. Unlike
        ``retrieve``, this leaves no link trace (Docs lists what you opened among your documents).
        """
        if max_depth is not None and (not isinstance(max_depth, int) or max_depth < 0):
            raise InvalidInput("max_depth must be a non-negative integer (or None for every level)")
        document_id, node = self._resolve(document)
        if node is not None:
            require_ability(node, "search", "list this document's descendants")
        requests_before = self.requests_sent
        modern = await self.rest.major_version() >= 5
        below_path = f"{self._documents}/{document_id}/descendants/"
        subtree = {"q": "", "document": document_id}
        if max_depth is not None and max_depth <= 1:
            if modern:  # the subtree's first item is the document itself (by path), with no link trace
                nodes = list(
                    await self._collect(
                        f"{self._documents}/search/", "read this document", subtree, page=1, page_size=1
                    )
                )
            else:
                nodes = [await self.retrieve(document_id)]
            if max_depth == 1:
                nodes.extend(await self.children(document_id))
        elif modern:
            nodes = list(await self._collect(f"{self._documents}/search/", "list the descendants", subtree))
        else:
            nodes = [
                await self.retrieve(document_id),
                *await self._collect(below_path, "list the descendants", {}),
            ]
        tree = DocumentTree.from_nodes(nodes)
        if max_depth is not None:
            tree = tree.pruned(max_depth)
        if not include_self:
            kept = tuple(kept_node for kept_node in tree.nodes if kept_node.id != document_id)
            tree = DocumentTree.from_nodes(kept)
        return DocumentTree(tree.nodes, tree.parent_of, self.requests_sent - requests_before)

    async def tree(self, document: DocumentRef) -> DocumentTree:
        """Docs' ``tree/`` view: from the highest ancestor you can read down to the document, each
        level with its children (what the side panel shows)."""
        document_id, node = self._resolve(document)
        if node is not None:
            require_ability(node, "tree", "read this document's tree")
        data = await self._json("GET", f"{self._documents}/{document_id}/tree/", "read the document tree")
        return DocumentTree.from_nodes(nodes_from_nested(data, instance=self.rest.http.instance), requests=1)

    async def ancestors(self, document: DocumentRef, *, include_self: bool = False) -> DocumentList:
        """The path to the document: its ancestors you can see, from the highest, by ``tree/``."""
        document_id, _ = self._resolve(document)
        around = await self.tree(document)
        by_id = {tree_node.id: tree_node for tree_node in around}
        if document_id not in by_id:
            raise ServiceError("Docs' tree answer does not contain the document asked for")
        chain = [by_id[document_id]]
        while (parent_id := around.parent_of.get(chain[-1].id)) is not None:
            chain.append(by_id[parent_id])
        chain.reverse()
        if not include_self:
            chain.pop()
        return DocumentList(tuple(chain), len(chain), requests=1)

    async def workspace_tree(self, *, max_depth: int | None = None) -> DocumentTree:
        """Everything you can reach, placed under its parents: ``documents/all/`` (200 a page), or,
        where Docs turned that endpoint off, your top documents and the descendants of each."""
        if max_depth is not None and (not isinstance(max_depth, int) or max_depth < 0):
            raise InvalidInput("max_depth must be a non-negative integer (or None for every level)")
        requests_before = self.requests_sent
        try:
            nodes = list(await self.all_documents())
        except DocNotFound:
            nodes = []
            for top in await self.list_documents():
                nodes.extend(await self.descendants(top.id))
        tree = DocumentTree.from_nodes(nodes)
        if max_depth is not None:
            tree = tree.pruned(max_depth)
        return DocumentTree(tree.nodes, tree.parent_of, self.requests_sent - requests_before)

    async def trash(self, *, limit: int | None = None) -> DocumentList:
        """Documents you own that are in the trash (restorable for 30 days), last deleted first."""
        if self.rest.http.credentials.is_anonymous:
            return DocumentList((), 0)  # Docs answers anonymous callers an empty page
        return await self._collect(f"{self._documents}/trashbin/", "list the trash", {}, limit=limit)

    async def favorites(self, *, limit: int | None = None) -> DocumentList:
        """Your favourite documents, most recently updated first."""
        self._require_signed_in("list favourites")
        return await self._collect(f"{self._documents}/favorite_list/", "list favourites", {}, limit=limit)

    # --- writing -------------------------------------------------------------------------------

    async def create(
        self, title: str | None, *, parent: DocumentRef | None = None, document_id: str | None = None
    ) -> DocumentNode:
        """A new document at the top of your workspace, or as the last child of ``parent``.

        Its id is a UUID v4 (the only room names the collaboration server accepts). A child has
        no access of its own: it inherits its parent's.
        """
        self._require_signed_in("create a document")
        clean_title = _checked_title(title)
        new_id = (
            parse_docs_url(document_id, instance=self.rest.http.instance).document_id if document_id else None
        )
        body: dict[str, Any] = {"title": clean_title, "id": new_id or str(uuid.uuid4())}
        if parent is None:
            path, what = f"{self._documents}/", "create a document"
        else:
            parent_id, parent_node = self._resolve(parent)
            if parent_node is not None:
                require_ability(parent_node, "children_create", "create a sub-document here")
            path, what = f"{self._documents}/{parent_id}/children/", "create a sub-document"
        return self._node(await self._json("POST", path, what, body=body), what)

    async def update_title(self, document: DocumentRef, title: str) -> DocumentNode:
        """Rename the document (trimmed, at most 255 characters).

        Sent with ``websocket: true``: the title is not part of the collaborative content, so
        Docs' "not connected => read-only" guard (meant for content saves) must neither refuse
        the rename while someone has the document open nor lock other REST editors out.
        """
        clean_title = _checked_title(title)
        document_id, node = self._resolve(document)
        if node is not None:
            require_ability(node, "partial_update", "rename this document")
        what = "rename this document"
        data = await self._json(
            "PATCH", f"{self._documents}/{document_id}/", what, body={"title": clean_title, "websocket": True}
        )
        return self._node(data, what)

    async def move(
        self, document: DocumentRef, target: DocumentRef, position: str = "last-child"
    ) -> DocumentChange:
        """Move the document (and its subtree) relative to ``target``: ``first-child``,
        ``last-child`` (default), ``first-sibling``, ``last-sibling``, ``left`` or ``right``.

        Docs then drops the document's own accesses when its scope changes (it was a top
        document, becomes one, or changes tree): it inherits from its new place.
        """
        if position not in MOVE_POSITIONS:
            raise InvalidInput(
                f"position must be one of {', '.join(MOVE_POSITIONS)}",
                details={"position": str(position)[:40]},
            )
        document_id, node = self._resolve(document)
        target_id, target_node = self._resolve(target)
        if node is not None:
            require_ability(node, "move", "move this document")
        as_child = position in _CHILD_POSITIONS
        if target_node is not None and as_child:
            require_ability(target_node, "move", "move documents under this target")
        into_itself = as_child and target_id == document_id
        if into_itself or (
            node is not None and target_node is not None and target_node.is_descendant_of(node)
        ):
            raise InvalidInput(
                "a document cannot go into itself or its own descendant",
                details={"reason": "MOVE_INTO_OWN_DESCENDANT", "document_id": document_id},
            )
        data = await self._json(
            "POST",
            f"{self._documents}/{document_id}/move/",
            "move this document",
            body={"target_document_id": target_id, "position": position},
        )
        message = _message_field(data, "message")
        return DocumentChange(
            "moved", document_id, message=message, target_document_id=target_id, position=position
        )

    async def duplicate(
        self, document: DocumentRef, *, with_descendants: bool = False, with_accesses: bool = False
    ) -> DocumentChange:
        """Copy the document (``"Copy of <title>"``, same content), with its subtree and its
        accesses and link settings if asked; ``new_document_id`` names the copy."""
        self._require_signed_in("duplicate a document")
        document_id, node = self._resolve(document)
        if node is not None:
            require_ability(node, "duplicate", "duplicate this document")
        data = await self._json(
            "POST",
            f"{self._documents}/{document_id}/duplicate/",
            "duplicate this document",
            body={"with_descendants": bool(with_descendants), "with_accesses": bool(with_accesses)},
        )
        new_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(new_id, str):
            raise ServiceError("Docs answered the duplicate request without the new document's id")
        return DocumentChange("duplicated", document_id, new_document_id=new_id)

    async def delete(self, document: DocumentRef) -> DocumentChange:
        """Put the document and its subtree in the trash (restorable by an owner for 30 days)."""
        document_id, node = self._resolve(document)
        if node is not None:
            require_ability(node, "destroy", "delete this document")
        await self._send("DELETE", f"{self._documents}/{document_id}/", "delete this document")
        return DocumentChange("deleted", document_id)

    async def restore(self, document: DocumentRef) -> DocumentChange:
        """Take a document out of the trash (owners only; it stays hidden while an ancestor is
        itself in the trash, and comes back with it)."""
        document_id, node = self._resolve(document)
        # Docs grants `restore` to owners of a trashed document only, so a node read before it went to
        # the trash says false: such a node is checked for the owner role alone, Docs answers the rest.
        if node is not None and node.deleted_at is not None:
            require_ability(node, "restore", "restore this document")
        elif node is not None and node.abilities and node.user_role != "owner":
            raise NotAllowed(
                "only an owner may restore a document from the trash",
                details={"document_id": node.id, "user_role": node.user_role},
            )
        data = await self._json("POST", f"{self._documents}/{document_id}/restore/", "restore this document")
        return DocumentChange("restored", document_id, message=_message_field(data, "detail"))

    async def add_favorite(self, document: DocumentRef) -> DocumentChange:
        """Mark as favourite (``changed`` is false when it already was)."""
        return await self._favorite(document, "POST")

    async def remove_favorite(self, document: DocumentRef) -> DocumentChange:
        """Unmark as favourite (``changed`` is false when it was not)."""
        return await self._favorite(document, "DELETE")

    async def _favorite(self, document: DocumentRef, method: str) -> DocumentChange:
        self._require_signed_in("change favourites")
        document_id, node = self._resolve(document)
        if node is not None:
            require_ability(node, "favorite", "change this favourite")
        response = await self._send(
            method, f"{self._documents}/{document_id}/favorite/", "change this favourite"
        )
        message = None
        if response.content:
            message = _message_field(read_json(response, "the favourite request"), "detail")
        action = "favorited" if method == "POST" else "unfavorited"
        return DocumentChange(
            action, document_id, message=message, changed=response.status_code in (201, 204)
        )
