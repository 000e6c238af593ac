"""``Ask`` and ``Reply``: one request to an employee of the office, and how it ended.

Where it sits: made by ``Office.submit`` and settled by the office only (queue, run, cancel,
timeout, stop); read by callers, the board widget, the socket server and the history. An
``Ask`` is the live handle (``await ask``, ``ask.cancel(by=...)``, ``ask.status``); a ``Reply``
is the frozen value every ask ends with, failures included (a synthetic one when no turn ran).

How data flows::

    Office.submit -> Ask (queued) -> the employee's runner takes it (running, ask.turn)
      -> TurnResult -> Reply (done | cancelled | timeout | failed) -> ask.reply, await ask
    (an ask with ``output_schema``: the turn's validated ``data`` on the Reply, ``to_frame()`` its rows)

Pure apart from the asyncio future that ``await ask`` waits on; pandas only inside ``to_frame``.
An ask knows its office only as an ``AskCanceller`` (``ask.cancel`` goes through the office's
``cancel``, which checks the right): this module does not import ``office.py``.
"""

from __future__ import annotations

import asyncio
import html
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict

from elynav_nb._display import refresh_live, rich_bundle, show_live
from elynav_nb.agents.events import AgentEvent
from elynav_nb.agents.output_schema import OutputSchema, OutputSchemaSpec
from elynav_nb.agents.results import TurnResult, data_frame, events_frame
from elynav_nb.errors import AgentTimeout, ElynavError, InvalidInput, error_for_code
from elynav_nb.office.history import utc_now
from elynav_nb.office.rights import USER

if TYPE_CHECKING:
    from collections.abc import Generator

    import pandas

    from elynav_nb.agents.runner import Turn

__all__ = [
    "Ask",
    "AskCanceller",
    "AskKeywords",
    "AskOptions",
    "AskRowSource",
    "AskStatus",
    "Reply",
    "ReplyOutcome",
    "ask_row",
    "error_code_for",
    "past_tense",
    "reply_from_turn",
    "reply_outcome_for",
    "synthetic_reply",
]


class AskKeywords(TypedDict, total=False):
    """The options of ``Office.submit`` / ``ask`` / ``try_ask`` (one list; see ``AskOptions``)."""

    sender: str
    timeout: float | None
    parent: Ask | str | None
    output_schema: OutputSchemaSpec | None


@dataclass(frozen=True)
class AskOptions:
    """How one ask is sent: ``sender`` (``"user"`` or an employee's name), ``timeout`` (seconds, the
    office's ``ask_timeout`` when None), ``parent`` (the ask whose turn sent it), ``output_schema``
    (a structured answer in ``reply.data``)."""

    sender: str = USER
    timeout: float | None = None
    parent: Ask | str | None = None
    output_schema: OutputSchemaSpec | None = None

    @classmethod
    def of(cls, keywords: AskKeywords) -> AskOptions:
        """The options of ``**keywords`` (``INVALID_INPUT`` for an option that does not exist)."""
        unknown = sorted(set(keywords) - set(cls.__dataclass_fields__))
        if unknown:
            raise InvalidInput(
                f"unknown ask option {unknown[0]!r}; the options: {', '.join(cls.__dataclass_fields__)}",
                details={"option": unknown[0]},
            )
        return cls(**keywords)


ReplyOutcome = Literal["done", "cancelled", "timeout", "failed"]
AskStatus = Literal["queued", "running", "done", "cancelled", "timeout", "failed"]

_TURN_OUTCOMES: dict[str, ReplyOutcome] = {
    "completed": "done",
    "cancelled": "cancelled",
    "timeout": "timeout",
    "error": "failed",
    "failed": "failed",
    "limit": "failed",  # a bound the runner set (max_turns, max_budget_usd): error_code says which
}


def reply_outcome_for(result: TurnResult) -> ReplyOutcome:
    """The office outcome of a runner outcome (a CLI-reported error is a failed ask)."""
    return _TURN_OUTCOMES[result.outcome]


def error_code_for(outcome: ReplyOutcome) -> str:
    """The diagnostic code of an ask that did not end ``done`` and brought no code of its own."""
    return {"cancelled": "CANCELLED", "timeout": "AGENT_TIMEOUT"}.get(outcome, "AGENT_PROCESS_ERROR")


def past_tense(outcome: ReplyOutcome) -> str:
    return "timed out" if outcome == "timeout" else outcome


@dataclass(frozen=True)
class Reply:
    """How one ask ended. ``text`` is the agent's answer; ``error`` the diagnostic when it did not succeed."""

    ask_id: str
    sender: str
    agent: str
    outcome: ReplyOutcome
    text: str
    prompt: str = field(repr=False)
    queued_at: datetime = field(repr=False)
    started_at: datetime | None = field(repr=False)
    ended_at: datetime = field(repr=False)
    parent_id: str | None = None
    events: tuple[AgentEvent, ...] = field(default=(), repr=False)
    session_id: str = ""
    cost_usd: float = 0.0
    error: str = ""
    error_code: str = ""
    cancelled_by: str = ""
    used_standin: bool = False
    data: Any = field(default=None, repr=False)  # the validated answer of an ask with an output schema
    output_schema: OutputSchema | None = field(default=None, repr=False, compare=False)
    event_times: tuple[float, ...] = field(default=(), repr=False, compare=False)  # when each event came

    @property
    def ok(self) -> bool:
        return self.outcome == "done"

    @property
    def wait_s(self) -> float:
        """Seconds spent in the queue."""
        started = self.started_at or self.ended_at
        return max(0.0, (started - self.queued_at).total_seconds())

    @property
    def run_s(self) -> float:
        """Seconds the employee worked on it (0 when it never ran)."""
        if self.started_at is None:
            return 0.0
        return max(0.0, (self.ended_at - self.started_at).total_seconds())

    def raise_for_outcome(self) -> Reply:
        """Return self when done; otherwise raise the typed error of the diagnostic."""
        if self.ok:
            return self
        details = {"ask_id": self.ask_id, "agent": self.agent, "outcome": self.outcome}
        if self.outcome == "timeout":
            raise AgentTimeout(self.error or "the ask timed out", details=details)
        error_class = error_for_code(self.error_code) if self.error_code else ElynavError
        raise error_class(self.error or f"the ask ended {self.outcome}", details=details)

    def summary_line(self) -> str:
        line = (
            f"{self.outcome} · {self.sender} -> {self.agent} · ask {self.ask_id} · "
            f"waited {self.wait_s:.2f} s · ran {self.run_s:.2f} s"
        )
        if self.error:
            line += f" · {self.error_code + ': ' if self.error_code else ''}{self.error}"
        return line

    def to_frame(self) -> pandas.DataFrame:
        """The rows of ``data`` for an ask with an output schema (as ``TurnResult.to_frame``), else the
        events of the turn that answered (one row each)."""
        if self.output_schema is None:
            return events_frame(self.events, self.event_times)
        return data_frame(self.data, outcome=self.outcome, error_code=self.error_code)

    def __repr__(self) -> str:
        text = self.text if len(self.text) <= 60 else self.text[:59] + "…"
        return f"<Reply {self.outcome} {self.sender} -> {self.agent} ask={self.ask_id} text={text!r}>"

    def _repr_html_(self) -> str:
        rows = [
            ("outcome", self.outcome),
            ("from → to", f"{self.sender} → {self.agent}"),
            ("ask", self.ask_id),
            ("waited (s)", f"{self.wait_s:.2f}"),
            ("ran (s)", f"{self.run_s:.2f}"),
        ]
        if self.error:
            rows.append(("diagnostic", f"{self.error_code}: {self.error}" if self.error_code else self.error))
        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(key)}</th><td>{html.escape(value)}</td></tr>"
            for key, value in rows
        )
        answer = html.escape(self.text).replace("\n", "<br>")
        return f"<div><table>{cells}</table><div style='margin-top:4px'>{answer}</div></div>"


class AskCanceller(Protocol):
    """What an ask needs of its office: cancel it by id as someone (the office checks the right)."""

    def cancel(self, ask_id: str, *, by: str = ..., reason: str = "") -> object: ...


class Ask:
    """A live request to one employee. ``await ask`` gives its ``Reply``; it is never left pending.

    ``status`` moves ``queued -> running -> done | cancelled | timeout | failed`` (a queued ask can
    end without running). ``parent`` is the ask whose turn sent this one (``None`` for the user's
    own asks); cancelling the parent cancels this one. Only the office changes an ask.
    """

    def __init__(
        self,
        office: AskCanceller,
        ask_id: str,
        sender: str,
        agent: str,
        text: str,
        *,
        parent: Ask | None,
        queued_at: datetime,
        deadline: float,
        output_schema: OutputSchema | None = None,
    ) -> None:
        self.office = office
        self.output_schema = output_schema  # the reply's data is validated against it
        self.id = ask_id
        self.sender = sender
        self.agent = agent
        self.text = text
        self.parent = parent
        self.children: list[Ask] = []
        self.status: AskStatus = "queued"
        self.queued_at = queued_at
        self.started_at: datetime | None = None
        self.ended_at: datetime | None = None
        self.deadline = deadline
        self.turn: Turn | None = None
        self.reply: Reply | None = None
        self.cancelled_by = ""
        self.cancel_reason = ""
        self.cancel_outcome: ReplyOutcome | None = None
        self._future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()

    @property
    def done(self) -> bool:
        return self.reply is not None

    @property
    def cancelling(self) -> bool:
        return self.cancel_outcome is not None and self.reply is None

    @property
    def parent_id(self) -> str | None:
        return self.parent.id if self.parent is not None else None

    def pending_children(self) -> list[Ask]:
        return [child for child in self.children if not child.done]

    def settled(self) -> asyncio.Future[Reply]:
        """The future the reply is set on (do not cancel it: shield it)."""
        return self._future

    def cancel(self, by: str = USER) -> asyncio.Future[Reply]:
        """Cancel this ask as ``by`` (the user, or the agent that sent it). Idempotent.

        Returns an awaitable of its ``Reply``, as ``turn.cancel()`` does of its result (a running ask
        ends once its turn has stopped). Anyone else gets ``NOT_ALLOWED`` and nothing changes.
        """
        self.office.cancel(self.id, by=by)
        return asyncio.shield(self._future)

    def __await__(self) -> Generator[Any, None, Reply]:
        return self._wait_reply().__await__()

    async def _wait_reply(self) -> Reply:
        try:
            reply = await asyncio.shield(self._future)
        except asyncio.CancelledError:
            # A kernel interrupt reaching a cell that awaits the ask: whoever awaited it cancels it.
            if not self._future.done():
                self.office.cancel(self.id, by=self.sender)
            raise
        refresh_live(self)  # a display of this ask shows its reply, sent as part of the awaiting cell
        return reply

    def settle(self, reply: Reply) -> None:
        """End the ask with ``reply`` (the office's ask engine calls this once; idempotent after)."""
        if self.reply is not None:
            return
        self.reply = reply
        self.status = reply.outcome
        self.ended_at = reply.ended_at
        if not self._future.done():
            self._future.set_result(reply)

    def to_row(self) -> dict[str, Any]:
        return ask_row(self)

    def __repr__(self) -> str:
        state = "cancelling" if self.cancelling else self.status  # asked to stop, its turn still stopping
        return f"<Ask {self.id} {state} {self.sender} -> {self.agent} text={self.text[:40]!r}>"

    def _repr_html_(self) -> str:
        if self.reply is not None:
            return self.reply._repr_html_()
        return (
            f"<div><b>{html.escape(self.status)}</b> · {html.escape(self.sender)} → {html.escape(self.agent)}"
            f" · ask {html.escape(self.id)}</div>"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's text form: the repr line, then the reply's text once there is one."""
        reply_text = self.reply.text.strip() if self.reply is not None else ""
        printer.text(f"{self!r}\n{reply_text}" if reply_text else repr(self))

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)

    def _ipython_display_(self) -> None:
        """Displayed in a notebook: its saved text and HTML are updated with the reply at the end."""
        show_live(self, self._future)


def reply_from_turn(ask: Ask, result: TurnResult) -> Reply:
    """The reply of an ask its employee's turn answered (whatever the turn's outcome)."""
    outcome = reply_outcome_for(result)
    error_code = result.error_code
    if not error_code and outcome != "done":
        error_code = error_code_for(outcome)
    return Reply(
        ask_id=ask.id,
        sender=ask.sender,
        agent=ask.agent,
        outcome=outcome,
        text=result.text,
        prompt=ask.text,
        queued_at=ask.queued_at,
        started_at=ask.started_at,
        ended_at=utc_now(),
        parent_id=ask.parent_id,
        events=result.events,
        event_times=result.event_times,
        session_id=result.session_id,
        cost_usd=result.cost_usd,
        error=result.error,
        error_code=error_code,
        cancelled_by=ask.cancelled_by if outcome == "cancelled" else "",
        used_standin=result.used_standin,
        data=result.data,
        output_schema=ask.output_schema,
    )


class AskRowSource(Protocol):
    """What a row of the asks in flight shows of an ask (an ``Ask``, or an ``AskMirror`` of a host's)."""

    @property
    def id(self) -> str: ...

    @property
    def parent_id(self) -> str | None: ...

    @property
    def sender(self) -> str: ...

    @property
    def agent(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def queued_at(self) -> datetime | None: ...

    @property
    def started_at(self) -> datetime | None: ...


def ask_row(ask: AskRowSource) -> dict[str, Any]:
    """One row of the asks in flight (the board's and ``to_frame()``'s columns)."""
    return {
        "ask_id": ask.id,
        "parent_id": ask.parent_id,
        "sender": ask.sender,
        "agent": ask.agent,
        "status": ask.status,
        "prompt": ask.text,
        "queued_at": ask.queued_at,
        "started_at": ask.started_at,
    }


def synthetic_reply(
    ask: Ask, outcome: ReplyOutcome, error: str, error_code: str, *, session_id: str
) -> Reply:
    """The reply of an ask that no turn answered: cancelled in the queue, timed out, the CLI gone."""
    return Reply(
        ask_id=ask.id,
        sender=ask.sender,
        agent=ask.agent,
        outcome=outcome,
        text="",
        prompt=ask.text,
        queued_at=ask.queued_at,
        started_at=ask.started_at,
        ended_at=utc_now(),
        parent_id=ask.parent_id,
        session_id=session_id,
        error=error,
        error_code=error_code,
        cancelled_by=ask.cancelled_by if outcome == "cancelled" else "",
        output_schema=ask.output_schema,
    )
