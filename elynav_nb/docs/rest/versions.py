"""A document's versions over REST: ``client.versions`` (list them, read one's saved state).

Where it sits: the REST calls of versions, on a ``DocsRestClient``'s ``http.DocsHttp``. Docs keeps
a version per save that changed the content (object storage versions; ``core/models.py``
``Document.get_versions_slice``, ``core/api/viewsets.py`` ``versions_list`` / ``versions_detail``)::

    list(d)          GET documents/{d}/versions/?page_size=50[&version_id=<marker>]
                     -> {next_version_id_marker, is_truncated, versions: [{etag, is_latest,
                        last_modified, version_id}], count}: newest first, the latest (the current
                        content) left out, only those since the caller got access; pages are
                        followed up to ``limit`` versions
    read(d, v)       GET documents/{d}/versions/{v}/ -> {content: base64 Yjs state, last_modified, id}

Rights: ``versions_list`` / ``versions_retrieve`` need a role on the document (a link alone is
not enough: 403 ``NOT_ALLOWED``; anonymous 403). A version id of another document, or unknown, is
404: ``NOT_FOUND`` here. Docs offers no restore endpoint: its frontend saves the version's content
and reverts the live document to it.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import httpx

from elynav_nb.docs.addressing import is_uuid_v4
from elynav_nb.docs.rest.http import VersionedApi
from elynav_nb.errors import ElynavError, InvalidInput, NotFound, ServiceError

if TYPE_CHECKING:
    import pandas

__all__ = ["DocsVersionsClient", "Version", "Versions"]

_VERSION_ID: Final = re.compile(r"[A-Za-z0-9._+\-=~]{1,1024}")
"""Docs' URL pattern for a version id (``versions/(?P<version_id>[A-Za-z0-9._+\\-=~]{1,1024})``)."""
_PAGE_SIZE: Final = 50


@dataclass(frozen=True)
class Version:
    """One saved version of a document (not the current content)."""

    id: str
    last_modified: str | None
    etag: str | None = None


class Versions(tuple[Version, ...]):
    """A document's versions, newest first, with ``to_frame()``."""

    def to_frame(self) -> pandas.DataFrame:
        import pandas

        return pandas.DataFrame(
            [{"version_id": v.id, "last_modified": v.last_modified, "etag": v.etag} for v in self],
            columns=["version_id", "last_modified", "etag"],
        )


def checked_version_id(version_id: object) -> str:
    if not isinstance(version_id, str) or _VERSION_ID.fullmatch(version_id) is None:
        raise InvalidInput("a version id is 1 to 1024 of A-Z a-z 0-9 . _ + - = ~")
    return version_id


def _not_found(version_id: str) -> Any:
    def refusal(response: httpx.Response) -> ElynavError | None:
        if response.status_code == 404:
            return NotFound(
                "no such version of this document (a version id of another document is not one of its own)",
                details={"status": 404, "version_id": version_id[:64]},
            )
        return None

    return refusal


class DocsVersionsClient:
    """Versions of documents on one ``DocsRestClient`` (use ``rest.versions``)."""

    def __init__(self, rest: VersionedApi) -> None:
        self.rest = rest

    def __repr__(self) -> str:
        return f"<DocsVersionsClient instance={self.rest.http.instance!r}>"

    def _path(self, document_id: str) -> str:
        if not is_uuid_v4(document_id):
            raise InvalidInput(
                "the document id must be a UUID v4", details={"document_id": str(document_id)[:64]}
            )
        return f"{self.rest.http.api_prefix}/documents/{document_id.lower()}/versions/"

    async def list(self, document_id: str, *, limit: int = 500) -> Versions:
        """The document's versions, newest first (at most ``limit``)."""
        path = self._path(document_id)
        found: list[Version] = []
        marker = ""
        while len(found) < limit:
            params: dict[str, Any] = {"page_size": _PAGE_SIZE}
            if marker:
                params["version_id"] = marker
            data = await self.rest.http.json("GET", path, "list this document's versions", params=params)
            items = data.get("versions") if isinstance(data, dict) else None
            if not isinstance(items, list):
                raise ServiceError("Docs answered the version list with something that is not one")
            for item in items:
                if isinstance(item, dict) and isinstance(item.get("version_id"), str):
                    last_modified = item.get("last_modified")
                    etag = item.get("etag")
                    found.append(
                        Version(
                            item["version_id"],
                            last_modified if isinstance(last_modified, str) else None,
                            etag if isinstance(etag, str) else None,
                        )
                    )
            next_marker = data.get("next_version_id_marker") if isinstance(data, dict) else None
            if (
                not data.get("is_truncated")
                or not isinstance(next_marker, str)
                or not next_marker
                or not items
            ):
                break
            marker = next_marker
        return Versions(found[:limit])

    async def read(self, document_id: str, version_id: str) -> bytes:
        """The Yjs state saved as this version."""
        checked = checked_version_id(version_id)
        data = await self.rest.http.json(
            "GET", f"{self._path(document_id)}{checked}/", "read this version", refusal=_not_found(checked)
        )
        content = data.get("content") if isinstance(data, dict) else None
        if not isinstance(content, str):
            raise ServiceError("Docs answered the version with no content")
        try:
            return base64.b64decode(content.strip(), validate=True)
        except (binascii.Error, ValueError):
            raise ServiceError("Docs returned a version that is not base64") from None
