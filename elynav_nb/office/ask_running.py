"""How the office runs its asks: the FIFO dispatch, the turn, the settling, the cancel cascade.

Where it sits: ``AskEngine`` is a part of ``Office`` (``office/office.py``), made by it and given
what it works on: the employees, the history, the workspace files, how to make a runner and how to
tell the listeners. It owns the asks in flight, their deadlines, the tasks that run them and the
canonical session ids. ``Office.submit``, ``cancel`` and ``stop`` call it; nothing else does. The
office's life cycle, checks and public surface stay in ``office.py``; what it shows is
``office/office_views.py``.

How an ask flows through here::

    Office.submit -> AskEngine.queue (deadline timer) -> dispatch: the employee is free -> running
      (+ history "start") -> _run: _start_runner (resume, or a new session when the CLI says
         SESSION_NOT_FOUND) -> runner.send(text, output_schema=) -> await the Turn -> reply_from_turn
      -> finish: Reply on the ask (+ history "end"), pending child asks cancelled (nobody waits
         for them any more), the ask forgotten once old, the employee takes the next ask

    Office.cancel / a deadline (_expire) / Office.stop -> cancel: every pending child first (the
      logical cascade), then the ask: queued -> finish with a synthetic Reply; running -> the
      turn's bounded cancel, whose result comes back through _run -> finish

Every path ends an ask with a ``Reply`` (a synthetic one when no turn could answer).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from elynav_nb.errors import AskNotFound, ElynavError, SessionNotFound
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

__all__ = ["AskEngine", "RunnerFactory"]

_KEPT_FINISHED_ASKS = 1_000  # ended asks still found by id (cancel stays idempotent)

RunnerFactory = Callable[["AgentDefinition", str, "str | None"], "AgentRunner"]
"""``make_runner(definition, token, resume)``: the office's way to make an employee's runner."""


class AskEngine:
    """The office's ask engine (see the module docstring). ``accepting`` is False once the office closes."""

    def __init__(
        self,
        *,
        employees: dict[str, Employee],
        history_log: HistoryLog,
        files: OfficeFiles,
        make_runner: RunnerFactory,
        notify: Callable[[str, Ask | None], None],
    ) -> None:
        self.employees = employees
        self.history_log = history_log
        self.files = files
        self.make_runner = make_runner
        self.notify = notify
        self.accepting = False
        self.loop: asyncio.AbstractEventLoop | None = None
        self.sessions: dict[str, str] = {}  # agent -> its canonical session id (sessions.json)
        self.tasks: set[asyncio.Task[None]] = set()
        self._asks: dict[str, Ask] = {}
        self._finished_order: deque[str] = deque()
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def get(self, ask_id: str) -> Ask:
        ask = self._asks.get(ask_id)
        if ask is None:
            raise AskNotFound(f"no ask {ask_id!r} in this office", details={"ask_id": ask_id})
        return ask

    def unfinished(self) -> list[Ask]:
        return [ask for ask in self._asks.values() if not ask.done]

    def queue(self, ask: Ask) -> None:
        """Take a checked ask: its employee's FIFO, its deadline, the history; then dispatch."""
        assert self.loop is not None
        self._asks[ask.id] = ask
        if ask.parent is not None:
            ask.parent.children.append(ask)
        employee = self.employees[ask.agent]
        employee.queue.append(ask)
        self.history_log.append(
            {
                "record": "ask",
                "ask_id": ask.id,
                "parent_id": ask.parent_id,
                "sender": ask.sender,
                "agent": ask.agent,
                "prompt": ask.text,
                "queued_at": ask.queued_at,
            }
        )
        self._timers[ask.id] = self.loop.call_at(
            ask.deadline, self._expire, ask, ask.deadline - self.loop.time()
        )
        self.notify("queued", ask)
        self.dispatch(employee)

    def dispatch(self, employee: Employee) -> None:
        if employee.current is not None or not self.accepting:
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
            assert self.loop is not None
            task = self.loop.create_task(self._run(employee, ask))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
            self.notify("started", ask)
            return

    async def _run(self, employee: Employee, ask: Ask) -> None:
        try:
            await self._start_runner(employee)
            if ask.done:
                return
            turn = employee.runner.send(ask.text, output_schema=ask.output_schema)
            ask.turn = turn
            self.notify("turn", ask)
            if ask.cancel_outcome is not None:
                turn.cancel(
                    ask.cancel_reason, outcome="timeout" if ask.cancel_outcome == "timeout" else "cancelled"
                )
            result = await turn
            self._remember_session(employee)  # codex names its thread during the first turn
            self.finish(ask, reply_from_turn(ask, result))
        except ElynavError as error:
            self.finish(ask, self.synthetic(ask, "failed", str(error), error.code))
        except asyncio.CancelledError:
            self.finish(ask, self.synthetic(ask, "failed", "the office stopped", "OFFICE_STOPPED"))
            raise
        except Exception as error:  # never leave an ask pending: its callers would wait forever
            self.finish(
                ask, self.synthetic(ask, "failed", f"{type(error).__name__}: {error}", "AGENT_PROCESS_ERROR")
            )

    async def _start_runner(self, employee: Employee) -> None:
        """Start the employee's CLI; a conversation that cannot be resumed is replaced by a new one."""
        runner = employee.runner
        if runner.is_running:
            return
        try:
            await runner.start()
        except SessionNotFound:
            previous = runner.session_id
            employee.runner = self.make_runner(employee.definition, employee.token, None)
            self.history_log.note(
                f"session {previous} could not be resumed; a new conversation began", agent=employee.name
            )
            await employee.runner.start()
        self._remember_session(employee)

    def _remember_session(self, employee: Employee) -> None:
        if self.sessions.get(employee.name) == employee.session_id:
            return
        self.sessions[employee.name] = employee.session_id
        self.files.save_sessions(self.sessions)

    def synthetic(self, ask: Ask, outcome: ReplyOutcome, error: str, error_code: str) -> Reply:
        return synthetic_reply(
            ask, outcome, error, error_code, session_id=self.employees[ask.agent].session_id
        )

    def finish(self, ask: Ask, reply: Reply) -> None:
        """Settle an ask once; free its employee; cancel what it was still waiting on."""
        if ask.done:
            return
        timer = self._timers.pop(ask.id, None)
        if timer is not None:
            timer.cancel()
        ask.settle(reply)
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
            self.cancel(
                child,
                by=ask.cancelled_by,
                outcome="cancelled",
                reason=f"the ask it was sent from ({ask.id}, {ask.sender} -> {ask.agent}) ended {reply.outcome}",
            )
        self._forget_when_old(ask)
        self.notify("ended", ask)
        self.dispatch(employee)

    def _forget_when_old(self, ask: Ask) -> None:
        self._finished_order.append(ask.id)
        while len(self._finished_order) > _KEPT_FINISHED_ASKS:
            self._asks.pop(self._finished_order.popleft(), None)

    def cancel(self, ask: Ask, *, by: str, outcome: ReplyOutcome, reason: str) -> None:
        if ask.done or ask.cancelling:
            return
        ask.cancelled_by = by if outcome == "cancelled" else ""
        ask.cancel_outcome = outcome
        ask.cancel_reason = reason
        for child in ask.pending_children():  # the logical cascade: at once, no process has to die first
            self.cancel(
                child,
                by=by,
                outcome=outcome,  # a deadline that ran out ends the whole chain as a timeout
                reason=f"the ask it was sent from ({ask.id}, {ask.sender} -> {ask.agent}) was {past_tense(outcome)}",
            )
        if ask.status == "queued" or ask.turn is None and ask.status == "running":
            self.finish(ask, self.synthetic(ask, outcome, reason, error_code_for(outcome)))
            return
        self.notify("cancelling", ask)
        assert ask.turn is not None
        ask.turn.cancel(reason, outcome="timeout" if outcome == "timeout" else "cancelled")

    def _expire(self, ask: Ask, bound: float) -> None:
        self._timers.pop(ask.id, None)
        self.cancel(ask, by="", outcome="timeout", reason=f"no reply within {bound:.3g} s")
