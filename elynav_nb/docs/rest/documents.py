"""The La Suite Docs REST client (async): documents, abilities, and the saved Yjs content.

Where it sits: the REST layer of ``elynav_nb.docs`` (design note §3, §6.2, §7 steps 2, 3, 8). The
session calls it to check rights, hydrate the document before the WebSocket sync, and save the
full state after each acknowledged write. Every exchange goes through ``http.DocsHttp`` (headers,
throttle, deadline, retries, body limits, typed errors); this module says which endpoints exist.

How data flows::

    config()            GET  /api/v1.0/config/          RELEASE_VERSION -> v5 (/content/) or v4 (field)
    list_documents()    GET  /api/v1.0/documents/?page_size=100
    retrieve(id)        GET  /api/v1.0/documents/{id}/  -> DocumentInfo (title, link_*, abilities)
    create_document()   POST /api/v1.0/documents/       {"title", "id": <uuid v4>} -> 201
    load_content(id)    GET  /documents/{id}/content/   (v5, text/plain base64) | "content" field (v4)
    save_content(id)    PATCH /documents/{id}/content/  {"content": base64, "websocket": true} -> 204
                        (v4: PATCH /documents/{id}/ with the same body)
    signed_in_user()    GET  /api/v1.0/users/me/        who the credentials are

The tree and lifecycle calls (children, move, duplicate, trash...) are ``client.tree``
(``tree_client.DocsTreeClient``), the comment threads ``client.threads`` (``threads``) and the versions ``client.versions``
(``versions``), on the same ``DocsHttp``: one connection, one credential, one
throttle. Answers are JSON read defensively: unreadable or too deeply nested JSON is
``SERVICE_ERROR``, fields of an unexpected type are read as missing.
"""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Final, Self

import httpx

from elynav_nb.docs._limits import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_REQUEST_DEADLINE
from elynav_nb.docs.addressing import is_uuid_v4
from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.oidc import OidcCredentials
from elynav_nb.docs.rest.http import (
    API_PREFIX,
    DocsHttp,
    RequestThrottle,
    read_json,
    read_text,
    send_blocking,
)
from elynav_nb.docs.rest.threads import DocsThreadsClient
from elynav_nb.docs.rest.tree_client import DocsTreeClient
from elynav_nb.docs.rest.versions import DocsVersionsClient
from elynav_nb.errors import DocNotFound, InvalidInput, ServiceError

__all__ = ["DocsRestClient", "DocumentInfo", "checked_document_id", "text_or_none"]

_VERSION_PATTERN: Final = re.compile(r"v?(\d{1,6})(?:\.(\d{1,6}))?")
_USER_FIELDS: Final = ("id", "email", "full_name", "short_name")


def _major_version(config: dict[str, Any]) -> int:
    release = text_or_none(config.get("RELEASE_VERSION")) or ""
    match = _VERSION_PATTERN.match(release)
    return int(match.group(1)) if match else 5


def text_or_none(value: Any) -> str | None:
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
            id=text_or_none(data.get("id")) or "",
            title=text_or_none(data.get("title")) or "",
            link_reach=text_or_none(data.get("computed_link_reach")) or text_or_none(data.get("link_reach")),
            link_role=text_or_none(data.get("computed_link_role")) or text_or_none(data.get("link_role")),
            abilities=dict(abilities) if isinstance(abilities, dict) else {},
            created_at=text_or_none(data.get("created_at")),
            updated_at=text_or_none(data.get("updated_at")),
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


def checked_document_id(document_id: str) -> str:
    if not isinstance(document_id, str) or not is_uuid_v4(document_id):
        raise InvalidInput(
            "the document id must be a UUID v4", details={"document_id": str(document_id)[:64]}
        )
    return document_id.lower()


class DocsRestClient:
    """Async REST client for one Docs instance; ``async with DocsRestClient(origin, credentials)``.

    ``timeout`` (15 s) bounds each network read; ``deadline`` (30 s, ``_limits``) bounds each whole
    call, retries included (``DEADLINE_EXCEEDED``); ``max_response_bytes`` (32 MiB) bounds each
    body (``RESPONSE_TOO_LARGE``). The exchanges themselves are ``self.http`` (``http.DocsHttp``).
    """

    def __init__(
        self,
        instance: str,
        credentials: DocsCredentials | OidcCredentials | None = None,
        *,
        timeout: float = 15.0,
        deadline: float = DEFAULT_REQUEST_DEADLINE,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_retries: int = 2,
        retry_backoff: float = 0.5,
        throttle: RequestThrottle | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        chosen: DocsCredentials | OidcCredentials = (
            credentials if credentials is not None else DocsCredentials.anonymous()
        )
        self.http = DocsHttp(
            instance,
            chosen,
            timeout=timeout,
            deadline=deadline,
            max_response_bytes=max_response_bytes,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            throttle=throttle,
            transport=transport,
        )
        self.credentials = chosen
        self._config: dict[str, Any] | None = None
        self.tree = DocsTreeClient(self)
        """The document tree and lifecycle calls (``tree_client.DocsTreeClient``) on this client."""
        self.threads = DocsThreadsClient(self)
        """The comment threads of documents (``threads.DocsThreadsClient``)."""
        self.versions = DocsVersionsClient(self)
        """The versions of documents (``versions.DocsVersionsClient``)."""

    @property
    def instance(self) -> str:
        return self.http.instance

    @property
    def throttle(self) -> RequestThrottle:
        return self.http.throttle

    @property
    def deadline(self) -> float:
        return self.http.deadline

    @property
    def max_response_bytes(self) -> int:
        return self.http.max_response_bytes

    def __repr__(self) -> str:
        return f"<DocsRestClient instance={self.instance!r} {'anonymous' if self.credentials.is_anonymous else 'signed in'}>"

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a Docs REST client holds credentials and cannot be pickled")

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    # --- endpoints -----------------------------------------------------------------------------

    async def config(self) -> dict[str, Any]:
        """``GET /api/v1.0/config/`` (cached): the release and the collaboration URL."""
        if self._config is None:
            try:
                response = await self.http.request(
                    "GET", f"{API_PREFIX}/config/", "read the instance configuration", throttled=False
                )
            except DocNotFound:
                raise ServiceError(
                    "this host has no /api/v1.0/config/: it is not a La Suite Docs instance"
                ) from None
            data = read_json(response, "the configuration request")
            if not isinstance(data, dict):
                raise ServiceError("this host's /api/v1.0/config/ is not a Docs configuration")
            self._config = data
        return self._config

    async def major_version(self) -> int:
        """The Docs major version from ``RELEASE_VERSION`` (5 when it cannot be read)."""
        return _major_version(await self.config())

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
        path = f"{self.http.api_prefix}/documents/"
        for page_number in range(1, max_pages + 1):
            response = await self.http.request("GET", path, "list documents", params=params)
            data = read_json(response, "the document list")
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
        checked = checked_document_id(document_id)
        response = await self.http.request(
            "GET", f"{self.http.api_prefix}/documents/{checked}/", "read this document"
        )
        data = read_json(response, "the document request")
        if not isinstance(data, dict):
            raise ServiceError("Docs answered the document request with something that is not a document")
        return DocumentInfo.from_json(data)

    async def create_document(self, title: str, *, document_id: str | None = None) -> DocumentInfo:
        """Create a document with a UUID v4 id (the only ids the collaboration server accepts)."""
        if not isinstance(title, str) or not title.strip():
            raise InvalidInput("the document title is empty")
        new_id = checked_document_id(document_id) if document_id else str(uuid.uuid4())
        response = await self.http.request(
            "POST",
            f"{self.http.api_prefix}/documents/",
            "create a document",
            json_body={"title": title, "id": new_id},
        )
        data = read_json(response, "the create request")
        return DocumentInfo.from_json(data if isinstance(data, dict) else {"id": new_id, "title": title})

    async def load_content(self, document_id: str) -> bytes:
        """The saved Yjs state (an update), ``b""`` when the document was never saved."""
        checked = checked_document_id(document_id)
        if await self.content_endpoint():
            response = await self.http.request(
                "GET",
                f"{self.http.api_prefix}/documents/{checked}/content/",
                "load the document content",
                accept="text/plain,application/json",
            )
            encoded = read_text(response).strip()
            if encoded.startswith('"') and encoded.endswith('"'):
                encoded = encoded[1:-1]
        else:
            response = await self.http.request(
                "GET", f"{self.http.api_prefix}/documents/{checked}/", "load the document content"
            )
            data = read_json(response, "the document request")
            encoded = (text_or_none(data.get("content")) or "") if isinstance(data, dict) else ""
        if not encoded:
            return b""
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ServiceError("Docs returned document content that is not base64") from None

    async def save_content(self, document_id: str, state: bytes, *, websocket: bool = True) -> None:
        """Save the full Yjs state. ``websocket=True``: we are connected to the room as this session."""
        await self.config()
        path, body = self._save_call(document_id, state, websocket)
        await self.http.request("PATCH", path, "save the document content", json_body=body)

    def save_content_blocking(self, document_id: str, state: bytes, *, timeout: float = 10.0) -> None:
        """``save_content`` without an event loop, for the saves made at interpreter exit (the
        configuration must have been read once, as opening a session does)."""
        path, body = self._save_call(document_id, state, True)
        send_blocking(self.http, "PATCH", path, "save the document content", json_body=body, timeout=timeout)

    def _save_call(self, document_id: str, state: bytes, websocket: bool) -> tuple[str, dict[str, Any]]:
        if self._config is None:
            raise ServiceError("the instance configuration was never read: cannot tell where to save")
        checked = checked_document_id(document_id)
        body = {"content": base64.b64encode(state).decode("ascii"), "websocket": websocket}
        if _major_version(self._config) >= 5:
            return f"{self.http.api_prefix}/documents/{checked}/content/", body
        return f"{self.http.api_prefix}/documents/{checked}/", body

    async def signed_in_user(self) -> dict[str, Any]:
        """Who Docs says these credentials are (``id``, ``email``, ``full_name``, ``short_name``);
        ``AUTH_REQUIRED`` / ``NOT_ALLOWED`` when Docs refuses them."""
        data = await self.http.json("GET", f"{self.http.api_prefix}/users/me/", "check these credentials")
        if not isinstance(data, dict):
            return {}
        return {key: data[key] for key in _USER_FIELDS if key in data}
