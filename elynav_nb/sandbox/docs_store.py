"""The Docs sandbox's memory: users and sessions, documents, accesses, abilities, saved content.

Where it sits: the pure state of ``DocsSandbox`` (design note §9.1-§9.3), used by the REST routes and
by the collaboration gate (which asks for abilities exactly as the real y-provider asks Django).
No I/O: everything lives in dictionaries for the life of one sandbox.

Rules reproduced from Docs v5.4.1 (sandbox simplifications noted):

* a user is found by the ``docs_sessionid`` cookie only; ``mint_session`` stands in for OIDC;
* the effective role is the best of the user's direct access and the link role when the link
  reaches them (``public``: everyone; ``authenticated``: any session; ``restricted``: nobody);
* ``abilities.update`` (and ``content_patch``, ``partial_update``) for editor and above;
* content is stored **only** by ``save_content`` (the REST ``PATCH .../content/``), as a base64
  Yjs update that must decode with pycrdt.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from pycrdt import Doc

__all__ = ["ROLES", "SandboxDocument", "SandboxStore", "SandboxUser"]

ROLES: Final = ("reader", "commenter", "editor", "administrator", "owner")
LINK_REACHES: Final = ("restricted", "authenticated", "public")
LINK_ROLES: Final = ("reader", "commenter", "editor")
_ACCEPTED_ID_VERSIONS: Final = (1, 3, 4, 5)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _role_rank(role: str | None) -> int:
    return ROLES.index(role) + 1 if role in ROLES else 0


@dataclass
class SandboxUser:
    id: str
    email: str
    full_name: str

    def as_json(self) -> dict[str, Any]:
        short_name = self.full_name.split(" ")[0] if self.full_name else ""
        return {
            "id": self.id,
            "email": self.email,
            "full_name": self.full_name,
            "short_name": short_name,
            "language": "fr-fr",
        }


@dataclass
class SandboxDocument:
    id: str
    title: str
    creator_id: str | None
    link_reach: str = "restricted"
    link_role: str = "reader"
    accesses: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    deleted_at: str | None = None


class SandboxStore:
    """Users, sessions and documents of one sandbox."""

    def __init__(self) -> None:
        self.users: dict[str, SandboxUser] = {}
        self.sessions: dict[str, str] = {}  # docs_sessionid -> user id
        self.documents: dict[str, SandboxDocument] = {}
        self.rest_editor_locks: dict[str, str] = {}  # document id -> session key (no-websocket rule)

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
        title: str,
        creator: SandboxUser | None,
        *,
        document_id: str | None = None,
        link_reach: str = "restricted",
        link_role: str = "reader",
    ) -> SandboxDocument:
        """Create a document; ``document_id`` must be an unused UUID v1/v3/v4/v5 (ValueError otherwise)."""
        if document_id is None:
            new_id = str(uuid.uuid4())
        else:
            parsed = uuid.UUID(document_id)
            if parsed.version not in _ACCEPTED_ID_VERSIONS:
                raise ValueError("the id must be a UUID of version 1, 3, 4 or 5")
            new_id = str(parsed)
        if new_id in self.documents:
            raise ValueError("a document with this id already exists")
        if link_reach not in LINK_REACHES or link_role not in LINK_ROLES:
            raise ValueError("unknown link reach or role")
        document = SandboxDocument(
            id=new_id,
            title=title,
            creator_id=creator.id if creator else None,
            link_reach=link_reach,
            link_role=link_role,
        )
        if creator is not None:
            document.accesses[creator.id] = "owner"
        self.documents[new_id] = document
        return document

    def get_document(self, document_id: str) -> SandboxDocument | None:
        document = self.documents.get(document_id.lower())
        if document is None or document.deleted_at is not None:
            return None
        return document

    def role_of(self, document: SandboxDocument, user: SandboxUser | None) -> str | None:
        best: str | None = None
        if user is not None:
            best = document.accesses.get(user.id)
        link_applies = document.link_reach == "public" or (
            document.link_reach == "authenticated" and user is not None
        )
        if link_applies and _role_rank(document.link_role) > _role_rank(best):
            best = document.link_role
        return best

    def abilities(self, document: SandboxDocument, user: SandboxUser | None) -> dict[str, bool]:
        role = self.role_of(document, user)
        can_read = role is not None
        can_edit = _role_rank(role) >= _role_rank("editor")
        is_admin = _role_rank(role) >= _role_rank("administrator")
        return {
            "retrieve": can_read,
            "content_retrieve": can_read,
            "formatted_content": can_read,
            "update": can_edit,
            "partial_update": can_edit,
            "content_patch": can_edit,
            "can_edit": can_edit,
            "children_create": can_edit,
            "children_list": can_read,
            "destroy": role == "owner",
            "link_configuration": is_admin,
            "accesses_manage": is_admin,
            "accesses_view": can_read,
            "favorite": user is not None,
            "collaboration_auth": can_read,
        }

    def document_json(
        self, document: SandboxDocument, user: SandboxUser | None, *, with_content: bool
    ) -> dict[str, Any]:
        """The serializer fields clients read (design note §3.3); ``content`` only in v4 mode."""
        data: dict[str, Any] = {
            "id": document.id,
            "title": document.title,
            "abilities": self.abilities(document, user),
            "link_reach": document.link_reach,
            "link_role": document.link_role,
            "computed_link_reach": document.link_reach,
            "computed_link_role": document.link_role,
            "ancestors_link_reach": None,
            "ancestors_link_role": None,
            "created_at": document.created_at,
            "updated_at": document.updated_at,
            "creator": document.creator_id,
            "user_role": self.role_of(document, user),
            "depth": 1,
            "path": document.id.replace("-", "")[:7],
            "numchild": 0,
            "excerpt": None,
            "is_favorite": False,
            "deleted_at": document.deleted_at,
            "nb_accesses_direct": len(document.accesses),
            "nb_accesses_ancestors": len(document.accesses),
        }
        if with_content:
            data["content"] = base64.b64encode(document.content).decode("ascii") if document.content else None
        return data

    def visible_documents(self, user: SandboxUser) -> list[SandboxDocument]:
        visible = [
            document
            for document in self.documents.values()
            if document.deleted_at is None
            and (user.id in document.accesses or document.creator_id == user.id)
        ]
        visible.sort(key=lambda document: document.updated_at, reverse=True)
        return visible

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
        document.content = raw
        document.updated_at = _now()

    @staticmethod
    def content_etag(document: SandboxDocument) -> str:
        return '"' + hashlib.sha256(document.content or b"").hexdigest()[:32] + '"'
