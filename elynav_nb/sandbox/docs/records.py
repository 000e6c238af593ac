"""The Docs sandbox's records: a user, a document, a version of its saved content; Docs' date format.

Where it sits: the plain values ``SandboxStore`` (``store``) keeps in its dictionaries and tree, read by
the ability rules (``abilities``) and the REST routes. No I/O, no rule: a document's role, links and
abilities are ``abilities``' business, its place in the tree ``tree``'s. Below both ``store`` and
``abilities``, so the rules read the records without importing the store.

How data flows: ``SandboxStore`` makes and changes these; routes render them (``as_json``,
``abilities.document_json``, ``format_datetime`` for every date Docs shows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

__all__ = ["SandboxDocument", "SandboxUser", "Version", "format_datetime"]


def format_datetime(moment: datetime | None) -> str | None:
    """DRF's rendering: ISO 8601, ``Z`` for UTC."""
    if moment is None:
        return None
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def _now() -> str:
    return format_datetime(datetime.now(UTC)) or ""


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


@dataclass(eq=False)
class SandboxDocument:
    id: str
    title: str | None
    creator_id: str | None
    link_reach: str = "restricted"
    link_role: str = "reader"
    accesses: dict[str, str] = field(default_factory=dict)
    content: bytes | None = None
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    excerpt: str | None = None
    path: str = ""
    depth: int = 1
    numchild: int = 0
    has_deleted_children: bool = False
    deleted_at: datetime | None = None
    ancestors_deleted_at: datetime | None = None


@dataclass(frozen=True)
class Version:
    """One object version of a document's saved content (Docs keeps them in versioned storage)."""

    version_id: str
    last_modified: datetime
    content: str  # the base64 text Docs stores as the object
    etag: str
