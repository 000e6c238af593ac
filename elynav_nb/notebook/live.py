"""``LiveNotebook``: a notebook open as a peer of its shared Y document, beside the people editing it.

Where it sits: the facade of ``elynav_nb.notebook``. It owns a ``jupyter_ydoc.YNotebook`` over a
``pycrdt.Doc``, a ``RoomConnection`` to the notebook's room (plus one to the ``globalAwareness``
room, so the agent is listed in JupyterLab's Collaboration panel), the server's REST client and,
once a cell is run, a ``KernelClient``.

How a write flows::

    await nb.update_cell(cell_id, text) -> one lock (writes in order) -> Write (journal.py) applied
      in one transaction (cells.py: a minimal text diff) -> the connection sends its update at once
      -> our cursor moves to the edit (the name flag shows in the person's JupyterLab)
      -> connection.acknowledge: a SyncStep1 probe after the update, answered by the room's SyncStep2
      -> returns (``SYNC_TIMEOUT`` after ``ack_timeout``; nothing is retried twice: after a reset the
         journal replays the write once, idempotently)

How a run flows: ``run_cell`` reads the cell's source and runs it through ``KernelClient`` (a subshell
where the kernel is ours or busy; a typed refusal where that cannot be); ``RunDisplay`` shows it in the
cell as JupyterLab does (once it has lasted 30 ms: cleared and ``running``, then the outputs as they
come, each write sent without waiting); the last write (outputs, count, ``idle``) is acknowledged.
Opening ends the ``[*]`` of runs whose process died (marked in the room, see ``run_display.py``).

Showing: ``_repr_html_`` (``render.py``); in a kernel, ``nb`` shows a live widget view
(``widgets/notebook_view.py``), told of each change through ``add_change_listener``.

Reading: ``cells`` / ``cell(id)`` / ``to_frame()`` / ``outputs_text(id)`` read the local replica,
which the room keeps current; ``watch()`` yields ``NotebookChange`` for what others change, with
their names (from the room's awareness: ``presence.py``, which names each cell's last editor when
read). To tell what changed, only the cells that a remote transaction names (pycrdt's deep events on
the cells array) are read again; every cell only when cells came, went or moved (a person's keystroke
at 100 cells: ~0.09 ms, was ~2 ms reading them all).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar

from jupyter_ydoc import YNotebook
from pycrdt import Assoc, Doc, Text

from elynav_nb._display import rich_bundle
from elynav_nb._session_handles import ChangeFeed, ChangeListeners, Opening
from elynav_nb.errors import CellNotFound, ElynavError, InvalidInput, RunRefused, ServiceError
from elynav_nb.notebook import cells
from elynav_nb.notebook.cells import CellView
from elynav_nb.notebook.connection import RoomConnection
from elynav_nb.notebook.journal import Journal, Write
from elynav_nb.notebook.kernel import KernelClient, RunResult
from elynav_nb.notebook.locate import locate_current
from elynav_nb.notebook.outputs import DEFAULT_MAX_OUTPUT_BYTES, outputs_as_text
from elynav_nb.notebook.presence import Presence, user_state
from elynav_nb.notebook.render import cells_frame, notebook_html
from elynav_nb.notebook.run_display import RunDisplay, stale_runs
from elynav_nb.notebook.server_api import JupyterServerApi

if TYPE_CHECKING:
    import pandas

__all__ = ["LiveNotebook", "NotebookChange"]

ResultType = TypeVar("ResultType")
DEFAULT_COLOR: Final = "#7c3aed"


@dataclass(frozen=True)
class NotebookChange:
    """What someone else changed: the ids of the cells added, changed or removed, and who (names)."""

    changed_cell_ids: list[str]
    removed_cell_ids: list[str]
    editors: list[str] = field(default_factory=list)


async def _close_notebook(notebook: LiveNotebook, failed: bool) -> None:
    await notebook.close()


class LiveNotebook:
    """A live notebook. ``await LiveNotebook.open(path, server_url=..., token=...)`` or, from inside its
    kernel, ``await LiveNotebook.current()``; ``await nb.close()`` when done."""

    def __init__(
        self,
        api: JupyterServerApi,
        path: str,
        *,
        user_name: str,
        color: str,
        ack_timeout: float,
        kernel_id: str | None = None,
    ) -> None:
        self.api = api
        self.path = path
        self.user_name = user_name
        self.color = color
        self.ack_timeout = ack_timeout
        self.own_kernel_id = kernel_id
        self.notebook = YNotebook(Doc())
        self._touched: set[int] | None = None  # cells changed since the last look (None: read them all)
        self._cells_subscription = self.notebook.ycells.observe_deep(self._on_cells_event)
        self.journal = Journal()
        self.connection: RoomConnection | None = None
        self.presence: RoomConnection | None = None
        self.kernel: KernelClient | None = None
        self._people = Presence(user_name)
        self._cursor: tuple[str, int] | None = None
        self._write_lock = asyncio.Lock()
        self._watchers: list[asyncio.Queue[NotebookChange | None]] = []
        self._listeners = ChangeListeners("live notebook")
        self._signature: dict[str, tuple[str, int | None, int]] = {}
        self._closed = False
        self._opened = False
        self._username = f"elynav-{uuid.uuid4().hex[:8]}"

    # --- opening -------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str,
        *,
        server_url: str,
        token: str = "",
        user_name: str = "Elynav agent",
        color: str = DEFAULT_COLOR,
        ack_timeout: float = 10.0,
        open_timeout: float = 10.0,
        reconnect_timeout: float = 30.0,
        kernel_id: str | None = None,
    ) -> Opening[LiveNotebook]:
        """Open the notebook at ``path`` (relative to the server's root) on the server at ``server_url``.

        Bounds: joining the room ends within ``open_timeout`` (``SYNC_TIMEOUT``); every write returns
        once the room holds it, within ``ack_timeout``; a dropped connection is tried again for
        ``reconnect_timeout`` seconds, then writes fail with ``SERVICE_ERROR``.
        """

        async def start() -> LiveNotebook:
            if not isinstance(path, str) or not path.strip("/") or ".." in path.split("/"):
                raise InvalidInput(f"a notebook path relative to the server's root is needed, not {path!r}")
            api = JupyterServerApi(server_url, token)
            notebook = cls(
                api,
                path.strip("/"),
                user_name=user_name,
                color=color,
                ack_timeout=ack_timeout,
                kernel_id=kernel_id,
            )
            try:
                await notebook._start(open_timeout, reconnect_timeout)
            except BaseException:
                await notebook.close()
                raise
            return notebook

        return Opening(start, _close_notebook)

    @classmethod
    def current(
        cls,
        *,
        user_name: str = "Elynav agent",
        color: str = DEFAULT_COLOR,
        ack_timeout: float = 10.0,
        open_timeout: float = 10.0,
        reconnect_timeout: float = 30.0,
    ) -> Opening[LiveNotebook]:
        """The notebook this kernel belongs to, found from the kernel's environment (``locate.py``);
        the options are ``open``'s."""

        async def start() -> LiveNotebook:
            place = locate_current()
            return await cls.open(
                place.path,
                server_url=place.server_url,
                token=place.token,
                kernel_id=place.kernel_id,
                user_name=user_name,
                color=color,
                ack_timeout=ack_timeout,
                open_timeout=open_timeout,
                reconnect_timeout=reconnect_timeout,
            )

        return Opening(start, _close_notebook)

    async def _start(self, open_timeout: float, reconnect_timeout: float) -> None:
        self.connection = RoomConnection(
            self.notebook.ydoc,
            self._room_url,
            awareness_state=self._awareness_state,
            on_reset=self._fresh_doc,
            on_reset_synced=self._replay,
            on_remote=self._on_remote,
            on_acked=self.journal.acknowledged,
            on_resync=self._resync,
            on_awareness=self._on_awareness,
            open_timeout=open_timeout,
            reconnect_timeout=reconnect_timeout,
            name=self.path,
        )
        await self.connection.open()
        for cell_id in stale_runs(self.notebook):  # a [*] left by a process that died (run_display.py)
            with contextlib.suppress(ElynavError):  # a courtesy: the room's failure stays for the next call
                await self._write(Write("end_run", cell_id))
        self._signature = self._cell_signature()
        self._opened = True
        self.presence = RoomConnection(
            Doc(),
            self._global_awareness_url,
            awareness_state=self._global_state,
            open_timeout=open_timeout,
            name="globalAwareness",
        )
        try:
            await self.presence.open()
        except Exception:  # the panel entry is a courtesy: the notebook works without it
            await self.presence.close()
            self.presence = None

    async def _room_url(self) -> str:
        address = await self.api.room_address(self.path)
        return address.url_with_token(self.api.token)

    async def _global_awareness_url(self) -> str:
        url = self.api.global_awareness_url()
        return f"{url}?token={self.api.token}" if self.api.token else url

    @property
    def backend(self) -> str | None:
        """``jupyter-collaboration`` or ``jupyter-server-documents``."""
        return self.api.backend

    # --- awareness -----------------------------------------------------------------------------

    def _user(self) -> dict[str, Any]:
        return user_state(self.user_name, self._username, self.color)

    def _awareness_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"user": self._user()}
        if self._cursor is not None:
            cell_id, offset = self._cursor
            with contextlib.suppress(CellNotFound, Exception):
                text: Text = self.notebook.ycells[cells.cell_index(self.notebook, cell_id)]["source"]
                position = text.sticky_index(min(offset, len(text)), Assoc.BEFORE).to_json()
                state["cursors"] = [{"anchor": position, "head": position, "primary": True, "empty": True}]
        return state

    async def show_cursor(self, cell_id: str, offset: int | None = None) -> None:
        """Put our caret in a cell at a character ``offset`` (default: the end). JupyterLab shows our name
        beside it for 2 s after each move (writes move it too)."""
        source = self.cell(cell_id).source
        chosen = len(source) if offset is None else max(0, min(offset, len(source)))
        self._cursor = (cell_id, len(source[:chosen].encode("utf-8")))
        await self._check_open().renew_awareness()

    def _global_state(self) -> dict[str, Any]:
        return {"user": self._user(), "current": f"notebook:{self.path}", "documents": [self.path]}

    def collaborators(self) -> list[str]:
        """The names of the others in the room now (from their awareness states)."""
        if self.connection is None:
            return []
        return self._people.others(self.connection.awareness.states, self.connection.doc.client_id)

    def _on_awareness(self) -> None:
        if self.connection is not None:
            self._people.learn(self.connection.awareness.states)
        self._listeners.tell()

    @property
    def last_editor(self) -> dict[str, str]:
        """Cell id -> who edited it last (names from the room's awareness, learnt as they come)."""
        return self._people.last_editors()

    # --- reset and remote changes ----------------------------------------------------------------

    def _fresh_doc(self) -> Doc[Any]:
        self.notebook = YNotebook(Doc())
        self._touched = None
        self._cells_subscription = self.notebook.ycells.observe_deep(self._on_cells_event)
        return self.notebook.ydoc

    def _on_cells_event(self, events: list[Any]) -> None:
        """Inside a transaction: note which cells it changed; a cell added, removed or moved (a change of
        the cells array itself) means every cell is read at the next look."""
        for event in events:
            path = event.path
            if self._touched is None or not path or not isinstance(path[0], int):
                self._touched = None
                return
            self._touched.add(path[0])

    def _replay(self) -> None:
        assert self.connection is not None
        connection = self.connection
        self.journal.replay(self.notebook, lambda: connection.version)
        self._signature = self._cell_signature()

    def _resync(self, apply: Callable[[], None]) -> bool:
        """Around the room's first answer after a reconnection: write again what that answer undid."""
        assert self.connection is not None
        connection = self.connection
        held = [write for write in self.journal.writes if write.holds(self.notebook)]
        apply()
        undone = [write for write in held if not write.holds(self.notebook)]
        if undone:
            self.journal.replay(self.notebook, lambda: connection.version, only=undone)
            self._signature = self._cell_signature()
        return True

    def _cell_signature(self) -> dict[str, tuple[str, int | None, int]]:
        """Per cell id: (source, execution count, number of outputs), read without converting outputs
        (in one transaction: each read outside one opens its own)."""
        with self.notebook.ydoc.transaction():
            return {str(ycell.get("id")): _signature_of(ycell) for ycell in self.notebook.ycells}

    def _sign_written(self, cell_id: str) -> None:
        """The signature of the cell we just wrote, so that our write is no one else's change (the
        other cells have not changed: the whole notebook is not read again)."""
        with self.notebook.ydoc.transaction():
            try:
                ycell = self.notebook.ycells[cells.cell_index(self.notebook, cell_id)]
            except CellNotFound:
                self._signature.pop(cell_id, None)
            else:
                self._signature[cell_id] = _signature_of(ycell)
        if self._touched is not None:
            self._touched.clear()  # our own write is no one else's change

    def _on_remote(self, changed_clients: dict[int, int]) -> None:
        if self.connection is None or not self._opened:
            return
        touched, self._touched = self._touched, set()
        if touched is None:  # cells came, went or moved: read them all
            signature = self._cell_signature()
            removed = [cell_id for cell_id in self._signature if cell_id not in signature]
        else:  # only the cells the transaction named (~30 us each, where all cost ~20 us a cell)
            with self.notebook.ydoc.transaction():
                ycells = [
                    self.notebook.ycells[index] for index in touched if index < len(self.notebook.ycells)
                ]
                signature = {
                    **self._signature,
                    **{str(ycell.get("id")): _signature_of(ycell) for ycell in ycells},
                }
            removed = []
        changed = [cell_id for cell_id, value in signature.items() if self._signature.get(cell_id) != value]
        self._signature = signature
        if changed or removed:
            self._people.edited(changed, changed_clients)
            change = NotebookChange(changed, removed, self._people.names_of(changed_clients))
            for queue in list(self._watchers):
                queue.put_nowait(change)
        if touched != set():
            self._listeners.tell()  # a run's [*] too, which no NotebookChange tells

    def add_change_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` whenever what the notebook shows may have changed (a change by someone else,
        a write of ours, closing); views subscribe here (``remove_change_listener``)."""
        self._listeners.add(listener)

    def remove_change_listener(self, listener: Callable[[], None]) -> None:
        self._listeners.remove(listener)

    def watch(self, *, timeout: float | None = None) -> ChangeFeed[NotebookChange]:
        """What others change, from now on: ``async for change in nb.watch(timeout=30): ...``.

        Ends when the notebook closes, or after ``timeout`` seconds without a change."""
        queue: asyncio.Queue[NotebookChange | None] = asyncio.Queue()
        self._watchers.append(queue)
        return ChangeFeed(
            queue, timeout, lambda: self._watchers.remove(queue) if queue in self._watchers else None
        )

    # --- reading -------------------------------------------------------------------------------

    @property
    def cells(self) -> list[CellView]:
        return cells.read_cells(self.notebook)

    def cell(self, cell_id: str) -> CellView:
        return cells.read_cell(self.notebook, cell_id)

    def outputs_text(self, cell_id: str, max_chars: int = 4000) -> str:
        """The cell's outputs as text (images and big outputs said, not shown), at most ``max_chars``."""
        return outputs_as_text(self.cell(cell_id).outputs, max_chars)

    def to_frame(self) -> pandas.DataFrame:
        """One row per cell: index, id, type, source, execution_count, outputs (summary), last_editor."""
        return cells_frame(self.cells, self.last_editor)

    def as_ipynb(self) -> dict[str, Any]:
        """The notebook as nbformat JSON, as the server would save it now."""
        return dict(self.notebook.get())

    # --- writing -------------------------------------------------------------------------------

    def _check_open(self) -> RoomConnection:
        if self._closed or self.connection is None:
            raise ServiceError("the live notebook is closed: open it again")
        if self.connection.failure is not None:
            failure = self.connection.failure
            raise type(failure)(failure.message, details=failure.details)
        return self.connection

    def _show(self, write: Write) -> Any:
        """Apply ``write`` in one transaction and send it, without waiting for the room (a run's outputs
        as they come: the run's last write is acknowledged, and covers the ones before it)."""
        connection = self._check_open()
        with self.notebook.ydoc.transaction():
            result = write.apply(self.notebook)
        write.version = connection.version
        self.journal.add(write)
        self._people.wrote(write.cell_id)
        self._sign_written(write.cell_id)
        self._listeners.tell()
        return result

    async def _write(self, write: Write, cursor: tuple[str, int] | None = None) -> Any:
        async with self._write_lock:
            result = self._show(write)
            connection = self._check_open()
            if cursor is not None:
                self._cursor = cursor
                connection.renew_awareness_after_writes()
            await connection.acknowledge(lambda: write.version, self.ack_timeout)
            return result

    async def insert_cell(
        self, source: str = "", cell_type: str = "code", *, index: int | None = None, after: str | None = None
    ) -> str:
        """Insert a cell (at ``index``, after the cell ``after``, or at the end); its id once acknowledged."""
        if not isinstance(source, str):
            raise InvalidInput("source must be a string")
        cells.check_cell_type(cell_type)
        count = len(self.notebook.ycells)
        if after is not None:
            index = cells.cell_index(self.notebook, after) + 1
        elif index is None:
            index = count
        if not isinstance(index, int) or not 0 <= index <= count:
            raise InvalidInput(f"index must be from 0 to {count}, not {index!r}")
        cell_id = str(uuid.uuid4())
        write = Write("insert", cell_id, source=source, cell_type=cell_type, index=index, after=after)
        await self._write(write, cursor=(cell_id, len(source.encode("utf-8"))))
        return cell_id

    async def update_cell(self, cell_id: str, source: str) -> int:
        """Make the cell's source read ``source`` by a minimal text diff; the characters changed."""
        if not isinstance(source, str):
            raise InvalidInput("source must be a string")
        cells.cell_index(self.notebook, cell_id)
        changed: int = await self._write(
            Write("source", cell_id, source=source), cursor=(cell_id, len(source.encode("utf-8")))
        )
        return changed

    async def delete_cell(self, cell_id: str) -> None:
        await self._write(Write("delete", cell_id))

    async def move_cell(self, cell_id: str, index: int) -> None:
        count = len(self.notebook.ycells)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise InvalidInput(f"index must be from 0 to {count - 1}, not {index!r}")
        await self._write(Write("move", cell_id, index=index))

    async def set_outputs(
        self, cell_id: str, outputs: list[dict[str, Any]], execution_count: int | None = None
    ) -> None:
        """Replace a code cell's outputs (written once) and set its execution count."""
        if not isinstance(outputs, list) or not all(
            isinstance(output, dict) and "output_type" in output for output in outputs
        ):
            raise InvalidInput("outputs must be a list of nbformat outputs (dicts with output_type)")
        await self._write(Write("outputs", cell_id, outputs=outputs, execution_count=execution_count))

    # --- running -------------------------------------------------------------------------------

    async def _kernel(self, start_kernel: bool) -> KernelClient:
        if self.kernel is not None and self.kernel.connected:
            return self.kernel  # still the notebook's: a kernel changed or shut down closes our socket
        kernel_id = self.own_kernel_id or await self.api.kernel_of(self.path)
        if kernel_id is None:
            if not start_kernel:
                raise RunRefused(
                    f"no kernel runs for {self.path!r}: open it in JupyterLab, or pass start_kernel=True"
                )
            kernel_id = await self.api.start_kernel_for(self.path)
        if self.kernel is None or self.kernel.kernel_id != kernel_id:
            if self.kernel is not None:
                await self.kernel.close()
            self.kernel = KernelClient(self.api, kernel_id, own_kernel=kernel_id == self.own_kernel_id)
        return self.kernel

    async def run_cell(
        self,
        cell_id: str,
        *,
        timeout: float = 60.0,
        start_kernel: bool = True,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    ) -> RunResult:
        """Run a code cell in the notebook's kernel, shown in the cell as JupyterLab shows a run (its outputs
        as they come, the count at the end); returns once the room has the run's last write.

        Refused with ``RUN_REFUSED`` (nothing run, the cell untouched) where it would wait for ever;
        ``KERNEL_DIED`` when the kernel dies during the run and ``TIMEOUT`` past ``timeout`` (the kernel
        interrupted when the run was on its main shell; a run on a subshell cannot be, and goes on):
        then the cell keeps the outputs that came, without a count.
        """
        self._check_open()
        cell = self.cell(cell_id)
        if cell.cell_type != "code":
            raise InvalidInput(f"the cell {cell_id!r} is {cell.cell_type}, only a code cell runs")
        kernel = await self._kernel(start_kernel)
        display = RunDisplay(cell_id, self._show)
        try:
            result = await kernel.run(
                cell.source, timeout=timeout, max_output_bytes=max_output_bytes, watcher=display
            )
        except BaseException as error:
            last = display.last_write()  # no write is due after it
            if display.began:  # typed: acknowledged; cancelled (or a bug): sent, not awaited
                with contextlib.suppress(ElynavError):
                    if isinstance(error, ElynavError):
                        await self._write(last)
                    else:
                        self._show(last)
            raise
        await self._write(display.last_write(result))
        return result

    # --- closing -------------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for queue in list(self._watchers):
            queue.put_nowait(None)
        if self.kernel is not None:
            await self.kernel.close()
        for connection in (self.presence, self.connection):
            if connection is not None:
                await connection.close()
        await self.api.aclose()
        self._listeners.tell()

    @property
    def closed(self) -> bool:
        return self._closed

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"LiveNotebook({self.path!r}, {state}, backend={self.backend!r}, cells={len(self.notebook.ycells)})"

    def _repr_html_(self) -> str:
        return notebook_html(
            path=self.path,
            backend=self.backend,
            user_name=self.user_name,
            status="closed" if self._closed else "open",
            collaborators=self.collaborators(),
            cells=self.cells,
            last_editor=self.last_editor,
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)


def _signature_of(ycell: Any) -> tuple[str, int | None, int]:
    outputs = ycell.get("outputs")
    count = ycell.get("execution_count")
    return (
        str(ycell.get("source", "")),
        int(count) if isinstance(count, int | float) else None,
        len(outputs) if outputs is not None else 0,
    )
