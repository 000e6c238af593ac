"""Turn a La Suite Docs link (or a bare document id) into an instance origin and a document UUID.

Where it sits: the first pure step of every Docs edit (link -> address -> REST + WebSocket). No I/O.

How data flows: ``parse_docs_url("https://docs.example.org/docs/<uuid>/")`` checks the scheme, host and
path, then returns ``DocAddress(origin="https://docs.example.org", document_id="<uuid>")``. A bare UUID
is accepted only when the caller already knows the instance (``instance=``). When both a link and an
instance are known they must name the same origin, otherwise ``InstanceMismatch``: the instance is
never switched silently, so cookies for one instance are never sent to another.

The document id must be a UUID **version 4**: the Docs y-provider refuses every other room name
(design note §2.3). Ids are returned in canonical lower-case form. Error messages never repeat the
whole link (it could carry a query string with secrets); they name the part that is wrong.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from elynav_nb.errors import InstanceMismatch, InvalidInput

__all__ = ["DocAddress", "is_uuid_v4", "normalize_instance_origin", "parse_docs_url"]

_UUID_PATTERN = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DOCS_PATH_PATTERN = re.compile(r"/docs/(?P<document_id>[^/]+)/?")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_EXPECTED_LINK_SHAPE = "https://<host>/docs/<uuid>/"


@dataclass(frozen=True)
class DocAddress:
    """Where a document lives: the instance origin (``scheme://host[:port]``) and its UUID v4."""

    origin: str
    document_id: str

    @property
    def link(self) -> str:
        """The link people open in a browser."""
        return f"{self.origin}/docs/{self.document_id}/"


def is_uuid_v4(text: str) -> bool:
    """True when ``text`` is a canonical (hyphenated) RFC 4122 UUID of version 4."""
    if not _UUID_PATTERN.fullmatch(text):
        return False
    parsed = uuid.UUID(text)
    return parsed.version == 4 and parsed.variant == uuid.RFC_4122


def _split_url(text: str, what: str) -> SplitResult:
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - reading it validates the port
    except ValueError:
        raise InvalidInput(f"the {what} is not a valid URL") from None
    return parts


def _origin_of(parts: SplitResult, what: str) -> str:
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise InvalidInput(f"the {what} must start with https:// (or http:// for a local server)")
    if parts.username is not None or parts.password is not None:
        raise InvalidInput(f"the {what} must not carry a user name or password")
    host = (parts.hostname or "").lower()
    if not host:
        raise InvalidInput(f"the {what} has no host name")
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    port = parts.port
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def normalize_instance_origin(instance: str) -> str:
    """``"https://Docs.Example.org/"`` -> ``"https://docs.example.org"`` (scheme, host, non-default port)."""
    text = instance.strip()
    if not text:
        raise InvalidInput("the Docs instance URL is empty")
    parts = _split_url(text, "Docs instance URL")
    return _origin_of(parts, "Docs instance URL")


def _checked_document_id(candidate: str) -> str:
    if not _UUID_PATTERN.fullmatch(candidate):
        raise InvalidInput(
            "the document id is not a UUID (expected 8-4-4-4-12 hexadecimal digits)",
            details={"expected": _EXPECTED_LINK_SHAPE},
        )
    if not is_uuid_v4(candidate):
        version = uuid.UUID(candidate).version
        raise InvalidInput(
            f"the document id is a UUID of version {version}, but Docs only opens live rooms for UUID v4",
            details={"uuid_version": version},
        )
    return candidate.lower()


def parse_docs_url(link: str, *, instance: str | None = None) -> DocAddress:
    """Parse a Docs document link, or a bare UUID v4 when ``instance`` is known.

    ``instance`` is the origin the caller is settled on (config, ``DOCS_INSTANCE_URL`` or the first
    link). A link to another origin raises ``InstanceMismatch``; anything else malformed raises
    ``InvalidInput``.
    """
    if not isinstance(link, str):
        raise InvalidInput("the document link must be a string")
    text = link.strip()
    if not text:
        raise InvalidInput("the document link is empty", details={"expected": _EXPECTED_LINK_SHAPE})
    settled_origin = normalize_instance_origin(instance) if instance is not None else None

    if "/" not in text and ":" not in text:
        document_id = _checked_document_id(text)
        if settled_origin is None:
            raise InvalidInput(
                "a bare document id needs a known Docs instance: give the full link "
                "or set the instance (DOCS_INSTANCE_URL) first",
                details={"expected": _EXPECTED_LINK_SHAPE, "reason": "INSTANCE_NOT_SET"},
            )
        return DocAddress(origin=settled_origin, document_id=document_id)

    parts = _split_url(text, "document link")
    origin = _origin_of(parts, "document link")
    path_match = _DOCS_PATH_PATTERN.fullmatch(parts.path)
    if path_match is None:
        raise InvalidInput(
            "this is not a La Suite Docs document link",
            details={"expected": _EXPECTED_LINK_SHAPE},
        )
    document_id = _checked_document_id(path_match.group("document_id"))
    if settled_origin is not None and origin != settled_origin:
        raise InstanceMismatch(
            f"the link points at {origin}, but this session is settled on {settled_origin}",
            details={"link_origin": origin, "instance_origin": settled_origin},
        )
    return DocAddress(origin=origin, document_id=document_id)


def settle_origin(settled: str | None, origin: str) -> str:
    """The instance credentials are settled on after meeting ``origin``: ``origin`` itself when
    none was settled yet; ``INSTANCE_MISMATCH`` for any other than the settled one (so that a
    secret never leaves for another host)."""
    normalized = normalize_instance_origin(origin)
    if settled is not None and normalized != settled:
        raise InstanceMismatch(
            f"these credentials are settled on {settled}; refusing to use them for {normalized}",
            details={"instance_origin": settled, "requested_origin": normalized},
        )
    return normalized
