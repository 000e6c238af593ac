"""``TurnView`` and ``RunnerView``: live ipywidgets views of agent turns and of a runner.

Where it sits: in ``elynav_nb.widgets``, above ``elynav_nb.agents``. The views import the runner
and its events; the runner never imports them (it finds them through ``_display.register_view``).

How data flows::

    Turn --(async for event in turn, in a background task on the turn's loop)--> TurnView
      TextDelta / ThinkingDelta       -> ThrottledText (escaped, at most one update per interval)
      ToolUse / ToolResult            -> collapsible <details> rows in the same transcript
      AgentError, HookFailed, failed outcomes -> red rows (a limit reached: orange)
      a hook's deliberate deny -> its tool result reads "denied by the ... hook" (orange), not "failed"
      PermissionRequest               -> a row with Allow / Deny buttons (and Always allow where the
                                         agent offers it) -> request.allow()/allow(always=True)/deny()
      PermissionWithdrawn             -> that row's buttons disabled and the row removed
      end of the turn                 -> final flush, status line (outcome, cost, duration), Cancel hidden
    Cancel button -> turn.cancel() (the runner interrupts the CLI within its bounds)

    AgentRunner --(add_turn_listener)--> RunnerView -> one TurnView per new turn in an Accordion
                                                      (only the newest open: earlier turns collapsed)

Rules kept here (notebook-patterns.md §2): the views change widget traits only, never print and
never use ``with out:``; the transcript is one throttled ``HTML``. A view made on the turn's own
loop follows it in a task; a view made in a thread without a loop follows a turn that runs on
another (private) loop through ``run_coroutine_threadsafe``, or shows a finished turn at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import html
from collections.abc import Callable
from typing import Any

import ipywidgets  # type: ignore[import-untyped]

from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    HookDenied,
    HookFailed,
    PermissionRequest,
    PermissionWithdrawn,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.results import TurnResult
from elynav_nb.agents.runner import AgentRunner, Turn
from elynav_nb.agents.transcript_display import (
    ABORTED_STATUSES,
    ERROR_STYLE,
    MUTED_STYLE,
    SEGMENT_STYLES,
    SUMMARY_LIMIT,
    ended_with_error_text,
    outcome_row_html,
    permission_decision,
    row_html,
    shorten,
    tool_input_summary,
    tool_result_html,
    tool_use_html,
)
from elynav_nb.agents.turn import TurnOwner
from elynav_nb.errors import ElynavError
from elynav_nb.widgets.throttle import ThrottledText

__all__ = ["PermissionPrompt", "RunnerView", "TurnView"]

_OUTCOME_COLORS = {
    "completed": "#2e7d32",
    "error": "#c62828",
    "failed": "#c62828",
    "timeout": "#c62828",
    "limit": "#ef6c00",
}


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _cli_label(runner: TurnOwner) -> str:
    return runner.cli.label if runner.cli is not None else "not started"


class PermissionPrompt:
    """One pending permission request: a label and Allow / Deny buttons (Always allow where offered)."""

    def __init__(self, request: PermissionRequest, on_error: Callable[[ElynavError], None]) -> None:
        self.request = request
        self.decision = ""
        self._on_error = on_error
        summary = shorten(tool_input_summary(request.input), SUMMARY_LIMIT)
        self.label = ipywidgets.HTML(
            f"<b>{html.escape(request.tool_name)}</b> asks permission: <code>{html.escape(summary)}</code>"
        )
        self.allow_button = ipywidgets.Button(description="Allow", button_style="success", icon="check")
        self.always_button = ipywidgets.Button(
            description="Always allow",
            button_style="info",
            icon="check-double",
            tooltip="Allow such calls for the rest of the session",
        )
        self.deny_button = ipywidgets.Button(description="Deny", button_style="warning", icon="times")
        self.allow_button.on_click(self._on_allow_click)
        self.always_button.on_click(self._on_always_click)
        self.deny_button.on_click(self._on_deny_click)
        always = [self.always_button] if request.offers_always else []  # where the agent offers it (ACP)
        self.widget = ipywidgets.HBox([self.allow_button, *always, self.deny_button, self.label])

    @property
    def closed(self) -> bool:
        return bool(self.decision)

    def _on_allow_click(self, _button: Any) -> None:
        self._answer(allowed=True)

    def _on_always_click(self, _button: Any) -> None:
        self._answer(allowed=True, always=True)

    def _on_deny_click(self, _button: Any) -> None:
        self._answer(allowed=False)

    def _answer(self, *, allowed: bool, always: bool = False) -> None:
        if self.closed or self.allow_button.disabled:
            return
        self._disable()
        try:
            if allowed:
                self.request.allow(always=always)
            else:
                self.request.deny()
        except ElynavError as error:
            self._on_error(error)

    def close(self, decision: str) -> None:
        """The request is settled (allowed, denied, withdrawn, expired): buttons off for good."""
        self.decision = decision
        self._disable()
        self.label.value += f" <i>({html.escape(decision)})</i>"

    def _disable(self) -> None:
        self.allow_button.disabled = True
        self.always_button.disabled = True
        self.deny_button.disabled = True


class TurnView:
    """A live view of one ``Turn``: status line, Cancel, permission prompts, streaming transcript.

    Cancel shows while the turn runs; once the turn is settled it is hidden, and the status line's
    coloured outcome (``completed``, ``cancelled``, ``failed``...) is what remains.
    ``min_interval`` bounds transcript updates (seconds between two updates). ``on_finished`` is
    called once with the view when the turn has ended and the view shows its final state.
    """

    def __init__(
        self,
        turn: Turn,
        *,
        min_interval: float = 0.1,
        on_finished: Callable[[TurnView], None] | None = None,
    ) -> None:
        self.turn = turn
        self.transcript = ThrottledText(
            ipywidgets.HTML(layout=ipywidgets.Layout(max_height="480px", overflow="auto")),
            min_interval=min_interval,
        )
        self.status_line = ipywidgets.HTML()
        self.cancel_button = ipywidgets.Button(
            description="Cancel", icon="stop", button_style="danger", tooltip="Stop this turn"
        )
        self.cancel_button.on_click(self._on_cancel_click)
        self.permissions_box = ipywidgets.VBox()
        self.widget = ipywidgets.VBox(
            [
                ipywidgets.HBox([self.cancel_button, self.status_line]),
                self.permissions_box,
                self.transcript.widget,
            ]
        )
        self.prompts: dict[str, PermissionPrompt] = {}
        self.events_shown = 0
        self.finished = False
        self.consumer: asyncio.Task[None] | concurrent.futures.Future[None] | None = None
        self._on_finished = on_finished
        self._open_segment: str | None = None
        self._tool_names: dict[str, str] = {}
        self._show_status()
        self._follow_turn()

    # -- following the turn ------------------------------------------------------------------------

    def _follow_turn(self) -> None:
        turn_loop = self.turn.task.get_loop() if self.turn.task is not None else None
        if self.turn.done or turn_loop is None:
            self._show_events_so_far()
            return
        if _running_loop() is turn_loop:
            task = turn_loop.create_task(self._consume())
            task.add_done_callback(self._report_consumer_failure)
            self.consumer = task
        elif turn_loop.is_running():
            future = asyncio.run_coroutine_threadsafe(self._consume(), turn_loop)
            future.add_done_callback(self._report_consumer_failure)
            self.consumer = future
        else:
            self._show_events_so_far()

    def _show_events_so_far(self) -> None:
        """Render synchronously (a finished turn, or no loop to follow it on)."""
        for event in list(self.turn.events):
            self._show_event(event)
        self._finish()

    async def _consume(self) -> None:
        try:
            async for event in self.turn:
                self._show_event(event)
        finally:
            self._finish()

    def _report_consumer_failure(
        self, consumer: asyncio.Future[None] | concurrent.futures.Future[None]
    ) -> None:
        if consumer.cancelled():
            return
        error = consumer.exception()
        if error is None:
            return
        self._end_segment()
        self.transcript.write_html(
            f"<div class='elynav-error' style='{ERROR_STYLE}'>the view stopped following this turn: "
            f"{html.escape(type(error).__name__)}: {html.escape(str(error))}</div>"
        )
        self.transcript.flush()

    async def wait(self) -> TurnResult | None:
        """Wait until the view shows the whole turn; return the turn's result."""
        consumer = self.consumer
        if isinstance(consumer, asyncio.Task):
            await asyncio.shield(consumer)
        elif isinstance(consumer, concurrent.futures.Future):
            await asyncio.wrap_future(consumer)
        return self.turn.result

    # -- events -> widgets --------------------------------------------------------------------------

    def _show_event(self, event: AgentEvent) -> None:
        self.events_shown += 1
        if isinstance(event, TextDelta):
            segment = "text" if event.parent_tool_use_id is None else "subagent-text"
            self._write_segment(segment, event.text)
        elif isinstance(event, ThinkingDelta):
            self._write_segment("thinking", event.text)
        elif isinstance(event, ToolUse):
            self._show_tool_use(event)
        elif isinstance(event, ToolResult):
            self._show_tool_result(event)
        elif isinstance(event, PermissionRequest):
            self._show_permission_request(event)
        elif isinstance(event, PermissionWithdrawn):
            self._close_permission(event)
        elif isinstance(event, AgentError):
            self._write_row(ERROR_STYLE, "elynav-error", event.summary())
        elif isinstance(event, HookFailed):
            self._write_row(ERROR_STYLE, "elynav-error", event.summary())
        elif isinstance(event, HookDenied) and event.event != "PreToolUse":  # PreToolUse: on its result
            self._write_row(MUTED_STYLE, "elynav-hook-denied", event.summary())
        elif isinstance(event, AgentStarted):
            self._show_status()
        elif isinstance(event, TurnEnded):
            if event.is_error and self.turn.status not in ABORTED_STATUSES:
                self._write_row(ERROR_STYLE, "elynav-error", ended_with_error_text(event))
            self._show_status()
        # RawEvent and other kinds: kept in turn.events and to_frame(), not shown.

    def _write_segment(self, segment: str, text: str) -> None:
        if self._open_segment != segment:
            self._end_segment()
            self.transcript.write_html(f"<span class='elynav-{segment}' style='{SEGMENT_STYLES[segment]}'>")
            self._open_segment = segment
        self.transcript.write(text)

    def _end_segment(self) -> None:
        if self._open_segment is not None:
            self.transcript.write_html("</span>")
            self._open_segment = None

    def _write_row(self, style: str, css_class: str, text: str) -> None:
        self._end_segment()
        self.transcript.write_html(row_html(style, css_class, text))

    def _show_tool_use(self, event: ToolUse) -> None:
        self._end_segment()
        self._tool_names[event.id] = event.name
        self.transcript.write_html(tool_use_html(event))

    def _show_tool_result(self, event: ToolResult) -> None:
        self._end_segment()
        self.transcript.write_html(tool_result_html(event, self._tool_names.get(event.tool_use_id, "tool")))

    def _show_permission_request(self, request: PermissionRequest) -> None:
        self._write_row(MUTED_STYLE, "elynav-permission", f"{request.tool_name} asks permission")
        if request.request_id in self.prompts:
            return
        prompt = PermissionPrompt(request, on_error=self._show_error)
        self.prompts[request.request_id] = prompt
        self.permissions_box.children = (*self.permissions_box.children, prompt.widget)
        self._show_status()

    def _close_permission(self, event: PermissionWithdrawn) -> None:
        self._write_row(MUTED_STYLE, "elynav-permission", f"permission {permission_decision(event)}")
        prompt = self.prompts.get(event.request_id)
        if prompt is None:
            return
        prompt.close(event.decision)
        remaining = [child for child in self.permissions_box.children if child is not prompt.widget]
        self.permissions_box.children = tuple(remaining)
        self._show_status()

    def _show_error(self, error: ElynavError) -> None:
        self._write_row(ERROR_STYLE, "elynav-error", f"{error.code}: {error}")
        self.transcript.flush()

    # -- cancel, status, end ----------------------------------------------------------------------------

    def _on_cancel_click(self, _button: Any) -> None:
        self.cancel()

    def cancel(self) -> None:
        """Stop the turn (what the Cancel button does)."""
        if self.turn.done or self.cancel_button.disabled:
            return
        self.cancel_button.disabled = True
        self.cancel_button.description = "Cancelling…"
        self.turn.cancel()
        self._show_status()

    def _finish(self) -> None:
        self._end_segment()
        self.transcript.close()
        if not self.turn.done or self.finished:
            self._show_status()
            return
        self.finished = True
        self.cancel_button.disabled = True
        self.cancel_button.description = "Cancel"
        # A settled turn has nothing to cancel: a (disabled) red button would read as "still running";
        # the status line's coloured outcome says how it ended.
        self.cancel_button.layout.display = "none"
        for prompt in self.prompts.values():
            if not prompt.closed:
                prompt.close("closed")
        self.permissions_box.children = ()
        result = self.turn.result
        end_row = (
            outcome_row_html(result.outcome, result.error_code, result.error) if result is not None else ""
        )
        if end_row:
            self._end_segment()
            self.transcript.write_html(end_row)
            self.transcript.flush()
        self._show_status()
        if self._on_finished is not None:
            self._on_finished(self)

    def status_text(self) -> str:
        """The status line as plain text: outcome, agent, session, CLI, cost, duration."""
        runner = self.turn.runner
        result = self.turn.result
        parts = [self.turn.status]
        if result is None and self.prompts:
            waiting = sum(1 for prompt in self.prompts.values() if not prompt.closed)
            if waiting:
                parts.append(f"{waiting} permission waiting")
        parts.append(f"agent {runner.agent_name or 'default'}")
        parts.append(f"session {self.turn.session_id or runner.session_id}")
        parts.append(f"CLI {_cli_label(runner)}")
        if result is not None:
            parts.append(f"cost ${result.cost_usd:.4f}")
            parts.append(f"{result.duration_s:.2f} s")
        return " · ".join(parts)

    def _show_status(self) -> None:
        text = self.status_text()
        outcome, _, rest = text.partition(" · ")
        color = _OUTCOME_COLORS.get(outcome, "#333")
        self.status_line.value = (
            f"<span class='elynav-status'><b style='color:{color}'>{html.escape(outcome)}</b>"
            f" · {html.escape(rest)}</span>"
        )

    # -- display ------------------------------------------------------------------------------------------

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = repr(self.turn)
        return bundle

    def __repr__(self) -> str:
        return (
            f"<TurnView status={self.turn.status} events={self.events_shown} "
            f"flushes={self.transcript.flush_count}>"
        )


class RunnerView:
    """A live view of an ``AgentRunner``: its status line and one ``TurnView`` per turn.

    Turns sent after the view was made appear in an Accordion, the newest open; turns that
    ended before it are listed in a collapsed summary. ``close()`` stops listening.
    """

    def __init__(self, runner: AgentRunner, *, min_interval: float = 0.1) -> None:
        self.runner = runner
        self.min_interval = min_interval
        self.status_line = ipywidgets.HTML()
        self.earlier_turns = ipywidgets.HTML(self._earlier_turns_html())
        self.turns = ipywidgets.Accordion()
        self.widget = ipywidgets.VBox([self.status_line, self.earlier_turns, self.turns])
        self.turn_views: list[TurnView] = []
        self._closed = False
        self._show_status()
        current = runner.current_turn
        if current is not None:
            self._on_new_turn(current)
        runner.add_turn_listener(self._on_new_turn)

    def _earlier_turns_html(self) -> str:
        if not self.runner.history:
            return ""
        lines = "".join(
            f"<div style='{MUTED_STYLE}'>{html.escape(result.summary_line())}</div>"
            for result in self.runner.history
        )
        count = len(self.runner.history)
        return f"<details><summary style='cursor:pointer'>{count} earlier turn(s)</summary>{lines}</details>"

    def _on_new_turn(self, turn: Turn) -> None:
        view = TurnView(turn, min_interval=self.min_interval, on_finished=self._on_turn_finished)
        self.turn_views.append(view)
        self.turns.children = (*self.turns.children, view.widget)
        self.turns.titles = tuple(self._title(each) for each in self.turn_views)
        self.turns.selected_index = len(self.turn_views) - 1
        self._show_status()

    def _on_turn_finished(self, view: TurnView) -> None:
        if view not in self.turn_views:
            return  # finished while being built: _on_new_turn titles it
        self.turns.titles = tuple(self._title(each) for each in self.turn_views)
        self._show_status()

    @staticmethod
    def _title(view: TurnView) -> str:
        return f"{view.turn.status}: {shorten(view.turn.prompt, 60)}"

    def status_text(self) -> str:
        runner = self.runner
        total_cost = sum(result.cost_usd for result in runner.history)
        return (
            f"{runner.status} · agent {runner.agent_name or 'default'} · session {runner.session_id} · "
            f"CLI {_cli_label(runner)} · {len(runner.history)} turns · cost ${total_cost:.4f}"
        )

    def _show_status(self) -> None:
        self.status_line.value = (
            f"<span class='elynav-status'><b>AgentRunner</b> {html.escape(self.status_text())}</span>"
        )

    def refresh(self) -> None:
        """Re-read the runner's status (the view refreshes itself when turns start and end)."""
        self._show_status()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop showing new turns (the turns already shown keep following their turn)."""
        self._closed = True
        self.runner.remove_turn_listener(self._on_new_turn)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = repr(self.runner)
        return bundle

    def __repr__(self) -> str:
        return f"<RunnerView agent={self.runner.agent_name!r} turns_shown={len(self.turn_views)}>"
