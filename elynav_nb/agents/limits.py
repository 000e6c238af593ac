"""Bounds a caller sets on one turn: ``max_turns`` (model turns) and ``max_budget_usd``; pure.

Where it sits: ``AgentRunner.send`` gives each ``Turn`` its ``TurnLimits`` (the runner's, or the
send's overrides); the turn keeps a ``ModelTurnCounter`` when the bound is ours to keep, and the
drivers map the CLI's own "limit reached" ends (claude ``error_max_turns`` / ``error_max_budget_usd``)
through ``limit_of_ended``. A turn that reaches a bound ends with outcome ``limit`` and
``error_code`` ``MAX_TURNS_REACHED`` or ``BUDGET_REACHED``.

Who keeps which bound (measured on claude 2.1.332 in a persistent stream-json process):

- claude ``--max-turns N`` counts per user message (each turn starts from zero): the runner puts
  it on the command line, and a turn whose bound differs from the running process's restarts the
  process on the same conversation first. Over the limit claude ends the turn with ``result``
  ``error_max_turns`` (``terminal_reason: max_turns``) after the N-th model response's tools ran.
- claude ``--max-budget-usd X`` counts the whole process (cumulative across turns; once reached,
  every later turn ends at once with ``error_max_budget_usd``, ``terminal_reason:
  budget_exhausted``). A per-turn budget is therefore the flag on a process that has spent nothing
  yet: a turn with a budget after a turn that cost something restarts the process (``--resume``).
- codex and gemini: ``max_turns`` is ours (``ModelTurnCounter``: one model turn per round of tool
  calls; once the N-th round's results are in, the turn is interrupted). They report no cost, so
  ``max_budget_usd`` is refused for them (``INVALID_INPUT``): a budget nobody can count is no bound.

How data flows::

    Turn.push(ToolUse / ToolResult) -> ModelTurnCounter.observe -> reached? -> turn.request_abort("limit")
    TurnEnded(subtype error_max_turns | error_max_budget_usd) -> limit_of_ended -> outcome "limit"
"""

from __future__ import annotations

from dataclasses import dataclass

from elynav_nb.agents.events import AgentEvent, ToolResult, ToolUse, TurnEnded
from elynav_nb.errors import InvalidInput

__all__ = [
    "BUDGET_REACHED",
    "MAX_TURNS_REACHED",
    "ModelTurnCounter",
    "TurnLimits",
    "check_limits",
    "limit_of_ended",
]

MAX_TURNS_REACHED = "MAX_TURNS_REACHED"
BUDGET_REACHED = "BUDGET_REACHED"


@dataclass(frozen=True)
class TurnLimits:
    """The bounds of one turn (None: unbounded)."""

    max_turns: int | None = None
    max_budget_usd: float | None = None

    def __bool__(self) -> bool:
        return self.max_turns is not None or self.max_budget_usd is not None


def check_limits(max_turns: int | None, max_budget_usd: float | None) -> TurnLimits:
    """``TurnLimits`` of the given bounds (``INVALID_INPUT`` for a bound that is not positive)."""
    if max_turns is not None and (
        isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1
    ):
        raise InvalidInput(f"max_turns is a whole number of model turns, 1 or more, not {max_turns!r}")
    if max_budget_usd is not None and (
        isinstance(max_budget_usd, bool) or not isinstance(max_budget_usd, int | float) or max_budget_usd <= 0
    ):
        raise InvalidInput(f"max_budget_usd is a positive amount of US dollars, not {max_budget_usd!r}")
    return TurnLimits(max_turns, float(max_budget_usd) if max_budget_usd is not None else None)


class ModelTurnCounter:
    """Counts a turn's model turns from its events; says when ``max_turns`` is reached.

    A model turn that calls tools is one round: its ``ToolUse`` events, then their results. When
    the results of round ``max_turns`` are all in, the CLI would ask the model again: the bound is
    reached there (the same point claude's own ``--max-turns`` stops at). Subagent events
    (``parent_tool_use_id`` set) do not count.
    """

    def __init__(self, max_turns: int) -> None:
        self.max_turns = max_turns
        self.rounds = 0
        self._open: set[str] = set()
        self._in_round = False

    def observe(self, event: AgentEvent) -> str:
        """The reason the bound is reached, after ``event`` ("" while it is not)."""
        if isinstance(event, ToolUse) and event.parent_tool_use_id is None:
            if not self._in_round:
                self.rounds += 1
                self._in_round = True
            self._open.add(event.id)
        elif isinstance(event, ToolResult) and event.tool_use_id in self._open:
            self._open.discard(event.tool_use_id)
            if not self._open:
                self._in_round = False
                if self.rounds >= self.max_turns:
                    return f"the turn used its {self.max_turns} model turns (max_turns={self.max_turns})"
        return ""


def limit_of_ended(ended: TurnEnded) -> tuple[str, str] | None:
    """``(error_code, reason)`` when the CLI itself ended the turn on a bound, else None."""
    reason = "; ".join(ended.errors)
    if ended.subtype == "error_max_turns" or ended.terminal_reason == "max_turns":
        return MAX_TURNS_REACHED, reason or "the CLI reached the turn's max_turns"
    if ended.subtype == "error_max_budget_usd" or ended.terminal_reason == "budget_exhausted":
        return BUDGET_REACHED, reason or "the CLI reached the turn's max_budget_usd"
    return None
