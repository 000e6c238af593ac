"""The two handles a live session gives out: its opening (``await`` / ``async with``) and a feed of changes.

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
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Generic, TypeVar

__all__ = ["ChangeFeed", "Opening"]

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
