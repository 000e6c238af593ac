"""What the office shows: its history and employees as frames, the board, its listeners, its repr.

Where it sits: ``OfficeViews`` is a base class of ``Office`` (``office/office.py``); these are the
office's reading side, apart from its life cycle, asking and running (``office.py``,
``office/ask_running.py``). Widgets subscribe here and are never imported: ``board()`` asks
``_display`` for the view ``elynav_nb.widgets`` registers.

How data flows::

    history file (office/history.py) -> fold_records -> history()   (one row per ask)
    employees -> Employee.to_row -> to_frame()                       (one row per employee)
    the ask engine's steps -> _notify(event, ask) -> every listener (the board), a broken one dropped
"""

from __future__ import annotations

import html
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elynav_nb._display import rich_bundle, view_for
from elynav_nb.errors import InvalidInput
from elynav_nb.office.asks import Ask
from elynav_nb.office.employee import Employee
from elynav_nb.office.history import HistoryLog, fold_records, history_frame
from elynav_nb.office.trace import log_ask_event

if TYPE_CHECKING:
    import pandas

__all__ = ["OfficeListener", "OfficeViews"]

OfficeListener = Callable[[str, Ask | None], None]
"""``listener(event, ask)``; events: ``queued``, ``started``, ``turn``, ``cancelling``, ``ended`` (with
their ask), and ``stopped`` (with ``None``)."""


class OfficeViews:
    """The office's reading side, as a base class of ``Office`` (the state is the office's own)."""

    # Set by ``Office.__init__`` and ``Office.start``; declared here for the type checker only.
    workspace: Path
    status: str
    employees: dict[str, Employee]
    history_log: HistoryLog
    user_token: str
    _listeners: list[OfficeListener]

    if TYPE_CHECKING:  # defined by Office

        def employee(self, name: str) -> Employee: ...

    def history(self, agent: str | None = None) -> pandas.DataFrame:
        """The unified history (one row per ask, every conversation); ``agent`` keeps its asks both ways."""
        rows = fold_records(self.history_log.records())
        if agent is not None:
            name = self.employee(agent).name if self.employees else agent
            rows = [row for row in rows if name in (row["sender"], row["agent"])]
        return history_frame(rows)

    def to_frame(self) -> pandas.DataFrame:
        """One row per employee: status, caller, queue length, running since, session."""
        import pandas

        rows = [employee.to_row() for employee in self.employees.values()]
        columns = [
            "agent",
            "status",
            "caller",
            "ask_id",
            "queue_length",
            "running_since",
            "asks_served",
            "session_id",
            "cli_pid",
        ]
        return pandas.DataFrame(rows, columns=columns)

    def board(self) -> Any:
        """The live board widget (employees, queues, cancel buttons, live output, history)."""
        importlib.import_module("elynav_nb.widgets")  # registers the office board
        view = view_for(self)
        if view is None:
            raise InvalidInput("no board view is registered (is ipywidgets installed?)")
        return view

    def add_listener(self, listener: OfficeListener) -> None:
        """Call ``listener(event, ask)`` on every change (the board subscribes here)."""
        self._listeners.append(listener)

    def remove_listener(self, listener: OfficeListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _notify(self, event: str, ask: Ask | None) -> None:
        if ask is not None:
            log_ask_event(self, event, ask)  # DEBUG (an ask ending: INFO); nothing formatted when off
        for listener in list(self._listeners):
            try:
                listener(event, ask)
            except Exception:  # a broken view must not break the office
                self._listeners.remove(listener)

    def __repr__(self) -> str:
        busy = sum(1 for employee in self.employees.values() if employee.busy)
        queued = sum(len(employee.queue) for employee in self.employees.values())
        return (
            f"<Office {self.status} workspace={str(self.workspace)!r} employees={len(self.employees)} "
            f"busy={busy} queued={queued}>"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(value)) if value is not None else ''}</td>"
                for value in (employee.name, employee.status, employee.caller, len(employee.queue))
            )
            + "</tr>"
            for employee in self.employees.values()
        )
        return (
            f"<div><b>Office</b> · {html.escape(self.status)} · {html.escape(str(self.workspace))}"
            "<table><tr><th>agent</th><th>status</th><th>caller</th><th>queued</th></tr>"
            f"{rows}</table></div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)
