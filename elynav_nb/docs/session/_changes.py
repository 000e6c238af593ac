"""What a ``DocsSession`` tells about changes: ``watch()`` feeds and change listeners.

Where it sits: internal to ``docs/session/``. The session's connection calls ``before_remote``
before it applies a server update and ``remote_changed`` after one changed the document; the
session calls ``ours_acknowledged`` after each acknowledged write of ours, ``tell`` after a save,
and ``close`` when it closes. Views subscribe with ``add_listener``; notebooks iterate ``watch()``.

How data flows::

    remote update -> before_remote (our own writes since the last look become the reference)
                  -> remote_changed: the blocks read once, compared by (type, text) per block id
                  -> RemoteChange(blocks, changed ids) on every watch() queue -> every listener
    close -> None on every queue: each ``async for change in doc.watch()`` ends

The comparison reads the blocks (O(blocks)), so it is made only when someone else edits: after a
write of ours the reference is only marked stale.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pycrdt import Doc

from elynav_nb._session_handles import ChangeFeed, ChangeListeners
from elynav_nb.docs.blocknote import Block, read_blocks

__all__ = ["ChangeTracker", "RemoteChange", "RemoteChanges"]


@dataclass(frozen=True)
class RemoteChange:
    """A change someone else made, as ``doc.watch()`` yields it: the blocks after the change."""

    blocks: list[Block]
    changed_block_ids: list[str] = field(default_factory=list)
    at: float = field(default_factory=time.time)


class RemoteChanges(ChangeFeed[RemoteChange]):
    """The async iterator ``doc.watch()`` returns; it listens from the moment it is created."""


def block_signature(blocks: list[Block]) -> dict[str, tuple[str, str]]:
    """Each block's ``(type, text)`` by id, nested blocks included."""
    signature: dict[str, tuple[str, str]] = {}
    for top in blocks:
        for block in top.walk():
            signature[block.id] = (block.type, block.text)
    return signature


class ChangeTracker:
    """The watchers and listeners of one session's document, and the reference its changes are
    measured against."""

    def __init__(self, ydoc: Doc[Any]) -> None:
        self._ydoc = ydoc
        self._listeners = ChangeListeners("Docs session")
        self._watchers: list[asyncio.Queue[RemoteChange | None]] = []
        self._last_signature: dict[str, tuple[str, str]] = {}
        self._signature_stale = False

    def start(self) -> None:
        """Take the document as it is now as the reference (once it is open)."""
        self._last_signature = block_signature(read_blocks(self._ydoc))

    def watch(self, timeout: float | None) -> RemoteChanges:
        queue: asyncio.Queue[RemoteChange | None] = asyncio.Queue()
        self._watchers.append(queue)
        return RemoteChanges(queue, timeout, lambda: self._forget_watcher(queue))

    def _forget_watcher(self, queue: asyncio.Queue[RemoteChange | None]) -> None:
        with contextlib.suppress(ValueError):
            self._watchers.remove(queue)

    @property
    def listeners(self) -> list[Callable[[], None]]:
        return self._listeners.listeners

    def add_listener(self, listener: Callable[[], None]) -> None:
        self._listeners.add(listener)

    def remove_listener(self, listener: Callable[[], None]) -> None:
        self._listeners.remove(listener)

    def tell(self) -> None:
        """Call every listener; one that fails is logged, the others are still called."""
        self._listeners.tell()

    def ours_acknowledged(self) -> None:
        """A write of ours was acknowledged: re-read the reference only if someone else edits."""
        self._signature_stale = True
        self.tell()

    def before_remote(self) -> None:
        """Our own writes since the last snapshot must not count as someone else's change."""
        if self._signature_stale:
            self._last_signature = block_signature(read_blocks(self._ydoc))
            self._signature_stale = False

    def remote_changed(self) -> None:
        blocks = read_blocks(self._ydoc)
        signature = block_signature(blocks)
        changed = [
            block_id for block_id, value in signature.items() if self._last_signature.get(block_id) != value
        ]
        changed.extend(block_id for block_id in self._last_signature if block_id not in signature)
        self._last_signature = signature
        change = RemoteChange(blocks=blocks, changed_block_ids=changed)
        for queue in list(self._watchers):
            queue.put_nowait(change)
        self.tell()

    def close(self) -> None:
        """End every ``watch()`` iteration."""
        for queue in self._watchers:
            queue.put_nowait(None)
