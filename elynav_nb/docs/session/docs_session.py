"""``DocsSession``: one live La Suite Docs document, notebook-first (awaitable, displayable, tabular).

Where it sits: the public face of ``elynav_nb.docs``. It wires the pure layers (``addressing``,
``blocknote``, ``credentials``) to the I/O layers (``rest.DocsRestClient``, ``connection.DocsConnection``)
in the order of design note §7; the MCP server and notebooks use only this module.

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
    doc.add_change_listener(f)   f() after a remote edit, an acked write, a save, closing (live views)
    await doc.close()   flush, final save, close the socket
    DocsSession.open_sync(...) / doc.insert_block_sync(...) / ... / doc.close_sync()
        the same calls for scripts, run on elynav_nb's private loop (``_sync.run_sync``)

The final save also covers changes received from people since our last save (when we may write):
a browser saves its own edits only every 60 s, and the room forgets everything when it empties.

Sessions span notebook cells: one owner task runs every operation (writes, saves, close) from a
queue, so no cell ever holds a scope another cell must exit (notebook-patterns §3.2). Anonymous
sessions edit live but cannot save: ``save()`` says so in its result, and so does the repr.
``session_pool.DocsSessionPool`` keeps sessions open per document and closes them after an idle TTL.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import time
import warnings
from collections.abc import Awaitable, Callable, Generator, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pycrdt import Doc

from elynav_nb._display import rich_bundle
from elynav_nb._sync import private_loop, run_sync
from elynav_nb.docs import _durability, blocknote
from elynav_nb.docs._limits import (
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_OPEN_DEADLINE,
    Deadline,
    checked_deadline,
    checked_limit,
)
from elynav_nb.docs.addressing import DocAddress, parse_docs_url
from elynav_nb.docs.blocknote import Block, section_diff, version_diff
from elynav_nb.docs.blocknote import builder as block_builder
from elynav_nb.docs.blocknote.section_diff import SectionChange
from elynav_nb.docs.blocknote.version_diff import DocumentState, VersionDiff
from elynav_nb.docs.comments import DocumentComments
from elynav_nb.docs.credentials import DocsCredentials, check_anonymous_access
from elynav_nb.docs.live._yjs_items import ItemIndex
from elynav_nb.docs.live.connection import REMOTE_ORIGIN, DocsConnection
from elynav_nb.docs.live.presence import Person, people_from_states
from elynav_nb.docs.markdown.inline_html import inline_markdown_to_html
from elynav_nb.docs.oidc import OidcCredentials
from elynav_nb.docs.rest.documents import DocsRestClient, DocumentInfo
from elynav_nb.docs.rest.versions import Versions
from elynav_nb.errors import (
    DocReadonly,
    ElynavError,
    InvalidInput,
    NotAllowed,
    ServiceError,
    SyncTimeout,
    UnsavedChanges,
)

if TYPE_CHECKING:
    import pandas

__all__ = ["DocsSession", "RemoteChange", "RemoteChanges", "SaveResult"]

logger = logging.getLogger(__name__)
ResultType = TypeVar("ResultType")

DEFAULT_SAVE_PATIENCE = 75.0
"""How long ``saved()`` and ``close()`` wait for Docs to accept a save (seconds): Docs' document
throttle counts 80 requests in a 60 s window, and its 429 asks for at most that window."""
RETRY_MEMORY_SECONDS = 600.0
"""How long a write that met SYNC_TIMEOUT is remembered, so that the same call is taken as its retry."""


@dataclass(frozen=True)
class SaveResult:
    """What a save did: ``saved`` False says why (anonymous session, nothing to save...)."""

    saved: bool
    reason: str | None = None
    size_bytes: int = 0


@dataclass(frozen=True)
class RemoteChange:
    """A change someone else made, as ``doc.watch()`` yields it: the blocks after the change."""

    blocks: list[Block]
    changed_block_ids: list[str] = field(default_factory=list)
    at: float = field(default_factory=time.time)


def _heading_level(block: Block) -> int | None:
    """A heading's level as an int (pycrdt reads JS numbers back as floats); None elsewhere."""
    if block.type != "heading":
        return None
    level = block.props.get("level")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or level != int(level):
        return None
    return int(level)


def _block_signature(blocks: list[Block]) -> dict[str, tuple[str, str]]:
    signature: dict[str, tuple[str, str]] = {}
    for top in blocks:
        for block in top.walk():
            signature[block.id] = (block.type, block.text)
    return signature


def _pending_timeout(timeout: SyncTimeout, result: object) -> SyncTimeout:
    """``SYNC_TIMEOUT`` for a write that is in the document and still on its way to the server."""
    details: dict[str, Any] = {**timeout.details, "pending": True}
    if isinstance(result, str) or (
        isinstance(result, list) and all(isinstance(item, str) for item in result)
    ):
        details["result"] = result
    return SyncTimeout(
        f"{timeout.message}: the change is kept in the document and still pending (it is sent again "
        "when the collaboration server answers, and saved over REST meanwhile); calling the same "
        "write again waits for it and returns its result, without writing it twice",
        details=details,
    )


def _retry_detail(error: ElynavError) -> dict[str, Any]:
    retry_after = error.details.get("retry_after_seconds")
    return {"retry_after_seconds": retry_after} if isinstance(retry_after, (int, float)) else {}


def checked_patience(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3600:
        raise InvalidInput("save_patience must be a number of seconds between 0 and 3600")
    return float(value)


class RemoteChanges:
    """The async iterator ``doc.watch()`` returns; it listens from the moment it is created."""

    def __init__(
        self, queue: asyncio.Queue[RemoteChange | None], timeout: float | None, forget: Callable[[], None]
    ) -> None:
        self._queue = queue
        self._timeout = timeout
        self._forget = forget
        self._finished = False

    def __aiter__(self) -> RemoteChanges:
        return self

    async def __anext__(self) -> RemoteChange:
        if self._finished:
            raise StopAsyncIteration
        try:
            change = await asyncio.wait_for(self._queue.get(), self._timeout)
        except TimeoutError:
            change = None
        if change is None:
            await self.aclose()
            raise StopAsyncIteration
        return change

    async def aclose(self) -> None:
        self._finished = True
        self._forget()


class _Opening:
    """What ``DocsSession.open`` returns: ``await`` it, or use it as ``async with``."""

    def __init__(self, starter: Callable[[], Awaitable[DocsSession]]) -> None:
        self._starter = starter
        self._session: DocsSession | None = None

    def __await__(self) -> Generator[Any, None, DocsSession]:
        return self._starter().__await__()

    async def __aenter__(self) -> DocsSession:
        self._session = await self._starter()
        return self._session

    async def __aexit__(self, exc_type: object, exc: object, traceback: object) -> None:
        if self._session is not None:
            await self._session.close(raise_save_error=exc is None)


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
        self.last_saved_at: float | None = None
        self.last_save_error: ElynavError | None = None
        self.last_used_at = time.monotonic()
        self._dirty = False
        self._remote_unsaved = False
        self._save_task: asyncio.Task[None] | None = None
        self._requests: asyncio.Queue[tuple[Callable[[], Awaitable[Any]], asyncio.Future[Any]] | None] = (
            asyncio.Queue()
        )
        self._owner: asyncio.Task[None] | None = None
        self._watchers: list[asyncio.Queue[RemoteChange | None]] = []
        self._change_listeners: list[Callable[[], None]] = []
        self._last_signature: dict[str, tuple[str, str]] = {}
        self._signature_stale = False
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timed_out_writes: dict[Hashable, tuple[float, Any]] = {}
        """Writes that met SYNC_TIMEOUT, by call: a retry of the same call returns their result."""
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
    ) -> _Opening:
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
            if isinstance(credentials, OidcCredentials):
                raise NotAllowed(
                    "a live session needs a Docs session cookie: Docs' collaboration server takes no "
                    "token; OIDC credentials reach the resource-server API (use DocsRestClient)"
                )
            chosen = credentials if credentials is not None else DocsCredentials.from_env()
            address = parse_docs_url(link_or_id, instance=instance or chosen.instance)
            chosen.settle(address.origin)
            client = rest if rest is not None else DocsRestClient(address.origin, chosen)
            if client.instance != address.origin:
                raise InvalidInput("the REST client given is for another instance than the link")
            session = cls(
                address,
                chosen,
                client,
                owns_rest=rest is None,
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

        return _Opening(start)

    async def _start(self, opening: Deadline) -> None:
        """The steps of ``open``; ``opening.step`` says which one runs (for ``DEADLINE_EXCEEDED``)."""
        self._loop = asyncio.get_running_loop()
        opening.step = "read the document and its rights over REST"
        info = await self.rest.retrieve(self.address.document_id)
        if self.credentials.is_anonymous:
            check_anonymous_access(info.raw)
        elif not info.can_read:
            raise NotAllowed("these credentials cannot read this document")
        self.info = info
        opening.step = "load the saved content over REST"
        saved_state = await self.rest.load_content(self.address.document_id)
        if saved_state:
            try:
                with self.ydoc.transaction(origin=REMOTE_ORIGIN):
                    self.ydoc.apply_update(saved_state)
            except Exception:  # pycrdt says ValueError; whatever it says, the state is not usable
                raise ServiceError("the saved content of this document is not a valid Yjs state") from None
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
        self._last_signature = _block_signature(blocknote.read_blocks(self.ydoc))
        connection.add_remote_listener(self._snapshot_before_remote_change, before=True)
        connection.add_remote_listener(self._on_remote_change)
        self._owner = asyncio.get_running_loop().create_task(self._own(), name="elynav-docs-session")
        _durability.register(self)

    async def _abort(self) -> None:
        if self.connection is not None:
            await self.connection.close()
        if self._owns_rest:
            await self.rest.aclose()

    # --- the owner task ------------------------------------------------------------------------

    async def _own(self) -> None:
        while True:
            request = await self._requests.get()
            if request is None:
                break
            operation, reply = request
            try:
                result = await operation()
            except Exception as error:  # noqa: BLE001 - handed to the waiting caller, who re-raises it
                if not reply.done():
                    reply.set_exception(error)
            else:
                if not reply.done():
                    reply.set_result(result)
        while not self._requests.empty():
            leftover = self._requests.get_nowait()
            if leftover is not None and not leftover[1].done():
                leftover[1].set_exception(ServiceError("the Docs session is closed"))

    async def _run(self, operation: Callable[[], Awaitable[ResultType]]) -> ResultType:
        if self._closed or self._owner is None or self._owner.done():
            raise ServiceError("the Docs session is closed: open it again")
        self.last_used_at = time.monotonic()
        reply: asyncio.Future[ResultType] = asyncio.get_running_loop().create_future()
        await self._requests.put((operation, reply))
        return await reply

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
        index = ItemIndex(self.ydoc.get_update()) if with_cursor else None
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
        import pandas

        rows: list[dict[str, Any]] = []
        pending: list[tuple[Block, int, str | None]] = [(block, 0, None) for block in reversed(self.blocks)]
        while pending:
            block, depth, parent_id = pending.pop()
            rows.append(
                {
                    "id": block.id,
                    "type": block.type,
                    "text": block.text,
                    "level": _heading_level(block),
                    "depth": depth,
                    "parent_id": parent_id,
                    "editable": not block.opaque,
                }
            )
            for child in reversed(block.children):
                pending.append((child, depth + 1, block.id))
        columns = ["id", "type", "text", "level", "depth", "parent_id", "editable"]
        frame = pandas.DataFrame(rows, columns=columns)
        frame["level"] = frame["level"].astype("Int64")
        return frame

    def watch(self, *, timeout: float | None = None) -> RemoteChanges:
        """Changes made by someone else, from now on: ``async for change in doc.watch(): ...``.

        The iteration ends when the session closes, or after ``timeout`` seconds without a change.
        """
        queue: asyncio.Queue[RemoteChange | None] = asyncio.Queue()
        self._watchers.append(queue)
        return RemoteChanges(queue, timeout, lambda: self._forget_watcher(queue))

    def add_change_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` whenever what the session shows may have changed: a remote edit, an
        acknowledged write of ours, a save, closing. Views subscribe here (``remove_change_listener``)."""
        self._change_listeners.append(listener)

    def remove_change_listener(self, listener: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self._change_listeners.remove(listener)

    def _tell_listeners(self) -> None:
        for listener in list(self._change_listeners):
            try:
                listener()
            except Exception:  # a view's bug must not break the session
                logger.exception("a Docs session change listener failed")

    def _forget_watcher(self, queue: asyncio.Queue[RemoteChange | None]) -> None:
        with contextlib.suppress(ValueError):
            self._watchers.remove(queue)

    def _snapshot_before_remote_change(self) -> None:
        """Our own writes since the last snapshot must not count as someone else's change."""
        if self._signature_stale:
            self._last_signature = _block_signature(blocknote.read_blocks(self.ydoc))
            self._signature_stale = False

    def _on_remote_change(self) -> None:
        blocks = blocknote.read_blocks(self.ydoc)
        signature = _block_signature(blocks)
        changed = [
            block_id for block_id, value in signature.items() if self._last_signature.get(block_id) != value
        ]
        changed.extend(block_id for block_id in self._last_signature if block_id not in signature)
        self._last_signature = signature
        self._remote_unsaved = True  # saved with our next save, or on close (the person's browser may not)
        change = RemoteChange(blocks=blocks, changed_block_ids=changed)
        for queue in list(self._watchers):
            queue.put_nowait(change)
        self._tell_listeners()

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
            self._forget_old_timeouts()
            remembered = self._timed_out_writes.get(call)
            if remembered is not None:
                result: ResultType = remembered[1]
            else:
                result = edit()
                self._dirty = True  # in the document now: saved at exit even before the ack
            try:
                await self.connection.await_flush(self.ack_timeout)
            except SyncTimeout as timeout:
                self._timed_out_writes[call] = (time.monotonic(), result)
                self._schedule_save()
                raise _pending_timeout(timeout, result) from None
            self._signature_stale = True  # re-read only if someone else edits (O(blocks) per read)
            self._schedule_save()
            self._tell_listeners()
            return result

        return await self._run(operation)

    async def apply_edit(
        self, edit: Callable[[], ResultType], *, retry_key: Hashable | None = None
    ) -> ResultType:
        """Run your own edit of ``doc.ydoc`` (one pycrdt transaction, made by ``edit()``) as an
        acknowledged write, saved like the others; what ``edit`` returns is returned.

        ``retry_key`` names the write for ``SYNC_TIMEOUT`` retries (see ``insert_block``); without
        it every call is a new write. Write only what BlockNote knows (design note §4.5).
        """
        return await self._write(edit, retry_key if retry_key is not None else object())

    def _forget_old_timeouts(self) -> None:
        oldest = time.monotonic() - RETRY_MEMORY_SECONDS
        for call, (when, _result) in list(self._timed_out_writes.items()):
            if when < oldest:
                del self._timed_out_writes[call]

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

    def _schedule_save(self) -> None:
        self._dirty = True
        if not self.can_save:
            return
        if self._save_task is None or self._save_task.done():
            self._save_task = asyncio.get_running_loop().create_task(self._debounced_save())

    def _needs_save(self) -> bool:
        """Edits of ours, or of people (their browsers save only every 60 s), not yet saved."""
        return self.can_save and (self._dirty or (self._remote_unsaved and not self.read_only))

    async def _debounced_save(self) -> None:
        """Save ``save_debounce`` after a write; a refusal worth waiting for (429 with
        ``Retry-After``, 5xx, no answer) is retried after the wait Docs asks for, until saved."""
        await asyncio.sleep(self.save_debounce)
        attempt = 0
        while not self._closed and self._needs_save():
            try:
                await self._run(self._save_now)
                return
            except ElynavError as error:
                if not _durability.transient(error) or self._closed:
                    logger.warning("saving Docs document %s failed: %s", self.document_id, error.code)
                    return
                wait = _durability.next_wait(error, attempt)
                logger.info(
                    "saving Docs document %s: %s, again in %.1f s", self.document_id, error.code, wait
                )
                attempt += 1
                await asyncio.sleep(wait)

    async def _save_patiently(self, patience: float) -> SaveResult:
        """Save now; refusals worth waiting for are retried after Docs' ``Retry-After`` (or a short
        backoff) for up to ``patience`` seconds, the last try at the bound; then the last error."""
        loop = asyncio.get_running_loop()
        give_up_at = loop.time() + patience
        attempt = 0
        while True:
            try:
                return await self._run(self._save_now)
            except ElynavError as error:
                remaining = give_up_at - loop.time()
                if not _durability.transient(error) or remaining <= 0 or self._closed:
                    raise
                await asyncio.sleep(min(_durability.next_wait(error, attempt), remaining))
                attempt += 1

    async def _flush_quietly(self) -> None:
        """Wait for the server's acks; a timeout or failure there does not stop a REST save, which
        makes the document's state durable whatever the collaboration server does."""
        assert self.connection is not None
        with contextlib.suppress(ElynavError):
            await self.connection.await_flush(self.ack_timeout)

    async def saved(self, timeout: float | None = None) -> SaveResult:
        """Return once every edit made so far is **durable** (saved over REST), saving now.

        Waits for the server's acks, then saves, honouring Docs' ``Retry-After`` for up to
        ``timeout`` seconds (default ``save_patience``). Past it: ``UNSAVED_CHANGES`` (the edits stay
        live and the session keeps retrying in the background). Anonymous sessions cannot save:
        the result says so.
        """
        patience = self.save_patience if timeout is None else checked_patience(timeout)
        if not self.can_save:
            return await self._run(self._save_now)
        await self._run(self._flush_quietly)
        if not self._needs_save():
            return SaveResult(True, "nothing unsaved", 0)
        try:
            return await self._save_patiently(patience)
        except ElynavError as error:
            if self._closed:
                raise
            self._schedule_save()
            raise UnsavedChanges(
                f"Docs did not save {self._name()} within {patience:g} s ({error.code}): the edits are "
                "live and the session keeps retrying; await doc.saved() again, or doc.close()",
                details={"document_id": self.document_id, "cause": error.code, **_retry_detail(error)},
            ) from None

    async def _save_now(self) -> SaveResult:
        if not self.can_save:
            return SaveResult(
                False, "anonymous session: the edits are live but not saved (give credentials to save)"
            )
        state = self.ydoc.get_update()
        self._dirty = False
        self._remote_unsaved = False
        try:
            await self.rest.save_content(self.document_id, state, websocket=True)
        except ElynavError as error:
            self._dirty = True
            self.last_save_error = error
            self._tell_listeners()
            raise
        self.last_saved_at = time.time()
        self.last_save_error = None
        self._tell_listeners()
        return SaveResult(True, None, len(state))

    async def save(self) -> SaveResult:
        """Save the full state over REST now (``websocket: true``), once; anonymous sessions cannot.
        ``saved()`` also waits out Docs' throttle."""
        return await self._run(self._save_now)

    def _name(self) -> str:
        return f"{self.title!r} ({self.document_id})" if self.title else self.document_id

    def unsaved_state_for_exit(self) -> _durability.ExitState | None:
        """What the interpreter-exit save needs (``_durability``), or ``None`` when nothing is unsaved."""
        if self._closed or not self._needs_save():
            return None
        document_id, rest = self.document_id, self.rest
        return _durability.ExitState(
            instance=self.address.origin,
            document_id=document_id,
            title=self.title,
            state=self.ydoc.get_update(),
            save=lambda state, timeout: rest.save_content_blocking(document_id, state, timeout=timeout),
        )

    @classmethod
    async def save_kept_state(
        cls, path: str, credentials: DocsCredentials | None = None, **options: Any
    ) -> SaveResult:
        """Save edits a session kept in a file (``UNSAVED_CHANGES`` named it): open the document,
        merge the kept state into it (a CRDT merge: what others wrote since is kept too), wait
        until it is saved, close; the file is removed once saved."""
        try:
            note, state = _durability.read_kept_state(path)
        except (OSError, ValueError) as error:
            raise InvalidInput(f"no kept Docs state can be read at {path} ({type(error).__name__})") from None
        link = f"{note.get('instance')}/docs/{note.get('document_id')}/"
        session = await cls.open(link, credentials, **options)
        try:
            await session._write(lambda: session._merge(state), ("merge_kept_state", path))
            result = await session.saved()
        finally:
            await session.close(raise_save_error=False)
        _durability.forget_kept_state(path)
        return result

    def _merge(self, state: bytes) -> None:
        try:
            with self.ydoc.transaction():  # a local change: sent to the room like any write
                self.ydoc.apply_update(state)
        except Exception:  # pycrdt says ValueError; whatever it says, the file is not a Yjs state
            raise InvalidInput("the kept file is not a Yjs state") from None

    # --- closing -------------------------------------------------------------------------------

    async def close(self, *, raise_save_error: bool = True) -> SaveResult | None:
        """Save what is unsaved, then leave the room and close the socket. Safe to call twice.

        The socket stays open while Docs refuses the last save for a while (``Retry-After``
        honoured up to ``save_patience`` seconds), so the room keeps the edits. When the save must
        be given up, the state is kept in a file and ``UNSAVED_CHANGES`` names it
        (``DocsSession.save_kept_state(path)`` saves it later); with ``raise_save_error=False`` a
        ``DocsUnsavedWarning`` says it instead.
        """
        if self._closed:
            return None
        result: SaveResult | None = None
        error: ElynavError | None = None
        if self._owner is not None and not self._owner.done():
            if self._save_task is not None and not self._save_task.done():
                self._save_task.cancel()
            if self._needs_save():
                try:
                    await self._run(self._flush_quietly)
                    result = await self._save_patiently(self.save_patience)
                except ElynavError as caught:
                    error = self._keep_unsaved(caught)
            await self._requests.put(None)
            with contextlib.suppress(asyncio.CancelledError):
                await self._owner
        self._closed = True
        _durability.unregister(self)
        for queue in self._watchers:
            queue.put_nowait(None)
        await self._abort()
        self._tell_listeners()
        if error is not None:
            if raise_save_error:
                raise error
            warnings.warn(error.message, _durability.DocsUnsavedWarning, stacklevel=2)
        return result

    def _keep_unsaved(self, cause: ElynavError) -> UnsavedChanges:
        """The save was given up: keep the state in a file, and say where."""
        kept = _durability.keep_state(
            self.address.origin, self.document_id, self.title, self.ydoc.get_update(), cause.code
        )
        return UnsavedChanges(
            f"Docs did not save {self._name()} ({cause.code}, for {self.save_patience:g} s): the edits "
            f"are kept in {kept}; DocsSession.save_kept_state({str(kept)!r}) saves them",
            details={
                "document_id": self.document_id,
                "kept_in": str(kept),
                "cause": cause.code,
                **_retry_detail(cause),
            },
        )

    @property
    def is_open(self) -> bool:
        return not self._closed and self.connection is not None and self.connection.is_open

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
        if self._closed:
            return "closed"
        if self.connection is not None and self.connection.failure is not None:
            return f"failed ({self.connection.failure.code})"
        return "read-only" if self.read_only else "read-write"

    def _save_note(self) -> str:
        if not self.can_save:
            return "not saved: anonymous session"
        if self.last_save_error is not None:
            return f"save failed ({self.last_save_error.code})"
        if self._dirty:
            return "save pending"
        return "saved" if self.last_saved_at else "nothing to save"

    def __repr__(self) -> str:
        return (
            f"<DocsSession {self.title!r} id={self.document_id} {self._status()} "
            f"blocks={len(self.blocks)} {self._save_note()}>"
        )

    def _repr_html_(self) -> str:
        rows = []
        for block in self.blocks[:50]:
            level = f" h{block.props.get('level')}" if block.type == "heading" else ""
            rows.append(
                f"<tr><td><code>{html.escape(block.id[:8])}</code></td><td>{html.escape(block.type)}{level}</td>"
                f"<td>{inline_markdown_to_html(block.text[:200])}</td></tr>"
            )
        more = f"<p>… {len(self.blocks) - 50} more blocks</p>" if len(self.blocks) > 50 else ""
        return (
            f"<div><strong>{html.escape(self.title or 'Untitled')}</strong> "
            f"<small>{html.escape(self._status())} · {html.escape(self._save_note())} · "
            f"<a href='{html.escape(self.address.link)}'>open in Docs</a></small>"
            f"<table><tr><th>id</th><th>type</th><th>text</th></tr>{''.join(rows)}</table>{more}</div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a live Docs session cannot be pickled")
