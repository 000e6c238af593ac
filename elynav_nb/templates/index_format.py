"""The ``templates/index.json`` format: decode with every check, encode canonically.

Where it sits: pure, used by ``store.py`` (which only reads and writes the bytes). A corrupt or
inconsistent index never decodes: ``decode_index`` raises ``TemplateStoreCorrupt`` naming what
is wrong, and the store then refuses to write, so a bad index is never overwritten silently.

The format (version 1)::

    {
      "formatVersion": 1,
      "nextNumber": 3,                      # ids are "<slug>-<number>"; numbers are never reused
      "templates": [
        {"id": "code-reviewer-1", "name": "Code reviewer", "version": 2,
         "contentHash": "sha256:<64 hex>", "defaultProfileId": "claude-sonnet"}
      ]
    }
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from json.encoder import encode_basestring

from elynav_nb.errors import TemplateStoreCorrupt
from elynav_nb.templates.domain import TEMPLATE_ID_PATTERN, AgentTemplate

__all__ = ["INDEX_FORMAT_VERSION", "IndexEntry", "StoreIndex", "decode_index", "encode_index"]

INDEX_FORMAT_VERSION = 1
_HASH_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}\Z")


@dataclass(frozen=True)
class IndexEntry:
    id: str
    name: str
    version: int
    content_hash: str
    default_profile_id: str

    @classmethod
    def for_template(cls, template: AgentTemplate) -> IndexEntry:
        return cls(
            template.id, template.name, template.version, template.content_hash, template.default_profile_id
        )

    def to_template(self, content_md: str) -> AgentTemplate:
        return AgentTemplate(self.id, self.name, content_md, self.version, self.default_profile_id)


@dataclass(frozen=True)
class StoreIndex:
    next_number: int
    entries: tuple[IndexEntry, ...]

    @classmethod
    def empty(cls) -> StoreIndex:
        return cls(1, ())

    def find(self, template_id: str) -> IndexEntry | None:
        for entry in self.entries:
            if entry.id == template_id:
                return entry
        return None

    def ids(self) -> set[str]:
        return {entry.id for entry in self.entries}

    def with_entry(self, new_entry: IndexEntry) -> StoreIndex:
        """This index with ``new_entry`` replacing the entry of the same id, or appended."""
        entries: list[IndexEntry] = []
        replaced = False
        for entry in self.entries:
            if entry.id == new_entry.id:
                entries.append(new_entry)
                replaced = True
            else:
                entries.append(entry)
        if not replaced:
            entries.append(new_entry)
        return StoreIndex(self.next_number, tuple(entries))

    def without(self, template_id: str) -> StoreIndex:
        entries = tuple(entry for entry in self.entries if entry.id != template_id)
        return StoreIndex(self.next_number, entries)


def _corrupt(reason: str) -> TemplateStoreCorrupt:
    return TemplateStoreCorrupt(
        f"templates/index.json is corrupt: {reason}. It was left untouched; fix it or restore a backup.",
        details={"file": "index.json"},
    )


def _decode_entry(position: int, raw_entry: object) -> IndexEntry:
    if not isinstance(raw_entry, dict):
        raise _corrupt(f"entry {position} is not an object")
    template_id = raw_entry.get("id")
    if not isinstance(template_id, str) or not TEMPLATE_ID_PATTERN.fullmatch(template_id):
        raise _corrupt(f"entry {position} has an invalid id {template_id!r}")
    name = raw_entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _corrupt(f"template {template_id!r} has an empty or missing name")
    version = raw_entry.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise _corrupt(f"template {template_id!r} has an invalid version {version!r}")
    hash_text = raw_entry.get("contentHash")
    if not isinstance(hash_text, str) or not _HASH_PATTERN.fullmatch(hash_text):
        raise _corrupt(f"template {template_id!r} has an invalid contentHash")
    profile_id = raw_entry.get("defaultProfileId")
    if not isinstance(profile_id, str) or not profile_id:
        raise _corrupt(f"template {template_id!r} has no defaultProfileId")
    return IndexEntry(template_id, name.strip(), version, hash_text, profile_id)


def decode_index(data: bytes) -> StoreIndex:
    """The index in ``data``; ``TemplateStoreCorrupt`` for anything unexpected."""
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise _corrupt("it is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise _corrupt(f"invalid JSON at line {error.lineno} column {error.colno}") from None
    if not isinstance(document, dict):
        raise _corrupt("the top level is not an object")
    if document.get("formatVersion") != INDEX_FORMAT_VERSION:
        raise _corrupt(f"unsupported formatVersion {document.get('formatVersion')!r}")
    raw_entries = document.get("templates")
    if not isinstance(raw_entries, list):
        raise _corrupt("'templates' is not a list")
    entries: list[IndexEntry] = []
    seen_ids: set[str] = set()
    for position, raw_entry in enumerate(raw_entries):
        entry = _decode_entry(position, raw_entry)
        if entry.id in seen_ids:
            raise _corrupt(f"template id {entry.id!r} appears twice")
        seen_ids.add(entry.id)
        entries.append(entry)
    next_number = document.get("nextNumber", len(entries) + 1)
    if isinstance(next_number, bool) or not isinstance(next_number, int) or next_number < 1:
        raise _corrupt(f"invalid nextNumber {next_number!r}")
    return StoreIndex(next_number, tuple(entries))


def encode_index(index: StoreIndex) -> bytes:
    """Canonical bytes for ``index``: one template per line (easy to read and diff), UTF-8, final newline."""
    quote = encode_basestring  # a JSON string literal, non-ASCII kept as is (C speed: 10,000 entries in ms)
    entry_lines: list[str] = []
    for entry in index.entries:
        entry_lines.append(
            f'  {{"id": {quote(entry.id)}, "name": {quote(entry.name)}, "version": {int(entry.version)}, '
            f'"contentHash": {quote(entry.content_hash)}, "defaultProfileId": {quote(entry.default_profile_id)}}}'
        )
    templates_text = "[\n" + ",\n".join(entry_lines) + "\n ]" if entry_lines else "[]"
    text = (
        "{\n"
        f' "formatVersion": {INDEX_FORMAT_VERSION},\n'
        f' "nextNumber": {index.next_number},\n'
        f' "templates": {templates_text}\n'
        "}\n"
    )
    return text.encode("utf-8")
