"""An ``Office`` attached to the one that already serves its workspace (another kernel, a terminal's
``elynav office serve``, a chat server's ``elynav acp``).

Where it sits: ``Office.start()`` makes an ``Attachment`` when the workspace's office lock is held
by a live office; the ``Office`` then answers from it instead of its own engine. It speaks only
through ``OfficeClient`` (``office/client.py``), as the user: the same rules as every other caller.

How data flows::

    start: OfficeClient.watch() -> the first board snapshot -> mirrors (EmployeeMirror, AskMirror)
           a task keeps the mirrors current from every later snapshot and tells the listeners
    submit(to, text) -> AttachedAsk at once; a task sends the streamed ask (OfficeClient.submit)
           -> its id once accepted; ``await ask`` -> its Reply (a refusal raises its typed error)
    cancel(ask or id) -> the ask's own connection ("cancel"), or OfficeClient.cancel(id); called where
           the kernel's loop does not run (a terminal IPython line without ``await``), it goes out
           as soon as that loop runs again
    history() -> the workspace's history file, read as the host writes it (one history)
    stop() -> the watch ends; asks of this kernel still running are cancelled by the office as
           their connections close (nobody waits for them any more)

What the host's death does to an attached kernel: the watch ends (``status`` becomes
``"host gone"``) and its asks end ``failed`` with ``OFFICE_UNREACHABLE``; the host's next start
marks every ask left unfinished in the history ``failed`` (``OFFICE_STOPPED``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Generator
from datetime import datetime
from typing import Any

from elynav_nb.agents.events import PermissionRequest
from elynav_nb.errors import AskNotFound, ElynavError, LoopEnded
from elynav_nb.office.asks import Reply, ask_row
from elynav_nb.office.client import OfficeClient, RemoteAsk

__all__ = ["AskMirror", "AttachedAsk", "Attachment", "EmployeeMirror"]


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(value)
    return None


class AskMirror:
    """An ask in flight in the host office, as its last snapshot shows it (read-only)."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.id = str(row.get("ask_id") or "")
        self.sender = str(row.get("sender") or "")
        self.agent = str(row.get("agent") or "")
        self.text = str(row.get("prompt") or "")
        self.status = str(row.get("status") or "")
        self.position = int(row.get("position") or 0)
        self.parent_id = row.get("parent_id")
        self.queued_at = _time(row.get("queued_at"))
        self.started_at = _time(row.get("started_at"))
        self.turn = None
        self.reply: Reply | None = None

    @property
    def cancelling(self) -> bool:
        return self.status == "cancelling"

    @property
    def done(self) -> bool:
        return False

    def to_row(self) -> dict[str, Any]:
        return ask_row(self)

    def __repr__(self) -> str:
        return f"<Ask {self.id} {self.status} {self.sender} -> {self.agent} (in the host office)>"


class EmployeeMirror:
    """An employee of the host office, as its last snapshot shows it."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.row = row
        self.current: AskMirror | None = None

    @property
    def name(self) -> str:
        return str(self.row.get("agent") or "")

    @property
    def status(self) -> str:
        return str(self.row.get("status") or "")

    @property
    def busy(self) -> bool:
        return self.status != "idle"

    @property
    def caller(self) -> str | None:
        caller = self.row.get("caller")
        return str(caller) if caller else None

    @property
    def queue_length(self) -> int:
        return int(self.row.get("queue_length") or 0)

    @property
    def running_since(self) -> datetime | None:
        return _time(self.row.get("running_since"))

    @property
    def asks_served(self) -> int:
        return int(self.row.get("asks_served") or 0)

    @property
    def session_id(self) -> str:
        return str(self.row.get("session_id") or "")

    @property
    def pending_permissions(self) -> list[PermissionRequest]:
        return []  # answered where the ask was sent from (its stream), or on the host's board

    @property
    def current_turn(self) -> None:
        return None

    def to_row(self) -> dict[str, Any]:
        return {**self.row, "running_since": self.running_since}

    def __repr__(self) -> str:
        caller = f" for {self.caller}" if self.caller else ""
        return f"<Employee {self.name} {self.status}{caller} queue={self.queue_length} (in the host office)>"


class AttachedAsk:
    """An ask this kernel sent to the host office: ``await ask`` gives its ``Reply``."""

    def __init__(self, attachment: Attachment, agent: str, text: str, timeout: float | None) -> None:
        self.sender = "user"
        self.agent = agent
        self.text = text
        self.remote: RemoteAsk | None = None
        self._cancel_asked = False
        self._done: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._task = asyncio.get_running_loop().create_task(self._run(attachment, timeout))

    @property
    def id(self) -> str:
        return self.remote.id if self.remote is not None else ""

    @property
    def status(self) -> str:
        return self.remote.status if self.remote is not None else "queued"

    @property
    def reply(self) -> Reply | None:
        return self._done.result() if self._done.done() and not self._done.exception() else None

    @property
    def done(self) -> bool:
        return self._done.done()

    @property
    def cancelling(self) -> bool:
        return self._cancel_asked and not self.done

    async def _run(self, attachment: Attachment, timeout: float | None) -> None:
        try:
            self.remote = await attachment.client.submit(self.agent, self.text, timeout=timeout)
            if self._cancel_asked:
                await self.remote.cancel()
            reply = await self.remote
            await self.remote.close()
            self._done.set_result(reply)
        except ElynavError as error:
            self._done.set_exception(error)
        except asyncio.CancelledError:
            if self.remote is not None:
                await self.remote.close()
            if not self._done.done():
                self._done.cancel()
            raise

    def cancel(self) -> AttachedAsk:
        self._cancel_asked = True
        remote = self.remote
        if remote is not None:
            _start_on(self._done.get_loop(), remote.cancel)
        return self

    def settled(self) -> asyncio.Future[Reply]:
        return self._done

    def __await__(self) -> Generator[Any, None, Reply]:
        return self._wait().__await__()

    async def _wait(self) -> Reply:
        try:
            return await asyncio.shield(self._done)
        except asyncio.CancelledError:
            if not self._done.done():
                self.cancel()
            raise

    def __repr__(self) -> str:
        return f"<Ask {self.id or '(sending)'} {self.status} user -> {self.agent} (attached)>"


def _start_on(
    loop: asyncio.AbstractEventLoop, make_coroutine: Callable[[], Coroutine[Any, Any, Any]]
) -> None:
    """Start ``make_coroutine()`` as a task of ``loop``: at once on that loop, else as soon as it runs."""
    if loop.is_closed():
        raise LoopEnded("this office's event loop has ended: nothing more can be sent to the host office")
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        loop.create_task(make_coroutine())
    else:
        loop.call_soon_threadsafe(lambda: loop.create_task(make_coroutine()))


class Attachment:
    """This kernel's view of the host office (see the module docstring)."""

    def __init__(self, client: OfficeClient, notify: Callable[[str, Any], None]) -> None:
        self.client = client
        self.notify = notify
        self.status = "open"
        self.employees: dict[str, EmployeeMirror] = {}
        self.asks: list[AskMirror] = []
        self.sent: list[AttachedAsk] = []
        self._watch: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None  # the kernel's loop, from start() on

    async def start(self, timeout: float = 30.0) -> None:
        """Read the first snapshot (bounded), then follow the host in a task."""
        self.loop = asyncio.get_running_loop()
        snapshots = self.client.watch()
        first = await asyncio.wait_for(anext(snapshots), timeout)
        self._apply(first)
        self._watch = asyncio.get_running_loop().create_task(self._follow(snapshots))

    async def _follow(self, snapshots: Any) -> None:
        try:
            async for snapshot in snapshots:
                self._apply(snapshot)
                self.notify("board", None)
        except (ElynavError, ConnectionError, ValueError):
            pass
        finally:
            if self.status == "open":
                self.status = "host gone"
                self.notify("stopped", None)

    def _apply(self, snapshot: dict[str, Any]) -> None:
        if snapshot.get("type") != "board":
            return
        asks = [AskMirror(row) for row in snapshot.get("asks") or [] if isinstance(row, dict)]
        by_agent_running = {ask.agent: ask for ask in asks if ask.status in ("running", "cancelling")}
        employees: dict[str, EmployeeMirror] = {}
        for row in snapshot.get("employees") or []:
            if isinstance(row, dict):
                mirror = EmployeeMirror(row)
                mirror.current = by_agent_running.get(mirror.name)
                employees[mirror.name] = mirror
        self.employees.clear()
        self.employees.update(employees)
        self.asks = asks
        if snapshot.get("status") != "open":
            self.status = "host gone"

    def get(self, ask_id: str) -> AskMirror | AttachedAsk:
        for sent in self.sent:
            if sent.id == ask_id:
                return sent
        for ask in self.asks:
            if ask.id == ask_id:
                return ask
        raise AskNotFound(f"no ask {ask_id!r} in flight in this office", details={"ask_id": ask_id})

    def submit(self, agent: str, text: str, timeout: float | None) -> AttachedAsk:
        ask = AttachedAsk(self, agent, text, timeout)
        self.sent.append(ask)
        ask.settled().add_done_callback(lambda _future: self.sent.remove(ask) if ask in self.sent else None)
        return ask

    def cancel(self, ask_id: str) -> None:
        assert self.loop is not None  # started
        _start_on(self.loop, lambda: self._cancel(ask_id))

    async def _cancel(self, ask_id: str) -> None:
        with contextlib.suppress(ElynavError):
            await self.client.cancel(ask_id)

    async def stop(self) -> None:
        self.status = "closed"
        for ask in list(self.sent):
            if ask.remote is not None:
                await ask.remote.close()
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watch

    def queue_position(self, ask_id: str) -> int:
        for ask in self.asks:
            if ask.id == ask_id:
                return ask.position
        return 0
