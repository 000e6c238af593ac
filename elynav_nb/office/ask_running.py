"""How the office runs its asks: the FIFO dispatch, the turn, the settling, the cancel cascade.

Where it sits: ``AskRunning`` is a base class of ``Office`` (``office/office.py``), which owns the
state these methods work on (employees, asks in flight, timers, tasks, sessions, history) and
calls them from ``submit``, ``cancel`` and ``stop``. Nothing else calls them; nothing here is
public. The office's life cycle, checks and public asking surface stay in ``office.py``; what the
office shows (frames, board, listeners, repr) is ``office/office_views.py``.

How an ask flows through here::

    Office.submit queued it -> _dispatch: the employee is free -> running (+ history "start")
      -> _run: _start_runner (resume, or a new session if the old one cannot resume)
         -> runner.send(text, output_schema=) -> await the Turn -> reply_from_turn
      -> _finish: Reply on the ask (+ history "end"), pending child asks cancelled (nobody waits
         for them any more), the ask forgotten once old, the employee takes the next ask

    Office.cancel / a deadline (_expire) / Office.stop -> _cancel: every pending child first (the
      logical cascade), then the ask: queued -> _finish with a synthetic Reply; running -> the
      turn's bounded cancel, whose result comes back through _run -> _finish

Every path ends an ask with a ``Reply`` (a synthetic one when no turn could answer).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import TYPE_CHECKING

from elynav_nb.errors import CliStartFailed, ElynavError
from elynav_nb.office.asks import (
    Ask,
    Reply,
    ReplyOutcome,
    error_code_for,
    past_tense,
    reply_from_turn,
    synthetic_reply,
)
from elynav_nb.office.employee import Employee
from elynav_nb.office.history import HistoryLog, utc_now
from elynav_nb.office.workspace import OfficeFiles

if TYPE_CHECKING:
    from elynav_nb.agents.definitions import AgentDefinition
    from elynav_nb.agents.runner import AgentRunner

__all__ = ["AskRunning"]

_KEPT_FINISHED_ASKS = 1_000  # ended asks still found by id (cancel stays idempotent)


class AskRunning:
    """The office's ask engine, as a base class of ``Office`` (the state is the office's own)."""

    # Set by ``Office.__init__`` and ``Office.start``; declared here for the type checker only.
    status: str
    employees: dict[str, Employee]
    files: OfficeFiles
    history_log: HistoryLog
    _loop: asyncio.AbstractEventLoop | None
    _asks: dict[str, Ask]
    _finished_order: deque[str]
    _timers: dict[str, asyncio.TimerHandle]
    _tasks: set[asyncio.Task[None]]
    _sessions: dict[str, str]

    if TYPE_CHECKING:  # defined by Office (life cycle) and OfficeViews (listeners)

        def _make_runner(
            self, definition: AgentDefinition, token: str, *, resume: str | None
        ) -> AgentRunner: ...

        def _notify(self, event: str, ask: Ask | None) -> None: ...

    def _dispatch(self, employee: Employee) -> None:
        if employee.current is not None or self.status != "open":
            return
        while employee.queue:
            ask = employee.queue.popleft()
            if ask.done:
                continue
            employee.current = ask
            ask.status = "running"
            ask.started_at = utc_now()
            self.history_log.append(
                {
                    "record": "start",
                    "ask_id": ask.id,
                    "started_at": ask.started_at,
                    "session_id": employee.session_id,
                }
            )
            assert self._loop is not None
            task = self._loop.create_task(self._run(employee, ask))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            self._notify("started", ask)
            return

    async def _run(self, employee: Employee, ask: Ask) -> None:
        try:
            await self._start_runner(employee)
            if ask.done:
                return
            turn = employee.runner.send(ask.text, output_schema=ask.output_schema)
            ask.turn = turn
            self._notify("turn", ask)
            if ask.cancel_outcome is not None:
                turn.cancel(
                    ask.cancel_reason, outcome="timeout" if ask.cancel_outcome == "timeout" else "cancelled"
                )
            result = await turn
            self._remember_session(employee)  # codex names its thread during the first turn
            self._finish(ask, reply_from_turn(ask, result))
        except ElynavError as error:
            self._finish(ask, self._synthetic(ask, "failed", str(error), error.code))
        except asyncio.CancelledError:
            self._finish(ask, self._synthetic(ask, "failed", "the office stopped", "OFFICE_STOPPED"))
            raise
        except Exception as error:  # never leave an ask pending: its callers would wait forever
            self._finish(
                ask, self._synthetic(ask, "failed", f"{type(error).__name__}: {error}", "AGENT_PROCESS_ERROR")
            )

    async def _start_runner(self, employee: Employee) -> None:
        """Start the employee's CLI; a conversation that cannot be resumed is replaced by a new one."""
        runner = employee.runner
        if runner.is_running:
            return
        try:
            await runner.start()
        except CliStartFailed as error:
            if "No conversation found" not in f"{error} {error.details.get('stderr_tail', '')}":
                raise
            previous = runner.session_id
            employee.runner = self._make_runner(employee.definition, employee.token, resume=None)
            self.history_log.note(
                f"session {previous} could not be resumed; a new conversation began", agent=employee.name
            )
            await employee.runner.start()
        self._remember_session(employee)

    def _remember_session(self, employee: Employee) -> None:
        if self._sessions.get(employee.name) == employee.session_id:
            return
        self._sessions[employee.name] = employee.session_id
        self.files.save_sessions(self._sessions)

    def _synthetic(self, ask: Ask, outcome: ReplyOutcome, error: str, error_code: str) -> Reply:
        return synthetic_reply(
            ask, outcome, error, error_code, session_id=self.employees[ask.agent].session_id
        )

    def _finish(self, ask: Ask, reply: Reply) -> None:
        """Settle an ask once; free its employee; cancel what it was still waiting on."""
        if ask.done:
            return
        timer = self._timers.pop(ask.id, None)
        if timer is not None:
            timer.cancel()
        ask._settle(reply)
        self.history_log.append(
            {
                "record": "end",
                "ask_id": ask.id,
                "outcome": reply.outcome,
                "reply": reply.text,
                "error_code": reply.error_code,
                "error": reply.error,
                "cancelled_by": reply.cancelled_by,
                "ended_at": reply.ended_at,
                "session_id": reply.session_id,
                "cost_usd": reply.cost_usd,
            }
        )
        employee = self.employees[ask.agent]
        with contextlib.suppress(ValueError):
            employee.queue.remove(ask)
        if employee.current is ask:
            employee.current = None
            employee.asks_served += 1
            self._remember_session(employee)
        for child in ask.pending_children():
            self._cancel(
                child,
                by=ask.cancelled_by,
                outcome="cancelled",
                reason=f"the ask it was sent from ({ask.id}, {ask.sender} -> {ask.agent}) ended {reply.outcome}",
            )
        self._forget_when_old(ask)
        self._notify("ended", ask)
        self._dispatch(employee)

    def _forget_when_old(self, ask: Ask) -> None:
        self._finished_order.append(ask.id)
        while len(self._finished_order) > _KEPT_FINISHED_ASKS:
            self._asks.pop(self._finished_order.popleft(), None)

    def _cancel(self, ask: Ask, *, by: str, outcome: ReplyOutcome, reason: str) -> None:
        if ask.done or ask.cancelling:
            return
        ask.cancelled_by = by if outcome == "cancelled" else ""
        ask.cancel_outcome = outcome
        ask.cancel_reason = reason
        for child in ask.pending_children():  # the logical cascade: at once, no process has to die first
            self._cancel(
                child,
                by=by,
                outcome=outcome,  # a deadline that ran out ends the whole chain as a timeout
                reason=f"the ask it was sent from ({ask.id}, {ask.sender} -> {ask.agent}) was {past_tense(outcome)}",
            )
        if ask.status == "queued" or ask.turn is None and ask.status == "running":
            self._finish(ask, self._synthetic(ask, outcome, reason, error_code_for(outcome)))
            return
        self._notify("cancelling", ask)
        assert ask.turn is not None
        ask.turn.cancel(reason, outcome="timeout" if outcome == "timeout" else "cancelled")

    def _expire(self, ask: Ask, bound: float) -> None:
        self._timers.pop(ask.id, None)
        self._cancel(ask, by="", outcome="timeout", reason=f"no reply within {bound:.3g} s")
