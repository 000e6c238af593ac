"""What the office shows: its history and employees as frames, its listeners, its repr.

Where it sits: parts of ``Office`` (``office/office.py``), apart from its life cycle, asking and
running (``office.py``, ``office/ask_running.py``). ``Office`` owns an ``OfficeListeners`` and
calls the functions below with what they read; widgets subscribe through it and are never
imported (``Office.board()`` asks ``_display`` for the view ``elynav_nb.widgets`` registers).

How data flows::

    history file (office/history.py) -> fold_records -> history_of()   (one row per ask)
    employees -> to_row -> employees_frame()                          (one row per employee)
    the ask engine's steps -> OfficeListeners.notify(event, ask) -> every listener (the board),
      a broken one dropped
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from elynav_nb.office.asks import Ask
from elynav_nb.office.history import HistoryLog, fold_records, history_frame

if TYPE_CHECKING:
    import pandas

__all__ = [
    "EMPLOYEE_COLUMNS",
    "EmployeeLike",
    "OfficeListener",
    "OfficeListeners",
    "employees_frame",
    "history_of",
    "office_html",
    "office_text",
]

OfficeListener = Callable[[str, Ask | None], None]
"""``listener(event, ask)``; events: ``queued``, ``started``, ``turn``, ``cancelling``, ``ended`` (with
their ask), and ``stopped`` (with ``None``)."""

EMPLOYEE_COLUMNS = [
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


class EmployeeLike(Protocol):
    """What the views read of an employee (``Employee`` in the host, its mirror in an attached office)."""

    @property
    def name(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def busy(self) -> bool: ...

    @property
    def caller(self) -> str | None: ...

    @property
    def queue_length(self) -> int: ...

    def to_row(self) -> dict[str, Any]: ...


class OfficeListeners:
    """The office's listeners: ``notify`` calls each; one that raises is dropped (a broken view must
    not break the office)."""

    def __init__(self, on_ask_event: Callable[[str, Ask], None] | None = None) -> None:
        self._listeners: list[OfficeListener] = []
        self._on_ask_event = on_ask_event

    def add(self, listener: OfficeListener) -> None:
        self._listeners.append(listener)

    def remove(self, listener: OfficeListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def notify(self, event: str, ask: Ask | None) -> None:
        if ask is not None and self._on_ask_event is not None:
            self._on_ask_event(event, ask)
        for listener in list(self._listeners):
            try:
                listener(event, ask)
            except Exception:
                self._listeners.remove(listener)


def history_of(history_log: HistoryLog, agent_name: str | None) -> pandas.DataFrame:
    """The unified history (one row per ask, every conversation); ``agent_name`` keeps its asks both ways."""
    rows = fold_records(history_log.records())
    if agent_name is not None:
        rows = [row for row in rows if agent_name in (row["sender"], row["agent"])]
    return history_frame(rows)


def employees_frame(employees: Iterable[EmployeeLike]) -> pandas.DataFrame:
    """One row per employee: status, caller, queue length, running since, session."""
    import pandas

    return pandas.DataFrame([employee.to_row() for employee in employees], columns=EMPLOYEE_COLUMNS)


def office_text(
    status: str, workspace: Path, employees: Mapping[str, EmployeeLike], *, attached: bool
) -> str:
    busy = sum(1 for employee in employees.values() if employee.busy)
    queued = sum(employee.queue_length for employee in employees.values())
    how = " attached" if attached else ""
    return (
        f"<Office {status}{how} workspace={str(workspace)!r} employees={len(employees)} "
        f"busy={busy} queued={queued}>"
    )


def office_html(status: str, workspace: Path, employees: Mapping[str, EmployeeLike]) -> str:
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{html.escape(str(value)) if value is not None else ''}</td>"
            for value in (employee.name, employee.status, employee.caller, employee.queue_length)
        )
        + "</tr>"
        for employee in employees.values()
    )
    return (
        f"<div><b>Office</b> · {html.escape(status)} · {html.escape(str(workspace))}"
        "<table><tr><th>agent</th><th>status</th><th>caller</th><th>queued</th></tr>"
        f"{rows}</table></div>"
    )
