"""``Employee``: one agent of the office, with its one conversation and its FIFO queue.

Where it sits: owned by ``Office``; one per agent definition. The office alone moves asks
through it: ``queue`` holds waiting asks in arrival order (the user's and the agents' alike),
``current`` is the one ask its runner works on. One runner, one session id: the same
conversation answers the user and the other agents, with the same memory, cwd, tools and rights.

How data flows::

    Office.submit -> employee.queue (FIFO) -> Office._dispatch -> employee.current
      -> employee.runner.send(text) -> Turn -> Reply -> employee.current = None -> next in queue
"""

from __future__ import annotations

import html
from collections import deque
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psutil

from elynav_nb._display import rich_bundle
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.events import PermissionRequest
from elynav_nb.agents.runner import AgentRunner, Turn
from elynav_nb.office.peers import AgentProcess

if TYPE_CHECKING:
    from elynav_nb.office.asks import Ask

__all__ = ["Employee"]


class Employee:
    """One agent = one employee: a runner (its canonical conversation), a FIFO queue, a current ask."""

    def __init__(self, definition: AgentDefinition, runner: AgentRunner, token: str) -> None:
        self.definition = definition
        self.runner = runner
        self.token = token
        self.queue: deque[Ask] = deque()
        self.current: Ask | None = None
        self.asks_served = 0
        self._process_identity: AgentProcess | None = None

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def busy(self) -> bool:
        return self.current is not None

    @property
    def status(self) -> str:
        """``idle``, ``busy``, ``asks permission`` (a tool prompt waits for the user) or ``cancelling``."""
        if self.current is None:
            return "idle"
        if self.current.cancelling:
            return "cancelling"
        return "asks permission" if self.runner.pending_permissions else "busy"

    @property
    def queue_length(self) -> int:
        return len(self.queue)

    @property
    def pending_permissions(self) -> list[PermissionRequest]:
        """The tool prompts its running turn waits on (the board shows Allow / Deny for each)."""
        return self.runner.pending_permissions if self.current is not None and self.current.turn else []

    @property
    def caller(self) -> str | None:
        """Who the running ask is for (``user`` or an agent name)."""
        return self.current.sender if self.current is not None else None

    @property
    def running_since(self) -> datetime | None:
        return self.current.started_at if self.current is not None else None

    @property
    def current_turn(self) -> Turn | None:
        """The runner's turn for the running ask, once it was sent (follow it for live output)."""
        return self.current.turn if self.current is not None else None

    @property
    def session_id(self) -> str:
        return self.runner.session_id

    def agent_process(self) -> AgentProcess | None:
        """The CLI process of this employee (pid + start time), while it runs."""
        pid = self.runner.pid if self.runner.is_running else None
        if pid is None:
            return None
        if self._process_identity is None or self._process_identity.pid != pid:
            try:
                create_time = psutil.Process(pid).create_time()
            except psutil.Error:
                return None
            self._process_identity = AgentProcess(pid, create_time, self.name)
        return self._process_identity

    def to_row(self) -> dict[str, Any]:
        return {
            "agent": self.name,
            "status": self.status,
            "caller": self.caller,
            "ask_id": self.current.id if self.current is not None else None,
            "queue_length": len(self.queue),
            "running_since": self.running_since,
            "asks_served": self.asks_served,
            "session_id": self.session_id,
            "cli_pid": self.runner.pid if self.runner.is_running else None,
        }

    def __repr__(self) -> str:
        caller = f" for {self.caller}" if self.caller else ""
        return (
            f"<Employee {self.name} {self.status}{caller} queue={len(self.queue)} session={self.session_id}>"
        )

    def _repr_html_(self) -> str:
        caller = f" for {html.escape(self.caller)}" if self.caller else ""
        return (
            f"<div><b>{html.escape(self.name)}</b> · {html.escape(self.status)}{caller} · "
            f"{len(self.queue)} queued · session {html.escape(self.session_id)}</div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)
