"""Blocking wrappers for scripts and cells that want them, without nest_asyncio.

Where it sits: used by the ``*_sync`` methods of every capability (``runner.send_sync``...).
How it works: one daemon thread runs one private event loop, created on first use; a blocking
call submits its coroutine there and waits for the answer. Objects used through ``*_sync``
methods therefore live on that private loop, whatever thread calls them; a ``*_sync`` call made
from the very loop an object lives on would deadlock, so it raises ``SyncCallInsideLoop``.

The one exception is the user's opt-in: when the person has applied nest-asyncio (or its
maintained fork nest-asyncio2) to that loop themselves, the call runs nested on it instead
(``loop.run_until_complete`` while the loop runs). The library never imports nest_asyncio nor
calls ``apply()``; it only reads the marker the patch leaves on the loop (``_nest_patched``).
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from elynav_nb.errors import SyncCallInsideLoop

__all__ = ["nested_loops_allowed", "private_loop", "run_sync"]

ResultType = TypeVar("ResultType")

_loop_lock = threading.Lock()
_private_loop: asyncio.AbstractEventLoop | None = None


def private_loop() -> asyncio.AbstractEventLoop:
    """The private loop (started on a daemon thread the first time it is asked for)."""
    global _private_loop
    with _loop_lock:
        if _private_loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="elynav-nb-loop", daemon=True)
            thread.start()
            atexit.register(loop.call_soon_threadsafe, loop.stop)
            _private_loop = loop
        return _private_loop


def nested_loops_allowed(loop: asyncio.AbstractEventLoop) -> bool:
    """True when the user applied nest-asyncio (or nest-asyncio2) to ``loop``: it may run nested."""
    return bool(getattr(loop, "_nest_patched", False))


def run_sync(
    coroutine: Coroutine[Any, Any, ResultType], *, owner_loop: asyncio.AbstractEventLoop | None = None
) -> ResultType:
    """Run ``coroutine`` on ``owner_loop`` (default: the private loop) and block until it ends.

    Raises ``SyncCallInsideLoop`` when called from the thread running ``owner_loop``, unless the
    user made that loop re-entrant with nest-asyncio: then the coroutine runs nested on it.
    """
    target_loop = owner_loop or private_loop()
    try:
        calling_loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        calling_loop = None
    if calling_loop is target_loop:
        if nested_loops_allowed(target_loop):
            return target_loop.run_until_complete(coroutine)
        coroutine.close()
        raise SyncCallInsideLoop(
            "this object runs on the current event loop: use `await` instead of the *_sync method "
            "(or apply nest-asyncio to the loop yourself, see the runners notebook)"
        )
    future = asyncio.run_coroutine_threadsafe(coroutine, target_loop)
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise
