"""Blocking wrappers for scripts and cells that want them, without nest_asyncio; the loop checks of
the calls that need a running loop.

Where it sits: used by the ``*_sync`` methods of every capability (``runner.send_sync``...), and by
the plain (non-``async``) calls that start asyncio work at once (``runner.send``, ``office.submit``:
``require_loop``), and by the coroutines that must run on their object's loop (``runner.stop()`` awaited
on another loop than the runner's: ``await_on_owner_loop`` hands it over).

How it works: one daemon thread runs one private event loop, created on first use; a blocking
call submits its coroutine there and waits for the answer. Objects used through ``*_sync``
methods therefore live on that private loop, whatever thread calls them. An object that lives on
another loop (started with ``await``) is run on that loop instead (``owner_loop``):

- called from the very thread running that loop: it would deadlock, so ``SyncCallInsideLoop``;
- that loop has ended (closed, as ``asyncio.run`` leaves it): ``LoopEnded``, at once or as soon as
  it closes under a waiting call (a call never waits on a loop that will not run again);
- that loop exists but does not run (``loop.run_until_complete(runner.start())`` in a script): it is
  run here for the call when no other loop runs in this thread, else ``LoopMismatch``;
- that loop runs in another thread: the call is handed to it and waited for.

The one exception is the user's opt-in: when the person has applied nest-asyncio (or its
maintained fork nest-asyncio2) to that loop themselves, the call runs nested on it instead
(``loop.run_until_complete`` while the loop runs). The library never imports nest_asyncio nor
calls ``apply()``; it only reads the marker the patch leaves on the loop (``_nest_patched``).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from elynav_nb.errors import LoopEnded, LoopMismatch, NoRunningLoop, SyncCallInsideLoop

__all__ = ["await_on_owner_loop", "nested_loops_allowed", "private_loop", "require_loop", "run_sync"]

ResultType = TypeVar("ResultType")

CLOSED_LOOP_CHECK_INTERVAL = 0.25  # seconds between two looks at whether the owner loop closed

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


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _loop_ended(owner: str) -> LoopEnded:
    return LoopEnded(
        f"{owner} belongs to an event loop that has ended (closed, as asyncio.run leaves it when it "
        "returns): nothing can run on it any more; make a new one where you use it"
    )


def require_loop(
    owner_loop: asyncio.AbstractEventLoop | None,
    *,
    call: str,
    owner: str,
    remedy: str = "`await` it in a notebook or in async code",
) -> asyncio.AbstractEventLoop:
    """The running loop, for a plain call (``call``, e.g. ``"runner.send()"``) that starts asyncio work.

    ``owner_loop`` is the loop the object belongs to (None: not bound yet, any running loop does).
    ``LoopEnded`` when that loop is closed; ``NoRunningLoop`` when no loop runs here (the message
    says ``remedy``: ``await`` it, or the ``*_sync`` method to use); ``LoopMismatch`` when another
    loop runs here.
    """
    if owner_loop is not None and owner_loop.is_closed():
        raise _loop_ended(owner)
    running = _running_loop()
    if running is None:
        raise NoRunningLoop(
            f"{call} needs a running event loop and none runs here: {remedy}", details={"call": call}
        )
    if owner_loop is not None and running is not owner_loop:
        raise LoopMismatch(
            f"{owner} belongs to another event loop than the one running here: use it from the loop "
            "it was started on",
            details={"call": call},
        )
    return running


async def await_on_owner_loop(
    coroutine: Coroutine[Any, Any, ResultType],
    owner_loop: asyncio.AbstractEventLoop | None,
    *,
    call: str,
    owner: str,
) -> ResultType:
    """Await ``coroutine`` on ``owner_loop`` from whichever loop runs here.

    On that loop (or None: not bound yet): awaited directly. That loop running in another thread (the
    private loop of the ``*_sync`` calls): handed over and awaited (cancelling the await cancels it
    there). Otherwise ``LoopEnded`` or ``LoopMismatch`` (``require_loop``).
    """
    running = asyncio.get_running_loop()
    if owner_loop is None or owner_loop is running:
        return await coroutine
    if owner_loop.is_running() and not owner_loop.is_closed():
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, owner_loop))
    coroutine.close()
    require_loop(owner_loop, call=call, owner=owner)
    raise LoopMismatch(f"{owner} belongs to an event loop that does not run: use it from that loop")


def run_sync(
    coroutine: Coroutine[Any, Any, ResultType],
    *,
    owner_loop: asyncio.AbstractEventLoop | None = None,
    owner: str = "this object",
) -> ResultType:
    """Run ``coroutine`` on ``owner_loop`` (default: the private loop) and block until it ends.

    ``owner`` names the object in error messages. The cases (module docstring): ``SyncCallInsideLoop``
    from the thread running ``owner_loop`` (unless nest-asyncio made it re-entrant: then the
    coroutine runs nested on it), ``LoopEnded`` when it is closed, run here when it is idle.
    """
    target_loop = owner_loop or private_loop()
    calling_loop = _running_loop()
    if target_loop.is_closed():
        coroutine.close()
        raise _loop_ended(owner)
    if calling_loop is target_loop:
        if nested_loops_allowed(target_loop):
            return target_loop.run_until_complete(coroutine)
        coroutine.close()
        raise SyncCallInsideLoop(
            "this object runs on the current event loop: use `await` instead of the *_sync method "
            "(or apply nest-asyncio to the loop yourself, see the runners notebook)"
        )
    if not target_loop.is_running():
        return _run_idle_loop(coroutine, target_loop, calling_loop, owner)
    future = asyncio.run_coroutine_threadsafe(coroutine, target_loop)
    try:
        return _wait_while_open(future, target_loop, owner)
    except KeyboardInterrupt:
        future.cancel()
        raise


def _run_idle_loop(
    coroutine: Coroutine[Any, Any, ResultType],
    target_loop: asyncio.AbstractEventLoop,
    calling_loop: asyncio.AbstractEventLoop | None,
    owner: str,
) -> ResultType:
    """Run ``target_loop`` (open, not running) in this thread until ``coroutine`` ends."""
    if calling_loop is not None:
        coroutine.close()
        raise LoopMismatch(
            f"{owner} belongs to an event loop that does not run, and another loop runs here: "
            "use it with `await` from the loop it was started on"
        )
    task = target_loop.create_task(coroutine)
    try:
        return target_loop.run_until_complete(task)
    except KeyboardInterrupt:
        task.cancel()
        try:
            target_loop.run_until_complete(task)
        except (asyncio.CancelledError, Exception):
            pass  # the interrupt is what the caller sees
        raise


def _wait_while_open(
    future: concurrent.futures.Future[ResultType], target_loop: asyncio.AbstractEventLoop, owner: str
) -> ResultType:
    """``future.result()``, or ``LoopEnded`` if its loop closes first (its callback would never run)."""
    while not future.done():
        concurrent.futures.wait([future], timeout=CLOSED_LOOP_CHECK_INTERVAL)
        if not future.done() and target_loop.is_closed():
            future.cancel()
            raise _loop_ended(owner)
    return future.result()
