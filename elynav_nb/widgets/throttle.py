"""Bounded-rate widget updates: ``ThrottledText`` streams append-only HTML into one ``ipywidgets.HTML``;
``RateLimiter`` runs any refresh at most once per interval (live views re-render with it).

Where it sits: under every streaming view of ``elynav_nb.widgets`` (the turn transcript first).
Each ``HTML.value += chunk`` re-sends the *whole* value to the frontend, so a stream of 2,000
small deltas costs 2,000 messages and megabytes; this class keeps chunks in a buffer and assigns
the value at most once per ``min_interval`` seconds (notebook-patterns.md §2.1).

How data flows::

    write(text)        -> html.escape(text) -> buffer
    write_html(markup) -> buffer (markup the caller built and escaped itself)
    buffer -> flush() -> widget.value += "".join(buffer)      (flush_count += 1)

A write flushes at once when the last flush is at least ``min_interval`` old; otherwise, when an
event loop runs in the writing thread, it arms one timer that flushes when the interval is over,
so trailing text never waits for the next write. Without a loop (a plain script) the text waits
for the next write or for an explicit ``flush()``. No frontend is needed: the widget's trait
changes are the only output. ``RateLimiter`` holds that timing rule; ``ThrottledText`` uses it.
"""

from __future__ import annotations

import asyncio
import html
import time
from collections.abc import Callable

import ipywidgets  # type: ignore[import-untyped]

__all__ = ["RateLimiter", "ThrottledText"]


class RateLimiter:
    """Runs ``action`` at most once per ``min_interval`` seconds, and never drops the last request.

    ``request()`` runs it now when the last run is old enough; otherwise, when an event loop runs
    in this thread, one timer runs it when the interval is over (requests in between share that
    run). Without a loop, a request inside the interval waits for the next request or ``run_now()``.
    """

    def __init__(
        self,
        action: Callable[[], None],
        *,
        min_interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.action = action
        self.min_interval = min_interval
        self.clock = clock
        self.run_count = 0
        self._last_run_at: float | None = None
        self._timer: asyncio.TimerHandle | None = None

    def request(self) -> None:
        waited = None if self._last_run_at is None else self.clock() - self._last_run_at
        if waited is None or waited >= self.min_interval:
            self.run_now()
            return
        if self._timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop in this thread: the next request or an explicit run_now() runs it
        self._timer = loop.call_later(self.min_interval - waited, self._run_from_timer)

    def _run_from_timer(self) -> None:
        self._timer = None
        self.run_now()

    def run_now(self) -> None:
        self.cancel()
        self.action()
        self.run_count += 1
        self._last_run_at = self.clock()

    def cancel(self) -> None:
        """Drop a pending timer (the pending run does not happen)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class ThrottledText:
    """Buffers HTML chunks and flushes them into ``widget`` at most once per ``min_interval``.

    ``clock`` returns seconds (``time.monotonic`` by default); tests and the benchmark pass a
    simulated one. ``flush_count`` counts the assignments of ``widget.value``.
    """

    def __init__(
        self,
        widget: ipywidgets.HTML | None = None,
        *,
        min_interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.widget = widget if widget is not None else ipywidgets.HTML()
        self.min_interval = min_interval
        self.clock = clock
        self.written_chunks = 0
        self._buffer: list[str] = []
        self._limiter = RateLimiter(self._send_buffer, min_interval=min_interval, clock=clock)

    @property
    def flush_count(self) -> int:
        """How many times ``widget.value`` was assigned."""
        return self._limiter.run_count

    @property
    def pending(self) -> bool:
        """True when buffered text has not reached the widget yet."""
        return bool(self._buffer)

    def write(self, text: str) -> None:
        """Append plain text (HTML-escaped here)."""
        if text:
            self._append(html.escape(text))

    def write_html(self, markup: str) -> None:
        """Append markup as given: the caller escaped every piece of text inside it."""
        if markup:
            self._append(markup)

    def _append(self, chunk: str) -> None:
        self._buffer.append(chunk)
        self.written_chunks += 1
        self._limiter.request()

    def flush(self) -> None:
        """Send everything buffered now (one assignment of ``widget.value``)."""
        if self._buffer:
            self._limiter.run_now()
        else:
            self._limiter.cancel()

    def _send_buffer(self) -> None:
        addition = "".join(self._buffer)
        self._buffer.clear()
        self.widget.value = self.widget.value + addition

    def close(self) -> None:
        """Flush what is left and drop the timer (call it when the stream ends)."""
        self.flush()

    def __repr__(self) -> str:
        return (
            f"<ThrottledText min_interval={self.min_interval:g}s chunks={self.written_chunks} "
            f"flushes={self.flush_count} chars={len(self.widget.value)}>"
        )
