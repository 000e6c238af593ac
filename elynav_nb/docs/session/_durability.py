"""What makes a Docs edit durable, and what happens to edits that are not yet.

Where it sits: internal to ``docs/session/``: ``DocsSession`` registers each open session here,
and ``_saving`` uses the retry rules (``transient``, ``next_wait``) and the kept files. Docs'
collaboration server keeps rooms in memory only (no ``onStoreDocument``): an edit the server
acknowledged is **live**, not saved; only the REST save (``PATCH .../content/``) makes it
**durable**. This module holds the two last resorts for live edits that were never saved:

- ``save_all_at_exit`` (``atexit``, as the agents' reaper ends CLIs): every open session with
  unsaved edits is saved synchronously (``DocsRestClient.save_content_blocking``, no event loop
  needed), waiting for Docs' ``Retry-After`` up to ``EXIT_SAVE_PATIENCE`` seconds per document.
  Each such session is named in a ``DocsUnsavedWarning`` ("ended without close()").
- ``keep_state``: when a save must be given up (the exit save, or ``close()`` past its patience),
  the full Yjs state goes to a file (``ELYNAV_DOCS_UNSAVED_DIR``, default
  ``$XDG_STATE_HOME/elynav/docs-unsaved``, mode 0600) with a JSON note beside it (instance,
  document, title, why); ``DocsSession.save_kept_state(path)`` merges it back into the document
  and saves it. A killed process (``kill -9``) keeps nothing: its edits since the last save are lost.

How data flows: session opened -> ``register(session)``; at exit -> ``save_all_at_exit`` ->
for each ``session.unsaved_state_for_exit()`` -> blocking PATCH (retried on 429/5xx) -> saved,
or ``keep_state`` -> warning naming the file. Nothing here logs or writes a credential.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import time
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from pycrdt import Doc

from elynav_nb.errors import ElynavError, InvalidInput, RateLimited, ServiceError

__all__ = [
    "EXIT_SAVE_PATIENCE",
    "DocsUnsavedWarning",
    "ExitState",
    "forget_kept_state",
    "kept_state_directory",
    "keep_state",
    "merge_kept_state",
    "next_wait",
    "read_kept_state",
    "register",
    "save_all_at_exit",
    "transient",
    "unregister",
]

EXIT_SAVE_PATIENCE: Final = 20.0
"""Seconds the exit save of one document waits for Docs (its ``Retry-After`` included)."""
_STATE_SUFFIX: Final = ".yjs"
_NOTE_SUFFIX: Final = ".json"

logger = logging.getLogger("elynav_nb.docs.session")


class DocsUnsavedWarning(UserWarning):
    """A Docs session held edits that were not saved when it was dropped or the program ended."""


@dataclass(frozen=True)
class ExitState:
    """What the exit save needs of one session: where, what, and how to send it."""

    instance: str
    document_id: str
    title: str
    state: bytes
    save: Any  # Callable[[bytes, float], None]: the blocking PATCH of this session's REST client


class ExitSavable(Protocol):
    def unsaved_state_for_exit(self) -> ExitState | None: ...


_open_sessions: weakref.WeakSet[Any] = weakref.WeakSet()
_atexit_registered = False


def register(session: ExitSavable) -> None:
    """Save ``session``'s unsaved edits at interpreter exit if it is still open then."""
    global _atexit_registered
    _open_sessions.add(session)
    if not _atexit_registered:
        atexit.register(save_all_at_exit)
        _atexit_registered = True


def unregister(session: ExitSavable) -> None:
    _open_sessions.discard(session)


def transient(error: ElynavError) -> bool:
    """Refusals worth waiting for: a throttle, a failing or unreachable server, a slow answer."""
    return isinstance(error, RateLimited) or type(error) is ServiceError or error.code == "DEADLINE_EXCEEDED"


def next_wait(error: ElynavError, attempt: int) -> float:
    """How long to wait before the next save: Docs' ``Retry-After``, else a short backoff."""
    retry_after = error.details.get("retry_after_seconds")
    if isinstance(retry_after, (int, float)) and retry_after >= 0:
        return float(retry_after)
    return min(8.0, 0.5 * 2.0**attempt)


def save_all_at_exit() -> None:
    """Save every open session's unsaved edits, synchronously (the ``atexit`` hook)."""
    for session in list(_open_sessions):
        try:
            exit_state = session.unsaved_state_for_exit()
        except Exception:  # a broken session must not stop the others being saved
            logger.exception("reading a Docs session's state at exit failed")
            continue
        if exit_state is not None:
            _save_one_at_exit(exit_state)


def _save_one_at_exit(exit_state: ExitState) -> None:
    name = f"{exit_state.title!r} ({exit_state.document_id})" if exit_state.title else exit_state.document_id
    give_up_at = time.monotonic() + EXIT_SAVE_PATIENCE
    attempt = 0
    while True:
        remaining = give_up_at - time.monotonic()
        try:
            exit_state.save(exit_state.state, max(1.0, min(10.0, remaining)))
        except ElynavError as error:
            wait = next_wait(error, attempt)
            if not transient(error) or remaining <= 0 or wait > remaining:
                kept = keep_state(
                    exit_state.instance,
                    exit_state.document_id,
                    exit_state.title,
                    exit_state.state,
                    error.code,
                )
                warnings.warn(
                    f"Docs document {name} had unsaved edits when the program ended without "
                    f"close(), and Docs refused to save them ({error.code}): they are kept in "
                    f"{kept}; DocsSession.save_kept_state({str(kept)!r}) saves them",
                    DocsUnsavedWarning,
                    stacklevel=1,
                )
                return
            attempt += 1
            time.sleep(wait)
            continue
        warnings.warn(
            f"Docs document {name} had unsaved edits when the program ended without close(): "
            "they were saved at exit (await doc.close() or doc.saved() to know when an edit is durable)",
            DocsUnsavedWarning,
            stacklevel=1,
        )
        return


# --- kept states -------------------------------------------------------------------------------


def kept_state_directory() -> Path:
    """``ELYNAV_DOCS_UNSAVED_DIR``, else ``$XDG_STATE_HOME/elynav/docs-unsaved`` (``~/.local/state``)."""
    configured = os.environ.get("ELYNAV_DOCS_UNSAVED_DIR")
    if configured:
        return Path(configured)
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "elynav" / "docs-unsaved"


def keep_state(instance: str, document_id: str, title: str, state: bytes, reason: str) -> Path:
    """Write ``state`` (a Yjs update) and its note to the kept-state folder; the state file's path."""
    directory = kept_state_directory()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    base = directory / f"{document_id}-{stamp}-{os.getpid()}"
    state_path = base.with_suffix(_STATE_SUFFIX)
    note = {
        "instance": instance,
        "document_id": document_id,
        "title": title,
        "kept_at": stamp,
        "reason": reason,
        "how_to_save": f"DocsSession.save_kept_state({str(state_path)!r})",
    }
    for path, data in ((state_path, state), (base.with_suffix(_NOTE_SUFFIX), json.dumps(note).encode())):
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
    return state_path


def forget_kept_state(path: str | Path) -> None:
    """Remove a kept state and its note (once saved)."""
    state_path = Path(path)
    for kept in (state_path, state_path.with_suffix(_NOTE_SUFFIX)):
        kept.unlink(missing_ok=True)


def read_kept_state(path: str | Path) -> tuple[dict[str, Any], bytes]:
    """The note and the state kept at ``path`` (the ``.yjs`` file ``keep_state`` named)."""
    state_path = Path(path)
    note = json.loads(state_path.with_suffix(_NOTE_SUFFIX).read_text())
    if not isinstance(note, dict):
        raise ValueError("the note beside a kept Docs state is not a JSON object")
    return note, state_path.read_bytes()


def merge_kept_state(ydoc: Doc[Any], state: bytes) -> None:
    """Merge a kept state into a live document, as a local change (sent to the room like any write)."""
    try:
        with ydoc.transaction():
            ydoc.apply_update(state)
    except Exception:  # pycrdt says ValueError; whatever it says, the file is not a Yjs state
        raise InvalidInput("the kept file is not a Yjs state") from None
