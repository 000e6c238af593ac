"""elynav_nb.agents: headless AI CLIs as awaitable, streaming, cancellable runners.

The public surface: agent definitions (``AgentDefinition``, ``load_agents``, ``install_agents``),
the runner (``AgentRunner`` -> ``Turn`` -> ``TurnResult``), the ``RunnerManager``, the typed
events a turn streams, hooks (``HookCall``, ``HookMatcher``, ``HookDecision``, ``allow``, ``deny``,
``rewrite``; ``agents.hooks``) and ``locate_cli``. Private modules: ``process`` (subprocess supervisor),
``reaper``, ``cli/`` (pure codecs and command lines).
"""

from elynav_nb.agents.definitions import (
    AgentDefinition,
    builtin_agents,
    default_agents_folder,
    find_agent_file,
    install_agents,
    load_agents,
)
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
from elynav_nb.agents.hooks import HookCall, HookDecision, HookMatcher, allow, deny, rewrite
from elynav_nb.agents.locate import CliCommand, locate_cli
from elynav_nb.agents.manager import RunnerManager
from elynav_nb.agents.process import StopBounds
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
