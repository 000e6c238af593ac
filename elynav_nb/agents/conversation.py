"""A runner's conversation as it stands: ``Conversation``, owned and written by its driver.

Where it sits: made once by ``AgentRunner`` (from ``session_id=`` / ``resume=`` and what the protocol
accepts) and handed to the driver, which is the only writer from then on: the session id the CLI
confirms, whether the next start resumes, the status, the last ``AgentStarted``, the located CLI and
its command line, the live settings (``set_model``, ``set_permission_mode``), the finished turns and
the events that belonged to no turn. The runner and the views read it. No I/O.

How data flows::

    AgentRunner(session_id= | resume=) -> Conversation.begin -> the driver
      driver: start -> status STARTING -> IDLE; a turn -> BUSY -> record(result) -> IDLE
              AgentStarted -> last_started, session_id; a crash -> EXITED; stop -> CLOSED
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from enum import StrEnum

from elynav_nb.agents.events import AgentEvent, AgentStarted
from elynav_nb.agents.protocols.command import CliCommand
from elynav_nb.agents.results import TurnResult

__all__ = ["Conversation", "RunnerStatus"]

_STRAY_EVENTS_KEPT = 1000


class RunnerStatus(StrEnum):
    """Where a runner's CLI is (a ``str``: ``runner.status == "idle"`` reads as before)."""

    NEW = "new"  # made, never started
    STARTING = "starting"  # spawning, or writing the CLI's home
    IDLE = "idle"  # ready for a turn
    BUSY = "busy"  # a turn runs
    STOPPING = "stopping"  # a CLI that ignored a cancel is being stopped in the background
    STOPPED = "stopped"  # a start failed, or the background stop ended
    EXITED = "exited"  # the CLI ended on its own
    CLOSED = "closed"  # stop() ran


@dataclass(eq=False)
class Conversation:
    """The state of one conversation (see the module docstring); the driver writes it, others read it."""

    session_id: str
    resume_next_start: bool  # the next start continues the conversation (``--resume``, ``session/load``)
    resume_asked: bool  # ``resume=`` was given: a conversation that cannot be resumed fails the start
    model: str | None = None  # the live model (``set_model``)
    permission_mode: str | None = None  # the live permission mode (``set_permission_mode``)
    history_limit: int | None = None  # keep the last N results only (None: all)
    status: RunnerStatus = RunnerStatus.NEW
    last_started: AgentStarted | None = None
    last_activity: float = field(default_factory=time.monotonic)
    cli: CliCommand | None = None  # the CLI located at the last start
    command_line: list[str] = field(
        default_factory=list
    )  # its argv then (no secret: those are in its environment)
    history: list[TurnResult] = field(default_factory=list)
    stray_events: list[AgentEvent] = field(default_factory=list)

    @classmethod
    def begin(
        cls,
        *,
        session_id: str | None,
        resume: str | None,
        names_its_threads: bool,
        model: str | None,
        permission_mode: str | None,
        history_limit: int | None,
    ) -> Conversation:
        """A new conversation (``session_id``: ours; None: a new id, or "" where the CLI names it) or an old one."""
        new_id = "" if names_its_threads else str(uuid.uuid4())
        return cls(
            session_id=resume or session_id or new_id,
            resume_next_start=resume is not None,
            resume_asked=resume is not None,
            model=model,
            permission_mode=permission_mode,
            history_limit=history_limit,
        )

    @property
    def uses_standin(self) -> bool:
        return self.cli is not None and self.cli.is_standin

    def touch(self) -> None:
        """Something came from (or went to) the CLI now."""
        self.last_activity = time.monotonic()

    def record(self, result: TurnResult) -> None:
        """Keep a finished turn's result (within ``history_limit``)."""
        self.history.append(result)
        if self.history_limit is not None and len(self.history) > self.history_limit:
            del self.history[: len(self.history) - self.history_limit]

    def keep_stray(self, event: AgentEvent) -> None:
        """An event that belongs to no turn in flight (kept, bounded, for the curious)."""
        if len(self.stray_events) < _STRAY_EVENTS_KEPT:
            self.stray_events.append(event)
