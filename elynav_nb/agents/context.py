"""What a driver and a launcher are given instead of the runner: ``RunnerContext``.

Where it sits: ``AgentRunner`` makes one per runner and hands it to its driver, which hands it to its
protocol's launcher. Everything in it is read-only but ``conversation`` (the driver writes it) and
the hook runner and tool endpoint (services with their own state). Nobody below the runner imports
the runner: what they need of it is here.

    options       RunnerOptions: every setting, frozen (``options.py``)
    plan          RunnerPlan: the CLI, the mode, the definition, the protocol's traits (``plan.py``)
    conversation  Conversation: session, resume flags, status, history (``conversation.py``)
    hooks         HookRunner: the runner's hook callbacks, run within their timeouts
    tools         McpToolEndpoint of the runner's kernel tools (None without ``tools=``)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from elynav_nb.agents.conversation import Conversation
from elynav_nb.agents.hooks.runner import HookRunner
from elynav_nb.agents.options import RunnerOptions
from elynav_nb.agents.plan import RunnerPlan

if TYPE_CHECKING:
    from elynav_nb.agents.tools.mcp_endpoint import McpToolEndpoint

__all__ = ["RunnerContext"]


@dataclass(frozen=True)
class RunnerContext:
    """The options, plan, conversation, hooks and kernel tools of one runner (see the module docstring)."""

    options: RunnerOptions
    plan: RunnerPlan
    conversation: Conversation
    hooks: HookRunner
    tools: McpToolEndpoint | None = None

    @property
    def workspace(self) -> Path:
        return self.plan.workspace

    @property
    def agent_name(self) -> str | None:
        return self.plan.agent_name

    @property
    def agent_identity(self) -> dict[str, str]:
        """``ELYNAV_AGENT_NAME`` for the CLI's environment, when the runner runs a named agent."""
        name = self.plan.agent_name
        return {"ELYNAV_AGENT_NAME": name} if name else {}
