"""``TurnTranscript``: what one turn stores of its events, and the live copy each reader gets.

Where it sits: each ``Turn`` (``turn.py``) owns one. The driver hands it every conversation event
of the turn, in order; nothing else writes to it. Pure: no I/O, no asyncio (the ``Turn`` wakes its
readers after each event).

How data flows::

    driver -> Turn.push(event) -> TurnTranscript.append(event)
        -> every reader's queue (``async for event in turn``, the widgets): every event, every delta
        -> the stored events (``turn.events``, then ``TurnResult.events``, the office's
           ``Reply.events``, the runner's history): consecutive ``TextDelta`` (and consecutive
           ``ThinkingDelta``) of the same agent (same ``parent_tool_use_id``) coalesced into one
           event whose text is their concatenation, in place; ``keep_deltas=True`` stores every delta

Why: a streamed answer arrives as thousands of small deltas; storing each one as an object cost
about 110 bytes a delta (the event and its string), 11 MiB for a 100,000-delta turn, for no reader:
the text, the order of the text against tool calls and thinking, and every other event are kept.

A reader that starts late (mid-turn or after the end) first gets the stored events so far (a run
of deltas still open comes as one delta holding its text so far), then every new event as it comes.

Each stored event keeps the wall-clock time it arrived (a run of deltas: its first delta's), the
``at`` column of ``TurnResult.to_frame()``: one clock read per stored event, none per joined delta.

``HookDenials`` (also pure) gives the ``ToolResult`` of a call a hook denied on purpose its ``denial``
(from the ``HookDenied`` the runner reported): matched by tool use id, or, where the CLI's hook
input has none (gemini), by the tool's name, the oldest denial first.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque

from elynav_nb.agents.events import AgentEvent, HookDenied, TextDelta, ThinkingDelta, ToolResult, ToolUse

__all__ = ["HookDenials", "TurnTranscript"]

# Pieces of an open run joined into one string every this many deltas: the run then holds a few
# long strings instead of one small string per delta, and each piece is copied at most twice.
_PIECES_PER_CHUNK = 256


class _DeltaRun:
    """Consecutive deltas of one kind and one agent, being coalesced (the tail of the stored events)."""

    __slots__ = ("chunks", "delta_type", "first_delta", "parent_tool_use_id", "pieces")

    def __init__(self, first_delta: TextDelta | ThinkingDelta) -> None:
        self.delta_type: type[TextDelta | ThinkingDelta] = type(first_delta)
        self.parent_tool_use_id = first_delta.parent_tool_use_id
        self.first_delta: TextDelta | ThinkingDelta | None = first_delta  # kept as is while alone
        self.chunks: list[str] = []
        self.pieces: list[str] = [first_delta.text]

    def add(self, text: str) -> None:
        self.first_delta = None
        pieces = self.pieces
        pieces.append(text)
        if len(pieces) >= _PIECES_PER_CHUNK:
            self.chunks.append("".join(pieces))
            pieces.clear()

    def as_delta(self) -> TextDelta | ThinkingDelta:
        """One delta holding the run's text so far."""
        if self.first_delta is not None:
            return self.first_delta
        # Reading changes nothing: a read can never lose a piece, whoever reads.
        return self.delta_type("".join(self.chunks) + "".join(self.pieces), self.parent_tool_use_id)


class TurnTranscript:
    """The events of one turn: a live copy per reader, and the stored events (deltas coalesced).

    ``keep_deltas`` stores every delta as it came (the full stream), as the readers get it.
    """

    def __init__(self, *, keep_deltas: bool = False) -> None:
        self.keep_deltas = keep_deltas
        self._stored: list[AgentEvent] = []
        self._stored_times: list[float] = []  # time.time() when each stored event (or run) began
        self._open_run: _DeltaRun | None = None
        self._open_run_time = 0.0
        self._readers: list[deque[AgentEvent]] = []

    def append(self, event: AgentEvent) -> None:
        """Give ``event`` to every reader and store it (a delta joins the open run of its kind)."""
        for reader in self._readers:
            reader.append(event)
        if self.keep_deltas:
            self._stored.append(event)
            self._stored_times.append(time.time())
            return
        if type(event) is TextDelta or type(event) is ThinkingDelta:
            run = self._open_run
            if (
                run is not None
                and run.delta_type is type(event)
                and run.parent_tool_use_id == event.parent_tool_use_id
            ):
                run.add(event.text)
                return
            self._close_open_run()
            self._open_run = _DeltaRun(event)
            self._open_run_time = time.time()
            return
        self._close_open_run()
        self._stored.append(event)
        self._stored_times.append(time.time())

    def _close_open_run(self) -> None:
        run = self._open_run
        if run is not None:
            self._stored.append(run.as_delta())
            self._stored_times.append(self._open_run_time)
            self._open_run = None

    def events(self) -> list[AgentEvent]:
        """The stored events so far, in order (a new list)."""
        stored = list(self._stored)
        if self._open_run is not None:
            stored.append(self._open_run.as_delta())
        return stored

    def times(self) -> list[float]:
        """When each of ``events()`` arrived (``time.time()``), in the same order (a new list)."""
        stored = list(self._stored_times)
        if self._open_run is not None:
            stored.append(self._open_run_time)
        return stored

    def open_reader(self) -> deque[AgentEvent]:
        """A new reader's queue: the stored events so far, then every event appended after this call."""
        reader = deque(self.events())
        self._readers.append(reader)
        return reader

    def close_reader(self, reader: deque[AgentEvent]) -> None:
        """Stop feeding ``reader`` (it stopped iterating)."""
        for index, candidate in enumerate(self._readers):
            if candidate is reader:
                del self._readers[index]
                return

    @property
    def reader_count(self) -> int:
        return len(self._readers)


class HookDenials:
    """Deliberate hook denials of one turn, waiting for the tool result each explains."""

    def __init__(self) -> None:
        self._by_id: dict[str, str] = {}
        self._by_name: list[tuple[str, str]] = []
        self._tool_names: dict[str, str] = {}

    def annotate(self, event: AgentEvent) -> AgentEvent:
        """``event``, or the ``ToolResult`` it is with its ``denial`` set (see the module docstring)."""
        if isinstance(event, ToolUse):
            self._tool_names[event.id] = event.name
        elif isinstance(event, HookDenied):
            if event.event == "PreToolUse":  # a PostToolUse deny explains a result that did come
                if event.tool_use_id:
                    self._by_id[event.tool_use_id] = event.summary()
                else:
                    self._by_name.append((event.tool_name, event.summary()))
        elif isinstance(event, ToolResult) and event.is_error and (self._by_id or self._by_name):
            denial = self._by_id.pop(event.tool_use_id, "") or self._by_tool_name(event.tool_use_id)
            if denial:
                return dataclasses.replace(event, denial=denial)
        return event

    def _by_tool_name(self, tool_use_id: str) -> str:
        name = self._tool_names.get(tool_use_id)
        for index, (tool_name, denial) in enumerate(self._by_name):
            if tool_name == name:
                del self._by_name[index]
                return denial
        return ""
