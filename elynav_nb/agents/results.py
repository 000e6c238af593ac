"""``TurnResult``: the settled outcome of one agent turn, as a value, an HTML table and a DataFrame.

Where it sits: built by the runner when a turn ends (from the CLI's ``result``, or synthetic
when the turn was cancelled, timed out or the CLI died); read by users, widgets and the office.
Pure: no I/O (pandas is imported only inside ``to_frame``).

Outcomes: ``completed`` (the CLI says the turn succeeded), ``error`` (the CLI ended the turn with
``is_error``: an API error, not logged in, max turns), ``cancelled`` (by the user or the caller),
``timeout`` (turn or inactivity bound), ``failed`` (the CLI died or could not start, or the answer
did not match the turn's ``output_schema``: ``error_code="OUTPUT_INVALID"``), ``limit`` (a bound the
caller set was reached: ``max_turns`` or ``max_budget_usd``; ``error_code`` ``MAX_TURNS_REACHED`` or
``BUDGET_REACHED``, the reason in ``error``; the CLI's own max-turns end counts too).

Structured results: a turn sent with ``output_schema`` has ``data`` (the validated value: pydantic
model instances for a model, plain dicts and lists otherwise; None without a schema or when the
answer was invalid, its raw text still in ``text``) and ``to_frame()`` gives the rows of that data.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from elynav_nb.agents.events import AgentEvent, TextDelta, ToolUse, TurnEnded
from elynav_nb.errors import (
    AgentProcessError,
    AgentTimeout,
    CliExited,
    ElynavError,
    InvalidInput,
    LimitReached,
    error_for_code,
)

if TYPE_CHECKING:
    import pandas

    from elynav_nb.agents.output_schema import OutputSchema

__all__ = [
    "Outcome",
    "TurnResult",
    "data_as_json",
    "data_frame",
    "data_summary",
    "events_frame",
    "history_frame",
    "main_text",
]

Outcome = Literal["completed", "error", "cancelled", "timeout", "failed", "limit"]

_REPR_ERROR_CHARS = 120


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main_text(events: list[AgentEvent] | tuple[AgentEvent, ...]) -> str:
    """The assistant's visible answer: main-agent text deltas joined (subagents left out)."""
    return "".join(
        event.text for event in events if isinstance(event, TextDelta) and event.parent_tool_use_id is None
    )


def events_frame(
    events: list[AgentEvent] | tuple[AgentEvent, ...], times: Sequence[float] = ()
) -> pandas.DataFrame:
    """One row per event: ``at`` (UTC, when it arrived; missing where not recorded), ``kind``,
    ``summary``, ``parent_tool_use_id``."""
    import pandas

    rows = [event.to_row() for event in events]
    frame = pandas.DataFrame(rows, columns=["kind", "summary", "parent_tool_use_id"])
    known = list(times) if len(times) == len(events) else [None] * len(events)
    frame.insert(0, "at", pandas.to_datetime(known, unit="s", utc=True))
    return frame


@dataclass(frozen=True)
class TurnResult:
    """What one turn produced. ``text`` is the answer; ``events`` everything that happened.

    In ``events``, consecutive text deltas (and consecutive thinking deltas) of one agent are one
    event holding their text, in order; a runner made with ``keep_deltas=True`` keeps every delta.
    """

    outcome: Outcome
    text: str
    events: tuple[AgentEvent, ...] = field(repr=False)
    session_id: str
    agent_name: str = ""
    prompt: str = field(default="", repr=False)
    cost_usd: float = 0.0
    total_cost_usd: float = 0.0
    usage: dict[str, Any] = field(default_factory=dict, repr=False)
    duration_s: float = 0.0
    cli_duration_ms: int = 0
    num_turns: int = 0
    terminal_reason: str = ""
    error: str = ""
    error_code: str = ""
    stderr_tail: str = field(default="", repr=False)
    used_standin: bool = False
    cli: str = "claude"
    cli_version: str = ""
    data: Any = field(default=None, repr=False)
    output_schema: OutputSchema | None = field(default=None, repr=False, compare=False)
    event_times: tuple[float, ...] = field(default=(), repr=False, compare=False)  # when each event came

    @property
    def ok(self) -> bool:
        return self.outcome == "completed"

    @property
    def ended(self) -> TurnEnded | None:
        """The CLI's own end-of-turn record, when it wrote one."""
        for event in reversed(self.events):
            if isinstance(event, TurnEnded):
                return event
        return None

    @property
    def tool_uses(self) -> list[ToolUse]:
        return [event for event in self.events if isinstance(event, ToolUse)]

    def raise_for_outcome(self) -> TurnResult:
        """Return self when completed; otherwise raise the typed error matching the outcome."""
        if self.outcome == "completed":
            return self
        details = {"outcome": self.outcome, "session_id": self.session_id}
        if self.outcome == "timeout":
            raise AgentTimeout(self.error or "the turn timed out", details=details)
        if self.error_code:
            raise error_for_code(self.error_code)(self.error or self.outcome, details=details)
        if self.outcome == "failed":
            raise CliExited(self.error or "the agent CLI failed", details=details)
        if self.outcome == "limit":
            raise LimitReached(self.error or "the turn reached a limit", details=details)
        if self.outcome == "cancelled":
            raise ElynavError(self.error or "the turn was cancelled", details=details)
        raise AgentProcessError(self.error or "the agent reported an error", details=details)

    def summary_line(self) -> str:
        """One line for terminals and logs."""
        cli = "stand-in CLI" if self.used_standin else f"{self.cli} CLI"
        if self.cli_version and not self.used_standin:
            cli += f" {self.cli_version}"
        line = (
            f"{self.outcome} · agent {self.agent_name or '-'} · session {self.session_id or '-'} · "
            f"{len(self.events)} events · {len(self.tool_uses)} tool calls · cost ${self.cost_usd:.4f} · "
            f"{self.duration_s:.2f} s · {cli}"
        )
        if self.error:
            line += f" · {self.error_code + ': ' if self.error_code else ''}{self.error}"
        return line

    def to_frame(self) -> pandas.DataFrame:
        """The rows of ``data`` for a structured turn, else the event table (``events_frame``).

        A list of objects (dicts or pydantic models, dumped with ``model_dump()``) gives one row
        each, one object a one-row frame; anything else (a scalar, a failed turn with no data) is
        ``INVALID_INPUT``.
        """
        if self.output_schema is None:
            return self.events_frame()
        return data_frame(self.data, outcome=self.outcome, error_code=self.error_code)

    def events_frame(self) -> pandas.DataFrame:
        """The event table of this turn (one row per event; ``at``: when it arrived, UTC)."""
        return events_frame(self.events, self.event_times)

    def __repr__(self) -> str:
        text = _shortened(self.text, 60)
        reason = ""
        if self.outcome != "completed":  # why it did not complete, not only in .error_code
            if self.error_code:
                reason += f" error_code={self.error_code}"
            if self.error:
                reason += f" error={_shortened(self.error, _REPR_ERROR_CHARS)!r}"
        data = f" data={data_summary(self.data)}" if self.output_schema is not None and self.ok else ""
        return (
            f"<TurnResult {self.outcome} agent={self.agent_name!r} session={self.session_id!r} "
            f"events={len(self.events)} cost=${self.cost_usd:.4f}{reason}{data} text={text!r}>"
        )

    def _repr_html_(self) -> str:
        rows = [
            ("outcome", self.outcome),
            ("agent", self.agent_name),
            ("session", self.session_id),
            ("cost (USD)", f"{self.cost_usd:.4f}"),
            ("duration (s)", f"{self.duration_s:.2f}"),
            ("events", str(len(self.events))),
            ("tool calls", str(len(self.tool_uses))),
            ("CLI", "stand-in" if self.used_standin else self.cli),
        ]
        if self.output_schema is not None:
            rows.append(("schema", self.output_schema.label))
            if self.ok:
                rows.append(("data", data_summary(self.data)))
        if self.outcome != "completed" and (self.error or self.error_code):
            rows.insert(1, ("error code", self.error_code or "-"))
            rows.insert(2, ("error", self.error or "-"))
        elif self.error:
            rows.append(("error", self.error))
        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        answer = html.escape(self.text).replace("\n", "<br>")
        return f"<div><table>{cells}</table><div style='margin-top:4px'>{answer}</div></div>"


def data_summary(data: Any) -> str:
    """A short line about structured data: ``3 × Account`` for a list, the value itself when short."""
    if isinstance(data, list):
        kinds = sorted({type(item).__name__ for item in data})
        return f"{len(data)} × {'|'.join(kinds) if kinds else '-'}"
    text = repr(data)
    return _shortened(text, 80)


def data_frame(data: Any, *, outcome: str, error_code: str) -> pandas.DataFrame:
    """The rows of a structured turn's data (see ``TurnResult.to_frame``; the office's ``Reply`` too)."""
    import pandas

    if data is None:
        raise InvalidInput(
            f"this turn has no data to tabulate (outcome {outcome}"
            + (f", {error_code}" if error_code else "")
            + "): its raw answer is in .text",
            details={"outcome": outcome, "error_code": error_code},
        )
    items = data if isinstance(data, list) else [data]
    rows = [_row(item) for item in items]
    if any(row is None for row in rows):
        raise InvalidInput(
            f"to_frame() needs an object or a list of objects; this turn's data is {data_summary(data)}: "
            "read .data instead",
            details={"type": type(data).__name__},
        )
    return pandas.DataFrame([row for row in rows if row is not None])


def data_as_json(data: Any) -> Any:
    """Structured data as plain JSON values (pydantic models dumped in JSON mode), for a wire or a file."""
    dump = getattr(data, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(data, list):
        return [data_as_json(item) for item in data]
    if isinstance(data, dict):
        return {key: data_as_json(value) for key, value in data.items()}
    return data


def _row(item: Any) -> dict[str, Any] | None:
    if isinstance(item, dict):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        dumped = dump()
        return dumped if isinstance(dumped, dict) else None
    return None


_HISTORY_COLUMNS = (
    "agent",
    "session_id",
    "outcome",
    "prompt",
    "text",
    "events",
    "tool_calls",
    "cost_usd",
    "duration_s",
    "error",
)


def history_frame(results: list[TurnResult] | tuple[TurnResult, ...]) -> pandas.DataFrame:
    """One row per finished turn (``AgentRunner.to_frame``): agent, session, outcome, texts, counts, cost."""
    import pandas

    rows = [
        {
            "agent": result.agent_name,
            "session_id": result.session_id,
            "outcome": result.outcome,
            "prompt": result.prompt,
            "text": result.text,
            "events": len(result.events),
            "tool_calls": len(result.tool_uses),
            "cost_usd": result.cost_usd,
            "duration_s": result.duration_s,
            "error": result.error,
        }
        for result in results
    ]
    return pandas.DataFrame(rows, columns=list(_HISTORY_COLUMNS))
