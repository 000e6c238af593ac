"""The state behind the Docs MCP tools: credentials in memory, the instance, REST and live sessions.

Where it sits: under ``server.py``'s tools. It owns one ``DocsCredentials`` (from the environment,
or set by ``set_session_credentials``), one ``DocsRestClient`` for the settled instance (whose
``tree`` runs the lifecycle calls) and a ``DocsSessionPool`` of live documents.

How data flows: a tool names a document by ``doc_id`` or ``doc_url`` -> ``address`` parses it
against the settled instance (a link to another host is ``INSTANCE_MISMATCH`` before anything is
sent; a bare id before any instance is known is ``INSTANCE_NOT_SET``) -> ``settle`` fixes the
instance on the first link -> ``rest()`` / ``tree()`` / ``session()``.

Credentials stay in this process's memory: ``set_credentials`` checks them against Docs
(``GET users/me/``) with a client of its own, and only then replaces the current ones, closing
every session and client opened with the old cookie (a WebSocket sends its cookie once, at the
handshake). Refused credentials leave the server anonymous, as the reference does. Nothing here
returns, logs or puts in an error a session id or a CSRF token.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from elynav_nb.docs.addressing import DocAddress, normalize_instance_origin, parse_docs_url
from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.rest.documents import DocsRestClient, DocumentInfo
from elynav_nb.docs.rest.tree_client import DocsTreeClient
from elynav_nb.docs.session import DocsSession, SaveResult
from elynav_nb.docs.session.pool import DocsSessionPool
from elynav_nb.errors import AuthRequired, DocNotPublic, ElynavError, InvalidInput, NotAllowed

__all__ = ["DocsToolService"]


class DocsToolService:
    """What the tools share: the credentials, one REST client for the instance, the session pool."""

    def __init__(
        self,
        credentials: DocsCredentials,
        *,
        idle_ttl: float = 300.0,
        save_wait: float = 15.0,
        **session_options: Any,
    ) -> None:
        self._credentials = credentials
        self._idle_ttl = idle_ttl
        self._save_wait = save_wait
        self._session_options = {"save_debounce": 0.2, **session_options}
        self.pool = self._new_pool()
        self._rest: DocsRestClient | None = None

    def __repr__(self) -> str:
        return f"<DocsToolService {self._credentials!r} open_documents={len(self.pool)}>"

    def _new_pool(self) -> DocsSessionPool:
        return DocsSessionPool(self._credentials, idle_ttl=self._idle_ttl, **self._session_options)

    @property
    def credentials(self) -> DocsCredentials:
        return self._credentials

    @property
    def instance(self) -> str | None:
        return self._credentials.instance

    # --- naming documents ----------------------------------------------------------------------

    def address(self, doc_id: str | None, doc_url: str | None, *, what: str = "doc") -> DocAddress:
        """The document named by exactly one of an id and a link (``what``: the argument prefix)."""
        if bool(doc_id) == bool(doc_url):
            raise InvalidInput(f"give exactly one of {what}_id or {what}_url")
        return parse_docs_url(str(doc_url or doc_id), instance=self.instance)

    def settle(self, address: DocAddress) -> str:
        """Fix the instance on the first link (``INSTANCE_MISMATCH`` for another one); the document id."""
        self._credentials.settle(address.origin)
        return address.document_id

    def document_id(self, doc_id: str | None, doc_url: str | None, *, what: str = "doc") -> str:
        return self.settle(self.address(doc_id, doc_url, what=what))

    # --- clients -------------------------------------------------------------------------------

    def rest(self) -> DocsRestClient:
        instance = self.instance
        if instance is None:
            raise InvalidInput(
                "no Docs instance is set: set DOCS_INSTANCE_URL, pass a doc_url, or give "
                "set_session_credentials an instance_url",
                details={"reason": "INSTANCE_NOT_SET"},
            )
        if self._rest is None:
            self._rest = DocsRestClient(instance, self._credentials)
        return self._rest

    def tree(self) -> DocsTreeClient:
        return self.rest().tree

    def require_signed_in(self, what: str) -> None:
        if self._credentials.is_anonymous:
            raise AuthRequired(
                f"Docs needs a signed-in session to {what}: call set_session_credentials first"
            )

    async def session(self, doc_id: str | None, doc_url: str | None) -> DocsSession:
        address = self.address(doc_id, doc_url)
        self.settle(address)
        with self.anonymous_means_not_public():
            return await self.pool.get(address.link)

    async def retrieve(self, doc_id: str | None, doc_url: str | None) -> DocumentInfo:
        document_id = self.document_id(doc_id, doc_url)
        with self.anonymous_means_not_public():
            return await self.rest().retrieve(document_id)

    @contextmanager
    def anonymous_means_not_public(self) -> Iterator[None]:
        """Docs' 401 to an anonymous reader is the reference's ``DOC_NOT_PUBLIC``."""
        try:
            yield
        except AuthRequired as error:
            if not self._credentials.is_anonymous:
                raise
            raise DocNotPublic(
                "this document is not public: call set_session_credentials to open it",
                details=error.details,
            ) from None

    async def persisted(self, session: DocsSession, payload: dict[str, Any]) -> dict[str, Any]:
        """Save a write that is done (acknowledged live) and say whether it is durable.

        The write happened whatever the save does, so a refused save never becomes the tool's
        error (an agent retrying a write it thinks failed would write it twice): ``saved`` is
        False (only then present) and ``warning`` says why and that the session keeps retrying (and saves at close
        and at exit). Docs' ``Retry-After`` is waited for up to ``save_wait`` seconds.
        """
        try:
            result: SaveResult = await session.saved(timeout=self._save_wait)
        except ElynavError as error:
            payload["saved"] = False
            payload["warning"] = (
                f"done in the live document, but Docs has not saved it yet ({error.details.get('cause', error.code)}): "
                "it is saved in the background, at the latest when the server stops; do not repeat the call"
            )
            return payload
        if not result.saved:  # saved: the reference's own answer, unchanged
            payload["saved"] = False
            payload["warning"] = result.reason
        return payload

    # --- credentials ---------------------------------------------------------------------------

    async def set_credentials(
        self, session_id: str, csrf_token: str, instance_url: str | None
    ) -> dict[str, Any]:
        """Check the session against Docs, then use it for every later call (memory only)."""
        instance = normalize_instance_origin(instance_url) if instance_url else self.instance
        candidate = DocsCredentials(session_id, csrf_token, instance=instance)
        if candidate.is_anonymous:
            raise InvalidInput("docs_sessionid is empty")
        if instance is None:  # checked against Docs on the first doc_url, as every later call is
            await self._replace_credentials(candidate)
            return {"ok": True, "instance": None, "verified": False}
        try:
            user = await _signed_in_user(candidate, instance)
        except (AuthRequired, NotAllowed):
            await self._replace_credentials(DocsCredentials.anonymous(instance))
            raise AuthRequired(
                "Docs does not recognise this session (GET users/me/ refused it): the server is "
                "now anonymous; copy docs_sessionid and csrftoken again from a signed-in browser",
                details={"instance": instance},
            ) from None
        await self._replace_credentials(candidate)
        return {"ok": True, "instance": instance, "verified": True, "user": user}

    async def clear_credentials(self) -> dict[str, Any]:
        """Forget the session; the instance stays settled."""
        await self._replace_credentials(DocsCredentials.anonymous(self.instance))
        return {"ok": True, "instance": self.instance}

    async def _replace_credentials(self, credentials: DocsCredentials) -> None:
        old_pool, old_rest = self.pool, self._rest
        self._credentials = credentials
        self.pool = self._new_pool()
        self._rest = None
        await old_pool.close_all()
        if old_rest is not None:
            await old_rest.aclose()

    async def aclose(self) -> None:
        await self.pool.close_all()
        if self._rest is not None:
            await self._rest.aclose()
            self._rest = None


async def _signed_in_user(credentials: DocsCredentials, instance: str) -> dict[str, Any]:
    """Who Docs says these credentials are (``AUTH_REQUIRED`` / ``NOT_ALLOWED`` when refused)."""
    async with DocsRestClient(instance, credentials) as client:
        return await client.signed_in_user()
