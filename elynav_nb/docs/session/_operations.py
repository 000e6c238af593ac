"""How a ``DocsSession`` runs its operations: one owner task, in order, and retries of timed-out writes.

Where it sits: internal to ``docs/session/``. Sessions span notebook cells, so no cell may hold a
scope another cell must exit (notebook-patterns §3.2): every write, save and close of a session is
handed to ``OperationQueue.run``, and one owner task runs them one after the other.
``TimedOutWrites`` remembers the writes that met ``SYNC_TIMEOUT``, so that the same call made again
is taken as their retry (it waits for the first edit's ack instead of writing twice).

How data flows::

    session._run(operation) -> OperationQueue.run: (operation, reply future) queued
        -> the owner task awaits operation() -> its result or error on the reply -> the caller
    close -> OperationQueue.stop: None queued, the owner ends; what was still queued fails
             ``SERVICE_ERROR`` ("the Docs session is closed")
    write meets SYNC_TIMEOUT -> TimedOutWrites.remember(call, result) -> pending_timeout(...)
    the same call again -> TimedOutWrites.result_of(call) -> no second edit, the same result
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

from elynav_nb.errors import ServiceError, SyncTimeout

__all__ = ["RETRY_MEMORY_SECONDS", "OperationQueue", "TimedOutWrites", "pending_timeout"]

ResultType = TypeVar("ResultType")

RETRY_MEMORY_SECONDS = 600.0
"""How long a write that met SYNC_TIMEOUT is remembered, so that the same call is taken as its retry."""

_Request = tuple[Callable[[], Awaitable[Any]], "asyncio.Future[Any]"]


class OperationQueue:
    """The session's operations, run one after the other by one owner task."""

    def __init__(self) -> None:
        self._requests: asyncio.Queue[_Request | None] = asyncio.Queue()
        self._owner: asyncio.Task[None] | None = None
        self.closed = False
        """Set by the session when it is closed: nothing more runs."""
        self.last_used_at = time.monotonic()
        """When an operation was last asked for (the session pool closes sessions idle too long)."""

    def start(self) -> None:
        self._owner = asyncio.get_running_loop().create_task(self._own(), name="elynav-docs-session")

    @property
    def running(self) -> bool:
        return self._owner is not None and not self._owner.done()

    async def run(self, operation: Callable[[], Awaitable[ResultType]]) -> ResultType:
        """Run ``operation`` after those queued before it; its result, or its error raised here."""
        if self.closed or not self.running:
            raise ServiceError("the Docs session is closed: open it again")
        self.last_used_at = time.monotonic()
        reply: asyncio.Future[ResultType] = asyncio.get_running_loop().create_future()
        await self._requests.put((operation, reply))
        return await reply

    async def stop(self) -> None:
        """Let what is queued run, then end the owner task."""
        if self._owner is None or self._owner.done():
            return
        await self._requests.put(None)
        with contextlib.suppress(asyncio.CancelledError):
            await self._owner

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


class TimedOutWrites:
    """Writes that met ``SYNC_TIMEOUT``, by call, for ``RETRY_MEMORY_SECONDS``."""

    def __init__(self) -> None:
        self._writes: dict[Hashable, tuple[float, Any]] = {}

    def result_of(self, call: Hashable) -> tuple[bool, Any]:
        """``(True, result)`` when ``call`` timed out recently (its retry), else ``(False, None)``."""
        oldest = time.monotonic() - RETRY_MEMORY_SECONDS
        for remembered, (when, _result) in list(self._writes.items()):
            if when < oldest:
                del self._writes[remembered]
        if call in self._writes:
            return True, self._writes[call][1]
        return False, None

    def remember(self, call: Hashable, result: object) -> None:
        self._writes[call] = (time.monotonic(), result)


def pending_timeout(timeout: SyncTimeout, result: object) -> SyncTimeout:
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
