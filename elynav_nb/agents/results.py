"""``TurnResult``: the settled outcome of one agent turn, as a value, an HTML table and a DataFrame.

Where it sits: built by the runner when a turn ends (from the CLI's ``result``, or synthetic
when the turn was cancelled, timed out or the CLI died); read by users, widgets and the office.
Pure: no I/O (pandas is imported only inside ``to_frame``).

Outcomes: ``completed`` (the CLI says the turn succeeded), ``error`` (the CLI ended the turn with
``is_error``: an API error, not logged in, max turns), ``cancelled`` (by the user or the caller),
``timeout`` (turn or inactivity bound), ``failed`` (the CLI died or could not start), ``limit``
(a bound the caller set was reached: ``max_turns`` or ``max_budget_usd``; ``error_code``
``MAX_TURNS_REACHED`` or ``BUDGET_REACHED``, the reason in ``error``; the CLI's own max-turns end
counts too).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from elynav_nb.agents.events import AgentEvent, TextDelta, ToolUse, TurnEnded
from elynav_nb.errors import (
    AgentProcessError,
    AgentTimeout,
    CliExited,
    ElynavError,
    LimitReached,
    error_for_code,
)

if TYPE_CHECKING:
    import pandas

__all__ = ["Outcome", "TurnResult", "events_frame", "main_text"]

Outcome = Literal["completed", "error", "cancelled", "timeout", "failed", "limit"]

_REPR_ERROR_CHARS = 120


def _shortened(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main_text(events: list[AgentEvent] | tuple[AgentEvent, ...]) -> str:
    """The assistant's visible answer: main-agent text deltas joined (subagents left out)."""
    return "".join(
        event.text for event in events if isinstance(event, TextDelta) and event.parent_tool_use_id is None
    )


def events_frame(events: list[AgentEvent] | tuple[AgentEvent, ...]) -> pandas.DataFrame:
    """One row per event: ``kind``, ``summary``, ``parent_tool_use_id``."""
    import pandas

    rows = [event.to_row() for event in events]
    return pandas.DataFrame(rows, columns=["kind", "summary", "parent_tool_use_id"])


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
        """The event table of this turn (one row per event)."""
        return events_frame(self.events)

    def __repr__(self) -> str:
        text = _shortened(self.text, 60)
        reason = ""
        if self.outcome != "completed":  # why it did not complete, not only in .error_code
            if self.error_code:
                reason += f" error_code={self.error_code}"
            if self.error:
                reason += f" error={_shortened(self.error, _REPR_ERROR_CHARS)!r}"
        return (
            f"<TurnResult {self.outcome} agent={self.agent_name!r} session={self.session_id!r} "
            f"events={len(self.events)} cost=${self.cost_usd:.4f}{reason} text={text!r}>"
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
