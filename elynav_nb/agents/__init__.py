"""elynav_nb.agents: headless AI CLIs as awaitable, streaming, cancellable runners.

The public surface: agent definitions (``AgentDefinition``, ``load_agents``, ``install_agents``),
the runner (``AgentRunner`` -> ``Turn`` -> ``TurnResult``; its settings as one ``RunnerOptions``, what
``Office(..., runner_options=...)`` takes), the ``RunnerManager``, the typed
events a turn streams, hooks (``HookCall``, ``HookMatcher``, ``HookDecision``, ``allow``, ``deny``,
``rewrite``; ``agents.hooks``), kernel tools (``agents.tools``) and ``locate_cli``.

The folders show the layers, top down: ``runner.py`` (the facade) with its settings (``options.py``),
its conversation (``conversation.py``), its plan (``plan.py``) and ``turn.py``; ``drivers/`` (the
conversation drivers and process supervision: internal); ``protocols/`` (one folder per CLI: codec,
wire or adapter, launch, launcher, hooks; the registry of (CLI, mode); the contracts: internal);
``hooks/``, ``definitions/``, ``tools/`` (kernel tools and their transports). Internal single modules
start with ``_`` (``_transcript``, ``_jsonrpc``).
"""

from elynav_nb.agents.definitions import (
    AgentDefinition,
    builtin_agents,
    default_agents_folder,
    find_agent_file,
    install_agents,
    load_agents,
)
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    HookDenied,
    HookFailed,
    McpServerStatus,
    PermissionRequest,
    PermissionWithdrawn,
    RawEvent,
    TextDelta,
    ThinkingDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.hooks.rules import HookCall, HookDecision, HookMatcher, allow, deny, rewrite
from elynav_nb.agents.locate import CliCommand, locate_cli
from elynav_nb.agents.manager import RunnerManager
from elynav_nb.agents.options import RunnerOptions
from elynav_nb.agents.results import TurnResult
from elynav_nb.agents.runner import AgentRunner, Turn

__all__ = [
    "AgentDefinition",
    "AgentError",
    "AgentEvent",
    "AgentRunner",
    "AgentStarted",
    "CliCommand",
    "HookCall",
    "HookDecision",
    "HookDenied",
    "HookFailed",
    "HookMatcher",
    "McpServerStatus",
    "PermissionRequest",
    "PermissionWithdrawn",
    "RawEvent",
    "RunnerManager",
    "RunnerOptions",
    "StopBounds",
    "TextDelta",
    "ThinkingDelta",
    "ToolResult",
    "ToolUse",
    "Turn",
    "TurnEnded",
    "TurnResult",
    "allow",
    "builtin_agents",
    "default_agents_folder",
    "deny",
    "find_agent_file",
    "install_agents",
    "load_agents",
    "locate_cli",
    "rewrite",
]
