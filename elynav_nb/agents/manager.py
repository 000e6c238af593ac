"""``RunnerManager``: one live runner per conversation, reused across messages, stopped when idle.

Where it sits: above ``AgentRunner`` (the seed's ``ConversationRunnerManager``), for a chat front
end that holds many conversations (the office does not use it: each employee keeps its one runner).
It asks ``get_or_create(conversation_id, agent)`` for each message: the first call
starts a runner, later calls reuse it while its process lives. A sweeper task stops runners left
idle longer than ``idle_ttl`` seconds; ``stop_all()`` stops everything (bounded, no orphans).

Every runner gets the same settings: ``runner_options`` (a ``RunnerOptions``, as given) or else
``AgentRunner``'s keywords given to the manager (not both: ``INVALID_INPUT``), made into one
``RunnerOptions`` once. ``runner_factory(agent, workspace, options)`` builds each runner
(``AgentRunner.from_options`` by default; a test or a front end may wrap it).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.options import RunnerOptions, options_or_keywords
from elynav_nb.agents.runner import AgentRunner
from elynav_nb.errors import InvalidInput

if TYPE_CHECKING:
    import pandas

__all__ = ["RunnerFactory", "RunnerManager"]

RunnerFactory = Callable[[AgentDefinition | str | None, Path, RunnerOptions], AgentRunner]
"""How a manager builds a runner: ``(agent, workspace, options)`` (``AgentRunner.from_options``'s order)."""


class RunnerManager:
    """Keeps one ``AgentRunner`` per conversation id; every runner gets ``runner_options`` (or the keywords)."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] = ".",
        *,
        idle_ttl: float = 900.0,
        runner_factory: RunnerFactory | None = None,
        runner_options: RunnerOptions | None = None,
        **runner_keywords: Any,
    ) -> None:
        if idle_ttl <= 0:
            raise InvalidInput("idle_ttl must be a positive number of seconds")
        self.workspace = Path(workspace)
        self.idle_ttl = idle_ttl
        self.runner_factory: RunnerFactory = runner_factory or AgentRunner.from_options
        self.runner_options = options_or_keywords(runner_options, runner_keywords, whose="the runners'")
        self._runners: dict[str, AgentRunner] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._sweeper: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._runners)

    def __contains__(self, conversation_id: object) -> bool:
        return conversation_id in self._runners

    async def get_or_create(self, conversation_id: str, agent: AgentDefinition | str | None) -> AgentRunner:
        """The live runner of this conversation, started on first use (and restarted if it died)."""
        lock = self._locks.setdefault(conversation_id, asyncio.Lock())
        async with lock:
            runner = self._runners.get(conversation_id)
            agent_name = agent.name if isinstance(agent, AgentDefinition) else agent
            if runner is not None and runner.agent_name != agent_name:
                raise InvalidInput(
                    f"conversation {conversation_id!r} belongs to agent {runner.agent_name!r}, not {agent_name!r}"
                )
            if runner is None or runner.status == "closed":
                runner = self.runner_factory(agent, self.workspace, self.runner_options)
                self._runners[conversation_id] = runner
            await runner.start()
            self._ensure_sweeper()
            return runner

    async def stop(self, conversation_id: str) -> None:
        """Stop and forget one conversation's runner (no error if there is none)."""
        runner = self._runners.get(conversation_id)
        if runner is None:
            return
        await runner.stop()
        if self._runners.get(conversation_id) is runner:  # not replaced while it was stopping
            del self._runners[conversation_id]
            self._locks.pop(conversation_id, None)

    async def stop_all(self) -> None:
        """Stop every runner and the sweeper."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        runners = list(self._runners.values())
        self._runners.clear()
        self._locks.clear()
        await asyncio.gather(*(runner.stop() for runner in runners), return_exceptions=True)

    async def stop_idle(self) -> list[str]:
        """Stop runners idle for longer than ``idle_ttl``; returns their conversation ids."""
        now = time.monotonic()
        expired = [
            conversation_id
            for conversation_id, runner in self._runners.items()
            if not runner.busy and now - runner.conversation.last_activity > self.idle_ttl
        ]
        for conversation_id in expired:
            await self.stop(conversation_id)
        return expired

    def _ensure_sweeper(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.get_running_loop().create_task(
                self._sweep(), name="elynav-runner-sweeper"
            )

    async def _sweep(self) -> None:
        interval = max(0.05, min(self.idle_ttl / 4, 30.0))
        while self._runners:
            await asyncio.sleep(interval)
            await self.stop_idle()

    async def __aenter__(self) -> RunnerManager:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop_all()

    def to_frame(self) -> pandas.DataFrame:
        """One row per live conversation."""
        import pandas

        rows = [
            {
                "conversation_id": conversation_id,
                "agent": runner.agent_name,
                "status": runner.status,
                "session_id": runner.session_id,
                "turns": len(runner.history),
                "idle_s": round(time.monotonic() - runner.conversation.last_activity, 1),
            }
            for conversation_id, runner in self._runners.items()
        ]
        return pandas.DataFrame(
            rows, columns=["conversation_id", "agent", "status", "session_id", "turns", "idle_s"]
        )

    def __repr__(self) -> str:
        return f"<RunnerManager conversations={len(self._runners)} idle_ttl={self.idle_ttl:g}s>"
