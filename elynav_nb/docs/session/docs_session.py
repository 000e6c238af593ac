"""``DocsSession``: one live La Suite Docs document, notebook-first (awaitable, displayable, tabular).

Where it sits: the public face of ``elynav_nb.docs`` (``docs/session/``, above the layer folders).
It wires the pure layers (``addressing``, ``blocknote``, ``credentials``) to the I/O layers
(``rest.DocsRestClient``, ``live.connection.DocsConnection``) in the order of design note §7; the
MCP server and notebooks use only this class. Its parts, internal to ``docs/session/``: the opening
(``_opening``), the owner task (``_operations``), the saves (``_saving``, ``_durability``), what it
tells about changes (``_changes``) and how it shows itself (``_view``).

How data flows::

    DocsSession.open(link_or_id, credentials, deadline=30)
        parse the link -> settle the instance -> REST retrieve (rights; anonymous: public+editor only)
        -> REST load content -> hydrate a fresh pycrdt.Doc -> WebSocket handshake (DocsConnection)
        all of it within ``deadline`` seconds, or DEADLINE_EXCEEDED naming the step (``_limits``)
    await doc.insert_block(...) / update_block / delete_block / insert_markdown / replace_section
        validate -> one pycrdt transaction -> Sync/Update -> wait for the server's ack -> return
        -> a debounced REST save of the full state ({"content", "websocket": true})
        (whole markdown: ``blocknote.builder`` and ``section_diff`` over ``markdown.blocks``)
    doc.blocks / doc.to_markdown() / doc.to_frame() / doc.watch()   (reads of the live Doc)
    doc.people()   the room's awareness states, cursors placed in their blocks (``live.presence``)
    doc.add_change_listener(f)   f() after a remote edit, an acked write, a save, closing (live views)
    await doc.close()   flush, final save, close the socket
    DocsSession.open_sync(...) / doc.insert_block_sync(...) / ... / doc.close_sync()
        the same calls for scripts, run on elynav_nb's private loop (``_sync.run_sync``)

Sessions span notebook cells (one owner task runs every operation: ``_operations``); saves also
cover what people wrote since ours (``_saving``); anonymous sessions edit live but cannot save.
``pool.DocsSessionPool`` keeps sessions open per document and closes them after an idle TTL.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

from pycrdt import Doc

from elynav_nb._display import rich_bundle
from elynav_nb._session_handles import Opening
from elynav_nb._sync import private_loop, run_sync
from elynav_nb.docs import blocknote
from elynav_nb.docs._limits import (
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_OPEN_DEADLINE,
    Deadline,
    checked_deadline,
    checked_limit,
)
from elynav_nb.docs.addressing import DocAddress
from elynav_nb.docs.blocknote import Block, section_diff, version_diff
from elynav_nb.docs.blocknote import builder as block_builder
from elynav_nb.docs.blocknote.section_diff import SectionChange
from elynav_nb.docs.blocknote.version_diff import DocumentState, VersionDiff
from elynav_nb.docs.comments import DocumentComments
from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.docs.live.presence import CursorPlaces, Person, people_from_states
from elynav_nb.docs.oidc import OidcCredentials
from elynav_nb.docs.rest.documents import DocsRestClient, DocumentInfo
from elynav_nb.docs.rest.versions import Versions
from elynav_nb.docs.session._changes import ChangeTracker, RemoteChange, RemoteChanges
from elynav_nb.docs.session._durability import (
    DocsUnsavedWarning,
    ExitState,
    forget_kept_state,
    merge_kept_state,
    read_kept_state,
    register,
    unregister,
)
from elynav_nb.docs.session._opening import load_document, target
from elynav_nb.docs.session._operations import OperationQueue, TimedOutWrites, pending_timeout
from elynav_nb.docs.session._saving import DEFAULT_SAVE_PATIENCE, SaveResult, SessionSaving, checked_patience
from elynav_nb.docs.session._view import blocks_frame, session_html, session_status
from elynav_nb.errors import DocReadonly, ElynavError, InvalidInput, ServiceError, SyncTimeout

if TYPE_CHECKING:
    import pandas

__all__ = ["DocsSession", "RemoteChange", "RemoteChanges", "SaveResult"]

ResultType = TypeVar("ResultType")


async def _close_session(session: DocsSession, failed: bool) -> None:
    """How ``async with DocsSession.open(...)`` ends: a save error is raised unless the block failed."""
    await session.close(raise_save_error=not failed)


class DocsSession:
    """A live Docs document. Open with ``DocsSession.open(link_or_id, credentials)``."""

    def __init__(
        self,
        address: DocAddress,
        credentials: DocsCredentials,
        rest: DocsRestClient,
        *,
        owns_rest: bool,
        ack_timeout: float,
        save_debounce: float,
        open_timeout: float,
        user_name: str,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        save_patience: float = DEFAULT_SAVE_PATIENCE,
    ) -> None:
        self.address = address
        self.credentials = credentials
        self.rest = rest
        self._owns_rest = owns_rest
        self.ack_timeout = ack_timeout
        self.save_debounce = save_debounce
        self.open_timeout = open_timeout
        self.user_name = user_name
        self.max_message_bytes = max_message_bytes
        self.save_patience = save_patience
        self.info: DocumentInfo | None = None
        self.ydoc: Doc[Any] = Doc()
        self.connection: DocsConnection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._operations = OperationQueue()
        self._timed_out_writes = TimedOutWrites()
        """Writes that met SYNC_TIMEOUT, by call: a retry of the same call returns their result."""
        self._changes = ChangeTracker(self.ydoc)
        self._saving = SessionSaving(self, self._operations, notify=self._changes.tell)
        self._cursor_places = CursorPlaces(self.ydoc)
        self.comments = DocumentComments(self)
        """The document's comment threads: ``await doc.comments.threads()``, ``open``, ``reply``..."""

    # --- opening -------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        link_or_id: str,
        credentials: DocsCredentials | OidcCredentials | None = None,
        *,
        instance: str | None = None,
        rest: DocsRestClient | None = None,
        ack_timeout: float = 5.0,
        save_debounce: float = 1.0,
        open_timeout: float = 10.0,
        user_name: str = "Elynav bot",
        deadline: float = DEFAULT_OPEN_DEADLINE,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        save_patience: float = DEFAULT_SAVE_PATIENCE,
    ) -> Opening[DocsSession]:
        """Open a document by link (or bare UUID once an instance is known).

        ``credentials`` default to ``DocsCredentials.from_env()``; without a session the document
        must be public and editable by link. Use ``async with DocsSession.open(...) as doc`` in one
        cell, or ``doc = await DocsSession.open(...)`` and ``await doc.close()`` in a later one.

        Bounds (values and reasons in ``_limits``): the whole opening (REST rights, configuration
        and content, WebSocket connect and handshake) ends within ``deadline`` seconds (30), else
        ``DEADLINE_EXCEEDED`` naming the step (closing what was opened may take up to 2 s more,
        for a server that does not answer the WebSocket close). ``open_timeout`` (10 s) bounds
        the WebSocket handshake alone, here and on every reconnect (``SYNC_TIMEOUT``). A
        collaboration message over ``max_message_bytes`` (24 MiB) ends the connection with
        ``RESPONSE_TOO_LARGE``; REST bodies are bounded by the client's ``max_response_bytes``
        (32 MiB: pass ``rest=`` to change it).

        Durability: a write returns once the collaboration server acknowledged it (**live**); it is
        **durable** once saved over REST, ``save_debounce`` (1 s) later, or at once with
        ``await doc.saved()``. A save Docs refuses for a while (its 80-a-minute throttle answers
        429 with ``Retry-After``) is retried; ``saved()`` and ``close()`` wait for it up to
        ``save_patience`` seconds (75: Docs' throttle window is 60 s), keeping the socket open
        meanwhile so the room keeps the edits. Past it, ``close()`` keeps the state in a file and
        raises ``UNSAVED_CHANGES`` naming it. A session left open at interpreter exit is saved then.
        """

        async def start() -> DocsSession:
            checked_deadline(deadline)
            checked_limit(max_message_bytes, "max_message_bytes")
            found = target(link_or_id, credentials, instance=instance, rest=rest)
            session = cls(
                found.address,
                found.credentials,
                found.rest,
                owns_rest=found.owns_rest,
                ack_timeout=ack_timeout,
                save_debounce=save_debounce,
                open_timeout=open_timeout,
                user_name=user_name,
                max_message_bytes=max_message_bytes,
                save_patience=checked_patience(save_patience),
            )
            opening = Deadline.start(deadline, "open this document")
            try:
                await opening.run(session._start(opening))
            except BaseException:
                await session._abort()
                raise
            return session

        return Opening(start, _close_session)

    async def _start(self, opening: Deadline) -> None:
        """The steps of ``open``; ``opening.step`` says which one runs (for ``DEADLINE_EXCEEDED``)."""
        self._loop = asyncio.get_running_loop()
        self.info = await load_document(self.rest, self.address, self.credentials, self.ydoc, opening)
        opening.step = "read the collaboration URL over REST"
        url = await self.rest.websocket_url()
        opening.step = "connect to the collaboration server and finish the Hocuspocus handshake"
        connection = DocsConnection(
            self.ydoc,
            url=url,
            document_name=self.address.document_id,
            origin=self.address.origin,
            cookie=self.credentials.cookie_header(self.address.origin),
            user_name=self.user_name,
            open_timeout=self.open_timeout,
            max_message_bytes=self.max_message_bytes,
        )
        self.connection = connection
        await connection.open()
        self._changes.start()
        connection.add_remote_listener(self._changes.before_remote, before=True)
        connection.add_remote_listener(self._on_remote_change)
        self._operations.start()
        register(self)  # saved at interpreter exit if left open with unsaved edits

    async def _abort(self) -> None:
        if self.connection is not None:
            await self.connection.close()
        if self._owns_rest:
            await self.rest.aclose()

    @property
    def last_used_at(self) -> float:
        """When an operation was last asked of this session (``time.monotonic()``: the pool's idle clock)."""
        return self._operations.last_used_at

    @last_used_at.setter
    def last_used_at(self, value: float) -> None:
        self._operations.last_used_at = value

    # --- reading -------------------------------------------------------------------------------

    @property
    def document_id(self) -> str:
        return self.address.document_id

    @property
    def title(self) -> str:
        return self.info.title if self.info else ""

    @property
    def blocks(self) -> list[Block]:
        """The blocks as they are now (nested children included)."""
        return blocknote.read_blocks(self.ydoc)

    @property
    def read_only(self) -> bool:
        connection_read_only = self.connection.read_only if self.connection else False
        return connection_read_only or not (self.info.can_edit if self.info else False)

    @property
    def can_save(self) -> bool:
        """Anonymous sessions edit live but cannot save over REST."""
        return not self.credentials.is_anonymous

    def people(self) -> list[Person]:
        """Who else is in the document now: their name and colour as Docs shows them, and, while
        their editor has the focus, their cursor and the block it is in (``block_id``)."""
        if self.connection is None:
            return []
        states = self.connection.peers()
        with_cursor = any(isinstance(state.get("cursor"), dict) for state in states.values())
        index = self._cursor_places.index() if with_cursor else None
        return people_from_states(states, index)

    def to_markdown(self, *, bullet: str = "*") -> str:
        """The document as markdown, in the dialect ``insert_markdown`` reads.

        Bullets are ``*`` as in Docs' own markdown export (BlockNote's): the marker a person typed is
        not stored in the document. ``bullet="-"`` (or ``"+"``) writes that marker instead.
        """
        return blocknote.blocks_to_markdown(self.blocks, bullet=bullet)

    def to_frame(self) -> pandas.DataFrame:
        """One row per block, depth first: id, type, text, level, depth, parent_id, editable.

        ``level`` is a nullable integer column (``Int64``): a heading's level, ``<NA>`` for other
        blocks. ``editable`` is False for the blocks shown here but never rewritten
        (``update_block`` refuses them with ``UNSUPPORTED_BLOCK_TYPE``): Docs' own blocks
        (callouts, PDFs, page breaks, columns, tables...) and texts holding inline nodes such as
        links to other documents (``Block.opaque`` is its opposite).
        """
        return blocks_frame(self.blocks)

    def watch(self, *, timeout: float | None = None) -> RemoteChanges:
        """Changes made by someone else, from now on: ``async for change in doc.watch(): ...``.

        The iteration ends when the session closes, or after ``timeout`` seconds without a change.
        """
        return self._changes.watch(timeout)

    def add_change_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` whenever what the session shows may have changed: a remote edit, an
        acknowledged write of ours, a save, closing. Views subscribe here (``remove_change_listener``)."""
        self._changes.add_listener(listener)

    def remove_change_listener(self, listener: Callable[[], None]) -> None:
        self._changes.remove_listener(listener)

    def _on_remote_change(self) -> None:
        self._saving.remote_edited()  # saved with our next save, or on close (the person's browser may not)
        self._changes.remote_changed()

    # --- writing -------------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self.read_only:
            raise DocReadonly("this document is read-only for these credentials")

    async def _write(self, edit: Callable[[], ResultType], call: Hashable) -> ResultType:
        """Run ``edit`` (one transaction on the document), wait for the server's ack, schedule the save.

        ``call`` names the write (method and arguments). When the ack does not come in time, the
        edit stays in the document and goes out with the next handshake: ``SYNC_TIMEOUT`` says it
        is pending (``details["pending"]``), the save is scheduled anyway (the REST save makes it
        durable even while the collaboration server is away), and the same ``call`` made again
        within ``RETRY_MEMORY_SECONDS`` is taken as a retry: it waits for the ack of the first
        edit and returns its result, writing nothing twice.
        """

        async def operation() -> ResultType:
            self._check_writable()
            assert self.connection is not None
            retried, remembered = self._timed_out_writes.result_of(call)
            if retried:
                result: ResultType = remembered
            else:
                result = edit()
                self._saving.edited()  # in the document now: saved at exit even before the ack
            try:
                await self.connection.await_flush(self.ack_timeout)
            except SyncTimeout as timeout:
                self._timed_out_writes.remember(call, result)
                self._saving.schedule()
                raise pending_timeout(timeout, result) from None
            self._saving.schedule()
            self._changes.ours_acknowledged()  # re-read only if someone else edits (O(blocks) per read)
            return result

        return await self._operations.run(operation)

    async def apply_edit(
        self, edit: Callable[[], ResultType], *, retry_key: Hashable | None = None
    ) -> ResultType:
        """Run your own edit of ``doc.ydoc`` (one pycrdt transaction, made by ``edit()``) as an
        acknowledged write, saved like the others; what ``edit`` returns is returned.

        ``retry_key`` names the write for ``SYNC_TIMEOUT`` retries (see ``insert_block``); without
        it every call is a new write. Write only what BlockNote knows (design note §4.5).
        """
        return await self._write(edit, retry_key if retry_key is not None else object())

    async def insert_block(
        self,
        text: str,
        type: str = "paragraph",
        level: int | None = None,
        after: str | None = None,
        **options: Any,
    ) -> str:
        """Insert a block after ``after`` (``None``: at the top, before every block); returns its new
        UUID v4 once acked. To add blocks in reading order, use ``append_block``."""
        return await self._write(
            lambda: blocknote.insert_block(self.ydoc, text, type, level, after, **options),
            ("insert_block", text, type, level, after, tuple(sorted(options.items()))),
        )

    async def append_block(
        self, text: str, type: str = "paragraph", level: int | None = None, **options: Any
    ) -> str:
        """Add a block at the end of the document (after its last top-level block); its id once acked.

        Three calls give three blocks in that order, even when they run concurrently: the end is read
        inside the write, not before it.
        """
        return await self._write(
            lambda: blocknote.insert_block(self.ydoc, text, type, level, self._last_block_id(), **options),
            ("append_block", text, type, level, tuple(sorted(options.items()))),
        )

    async def update_block(self, block_id: str, text: str) -> None:
        """Change a block's text by a minimal diff; type and props are kept."""
        await self._write(
            lambda: blocknote.update_block_text(self.ydoc, block_id, text), ("update_block", block_id, text)
        )

    async def delete_block(self, block_id: str) -> None:
        await self._write(lambda: blocknote.delete_block(self.ydoc, block_id), ("delete_block", block_id))

    async def insert_markdown(self, markdown: str, after: str | None = None) -> list[str]:
        """Insert block-level markdown (headings, lists, quotes, code, images, tables...) as blocks, after
        ``after`` (``None``: at the top), in one acknowledged transaction; returns the new ids, depth first.
        ``append_markdown`` adds them at the end."""
        return await self._write(
            lambda: block_builder.insert_markdown(self.ydoc, markdown, after),
            ("insert_markdown", markdown, after),
        )

    async def append_markdown(self, markdown: str) -> list[str]:
        """``insert_markdown`` at the end of the document (after its last top-level block)."""
        return await self._write(
            lambda: block_builder.insert_markdown(self.ydoc, markdown, self._last_block_id()),
            ("append_markdown", markdown),
        )

    def _last_block_id(self) -> str | None:
        blocks = blocknote.read_blocks(self.ydoc)
        return blocks[-1].id if blocks else None

    async def replace_section(self, heading_id: str, markdown: str) -> SectionChange:
        """Make what follows a heading (up to the next heading of its level or higher) read as
        ``markdown``, by the smallest change: unchanged blocks keep their ids and everything on them."""
        return await self._write(
            lambda: section_diff.replace_section(self.ydoc, heading_id, markdown),
            ("replace_section", heading_id, markdown),
        )

    # --- versions ------------------------------------------------------------------------------

    async def versions(self, *, limit: int = 500) -> Versions:
        """The document's saved versions, newest first (Docs leaves out the current content)."""
        return await self.rest.versions.list(self.document_id, limit=limit)

    async def read_version(self, version_id: str) -> DocumentState:
        """A version as blocks (``.blocks``) and markdown (``.markdown``)."""
        state = await self.rest.versions.read(self.document_id, version_id)
        return version_diff.read_state(state, f"version {version_id[:12]}")

    async def diff(self, old_version_id: str, new_version_id: str | None = None) -> VersionDiff:
        """What changed from a version to another (``new_version_id=None``: to the document now):
        ``.markdown`` is a unified diff of the two markdowns, ``.to_frame()`` one row per added,
        deleted, changed or moved block."""
        old = await self.read_version(old_version_id)
        if new_version_id is None:
            new = version_diff.DocumentState("now", self.blocks)
        else:
            new = await self.read_version(new_version_id)
        return version_diff.diff_states(old, new)

    # --- saving --------------------------------------------------------------------------------

    @property
    def last_saved_at(self) -> float | None:
        """When the last save succeeded (``time.time()``), or ``None``."""
        return self._saving.last_saved_at

    @property
    def last_save_error(self) -> ElynavError | None:
        """Why the last save failed, or ``None`` once a save succeeded."""
        return self._saving.last_save_error

    async def saved(self, timeout: float | None = None) -> SaveResult:
        """Return once every edit made so far is **durable** (saved over REST), saving now.

        Waits for the server's acks, then saves, honouring Docs' ``Retry-After`` for up to
        ``timeout`` seconds (default ``save_patience``). Past it: ``UNSAVED_CHANGES`` (the edits stay
        live and the session keeps retrying in the background). Anonymous sessions cannot save:
        the result says so.
        """
        return await self._saving.saved(timeout)

    async def save(self) -> SaveResult:
        """Save the full state over REST now (``websocket: true``), once; anonymous sessions cannot.
        ``saved()`` also waits out Docs' throttle."""
        return await self._operations.run(self._saving.save_now)

    def unsaved_state_for_exit(self) -> ExitState | None:
        """What the interpreter-exit save needs (``_durability``), or ``None`` when nothing is unsaved."""
        return self._saving.exit_state()

    @classmethod
    async def save_kept_state(
        cls, path: str, credentials: DocsCredentials | None = None, **options: Any
    ) -> SaveResult:
        """Save edits a session kept in a file (``UNSAVED_CHANGES`` named it): open the document,
        merge the kept state into it (a CRDT merge: what others wrote since is kept too), wait
        until it is saved, close; the file is removed once saved."""
        try:
            note, state = read_kept_state(path)
        except (OSError, ValueError) as error:
            raise InvalidInput(f"no kept Docs state can be read at {path} ({type(error).__name__})") from None
        link = f"{note.get('instance')}/docs/{note.get('document_id')}/"
        session = await cls.open(link, credentials, **options)
        try:
            await session._write(lambda: merge_kept_state(session.ydoc, state), ("merge_kept_state", path))
            result = await session.saved()
        finally:
            await session.close(raise_save_error=False)
        forget_kept_state(path)
        return result

    # --- closing -------------------------------------------------------------------------------

    async def close(self, *, raise_save_error: bool = True) -> SaveResult | None:
        """Save what is unsaved, then leave the room and close the socket. Safe to call twice.

        The socket stays open while Docs refuses the last save for a while (``Retry-After``
        honoured up to ``save_patience`` seconds), so the room keeps the edits. When the save must
        be given up, the state is kept in a file and ``UNSAVED_CHANGES`` names it
        (``DocsSession.save_kept_state(path)`` saves it later); with ``raise_save_error=False`` a
        ``DocsUnsavedWarning`` says it instead.
        """
        if self._operations.closed:
            return None
        result: SaveResult | None = None
        error: ElynavError | None = None
        if self._operations.running:
            result, error = await self._saving.before_close()
            await self._operations.stop()
        self._operations.closed = True
        unregister(self)
        self._changes.close()
        await self._abort()
        self._changes.tell()
        if error is not None:
            if raise_save_error:
                raise error
            warnings.warn(error.message, DocsUnsavedWarning, stacklevel=2)
        return result

    @property
    def is_open(self) -> bool:
        return not self._operations.closed and self.connection is not None and self.connection.is_open

    # --- blocking API (scripts) ----------------------------------------------------------------

    @classmethod
    def open_sync(
        cls, link_or_id: str, credentials: DocsCredentials | None = None, **options: Any
    ) -> DocsSession:
        """Blocking ``open()`` for scripts: the session then lives on elynav_nb's private loop.

        Use the other ``*_sync`` methods on it, and ``close_sync()`` at the end. In a notebook, prefer
        ``await DocsSession.open(...)``.
        """

        async def opened() -> DocsSession:
            return await cls.open(link_or_id, credentials, **options)

        return run_sync(opened(), owner_loop=private_loop())

    def _blocking(self, operation: Callable[[], Awaitable[ResultType]]) -> ResultType:
        async def awaited() -> ResultType:
            return await operation()

        if self._loop is None:
            raise ServiceError("the Docs session is not open: use DocsSession.open_sync(...)")
        return run_sync(awaited(), owner_loop=self._loop)

    def insert_block_sync(
        self,
        text: str,
        type: str = "paragraph",
        level: int | None = None,
        after: str | None = None,
        **options: Any,
    ) -> str:
        """Blocking ``insert_block()``: the new block's id, once acknowledged."""
        return self._blocking(lambda: self.insert_block(text, type, level, after, **options))

    def update_block_sync(self, block_id: str, text: str) -> None:
        """Blocking ``update_block()``."""
        self._blocking(lambda: self.update_block(block_id, text))

    def delete_block_sync(self, block_id: str) -> None:
        """Blocking ``delete_block()``."""
        self._blocking(lambda: self.delete_block(block_id))

    def append_block_sync(
        self, text: str, type: str = "paragraph", level: int | None = None, **options: Any
    ) -> str:
        """Blocking ``append_block()``."""
        return self._blocking(lambda: self.append_block(text, type, level, **options))

    def append_markdown_sync(self, markdown: str) -> list[str]:
        """Blocking ``append_markdown()``."""
        return self._blocking(lambda: self.append_markdown(markdown))

    def insert_markdown_sync(self, markdown: str, after: str | None = None) -> list[str]:
        """Blocking ``insert_markdown()``."""
        return self._blocking(lambda: self.insert_markdown(markdown, after))

    def replace_section_sync(self, heading_id: str, markdown: str) -> SectionChange:
        """Blocking ``replace_section()``."""
        return self._blocking(lambda: self.replace_section(heading_id, markdown))

    def save_sync(self) -> SaveResult:
        """Blocking ``save()``."""
        return self._blocking(lambda: self.save())

    def close_sync(self, *, raise_save_error: bool = True) -> SaveResult | None:
        """Blocking ``close()``."""
        if self._loop is None:
            return None
        return self._blocking(lambda: self.close(raise_save_error=raise_save_error))

    # --- display -------------------------------------------------------------------------------

    def _status(self) -> str:
        failure = self.connection.failure if self.connection is not None else None
        return session_status(closed=self._operations.closed, failure=failure, read_only=self.read_only)

    def __repr__(self) -> str:
        return (
            f"<DocsSession {self.title!r} id={self.document_id} {self._status()} "
            f"blocks={len(self.blocks)} {self._saving.note()}>"
        )

    def _repr_html_(self) -> str:
        return session_html(self.title, self._status(), self._saving.note(), self.address.link, self.blocks)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a live Docs session cannot be pickled")
