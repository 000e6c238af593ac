"""The tasks waiting for a ``DocsConnection``'s state to change, and how they are woken.

Where it sits: internal to ``live``, under ``connection``. ``await_flush`` and the handshake wait
until the connection's state changes (an acknowledgement, a reset, a failure) or a deadline
passes; the connection calls ``notify`` after each change. No I/O, no protocol: futures and timers.

How data flows: ``wait(loop, deadline)`` parks one bare future (and one ``call_at`` timer) ->
``notify()`` resolves every parked future at once -> each waiter looks at the state again.
"""

from __future__ import annotations

import asyncio

__all__ = ["Wakeups"]


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Wakeups:
    """Futures of the tasks waiting for the next change, resolved together."""

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] = []

    def notify(self) -> None:
        """Wake every task waiting in ``wait``."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            _wake(waiter)

    async def wait(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        """Sleep until the next ``notify`` or the loop-time ``deadline``, whichever comes first.

        A bare future and one timer: ``asyncio.timeout`` + ``Event.wait`` cost several times more,
        and this runs on every acknowledged write.
        """
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append(waiter)
        timer = loop.call_at(deadline, _wake, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            if waiter in self._waiters:  # woken by the timer or cancelled, not by notify
                self._waiters.remove(waiter)
