"""``Turn``: one user message and everything the agent does until the end of its answer.

Where it sits: made by ``AgentRunner.send``; its events come from the runner's driver
(``drivers/persistent.py`` or ``drivers/per_turn.py``), its readers are the caller, the views and the
office. A turn knows its runner through a narrow handle, ``TurnOwner``: it asks it for one thing
only, ``abort_turn``, and its readers (a view showing the session) read the rest; the driver writes
to the turn only through the methods of the "driver side" section below. Neither reads the other's
private state, and this module imports no runner.

How data flows::

    driver: turn.push(event) ... turn.finish(result)     (the driver's loop, one event at a time)
    readers: async for event in turn -> every event, stored ones first; await turn -> TurnResult
    turn.cancel() -> runner.abort_turn(turn, outcome, reason) (a task on the turn's loop, bounded)
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import time
from collections.abc import AsyncIterator, Awaitable, Generator
from typing import TYPE_CHECKING, Any, Literal, Protocol

from elynav_nb._display import refresh_live, rich_bundle, show_live
from elynav_nb.agents._transcript import HookDenials, TurnTranscript
from elynav_nb.agents.events import AgentEvent, AgentStarted, TextDelta, ToolResult, ToolUse
from elynav_nb.agents.limits import MAX_TURNS_REACHED, ModelTurnCounter, TurnLimits
from elynav_nb.agents.protocols.command import CliCommand
from elynav_nb.agents.results import Outcome, TurnResult, events_frame, main_text
from elynav_nb.agents.transcript_display import transcript_html, transcript_text
from elynav_nb.errors import InvalidInput

if TYPE_CHECKING:
    import pandas

    from elynav_nb.agents.output_schema import OutputSchema

__all__ = ["Turn", "TurnOwner", "prompt_text_of"]


class TurnOwner(Protocol):
    """What a turn knows of its runner (``AgentRunner`` is one): how to stop it, and what a view shows."""

    @property
    def agent_name(self) -> str | None: ...

    @property
    def session_id(self) -> str: ...

    @property
    def cli(self) -> CliCommand | None: ...

    def abort_turn(self, turn: Turn, outcome: Outcome, reason: str) -> Awaitable[None]: ...


class Turn:
    """One user message and everything the agent does until the end of its answer.

    ``async for event in turn`` streams events (several readers may iterate; each gets the stored
    events so far, then every delta as it arrives); ``await turn`` gives the ``TurnResult``;
    ``turn.cancel()`` stops it within its bound (``await turn.cancel()`` waits for the result).
    """

    def __init__(
        self,
        runner: TurnOwner,
        prompt: str,
        *,
        session_id: str = "",
        keep_deltas: bool = False,
        cost_baseline: float = 0.0,
        output_schema: OutputSchema | None = None,
        limits: TurnLimits = TurnLimits(),
        count_model_turns: bool = False,
    ) -> None:
        self.runner = runner
        self.prompt = prompt
        self.output_schema = output_schema  # the answer is validated against it (see output_schema.py)
        self._transcript = TurnTranscript(keep_deltas=keep_deltas)
        self._hook_denials = HookDenials()
        self.result: TurnResult | None = None
        self.session_id = session_id
        self.started_at = time.monotonic()
        self.cost_baseline = cost_baseline  # the conversation's total cost when the prompt went out
        self._loop = asyncio.get_running_loop()
        self._done: asyncio.Future[TurnResult] = self._loop.create_future()
        self._changed = asyncio.Event()
        self._written = False
        self._abort_outcome: Outcome | None = None
        self._abort_reason = ""
        self._cancel_task: asyncio.Task[None] | None = None
        self._open_tool_uses: set[str] = set()
        self._abort_error_code = ""
        self.limits = limits  # this turn's max_turns / max_budget_usd
        self._turn_counter = (
            ModelTurnCounter(limits.max_turns) if count_model_turns and limits.max_turns is not None else None
        )  # the bound is ours to keep (else the CLI keeps it)
        self.task: asyncio.Task[None] | None = None

    # -- reading ----------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self._done.done()

    @property
    def status(self) -> str:
        if self.result is not None:
            return self.result.outcome
        if self._abort_outcome is not None:
            return "cancelling"
        return "running" if self._written else "starting"

    @property
    def events(self) -> list[AgentEvent]:
        """The stored events so far (a new list): consecutive deltas coalesced unless ``keep_deltas``."""
        return self._transcript.events()

    @property
    def event_times(self) -> list[float]:
        """When each of ``events`` arrived (``time.time()``), in the same order."""
        return self._transcript.times()

    @property
    def text(self) -> str:
        """The answer so far."""
        return main_text(self.events)

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[AgentEvent]:
        queue = self._transcript.open_reader()
        try:
            while True:
                while queue:
                    yield queue.popleft()
                if self._done.done():
                    return
                self._changed.clear()
                if queue or self._done.done():
                    continue
                await self._changed.wait()
        finally:
            self._transcript.close_reader(queue)

    def __await__(self) -> Generator[Any, None, TurnResult]:
        return self._wait_result().__await__()

    async def _wait_result(self) -> TurnResult:
        try:
            result = await asyncio.shield(self._done)
        except asyncio.CancelledError:
            # A kernel interrupt reaching a cell that awaits the turn becomes a bounded cancel,
            # so the CLI (shielded in its own session) never runs on unnoticed.
            if not self._done.done():
                self.cancel()
            raise
        refresh_live(self)  # a display of this turn shows its end, sent as part of the awaiting cell
        return result

    def cancel(
        self, reason: str = "cancelled by the user", *, outcome: Literal["cancelled", "timeout"] = "cancelled"
    ) -> asyncio.Future[TurnResult]:
        """Stop the turn (interrupt, then bounded forced steps). Returns a future of the result.

        ``reason`` becomes the result's ``error``; ``outcome="timeout"`` is for callers enforcing a
        bound of their own (the office's ask timeout). Idempotent: the first call decides.
        """
        self.request_abort(outcome, reason)
        return self._done

    # -- driver side: what the runner's driver reads and writes -----------------------------------

    @property
    def written(self) -> bool:
        """Whether the prompt reached the CLI."""
        return self._written

    def mark_written(self, cost_baseline: float) -> None:
        """The prompt reached the CLI; ``cost_baseline`` is the conversation's total cost then."""
        self._written = True
        self.cost_baseline = cost_baseline

    @property
    def abort_outcome(self) -> Outcome | None:
        """The outcome asked for by a cancel or a bound (None while nobody asked)."""
        return self._abort_outcome

    @property
    def abort_reason(self) -> str:
        return self._abort_reason

    @property
    def abort_error_code(self) -> str:
        """The error code the abort asked for ("" for a cancel or a timeout)."""
        return self._abort_error_code

    @property
    def aborting(self) -> bool:
        """Whether an abort sequence is under way (it settles the turn itself)."""
        return self._cancel_task is not None

    @property
    def waiting_on_tools(self) -> bool:
        """Whether a tool call of the turn has no result yet."""
        return bool(self._open_tool_uses)

    def request_abort(self, outcome: Outcome, reason: str, error_code: str = "") -> None:
        """Start the runner's abort sequence once (from any thread); the first request decides."""
        if self._done.done() or self._cancel_task is not None:
            return
        if not self._on_own_loop():
            self._loop.call_soon_threadsafe(self.request_abort, outcome, reason, error_code)
            return
        self._abort_outcome = outcome
        self._abort_reason = reason
        self._abort_error_code = error_code
        self._cancel_task = self._loop.create_task(self._abort(outcome, reason))

    async def _abort(self, outcome: Outcome, reason: str) -> None:
        await self.runner.abort_turn(self, outcome, reason)

    async def wait_settled(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the result; whether the turn is settled."""
        if not self._done.done():
            await asyncio.wait([self._done], timeout=max(0.0, timeout))
        return self._done.done()

    async def settled(self) -> TurnResult:
        """The result, once the turn is settled (never cancels the turn)."""
        return await asyncio.shield(self._done)

    def _on_own_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def push(self, event: AgentEvent) -> None:
        """Store ``event`` and wake the readers (a hook-denied call's result gets its ``denial``)."""
        if type(event) is TextDelta:  # the usual event: nothing else to track
            self._transcript.append(event)
            self._changed.set()
            return
        event = self._hook_denials.annotate(event)
        self._transcript.append(event)
        if isinstance(event, ToolUse):
            self._open_tool_uses.add(event.id)
            if self._turn_counter is not None:
                self._turn_counter.observe(event)
        elif isinstance(event, ToolResult):
            self._open_tool_uses.discard(event.tool_use_id)
            if self._turn_counter is not None:
                reached = self._turn_counter.observe(event)
                if reached:
                    self.request_abort("limit", reached, MAX_TURNS_REACHED)
        elif isinstance(event, AgentStarted) and event.session_id:
            self.session_id = event.session_id
        self._changed.set()

    def finish(self, result: TurnResult) -> None:
        """Settle the turn with ``result`` (once)."""
        if self._done.done():
            return
        self.result = result
        self._done.set_result(result)
        self._changed.set()

    # -- display ------------------------------------------------------------------------------------

    def to_frame(self) -> pandas.DataFrame:
        """The events so far, one row each (``at``: when each arrived)."""
        return events_frame(self.events, self.event_times)

    def __repr__(self) -> str:
        return (
            f"<Turn {self.status} agent={self.runner.agent_name!r} events={len(self.events)} "
            f"prompt={self.prompt[:40]!r}>"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's text form: the repr line, then the transcript so far (answer, tool calls, errors)."""
        printer.text(self._plain_text())

    def _plain_text(self) -> str:
        lines = [repr(self), transcript_text(self.events)]
        result = self.result
        if result is not None and result.outcome != "completed" and result.error:
            lines.append(
                f"{result.outcome}: {result.error_code + ': ' if result.error_code else ''}{result.error}"
            )
        return "\n".join(line for line in lines if line)

    def _repr_html_(self) -> str:
        """The status line and the transcript as the live view draws them (what a saved notebook shows)."""
        result = self.result
        status = html.escape(self.status)
        if result is not None:
            # the error has a row of its own below the transcript, as in the live view
            line = html.escape(dataclasses.replace(result, error="").summary_line().partition(" · ")[2])
        else:
            line = f"agent {html.escape(self.runner.agent_name or 'default')} · {len(self.events)} events"
        transcript = transcript_html(
            self.events,
            outcome=result.outcome if result is not None else "",
            error_code=result.error_code if result is not None else "",
            error=result.error if result is not None else "",
        )
        return (
            f"<div class='elynav-turn'><div class='elynav-status'><b>{status}</b> · {line}</div>"
            f"<div style='max-height:480px;overflow:auto'>{transcript}</div></div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)

    def _ipython_display_(self) -> None:
        """Displayed in a notebook: the live view, whose saved text and HTML are updated at the end."""
        show_live(self, self._done)


def prompt_text_of(content: str | list[dict[str, Any]]) -> str:
    """A prompt's text (the text blocks of a block prompt, joined); ``INVALID_INPUT`` for text that cannot
    be written as UTF-8 (a lone surrogate), before anything is sent."""
    text = (
        content
        if isinstance(content, str)
        else " ".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidInput(
            f"the prompt holds a character that is not valid Unicode text ({error.reason} at position "
            f"{error.start}): nothing was sent",
            details={"position": error.start},
        ) from None
    return text
