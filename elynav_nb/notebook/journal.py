"""The writes of a live notebook as replayable intentions, so a room reset loses none of them.

Where it sits: the pure write layer of ``elynav_nb.notebook`` (no I/O). ``live.py`` applies each write
through ``Write.apply`` inside one transaction and keeps it in a ``Journal``; after a room reset (the
server restarted, or dropped the room and loaded the file again) the fresh room may lack writes the
old one held, so every kept write is applied again. Each one is idempotent by cell id: an insert of a
cell that is there does nothing, a source edit is a minimal diff to the wanted text (nothing when it
reads so already), a delete of a missing cell does nothing, and a cell deleted by a person is not
brought back by a later edit.

After a reconnection that was no reset, only the writes that the room's first answer undid are
applied again (``holds`` before and after it): a server restarted with its update store may load an
older file over the room. The price, said: a person's change to a cell the agent wrote in the last
``keep_seconds``, made while the agent was disconnected, is indistinguishable from that and is undone.

A cell's outputs write supersedes its earlier ones. A write stays in the journal until it is
acknowledged and ``keep_seconds`` old (the servers save to disk at most a few seconds after a change,
and a reloaded room starts from the saved file).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from jupyter_ydoc import YNotebook

from elynav_nb.errors import CellNotFound
from elynav_nb.notebook import cells

__all__ = ["Journal", "Write"]

DEFAULT_KEEP_SECONDS: Final = 30.0


@dataclass
class Write:
    """One intention: ``kind`` in insert, source, delete, move, outputs, end_run; the fields it needs."""

    kind: str
    cell_id: str
    source: str = ""
    cell_type: str = "code"
    index: int = 0
    after: str | None = None
    outputs: list[dict[str, Any]] = field(default_factory=list)
    execution_count: int | None = None
    execution_state: str | None = None  # outputs: ``running`` while a run shows, ``idle`` after
    runner: dict[str, Any] | None = None  # outputs ``running``: the process showing the run (its mark)
    version: int = 0
    acked_at: float | None = None

    def apply(self, notebook: YNotebook, *, replay: bool = False) -> Any:
        """Do the write on ``notebook`` (inside the caller's transaction). On a replay a missing cell
        is skipped instead of raising ``CELL_NOT_FOUND``."""
        if self.kind == "insert":
            return self._insert(notebook, replay)
        if self.kind == "end_run":
            return cells.end_run(notebook, self.cell_id)
        try:
            index = cells.cell_index(notebook, self.cell_id)
        except CellNotFound:
            if replay:
                return None
            raise
        if self.kind == "source":
            return cells.set_source(notebook.ycells[index]["source"], self.source)
        if self.kind == "delete":
            del notebook.ycells[index]
            return None
        if self.kind == "move":
            target = min(self.index, len(notebook.ycells) - 1)
            cells.move_cell(notebook, index, target)
            return None
        if self.kind == "outputs":
            cells.set_outputs(
                notebook, index, self.outputs, self.execution_count, self.execution_state, self.runner
            )
            return None
        raise ValueError(f"unknown write {self.kind}")

    def holds(self, notebook: YNotebook) -> bool:
        """Whether the notebook shows this write now (a move always counts as shown)."""
        if self.kind == "end_run":
            return self.cell_id not in cells.runs_shown(notebook)
        present = {ycell.get("id"): ycell for ycell in notebook.ycells}
        if self.kind == "delete":
            return self.cell_id not in present
        ycell = present.get(self.cell_id)
        if ycell is None:
            return False
        if self.kind == "source":
            return str(ycell["source"]) == self.source
        if self.kind == "outputs":
            count = ycell.get("execution_count")
            return len(ycell.get("outputs") or []) == len(self.outputs) and count == self.execution_count
        return True

    def _insert(self, notebook: YNotebook, replay: bool) -> str:
        if replay:  # only a replay may find its cell there (a new write's id is new)
            with contextlib.suppress(CellNotFound):
                cells.cell_index(notebook, self.cell_id)
                return self.cell_id
        index = self.index
        if self.after is not None:
            with contextlib.suppress(CellNotFound):
                index = cells.cell_index(notebook, self.after) + 1
        index = max(0, min(index, len(notebook.ycells)))
        cells.insert_cell(notebook, index, self.cell_type, self.source, self.cell_id)
        return self.cell_id


class Journal:
    """The writes not yet safe from a reset, in the order they were made."""

    def __init__(self, keep_seconds: float = DEFAULT_KEEP_SECONDS) -> None:
        self.keep_seconds = keep_seconds
        self.writes: list[Write] = []
        self.replayed = 0

    def add(self, write: Write) -> None:
        """Keep ``write``; a cell's outputs write supersedes its earlier ones (a run shows its outputs as
        they come: replaying the last one gives the same cell, and the journal stays small)."""
        if write.kind == "outputs":
            self.writes = [
                kept for kept in self.writes if kept.kind != "outputs" or kept.cell_id != write.cell_id
            ]
        self.writes.append(write)

    def acknowledged(self, acked_version: int) -> None:
        now = time.monotonic()
        for write in self.writes:
            if write.acked_at is None and write.version <= acked_version:
                write.acked_at = now
        self.writes = [
            write
            for write in self.writes
            if write.acked_at is None or now - write.acked_at < self.keep_seconds
        ]

    def replay(
        self, notebook: YNotebook, current_version: Callable[[], int], only: list[Write] | None = None
    ) -> int:
        """Apply every kept write (or those of ``only``) again, one transaction each, each with its new version."""
        count = 0
        for write in self.writes if only is None else only:
            with notebook.ydoc.transaction():
                write.apply(notebook, replay=True)
            write.version = current_version()
            write.acked_at = None
            count += 1
        self.replayed += count
        return count
