"""``OfficeBoard``: the live board of an ``Office``: who works for whom, the queues, cancel, live output, history.

Where it sits: above ``elynav_nb.office`` (the office never imports it: importing this module
registers the board for ``Office`` in ``_display``, and ``office.board()`` asks for it).

What a person sees, top to bottom::

    status line        office state · N busy · M queued
    employees table    agent · status · working for · queued · running since · [Follow]
    asks               one row per running or queued ask: [Cancel ask] id · sender → agent · status · text,
                       and [Allow] [Deny] under it while its agent waits for a tool permission
    [History]          opens (and refreshes) the unified history table below
    follow area        the live transcript (TurnView) of the employee being followed

How data flows::

    office.add_listener(event, ask) -> RateLimiter (at most once per min_interval) -> refresh()
      refresh: status and employee rows rewritten (HTML values); ask rows added/removed by id
      (a row's Cancel button is made once, so a click never lands on a rebuilt widget)
    a second timer re-renders once a second while someone is busy ("running since" moves)
    Cancel click -> office.cancel(ask_id, by="user")   Follow click -> TurnView of that employee's turn

Clicks act as the user. With ipykernel >= 7.4 they are handled while another cell awaits an ask.
"""

from __future__ import annotations

import asyncio
import html
from datetime import datetime
from typing import Any

import ipywidgets  # type: ignore[import-untyped]

from elynav_nb._display import register_view, view_for
from elynav_nb.errors import ElynavError
from elynav_nb.office.asks import Ask
from elynav_nb.office.employee import Employee
from elynav_nb.office.history import utc_now
from elynav_nb.office.office import Office
from elynav_nb.office.rights import USER
from elynav_nb.widgets.throttle import RateLimiter
from elynav_nb.widgets.turn_view import PermissionPrompt

__all__ = ["OfficeBoard"]

HISTORY_ROWS = 50
_CELL = "padding:2px 8px;text-align:left"
_STATUS_COLORS = {"idle": "#2e7d32", "busy": "#e65100", "asks permission": "#6a1b9a", "cancelling": "#c62828"}


def _since(moment: datetime | None) -> str:
    if moment is None:
        return ""
    seconds = max(0.0, (utc_now() - moment).total_seconds())
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _shorten(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _AskRow:
    """One running or queued ask: a label and its Cancel button (made once per ask)."""

    def __init__(self, board: OfficeBoard, ask: Ask) -> None:
        self.ask = ask
        self.label = ipywidgets.HTML()
        self.cancel_button = ipywidgets.Button(
            description="Cancel ask",
            icon="stop",
            button_style="danger",
            tooltip=f"Cancel ask {ask.id} (as the user)",
        )
        self.cancel_button.on_click(lambda _button: board.cancel(ask.id))
        self.prompts: dict[str, PermissionPrompt] = {}
        self.prompts_box = ipywidgets.VBox()
        self.widget = ipywidgets.VBox([ipywidgets.HBox([self.cancel_button, self.label]), self.prompts_box])
        self.board = board
        self.render()

    def render(self) -> None:
        ask = self.ask
        state = "cancelling" if ask.cancelling else ask.status
        self.label.value = (
            f"<code>{html.escape(ask.id)}</code> · {html.escape(ask.sender)} → <b>{html.escape(ask.agent)}</b> · "
            f"{html.escape(state)} · {html.escape(_shorten(ask.text))}"
        )
        self.cancel_button.disabled = ask.cancelling or ask.done
        self._show_prompts()

    def _show_prompts(self) -> None:
        """Allow / Deny for each tool prompt the running ask's agent waits on (a click acts as the user)."""
        employee = self.board.office.employee(self.ask.agent)
        pending = employee.pending_permissions if employee.current is self.ask else []
        waiting = {request.request_id: request for request in pending}
        for request_id in [request_id for request_id in self.prompts if request_id not in waiting]:
            self.prompts.pop(request_id).widget.close()
        for request_id, request in waiting.items():
            if request_id not in self.prompts:
                self.prompts[request_id] = PermissionPrompt(request, self.board.show_error)
        shown = tuple(prompt.widget for prompt in self.prompts.values())
        if shown != self.prompts_box.children:
            self.prompts_box.children = shown


class OfficeBoard:
    """A live board of one office. ``min_interval`` bounds re-renders (seconds between two)."""

    def __init__(self, office: Office, *, min_interval: float = 0.25) -> None:
        self.office = office
        self.status_line = ipywidgets.HTML()
        self.employees_table = ipywidgets.HTML()
        self.follow_buttons: dict[str, ipywidgets.Button] = {}
        for name in office.employees:
            button = ipywidgets.Button(
                description=f"Follow {name}",
                icon="eye",
                tooltip=f"Show {name}'s live output",
                layout=ipywidgets.Layout(width="auto"),
            )
            button.on_click(lambda _button, name=name: self.follow(name))
            self.follow_buttons[name] = button
        self.asks_box = ipywidgets.VBox()
        self.message = ipywidgets.HTML()
        self.history_button = ipywidgets.Button(
            description="History", icon="history", tooltip="The unified history"
        )
        self.history_button.on_click(lambda _button: self.show_history())
        self.history_table = ipywidgets.HTML()
        self.follow_title = ipywidgets.HTML()
        self.follow_area = ipywidgets.VBox()
        self.widget = ipywidgets.VBox(
            [
                self.status_line,
                self.employees_table,
                ipywidgets.HBox(
                    list(self.follow_buttons.values()), layout=ipywidgets.Layout(flex_flow="row wrap")
                ),
                self.asks_box,
                ipywidgets.HBox([self.history_button, self.message]),
                self.history_table,
                self.follow_title,
                self.follow_area,
            ]
        )
        self.rows: dict[str, _AskRow] = {}
        self.followed: str | None = None
        self._cancelled_ask: Ask | None = None  # the message line says how it ended
        self._closed = False
        self._limiter = RateLimiter(self.refresh, min_interval=min_interval)
        self._ticker: asyncio.TimerHandle | None = None
        office.add_listener(self._on_office_event)
        self.refresh()

    @property
    def render_count(self) -> int:
        return self._limiter.run_count

    @property
    def closed(self) -> bool:
        return self._closed

    # -- office events -----------------------------------------------------------------------------

    def _on_office_event(self, event: str, ask: Ask | None) -> None:
        if event == "turn" and ask is not None and ask.agent == self.followed:
            self.follow(ask.agent)  # the followed employee started a new turn: follow it
        elif event == "ended" and ask is not None and ask.agent == self.followed and ask.reply is not None:
            self.follow_title.value = (
                f"Following <b>{html.escape(ask.agent)}</b>: its ask for {html.escape(ask.sender)} ended "
                f"{html.escape(ask.reply.outcome)} (its next turn shows here)"
            )
        self._limiter.request()

    def refresh(self) -> None:
        """Re-render everything from the office's state (called at most once per ``min_interval``)."""
        office = self.office
        employees = list(office.employees.values())
        busy = sum(1 for employee in employees if employee.busy)
        queued = sum(employee.queue_length for employee in employees)
        self.status_line.value = (
            f"<b>Office</b> · {html.escape(office.status)} · {len(employees)} employees · "
            f"{busy} busy · {queued} queued"
        )
        self.employees_table.value = self._employees_html(employees)
        self._sync_ask_rows()
        cancelled = self._cancelled_ask
        if cancelled is not None and cancelled.reply is not None:
            self.message.value = (
                f"ask <code>{html.escape(cancelled.id)}</code>: {html.escape(cancelled.reply.outcome)}"
            )
            self._cancelled_ask = None
        self._keep_ticking(busy > 0)

    def _employees_html(self, employees: list[Employee]) -> str:
        header = "".join(
            f"<th style='{_CELL}'>{title}</th>"
            for title in ("agent", "status", "working for", "queued", "running since", "asks served")
        )
        rows = []
        for employee in employees:
            color = _STATUS_COLORS.get(employee.status, "#333")
            cells = [
                f"<b>{html.escape(employee.name)}</b>",
                f"<span style='color:{color}'>{html.escape(employee.status)}</span>",
                html.escape(employee.caller or ""),
                str(employee.queue_length),
                _since(employee.running_since),
                str(employee.asks_served),
            ]
            rows.append("<tr>" + "".join(f"<td style='{_CELL}'>{cell}</td>" for cell in cells) + "</tr>")
        return f"<table class='elynav-office'><tr>{header}</tr>{''.join(rows)}</table>"

    def _sync_ask_rows(self) -> None:
        live = self.office.asks
        live_ids = {ask.id for ask in live}
        for ask_id in [ask_id for ask_id in self.rows if ask_id not in live_ids]:
            ended = self.rows.pop(ask_id)
            ended.cancel_button.close()
            ended.label.close()
            ended.widget.close()
        for ask in live:
            row = self.rows.get(ask.id)
            if row is None:
                self.rows[ask.id] = _AskRow(self, ask)
            else:
                row.render()
        ordered = tuple(self.rows[ask.id].widget for ask in live)
        if ordered != self.asks_box.children:
            self.asks_box.children = ordered

    def _keep_ticking(self, someone_busy: bool) -> None:
        if not someone_busy or self._closed or self._ticker is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._ticker = loop.call_later(1.0, self._tick)

    def _tick(self) -> None:
        self._ticker = None
        if not self._closed:
            self._limiter.request()

    # -- actions (a click acts as the user) ----------------------------------------------------------

    def cancel(self, ask_id: str) -> None:
        """Cancel an ask as the user; the answer shows in the message line."""
        try:
            self._cancelled_ask = self.office.cancel(ask_id, by=USER)
            self.message.value = f"cancelling ask <code>{html.escape(ask_id)}</code>"
        except ElynavError as error:
            self.show_error(error)
        self._limiter.request()

    def show_error(self, error: ElynavError) -> None:
        self.message.value = (
            f"<span style='color:#c62828'>{html.escape(error.code)}: {html.escape(str(error))}</span>"
        )

    def follow(self, agent: str) -> None:
        """Show the live transcript of ``agent``'s current turn (or say it is idle)."""
        self.followed = agent
        employee = self.office.employee(agent)
        turn = employee.current_turn
        if turn is None:
            self.follow_title.value = (
                f"Following <b>{html.escape(agent)}</b>: idle (its next turn shows here)"
            )
            self.follow_area.children = ()
            return
        caller = employee.caller or ""
        self.follow_title.value = f"Following <b>{html.escape(agent)}</b>, working for {html.escape(caller)}"
        view = view_for(turn)
        self.follow_area.children = (view.widget,) if view is not None else ()

    def show_history(self) -> None:
        """Show the last rows of the unified history (refreshed at each click)."""
        frame = self.office.history()
        columns = [
            "queued_at",
            "sender",
            "agent",
            "outcome",
            "prompt",
            "reply",
            "error_code",
            "wait_s",
            "run_s",
        ]
        recent = frame[columns].tail(HISTORY_ROWS).copy()
        recent["queued_at"] = recent["queued_at"].dt.strftime("%H:%M:%S")
        for column in ("prompt", "reply"):
            recent[column] = recent[column].map(lambda text: _shorten(str(text), 60))
        table = recent.to_html(
            index=False, na_rep="", justify="left", float_format=lambda value: f"{value:.2f}"
        )
        self.history_table.value = (
            f"<b>History</b> ({len(frame)} asks, last {min(len(frame), HISTORY_ROWS)} shown){table}"
        )

    # -- life ---------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop following the office (the widgets keep their last state)."""
        self._closed = True
        self._limiter.cancel()
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self.office.remove_listener(self._on_office_event)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = repr(self.office)
        return bundle

    def __repr__(self) -> str:
        return f"<OfficeBoard employees={len(self.office.employees)} asks={len(self.rows)} renders={self.render_count}>"


register_view(Office, OfficeBoard)
