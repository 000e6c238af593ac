"""The Docs sandbox's memory: users and sessions, documents, accesses, abilities, saved content.

Where it sits: the pure state of ``DocsSandbox`` (design note §9.1-§9.3), used by the REST routes and
by the collaboration gate (which asks for abilities exactly as the real y-provider asks Django).
No I/O: everything lives in dictionaries for the life of one sandbox. The records it keeps (users,
documents, versions) are ``records``'s; they are named here too, where the routes import them.

Rules reproduced from Docs v5.4.1 (sandbox simplifications noted):

* a user is found by the ``docs_sessionid`` cookie only; ``mint_session`` stands in for OIDC;
* documents live in one materialised-path tree (``tree``); roles, inherited links and the
  35 abilities follow ``abilities``; trashed documents stay in the tree (``deleted_at``,
  ``ancestors_deleted_at``) and ``get_document`` no longer finds them (``find_document`` does);
* favourites and link traces (the documents a user opened) are kept per user; no teams;
* content is stored **only** by ``save_content`` (the REST ``PATCH .../content/``), as a base64
  Yjs update that must decode with pycrdt;
* the clock is ``now()`` (real time + ``clock_offset``), so tests can age the trash.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
import string
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from pycrdt import Doc

from elynav_nb.sandbox.docs import abilities
from elynav_nb.sandbox.docs.abilities import LINK_REACHES, LINK_ROLES, ROLES
from elynav_nb.sandbox.docs.records import SandboxDocument, SandboxUser, Version, format_datetime
from elynav_nb.sandbox.docs.tree import MaterializedPathTree

__all__ = ["LINK_REACHES", "LINK_ROLES", "ROLES", "SandboxDocument", "SandboxStore", "SandboxUser", "Version"]

_ACCEPTED_ID_VERSIONS: Final = (1, 3, 4, 5)
TRASHBIN_CUTOFF_DAYS: Final = 30


_VERSION_ALPHABET: Final = string.ascii_letters + string.digits + "._"


class SandboxStore:
    """Users, sessions and documents of one sandbox."""

    def __init__(self) -> None:
        self.users: dict[str, SandboxUser] = {}
        self.sessions: dict[str, str] = {}  # docs_sessionid -> user id
        self.documents: dict[str, SandboxDocument] = {}
        self.tree: MaterializedPathTree[SandboxDocument] = MaterializedPathTree()
        self.favorites: set[tuple[str, str]] = set()  # (user id, document id)
        self.link_traces: set[tuple[str, str]] = set()  # (user id, document id): opened by link
        self.rest_editor_locks: dict[str, str] = {}  # document id -> session key (no-websocket rule)
        self.clock_offset = timedelta()
        self.threads: dict[str, list[Any]] = {}  # document id -> discussion_routes.SandboxThread
        self.versions: dict[str, list[Version]] = {}  # document id -> oldest first, the last is the latest

    # --- the clock ---------------------------------------------------------------------------

    def now(self) -> datetime:
        return datetime.now(UTC) + self.clock_offset

    def stamp(self) -> str:
        """``now()`` as Docs renders ``created_at`` / ``updated_at``."""
        return format_datetime(self.now()) or ""

    def trash_cutoff(self) -> datetime:
        """Documents trashed before this are gone for good (``TRASHBIN_CUTOFF_DAYS``)."""
        return self.now() - timedelta(days=TRASHBIN_CUTOFF_DAYS)

    # --- users -------------------------------------------------------------------------------

    def create_user(self, full_name: str, email: str | None = None) -> SandboxUser:
        user_id = str(uuid.uuid4())
        address = email or f"{full_name.lower().replace(' ', '.')}@sandbox.local"
        user = SandboxUser(id=user_id, email=address, full_name=full_name)
        self.users[user_id] = user
        return user

    def mint_session(self, user: SandboxUser) -> str:
        """A new ``docs_sessionid`` for ``user`` (the sandbox's stand-in for an OIDC login)."""
        session_id = secrets.token_hex(16)
        self.sessions[session_id] = user.id
        return session_id

    def user_for_session(self, session_id: str | None) -> SandboxUser | None:
        if not session_id:
            return None
        user_id = self.sessions.get(session_id)
        return self.users.get(user_id) if user_id else None

    # --- documents ---------------------------------------------------------------------------

    def create_document(
        self,
        title: str | None,
        creator: SandboxUser | None,
        *,
        document_id: str | None = None,
        link_reach: str = "restricted",
        link_role: str = "reader",
        parent: SandboxDocument | None = None,
        excerpt: str | None = None,
    ) -> SandboxDocument:
        """A new last root owned by ``creator`` or, under ``parent``, a child with no access of its
        own (as ``POST .../children/`` makes it). ``document_id`` must be an unused UUID v1/v3/v4/v5
        (ValueError otherwise)."""
        new_id = self.checked_new_id(document_id)
        if link_reach not in LINK_REACHES or link_role not in LINK_ROLES:
            raise ValueError("unknown link reach or role")
        stamp = self.stamp()
        document = SandboxDocument(
            id=new_id,
            title=title,
            creator_id=creator.id if creator else None,
            link_reach=link_reach,
            link_role=link_role,
            created_at=stamp,
            updated_at=stamp,
            excerpt=excerpt,
        )
        if parent is None:
            self.tree.add_root(document)
            if creator is not None:
                document.accesses[creator.id] = "owner"
        else:
            self.tree.add_child(parent, document)
        self.documents[new_id] = document
        return document

    def checked_new_id(self, document_id: str | None) -> str:
        """A fresh UUID v4, or ``document_id`` when it is a UUID v1/v3/v4/v5 not yet taken."""
        if document_id is None:
            return str(uuid.uuid4())
        parsed = uuid.UUID(document_id)
        if parsed.version not in _ACCEPTED_ID_VERSIONS:
            raise ValueError("The provided ID is not a valid UUID.")
        if str(parsed) in self.documents:
            raise ValueError("A document with this ID already exists. You cannot override it.")
        return str(parsed)

    def find_document(self, document_id: str) -> SandboxDocument | None:
        """The document, trashed or not (``None`` for an unknown id)."""
        return self.documents.get(document_id.lower())

    def get_document(self, document_id: str) -> SandboxDocument | None:
        """The document when it is not in the trash (itself or under a trashed ancestor)."""
        document = self.documents.get(document_id.lower())
        if document is None or document.ancestors_deleted_at is not None:
            return None
        return document

    def role_of(self, document: SandboxDocument, user: SandboxUser | None) -> str | None:
        """The user's role from accesses on the document and its ancestors (not from links)."""
        return abilities.role_of(self, document, user)

    def abilities(self, document: SandboxDocument, user: SandboxUser | None) -> dict[str, Any]:
        """Docs' ``get_abilities``: inherited roles and links, the trash rules (``abilities``)."""
        return abilities.abilities(self, document, user)

    def is_favorite(self, document: SandboxDocument, user: SandboxUser | None) -> bool:
        return user is not None and (user.id, document.id) in self.favorites

    def document_json(
        self, document: SandboxDocument, user: SandboxUser | None, *, with_content: bool
    ) -> dict[str, Any]:
        """The serializer fields clients read (design note §3.3); ``content`` only in v4 mode."""
        data = abilities.document_json(self, document, user, favorite=self.is_favorite(document, user))
        if with_content:
            data["content"] = base64.b64encode(document.content).decode("ascii") if document.content else None
        return data

    # --- content -----------------------------------------------------------------------------

    @staticmethod
    def decode_content(encoded: object) -> bytes:
        """Base64 Yjs state -> bytes; ValueError when it is not base64 or not a Yjs update."""
        if not isinstance(encoded, str):
            raise ValueError("content must be a base64 string")  # noqa: TRY004 - the route maps ValueError to 400
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("content is not valid base64") from None
        probe: Doc[Any] = Doc()
        try:
            probe.apply_update(raw)
        except ValueError:
            raise ValueError("invalid yjs document") from None
        return raw

    def save_content(self, document: SandboxDocument, raw: bytes) -> None:
        """Store the content; a content that changed is a new version (as versioned storage does)."""
        document.content = raw
        document.updated_at = self.stamp()
        text = base64.b64encode(raw).decode("ascii")
        versions = self.versions.setdefault(document.id, [])
        if not versions or versions[-1].content != text:
            version_id = "".join(secrets.choice(_VERSION_ALPHABET) for _ in range(32))
            etag = '"' + hashlib.md5(text.encode(), usedforsecurity=False).hexdigest() + '"'
            versions.append(Version(version_id, self.now(), text, etag))

    @staticmethod
    def content_etag(document: SandboxDocument) -> str:
        return '"' + hashlib.sha256(document.content or b"").hexdigest()[:32] + '"'
