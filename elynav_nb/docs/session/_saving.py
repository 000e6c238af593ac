"""When a ``DocsSession``'s edits become durable: debounced saves, patience with Docs, kept files.

Where it sits: internal to ``docs/session/``. Docs' collaboration server keeps rooms in memory
only: an acknowledged edit is **live**; only the REST save (``PATCH .../content/``, the full state
with ``websocket: true``) makes it **durable** (``_durability``). ``SessionSaving`` holds the
session's save state and runs every save through the session's ``OperationQueue``, in order with
its writes.

How data flows::

    a write (or a remote change) -> edited() / remote_edited(): something is unsaved
    acked write -> schedule(): a save ``save_debounce`` s later; a refusal worth waiting for
                   (429 with Retry-After, 5xx, no answer) is tried again after the wait Docs asks
    doc.saved() -> acks awaited, then saves, patient up to ``save_patience`` s -> SaveResult,
                   or UNSAVED_CHANGES (the edits stay live; the background saves go on)
    close       -> before_close(): the last save, patient; given up -> the state kept in a file
                   (``_durability.keep_state``) and UNSAVED_CHANGES naming it
    exit        -> exit_state(): what the interpreter-exit save needs (``_durability``)

Anonymous sessions edit live but cannot save: ``save_now`` says so in its ``SaveResult``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pycrdt import Doc

from elynav_nb.docs.addressing import DocAddress
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.docs.rest.documents import DocsRestClient
from elynav_nb.docs.session._durability import ExitState, keep_state, next_wait, transient
from elynav_nb.docs.session._operations import OperationQueue
from elynav_nb.errors import ElynavError, InvalidInput, UnsavedChanges

__all__ = ["DEFAULT_SAVE_PATIENCE", "SaveResult", "SavedDocument", "SessionSaving", "checked_patience"]

logger = logging.getLogger("elynav_nb.docs.session")

DEFAULT_SAVE_PATIENCE = 75.0
"""How long ``saved()`` and ``close()`` wait for Docs to accept a save (seconds): Docs' document
throttle counts 80 requests in a 60 s window, and its 429 asks for at most that window."""


@dataclass(frozen=True)
class SaveResult:
    """What a save did: ``saved`` False says why (anonymous session, nothing to save...)."""

    saved: bool
    reason: str | None = None
    size_bytes: int = 0


def checked_patience(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3600:
        raise InvalidInput("save_patience must be a number of seconds between 0 and 3600")
    return float(value)


def _retry_detail(error: ElynavError) -> dict[str, Any]:
    retry_after = error.details.get("retry_after_seconds")
    return {"retry_after_seconds": retry_after} if isinstance(retry_after, (int, float)) else {}


class SavedDocument(Protocol):
    """What ``SessionSaving`` reads of a ``DocsSession``."""

    address: DocAddress
    rest: DocsRestClient
    ydoc: Doc[Any]
    connection: DocsConnection | None
    ack_timeout: float
    save_debounce: float
    save_patience: float

    @property
    def document_id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def read_only(self) -> bool: ...

    @property
    def can_save(self) -> bool: ...


class SessionSaving:
    """The save state of one session (unsaved edits, the pending save, the last result) and its saves."""

    def __init__(
        self, document: SavedDocument, operations: OperationQueue, *, notify: Callable[[], None]
    ) -> None:
        self._document = document
        self._operations = operations
        self._notify = notify
        self.dirty = False
        """Edits of ours not saved yet (set as soon as they are in the document, before their ack)."""
        self.remote_unsaved = False
        """Edits of people not saved yet: their browsers save only every 60 s."""
        self.last_saved_at: float | None = None
        self.last_save_error: ElynavError | None = None
        self._save_task: asyncio.Task[None] | None = None

    # --- what is unsaved ---------------------------------------------------------------------

    def edited(self) -> None:
        self.dirty = True

    def remote_edited(self) -> None:
        self.remote_unsaved = True  # saved with our next save, or on close (the person's browser may not)

    def needs_save(self) -> bool:
        """Edits of ours, or of people (their browsers save only every 60 s), not yet saved."""
        document = self._document
        return document.can_save and (self.dirty or (self.remote_unsaved and not document.read_only))

    def note(self) -> str:
        """The save state in a few words, for the session's repr."""
        if not self._document.can_save:
            return "not saved: anonymous session"
        if self.last_save_error is not None:
            return f"save failed ({self.last_save_error.code})"
        if self.dirty:
            return "save pending"
        return "saved" if self.last_saved_at else "nothing to save"

    # --- saving ------------------------------------------------------------------------------

    def schedule(self) -> None:
        """A save ``save_debounce`` seconds from now (one pending at a time)."""
        self.dirty = True
        if not self._document.can_save:
            return
        if self._save_task is None or self._save_task.done():
            self._save_task = asyncio.get_running_loop().create_task(self._debounced_save())

    async def _debounced_save(self) -> None:
        """Save ``save_debounce`` after a write; a refusal worth waiting for (429 with
        ``Retry-After``, 5xx, no answer) is retried after the wait Docs asks for, until saved."""
        document = self._document
        await asyncio.sleep(document.save_debounce)
        attempt = 0
        while not self._operations.closed and self.needs_save():
            try:
                await self._operations.run(self.save_now)
                return
            except ElynavError as error:
                if not transient(error) or self._operations.closed:
                    logger.warning("saving Docs document %s failed: %s", document.document_id, error.code)
                    return
                wait = next_wait(error, attempt)
                logger.info(
                    "saving Docs document %s: %s, again in %.1f s", document.document_id, error.code, wait
                )
                attempt += 1
                await asyncio.sleep(wait)

    async def save_now(self) -> SaveResult:
        """One save of the full state (run by the owner task)."""
        document = self._document
        if not document.can_save:
            return SaveResult(
                False, "anonymous session: the edits are live but not saved (give credentials to save)"
            )
        state = document.ydoc.get_update()
        self.dirty = False
        self.remote_unsaved = False
        try:
            await document.rest.save_content(document.document_id, state, websocket=True)
        except ElynavError as error:
            self.dirty = True
            self.last_save_error = error
            self._notify()
            raise
        self.last_saved_at = time.time()
        self.last_save_error = None
        self._notify()
        return SaveResult(True, None, len(state))

    async def _save_patiently(self, patience: float) -> SaveResult:
        """Save now; refusals worth waiting for are retried after Docs' ``Retry-After`` (or a short
        backoff) for up to ``patience`` seconds, the last try at the bound; then the last error."""
        loop = asyncio.get_running_loop()
        give_up_at = loop.time() + patience
        attempt = 0
        while True:
            try:
                return await self._operations.run(self.save_now)
            except ElynavError as error:
                remaining = give_up_at - loop.time()
                if not transient(error) or remaining <= 0 or self._operations.closed:
                    raise
                await asyncio.sleep(min(next_wait(error, attempt), remaining))
                attempt += 1

    async def _flush_quietly(self) -> None:
        """Wait for the server's acks; a timeout or failure there does not stop a REST save, which
        makes the document's state durable whatever the collaboration server does."""
        connection = self._document.connection
        assert connection is not None
        with contextlib.suppress(ElynavError):
            await connection.await_flush(self._document.ack_timeout)

    async def saved(self, timeout: float | None) -> SaveResult:
        """``DocsSession.saved``: every edit so far durable, or ``UNSAVED_CHANGES`` past ``timeout``."""
        document = self._document
        patience = document.save_patience if timeout is None else checked_patience(timeout)
        if not document.can_save:
            return await self._operations.run(self.save_now)
        await self._operations.run(self._flush_quietly)
        if not self.needs_save():
            return SaveResult(True, "nothing unsaved", 0)
        try:
            return await self._save_patiently(patience)
        except ElynavError as error:
            if self._operations.closed:
                raise
            self.schedule()
            raise UnsavedChanges(
                f"Docs did not save {self._name()} within {patience:g} s ({error.code}): the edits are "
                "live and the session keeps retrying; await doc.saved() again, or doc.close()",
                details={"document_id": document.document_id, "cause": error.code, **_retry_detail(error)},
            ) from None

    async def before_close(self) -> tuple[SaveResult | None, UnsavedChanges | None]:
        """The last save before the session closes (the socket still open, so the room keeps the
        edits); when it must be given up, the state is kept in a file and the error names it."""
        if self._save_task is not None and not self._save_task.done():
            self._save_task.cancel()
        if not self.needs_save():
            return None, None
        try:
            await self._operations.run(self._flush_quietly)
            return await self._save_patiently(self._document.save_patience), None
        except ElynavError as caught:
            return None, self._keep_unsaved(caught)

    def _keep_unsaved(self, cause: ElynavError) -> UnsavedChanges:
        """The save was given up: keep the state in a file, and say where."""
        document = self._document
        kept = keep_state(
            document.address.origin,
            document.document_id,
            document.title,
            document.ydoc.get_update(),
            cause.code,
        )
        return UnsavedChanges(
            f"Docs did not save {self._name()} ({cause.code}, for {document.save_patience:g} s): the edits "
            f"are kept in {kept}; DocsSession.save_kept_state({str(kept)!r}) saves them",
            details={
                "document_id": document.document_id,
                "kept_in": str(kept),
                "cause": cause.code,
                **_retry_detail(cause),
            },
        )

    def exit_state(self) -> ExitState | None:
        """What the interpreter-exit save needs, or ``None`` when nothing is unsaved."""
        if self._operations.closed or not self.needs_save():
            return None
        document = self._document
        document_id, rest = document.document_id, document.rest
        return ExitState(
            instance=document.address.origin,
            document_id=document_id,
            title=document.title,
            state=document.ydoc.get_update(),
            save=lambda state, timeout: rest.save_content_blocking(document_id, state, timeout=timeout),
        )

    def _name(self) -> str:
        document = self._document
        return f"{document.title!r} ({document.document_id})" if document.title else document.document_id
