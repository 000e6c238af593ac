"""The handles a live session gives out: its opening (``await`` / ``async with``), a feed of changes, and
the listeners its views subscribe.

Where it sits: a package-level private module, because capabilities do not import each other;
``DocsSession`` (``docs/session/docs_session.py``) and ``LiveNotebook`` (``notebook/live.py``) both use it.

How data flows::

    Session.open(...) -> Opening(starter, close)
        await opening              -> starter() -> the open session (the caller closes it)
        async with opening as s    -> starter() ... the block ... close(s, failed=<the block raised>)
    session.watch(timeout=...) -> ChangeFeed(queue, timeout, forget)
        the session puts each change on the queue, and None when it closes
        async for change in feed   -> the next change; ends on None, or after ``timeout`` seconds
                                      without one; ending (or ``aclose()``) calls forget() once
    session.add_change_listener(f) -> ChangeListeners.add(f); the session calls tell() when what it shows
        may have changed: each listener is called, one that raises is logged (a view's bug must not
        break the session), the others are still called
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Generic, TypeVar

__all__ = ["ChangeFeed", "ChangeListeners", "Opening"]

logger = logging.getLogger(__name__)

OpenedType = TypeVar("OpenedType")
ChangeType = TypeVar("ChangeType")


class Opening(Generic[OpenedType]):
    """What ``open(...)`` returns: ``await`` it, or use it as ``async with`` (closed at the end)."""

    def __init__(
        self,
        starter: Callable[[], Awaitable[OpenedType]],
        close: Callable[[OpenedType, bool], Awaitable[object]],
    ) -> None:
        self._starter = starter
        self._close = close
        self._opened: OpenedType | None = None

    def __await__(self) -> Generator[Any, None, OpenedType]:
        return self._starter().__await__()

    async def __aenter__(self) -> OpenedType:
        self._opened = await self._starter()
        return self._opened

    async def __aexit__(self, exc_type: object, exc: object, traceback: object) -> None:
        if self._opened is not None:
            await self._close(self._opened, exc is not None)


class ChangeFeed(Generic[ChangeType]):
    """The async iterator ``watch()`` returns; it listens from the moment it is created."""

    def __init__(
        self, queue: asyncio.Queue[ChangeType | None], timeout: float | None, forget: Callable[[], None]
    ) -> None:
        self._queue = queue
        self._timeout = timeout
        self._forget = forget
        self._finished = False

    def __aiter__(self) -> ChangeFeed[ChangeType]:
        return self

    async def __anext__(self) -> ChangeType:
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
        if not self._finished:
            self._finished = True
            self._forget()


class ChangeListeners:
    """The callables told that a session's state may have changed (its views re-render then)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.listeners: list[Callable[[], None]] = []

    def add(self, listener: Callable[[], None]) -> None:
        self.listeners.append(listener)

    def remove(self, listener: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self.listeners.remove(listener)

    def tell(self) -> None:
        for listener in list(self.listeners):
            try:
                listener()
            except Exception:  # a view's bug must not break the session
                logger.exception("a %s change listener failed", self.what)
