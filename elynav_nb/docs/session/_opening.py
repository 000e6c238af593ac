"""How a ``DocsSession`` opens: whom and where (the link, the credentials), then the document over REST.

Where it sits: internal to ``docs/session/``, under ``DocsSession.open``. It holds the steps of
design note §7 that come before the WebSocket: which instance and credentials a link means, the
rights check, and the saved content applied to the session's fresh ``pycrdt.Doc``. The session then
connects (``live.connection``), all of it within one ``Deadline`` (``_limits``).

How data flows::

    link_or_id, credentials, instance=, rest= -> target(): OIDC refused (no cookie for the room),
        credentials from the environment when none, the link parsed and the instance settled,
        a REST client for that instance (ours, or the caller's when it is for the same instance)
    load_document(rest, address, credentials, ydoc, opening) -> REST retrieve (rights; anonymous:
        public and editable by link only) -> REST content -> applied under REMOTE_ORIGIN -> info
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pycrdt import Doc

from elynav_nb.docs._limits import Deadline
from elynav_nb.docs.addressing import DocAddress, parse_docs_url
from elynav_nb.docs.credentials import DocsCredentials, check_anonymous_access
from elynav_nb.docs.live.connection import REMOTE_ORIGIN
from elynav_nb.docs.oidc import OidcCredentials
from elynav_nb.docs.rest.documents import DocsRestClient, DocumentInfo
from elynav_nb.errors import InvalidInput, NotAllowed, ServiceError

__all__ = ["Target", "load_document", "target"]


@dataclass(frozen=True)
class Target:
    """The document a session opens, the credentials it opens it with, and its REST client."""

    address: DocAddress
    credentials: DocsCredentials
    rest: DocsRestClient
    owns_rest: bool
    """True when the session made the client (it closes it)."""


def target(
    link_or_id: str,
    credentials: DocsCredentials | OidcCredentials | None,
    *,
    instance: str | None,
    rest: DocsRestClient | None,
) -> Target:
    if isinstance(credentials, OidcCredentials):
        raise NotAllowed(
            "a live session needs a Docs session cookie: Docs' collaboration server takes no "
            "token; OIDC credentials reach the resource-server API (use DocsRestClient)"
        )
    chosen = credentials if credentials is not None else DocsCredentials.from_env()
    address = parse_docs_url(link_or_id, instance=instance or chosen.instance)
    chosen.settle(address.origin)
    client = rest if rest is not None else DocsRestClient(address.origin, chosen)
    if client.instance != address.origin:
        raise InvalidInput("the REST client given is for another instance than the link")
    return Target(address, chosen, client, owns_rest=rest is None)


async def load_document(
    rest: DocsRestClient, address: DocAddress, credentials: DocsCredentials, ydoc: Doc[Any], opening: Deadline
) -> DocumentInfo:
    """The document's rights checked and its saved content in ``ydoc``; ``opening.step`` says which
    step runs (for ``DEADLINE_EXCEEDED``)."""
    opening.step = "read the document and its rights over REST"
    info = await rest.retrieve(address.document_id)
    if credentials.is_anonymous:
        check_anonymous_access(info.raw)
    elif not info.can_read:
        raise NotAllowed("these credentials cannot read this document")
    opening.step = "load the saved content over REST"
    saved_state = await rest.load_content(address.document_id)
    if saved_state:
        try:
            with ydoc.transaction(origin=REMOTE_ORIGIN):
                ydoc.apply_update(saved_state)
        except Exception:  # pycrdt says ValueError; whatever it says, the state is not usable
            raise ServiceError("the saved content of this document is not a valid Yjs state") from None
    return info
