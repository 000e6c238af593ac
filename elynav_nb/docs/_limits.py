"""Deadlines and size limits of the Docs client: how long a call may last, how much a server may send.

Where it sits: a small rule module of ``elynav_nb.docs`` with no I/O of its own. The REST client
(``rest``) bounds each call with a ``Deadline``, caps ``Retry-After`` with ``retry_wait`` and reads
bodies up to ``DEFAULT_MAX_RESPONSE_BYTES``; ``DocsSession.open`` bounds the whole opening with a
``Deadline``; the WebSocket connection gives websockets ``DEFAULT_MAX_MESSAGE_BYTES`` as ``max_size``.
A broken or hostile server can be slow (one byte every few seconds defeats a per-read timeout) or
large (a body or a message of gigabytes); with these bounds every call ends, typed, in bounded time
and memory.

The values and why::

    DEFAULT_REQUEST_DEADLINE  30 s     one REST call, retries and their waits included. The largest
                                       answer Docs serves (a 20 MiB base64 content, below) takes
                                       about 16 s at 10 Mbit/s; a healthy Docs answers the rest in
                                       well under a second.
    DEFAULT_OPEN_DEADLINE     30 s     all of DocsSession.open: its REST calls (rights, configuration,
                                       content) and the WebSocket connect + Hocuspocus handshake
                                       (itself bounded by open_timeout, 10 s): the content download
                                       above plus a handshake fit.
    MAX_RETRY_AFTER           5 s      the longest wait a Retry-After gets before a retry (Docs'
                                       throttle is 80 requests a minute: a few seconds frees a
                                       slot); a longer or later one, or any wait that would pass
                                       the deadline, ends the call at once with the server's error.
    DEFAULT_MAX_RESPONSE_BYTES 32 MiB  one REST body, counted as it streams in (after decompression).
                                       Docs refuses request bodies over DATA_UPLOAD_MAX_MEMORY_SIZE
                                       (20 MiB by default), so no saved content is larger than
                                       20 MiB of base64; the rest is headroom.
    DEFAULT_MAX_MESSAGE_BYTES 24 MiB   one collaboration (WebSocket) message, websockets' max_size.
                                       A message carries binary Yjs (no base64): what Docs can have
                                       saved is at most 15 MiB of it (3/4 of 20 MiB); the same
                                       headroom as above. It was 512 MiB.

A call that runs out of time raises ``DeadlineExceeded`` (code ``DEADLINE_EXCEEDED``, an
``OperationTimeout``) naming the deadline and the step it was in; a body or a message over its limit
raises ``ResponseTooLarge`` (code ``RESPONSE_TOO_LARGE``) naming the limit and the setting to raise.

How data flows::

    deadline = Deadline.start(seconds, "read this document")   loop time now + seconds
    await deadline.run(coroutine)      the coroutine is cancelled at the deadline -> DeadlineExceeded
    deadline.step = "..."              what the error names (the session moves it along)
    retry_wait(attempt, backoff, retry_after_seconds(header), deadline) -> seconds, or None: give up
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
from collections.abc import Awaitable
from typing import Final, TypeVar

from elynav_nb.errors import DeadlineExceeded, InvalidInput, ResponseTooLarge

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_OPEN_DEADLINE",
    "DEFAULT_REQUEST_DEADLINE",
    "MAX_RETRY_AFTER",
    "Deadline",
    "checked_deadline",
    "checked_limit",
    "response_too_large",
    "retry_after_seconds",
    "retry_wait",
]

MEBIBYTE: Final = 1024 * 1024
DEFAULT_REQUEST_DEADLINE: Final = 30.0
DEFAULT_OPEN_DEADLINE: Final = 30.0
MAX_RETRY_AFTER: Final = 5.0
DEFAULT_MAX_RESPONSE_BYTES: Final = 32 * MEBIBYTE
DEFAULT_MAX_MESSAGE_BYTES: Final = 24 * MEBIBYTE

ResultType = TypeVar("ResultType")


def checked_deadline(seconds: float, name: str = "deadline") -> float:
    """``seconds`` as a positive, finite float; ``InvalidInput`` otherwise."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise InvalidInput(f"{name} must be a number of seconds")
    if not math.isfinite(seconds) or seconds <= 0:
        raise InvalidInput(f"{name} must be a positive, finite number of seconds", details={name: seconds})
    return float(seconds)


def checked_limit(size: int, name: str) -> int:
    """``size`` as a positive number of bytes; ``InvalidInput`` otherwise."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InvalidInput(f"{name} must be a positive number of bytes")
    return size


class Deadline:
    """A point in the running loop's time by which a whole call must be done.

    ``run(coroutine)`` cancels the coroutine when the deadline passes and raises
    ``DeadlineExceeded`` naming ``what``, the number of seconds, and ``step`` (the part of the call
    in progress, which the caller may update as it goes).
    """

    def __init__(self, seconds: float, what: str, at: float) -> None:
        self.seconds = seconds
        self.what = what
        self.at = at
        self.step = what

    @classmethod
    def start(cls, seconds: float, what: str) -> Deadline:
        """A deadline ``seconds`` from now, on the running loop's clock."""
        return cls(seconds, what, asyncio.get_running_loop().time() + seconds)

    def remaining(self) -> float:
        """Seconds left (0 once passed)."""
        return max(0.0, self.at - asyncio.get_running_loop().time())

    def exceeded(self) -> DeadlineExceeded:
        """The error of this deadline, naming the step that was in progress."""
        step = f" (it was trying to {self.step})" if self.step != self.what else ""
        return DeadlineExceeded(
            f"Docs did not let us {self.what} within the {self.seconds:g} s deadline{step}",
            details={"deadline_seconds": self.seconds, "step": self.step},
        )

    async def run(self, awaitable: Awaitable[ResultType]) -> ResultType:
        """Await ``awaitable``, cancelled at the deadline: ``DeadlineExceeded`` then."""
        scope = asyncio.timeout_at(self.at)
        try:
            async with scope:
                return await awaitable
        except TimeoutError:
            if scope.expired():
                raise self.exceeded() from None
            raise


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for (seconds or an HTTP date); ``None`` if unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text) if len(text) < 12 else math.inf
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_wait(attempt: int, backoff: float, retry_after: float | None, deadline: Deadline) -> float | None:
    """Seconds to wait before retry ``attempt + 1``, or ``None`` to give up now.

    The wait is the exponential backoff, or the server's ``Retry-After`` when longer, capped at
    ``MAX_RETRY_AFTER``. A server asking for more than the cap, or a wait that would pass the
    deadline, ends the call now: waiting could not end it in time.
    """
    wait: float = backoff * 2.0**attempt
    if retry_after is not None:
        if retry_after > MAX_RETRY_AFTER:
            return None
        wait = max(wait, retry_after)
    if wait >= deadline.remaining():
        return None
    return wait


def response_too_large(
    what: str, limit: int, setting: str, *, declared: int | None = None
) -> ResponseTooLarge:
    """The error for an answer over ``limit`` bytes; ``setting`` names the option that raises it."""
    claimed = f" (it announced {declared} bytes)" if declared is not None else ""
    return ResponseTooLarge(
        f"Docs sent more than the {limit}-byte limit while we tried to {what}{claimed}; "
        f"raise {setting} if this document is really that large",
        details={"limit_bytes": limit, "setting": setting, "declared_bytes": declared},
    )
