"""``doc.comments``: the comment threads of one live document, anchored in it as Docs anchors them.

Where it sits: beside ``session`` (which builds one per ``DocsSession``); it joins the REST side
(``rest.threads``: thread and comment texts, authors, resolved state, reactions) with the
document side (``blocknote.comments``: the ``comment`` mark on the text a thread is about).

How data flows::

    threads()        GET threads/ -> Thread records + their anchors read from the live document
    open(block, text, quote=)   check the block and the quote in the document (nothing sent on a
                     bad one) -> POST threads/ -> mark the text (one acknowledged write; a
                     read-only session opens the thread without a mark) -> ping the room
    reply / resolve / unresolve / react   REST -> ping the room
    watch()          new comments, from a poll of threads/ every ``poll`` seconds, sooner when a
                     browser in the room pings (``commentsPing``)

The ping is what Docs' frontend does after each change (``DocsThreadStore.ping``): it sets the
awareness field ``commentsPing = {at, docId, threadId}``, and every other browser in the room
refreshes that thread, so a person sees an agent's comment appear without reloading.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from pycrdt import Doc

from elynav_nb.docs.blocknote import comments as comment_marks
from elynav_nb.docs.blocknote._location import find_block
from elynav_nb.docs.blocknote.reader import read_blocks
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.docs.markdown.inline import parse_inline, plain_text
from elynav_nb.docs.rest.documents import DocsRestClient
from elynav_nb.docs.rest.threads import Comment, Thread, Threads, checked_text
from elynav_nb.errors import ElynavError, InvalidInput

__all__ = ["DocumentComments"]

ResultType = TypeVar("ResultType")


class CommentableDocument(Protocol):
    """What ``DocumentComments`` uses of a ``DocsSession``."""

    rest: DocsRestClient
    ydoc: Doc[Any]
    connection: DocsConnection | None

    @property
    def document_id(self) -> str: ...

    @property
    def read_only(self) -> bool: ...

    async def apply_edit(self, edit: Callable[[], ResultType], *, retry_key: Any = None) -> ResultType: ...


class DocumentComments:
    """The comment threads of one live document (``doc.comments``)."""

    def __init__(self, document: CommentableDocument) -> None:
        self._document = document

    def __repr__(self) -> str:
        return f"<DocumentComments of {self._document.document_id}>"

    async def threads(self) -> Threads:
        """Every thread (newest first), with the block and text each is anchored to (``None`` when
        its mark is gone: the text was deleted)."""
        listed = await self._document.rest.threads.list(self._document.document_id)
        anchors = comment_marks.comment_anchors(self._document.ydoc)
        return Threads(_anchored(thread, anchors) for thread in listed)

    async def open(self, block_id: str, text: str, *, quote: str | None = None) -> Thread:
        """Open a thread on a block (or on ``quote``, a span of its text as a person reads it, with
        no markdown): its first comment is ``text`` (inline markdown). The editor shows the text marked as BlockNote marks comments.

        Checked in the document first (``BLOCK_NOT_FOUND``, ``INVALID_INPUT`` for an empty block or
        a quote not in it), so nothing is sent for a bad anchor. If the block is deleted between
        the thread's creation and its mark, the thread is deleted again and the error raised.
        """
        checked_text(text)
        anchor_text = self._check_anchor(block_id, quote)
        thread = await self._document.rest.threads.open(self._document.document_id, text)
        if self._document.read_only:  # a commenter cannot write the mark: Docs keeps the thread
            self._ping(thread.id)
            return thread
        try:
            await self._document.apply_edit(
                lambda: comment_marks.mark_comment(self._document.ydoc, block_id, thread.id, quote=quote),
                retry_key=("comment", thread.id),
            )
        except ElynavError as error:
            if error.code != "SYNC_TIMEOUT":  # pending is fine: the mark is in the document
                with contextlib.suppress(ElynavError):
                    await self._document.rest.threads.delete(self._document.document_id, thread.id)
                raise
        self._ping(thread.id)
        return replace(thread, block_id=block_id, anchor_text=anchor_text)

    def _check_anchor(self, block_id: str, quote: str | None) -> str:
        if not isinstance(block_id, str) or not block_id:
            raise InvalidInput("a thread is opened on a block: give its id")
        text = plain_text(parse_inline(find_block(read_blocks(self._document.ydoc), block_id).text))
        if quote is None:
            if not text.strip():
                raise InvalidInput("this block has no text to comment on", details={"block_id": block_id})
            return text
        if not isinstance(quote, str) or not quote or quote not in text:
            raise InvalidInput("the quoted text is not in this block", details={"block_id": block_id})
        return quote

    async def reply(self, thread_id: str, text: str) -> Comment:
        """Add a comment (inline markdown) to a thread."""
        comment = await self._document.rest.threads.reply(self._document.document_id, thread_id, text)
        self._ping(thread_id)
        return comment

    async def resolve(self, thread_id: str) -> None:
        """Resolve a thread (Docs allows its creator and the document's owners and administrators)."""
        await self._document.rest.threads.resolve(self._document.document_id, thread_id)
        self._ping(thread_id)

    async def unresolve(self, thread_id: str) -> None:
        await self._document.rest.threads.resolve(self._document.document_id, thread_id, resolved=False)
        self._ping(thread_id)

    async def react(self, thread_id: str, comment_id: str, emoji: str, *, remove: bool = False) -> None:
        """Add (or ``remove``) a reaction to a comment."""
        await self._document.rest.threads.react(
            self._document.document_id, thread_id, comment_id, emoji, remove=remove
        )
        self._ping(thread_id)

    async def watch(self, *, poll: float = 10.0, timeout: float | None = None) -> AsyncIterator[Comment]:
        """New comments from now on (anyone's, ours included), as they appear: ``async for``.

        Reads the threads every ``poll`` seconds (one request against Docs' 80 a minute), sooner
        when a browser in the room says a thread changed. Ends after ``timeout`` seconds without
        a new comment, or when the session closes.
        """
        if poll < 1.0:
            raise InvalidInput("poll must be at least 1 second (each read counts in Docs' throttle)")
        seen = {comment.id for comment in (await self.threads()).comments()}
        pinged = asyncio.Event()
        last_ping = [0.0]
        connection = self._document.connection

        def on_presence() -> None:
            assert connection is not None
            for state in connection.peers().values():
                ping = state.get("commentsPing")
                at = ping.get("at") if isinstance(ping, dict) else None
                if isinstance(at, (int, float)) and at > last_ping[0]:
                    last_ping[0] = at
                    pinged.set()

        if connection is not None:
            connection.add_presence_listener(on_presence)
        last_new = time.monotonic()
        try:
            while connection is None or connection.is_open:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(pinged.wait(), poll)
                pinged.clear()
                fresh = [comment for comment in (await self.threads()).comments() if comment.id not in seen]
                for comment in sorted(fresh, key=lambda item: item.created_at or ""):
                    seen.add(comment.id)
                    last_new = time.monotonic()
                    yield comment
                if timeout is not None and time.monotonic() - last_new >= timeout:
                    return
        finally:
            if connection is not None:
                connection.remove_presence_listener(on_presence)

    def _ping(self, thread_id: str) -> None:
        """Tell the browsers in the room to refresh this thread (Docs' ``commentsPing``)."""
        connection = self._document.connection
        if connection is not None and connection.is_open:
            ping = {"at": int(time.time() * 1000), "docId": self._document.document_id, "threadId": thread_id}
            connection.set_presence("commentsPing", ping)


def _anchored(thread: Thread, anchors: dict[str, comment_marks.Anchor]) -> Thread:
    anchor = anchors.get(thread.id)
    if anchor is None:
        return thread
    return replace(thread, block_id=anchor.block_id, anchor_text=anchor.text)
