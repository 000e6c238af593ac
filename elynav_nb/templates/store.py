"""The global, per-user template store on disk: ``templates/index.json`` + ``templates/md/<id>.md``.

Where it sits: the I/O layer under ``service.py``. Bytes are decoded by ``index_format`` (pure);
crash-safe writes come from ``elynav_nb._files``, the lock from ``fileio``. The home folder is ``$ELYNAV_HOME``, else
the platform data folder (``$XDG_DATA_HOME/elynav`` or ``~/.local/share/elynav`` on Linux,
``~/Library/Application Support/elynav`` on macOS, ``%LOCALAPPDATA%\\elynav`` on Windows).

Concurrency: readers hold a shared ``flock`` on ``templates/.lock``, writers an exclusive one, so
several processes (notebooks, MCP servers) can share one store.

Crash safety (a ``kill -9`` at any instant leaves a consistent store). The index is the commit
point; a content change is written in three atomic steps:

1. the new markdown goes to ``md/<id>.md.next`` (temp file, fsync, rename, fsync folder);
2. the new index replaces ``index.json`` (same way): from here on the change is committed;
3. ``md/<id>.md.next`` is renamed over ``md/<id>.md``.

A delete first renames ``md/<id>.md`` to ``md/<id>.md.deleting``, then commits the index, then
unlinks. The next writer finishes or undoes what a dead writer left (``.next`` whose hash the
index holds: rolled forward; any other ``.next``: removed; ``.deleting`` still indexed: put
back), and readers meanwhile read the file whose hash matches the index.

Corruption: a content file whose hash disagrees with the index, a non-UTF-8 file, a missing
file or an index that does not decode raises ``TemplateStoreCorrupt`` and nothing is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from elynav_nb._files import fsync_folder, write_atomically
from elynav_nb.errors import InvalidInput, TemplateNotFound, TemplateStoreCorrupt
from elynav_nb.templates.domain import AgentTemplate, slug_for_name, validate_template_id
from elynav_nb.templates.fileio import file_lock
from elynav_nb.templates.index_format import IndexEntry, StoreIndex, decode_index, encode_index
from elynav_nb.templates.policy import PolicyBook, policy_book_from_mapping

__all__ = ["StoreTransaction", "StoreView", "TemplateStore", "default_home"]

_NEXT_SUFFIX = ".md.next"
_DELETING_SUFFIX = ".md.deleting"


def default_home() -> Path:
    """``$ELYNAV_HOME`` or the platform's per-user data folder for elynav."""
    configured = os.environ.get("ELYNAV_HOME")
    if configured:
        return Path(configured).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.environ.get("APPDATA") or str(Path.home())
        return Path(base) / "elynav"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "elynav"
    xdg_data_home = os.environ.get("XDG_DATA_HOME")
    if xdg_data_home:
        return Path(xdg_data_home) / "elynav"
    return Path.home() / ".local" / "share" / "elynav"


def _sha256_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class StoreView:
    """The store as seen under a lock: the decoded index and checked reads of the markdown files."""

    def __init__(self, store: TemplateStore, index: StoreIndex) -> None:
        self._store = store
        self.index = index

    def entry(self, template_id: str) -> IndexEntry:
        validate_template_id(template_id)
        entry = self.index.find(template_id)
        if entry is None:
            raise TemplateNotFound(f"no template has id {template_id!r}", details={"templateId": template_id})
        return entry

    def load(self, template_id: str) -> AgentTemplate:
        entry = self.entry(template_id)
        return entry.to_template(self._read_checked_content(entry))

    def load_all(self) -> list[AgentTemplate]:
        templates: list[AgentTemplate] = []
        for entry in self.index.entries:
            templates.append(entry.to_template(self._read_checked_content(entry)))
        return templates

    def _read_checked_content(self, entry: IndexEntry) -> str:
        """The markdown of ``entry`` from the file whose hash the index holds."""
        candidates = [
            self._store.content_path(entry.id),
            self._store.pending_path(entry.id),  # a committed change a dead writer did not finish
            self._store.deleting_path(entry.id),  # a delete a dead writer did not commit
        ]
        found_any = False
        for path in candidates:
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            found_any = True
            if _sha256_of(data) != entry.content_hash:
                continue
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                raise TemplateStoreCorrupt(
                    f"md/{entry.id}.md is not UTF-8 text; it was left untouched",
                    details={"templateId": entry.id, "file": f"md/{entry.id}.md"},
                ) from None
        if not found_any:
            reason = "is missing"
        else:
            reason = "does not match the contentHash in index.json"
        raise TemplateStoreCorrupt(
            f"md/{entry.id}.md {reason}; it was left untouched (restore it, or fix the index by hand)",
            details={"templateId": entry.id, "file": f"md/{entry.id}.md"},
        )


class StoreTransaction(StoreView):
    """Writes under the exclusive lock. Each method commits on its own (the index is rewritten)."""

    def allocate_id(self, name: str) -> str:
        """A new, never used id ``<slug>-<number>``."""
        number = self.index.next_number
        taken = self.index.ids()
        slug = slug_for_name(name)
        while f"{slug}-{number}" in taken or self._store.content_path(f"{slug}-{number}").exists():
            number += 1  # never reuse an id, nor write over a file that is not in the index
        self.index = StoreIndex(number + 1, self.index.entries)
        return f"{slug}-{number}"

    def save(self, template: AgentTemplate, *, content_changed: bool) -> None:
        """Commit ``template`` (new or changed). ``content_changed`` False skips rewriting the markdown."""
        new_index = self.index.with_entry(IndexEntry.for_template(template))
        if not content_changed:
            self._commit_index(new_index)
            return
        pending_path = self._store.pending_path(template.id)
        write_atomically(pending_path, template.content_md.encode("utf-8"))
        self._commit_index(new_index)
        os.replace(pending_path, self._store.content_path(template.id))
        fsync_folder(self._store.md_folder)

    def remove(self, template_id: str) -> None:
        """Delete the index entry and the markdown file."""
        content_path = self._store.content_path(template_id)
        deleting_path = self._store.deleting_path(template_id)
        with contextlib.suppress(FileNotFoundError):
            os.replace(content_path, deleting_path)
            fsync_folder(self._store.md_folder)
        self._commit_index(self.index.without(template_id))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(deleting_path)
        fsync_folder(self._store.md_folder)

    def _commit_index(self, new_index: StoreIndex) -> None:
        data = encode_index(new_index)
        write_atomically(self._store.index_path, data)
        self.index = new_index
        self._store.remember_index(data, new_index)

    def recover(self) -> None:
        """Finish or undo what a writer killed mid-way left behind (see the module docstring)."""
        if not self._store.md_folder.is_dir():
            return
        with os.scandir(self._store.md_folder) as folder_entries:
            # ``<id>.md`` files are the common case and never leftovers: skip them without a Path each
            leftover_names = [entry.name for entry in folder_entries if not entry.name.endswith(".md")]
        for file_name in leftover_names:
            path = self._store.md_folder / file_name
            if file_name.endswith(".tmp") and file_name.startswith("."):
                path.unlink(missing_ok=True)  # a temp file of write_atomically, never renamed
            elif file_name.endswith(_NEXT_SUFFIX):
                self._recover_pending(file_name[: -len(_NEXT_SUFFIX)], path)
            elif file_name.endswith(_DELETING_SUFFIX):
                self._recover_deleting(file_name[: -len(_DELETING_SUFFIX)], path)
        for path in self._store.templates_folder.glob(".index.json.*.tmp"):
            path.unlink(missing_ok=True)
        if leftover_names:
            fsync_folder(self._store.md_folder)

    def _recover_pending(self, template_id: str, pending_path: Path) -> None:
        entry = self.index.find(template_id)
        if entry is not None and _sha256_of(pending_path.read_bytes()) == entry.content_hash:
            os.replace(pending_path, self._store.content_path(template_id))  # committed: roll forward
        else:
            pending_path.unlink(missing_ok=True)  # never committed: roll back

    def _recover_deleting(self, template_id: str, deleting_path: Path) -> None:
        content_path = self._store.content_path(template_id)
        if self.index.find(template_id) is not None and not content_path.exists():
            os.replace(deleting_path, content_path)  # the delete was not committed: put it back
        else:
            deleting_path.unlink(missing_ok=True)  # the delete was committed: finish it


class TemplateStore:
    """Templates under ``<home>/templates``. Safe to share between threads and processes."""

    def __init__(self, home: Path | str | None = None) -> None:
        self.home = Path(home).expanduser() if home is not None else default_home()
        self.templates_folder = self.home / "templates"
        self.md_folder = self.templates_folder / "md"
        self.index_path = self.templates_folder / "index.json"
        self.lock_path = self.templates_folder / ".lock"
        self.policy_path = self.templates_folder / "policy.json"
        self._index_cache: tuple[bytes, StoreIndex] | None = None

    def __repr__(self) -> str:
        return f"TemplateStore(home={str(self.home)!r})"

    def content_path(self, template_id: str) -> Path:
        return self.md_folder / f"{template_id}.md"

    def pending_path(self, template_id: str) -> Path:
        return self.md_folder / f"{template_id}{_NEXT_SUFFIX}"

    def deleting_path(self, template_id: str) -> Path:
        return self.md_folder / f"{template_id}{_DELETING_SUFFIX}"

    def _load_index(self) -> StoreIndex:
        try:
            data = self.index_path.read_bytes()
        except FileNotFoundError:
            if self._has_markdown_files():
                raise TemplateStoreCorrupt(
                    "templates/index.json is missing but templates/md/ holds template files; "
                    "nothing was written: restore the index from a backup",
                    details={"file": "index.json"},
                ) from None
            return StoreIndex.empty()
        cache = self._index_cache
        if cache is not None and cache[0] == data:
            return cache[1]  # the same bytes decode to the same index: skip 10,000 entries of checks
        index = decode_index(data)
        self._index_cache = (data, index)
        return index

    def _has_markdown_files(self) -> bool:
        try:
            with os.scandir(self.md_folder) as folder_entries:
                for entry in folder_entries:
                    if entry.name.endswith(".md"):
                        return True
        except FileNotFoundError:
            return False
        return False

    def remember_index(self, data: bytes, index: StoreIndex) -> None:
        """Cache the index just written, so the next read does not decode it again."""
        self._index_cache = (data, index)

    @contextlib.contextmanager
    def reading(self) -> Iterator[StoreView]:
        """A consistent view for reads (shared lock)."""
        if not self.templates_folder.is_dir():
            yield StoreView(self, StoreIndex.empty())
            return
        with file_lock(self.lock_path, shared=True):
            yield StoreView(self, self._load_index())

    @contextlib.contextmanager
    def writing(self) -> Iterator[StoreTransaction]:
        """A transaction for writes (exclusive lock; leftovers of dead writers recovered first)."""
        self.md_folder.mkdir(parents=True, exist_ok=True)
        with file_lock(self.lock_path):
            transaction = StoreTransaction(self, self._load_index())
            transaction.recover()
            yield transaction

    def list_templates(self) -> list[AgentTemplate]:
        with self.reading() as view:
            return view.load_all()

    def get(self, template_id: str) -> AgentTemplate:
        with self.reading() as view:
            return view.load(template_id)

    def load_policy_book(self) -> PolicyBook:
        """The durable grants of ``templates/policy.json`` (an empty book when the file is absent)."""
        try:
            data = self.policy_path.read_bytes()
        except FileNotFoundError:
            return PolicyBook()
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise InvalidInput("templates/policy.json is not valid UTF-8 JSON") from None
        return policy_book_from_mapping(document)

    def save_policy_book(self, book: PolicyBook) -> None:
        """Write the durable grants (``{"agents": {name: {"grant": [...]}}}``)."""
        document = {"agents": {agent: {"grant": grants} for agent, grants in book.to_dict().items()}}
        with file_lock(self.lock_path):
            write_atomically(self.policy_path, (json.dumps(document, indent=1) + "\n").encode("utf-8"))
