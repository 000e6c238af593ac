"""A runner's plan: which CLI, which mode, the agent definition read once, and what that protocol can do.

Where it sits: ``protocols/registry.plan_runner`` makes the plan once, for ``AgentRunner``'s constructor
and for the office, from the registry's entry of (CLI, mode); the runner builds the driver the plan
names (``persistent``: one process per conversation; ``per-turn``: a process per turn). What the
protocol can do and how it is reached are the entry's ``ProtocolTraits``, carried by the plan as data:
the drivers, the views and the office read ``plan.capabilities`` and ``plan.protocol`` and never
branch on CLI names. Pure: no I/O here.

How data flows::

    (definition or name, workspace, cli=, cli_mode=) -> registry.plan_runner -> the definition
      (given, else the agent file the workspace names, else a built-in Elynav agent) -> its ``cli``
      field when ``cli=`` is not given (claude by default) -> the mode -> RunnerPlan(protocol=traits)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.protocols.command import CliName
from elynav_nb.errors import AgentNotFound, InvalidInput

__all__ = [
    "Capabilities",
    "DriverKind",
    "HookStyle",
    "KernelToolRoute",
    "OutputSchemaSupport",
    "ProtocolTraits",
    "RunnerPlan",
]

DriverKind = Literal["persistent", "per-turn"]
OutputSchemaSupport = Literal["value", "constrained", "prompt"]
HookStyle = Literal["control", "command", "kernel"]
"""How ``hooks=`` run: ``control`` (the CLI asks through its control protocol: claude), ``command`` (the
CLI runs hook commands that reach the runner's hook socket: gemini, codex exec), ``kernel`` (the CLI runs
none: the kernel tool server applies them to kernel tools only)."""
KernelToolRoute = Literal["pipe", "loopback"]
"""How kernel tools reach the CLI: ``pipe`` (MCP messages on the protocol's own pipe: claude's SDK MCP
server), ``loopback`` (the runner's MCP streamable HTTP server on 127.0.0.1)."""


@dataclass(frozen=True)
class Capabilities:
    """What a runner's CLI and mode can do, as data (the office and the views read it)."""

    persistent_process: bool  # one process for the whole conversation (else a process per turn)
    permission_prompts: bool  # tool calls can wait for allow() / deny() (PermissionRequest)
    tool_rules_as_arguments: bool  # the definition's tools go on the command line (claude's --allowedTools)
    reports_cost: bool  # TurnResult.cost_usd is the CLI's own figure (else 0)
    token_deltas: bool  # text arrives token by token (else a message in one piece)
    thinking: bool  # ThinkingDelta events
    live_mcp_status: bool  # mcp_status() asks the running CLI (else: the servers written in its config)
    live_settings: bool  # set_model / set_permission_mode reach the running process (else: the next turn)
    # how output_schema reaches the CLI: "value" (the CLI validates and returns the value: claude),
    # "constrained" (the CLI constrains its final message to the schema: codex), "prompt" (the schema
    # is in the prompt, validated here only: gemini)
    output_schema: OutputSchemaSupport = "prompt"
    native_tool_hooks: bool = (
        False  # hooks= run in the CLI on its own and MCP tools (else: on kernel tools only)
    )
    cli_keeps_limits: bool = False  # max_turns / max_budget_usd are the CLI's own flags (else: our count)


@dataclass(frozen=True)
class ProtocolTraits:
    """What one (CLI, mode) is and accepts, beyond its capabilities (an entry of the protocol registry)."""

    capabilities: Capabilities
    hook_style: HookStyle
    kernel_tools: KernelToolRoute
    notes: tuple[str, ...] = ()  # what it cannot honour, always (``runner.limitations``)
    hook_notes: str = ""  # what hooks= do there (a limitation when hooks are given)
    kernel_tools_note: str = ""  # what kernel tools do there (a limitation when tools are given)
    accepts_cli_config: bool = True  # cli_config= and config_home= (its own home and config)
    names_its_threads: bool = False  # the CLI names the conversation: session_id= is refused
    tool_rules_flag: str = ""  # the flag that takes the definition's tool rules (claude: --allowedTools)
    speaker: str = ""  # how its messages name the CLI ("" : by its name)
    # the CLI reads the agent from its file in the workspace (.claude/agents): a built-in or given
    # definition is written there before it starts (claude); else the definition travels with the launch
    agent_file_in_workspace: bool = False


@dataclass(frozen=True)
class RunnerPlan:
    """How one runner runs (see the module docstring)."""

    cli: CliName
    mode: str
    agent_name: str | None
    definition: AgentDefinition | None  # given, else read from the agent file or a built-in (None: not found)
    definition_given: bool
    definition_error: str  # why a name found no definition ("" when it did, or when none is needed)
    protocol: ProtocolTraits
    workspace: Path

    @property
    def capabilities(self) -> Capabilities:
        return self.protocol.capabilities

    @property
    def speaker(self) -> str:
        """How messages name the CLI ("the agent CLI" for claude, else its name)."""
        return self.protocol.speaker or self.cli

    def tool_rule_arguments(self, tools: tuple[str, ...]) -> tuple[str, ...]:
        """The flags that hand ``tools`` (permission rules) to the CLI (none where its home holds them)."""
        flag = self.protocol.tool_rules_flag
        return (flag, *tools) if flag and tools else ()

    @property
    def driver(self) -> DriverKind:
        return "persistent" if self.capabilities.persistent_process else "per-turn"

    def check_accepts(
        self, *, cli_config: bool = False, session_id: bool = False, budget: bool = False
    ) -> None:
        """``INVALID_INPUT`` for what this protocol cannot take: a CLI config or home of ours, a conversation
        id of ours (a CLI that names its threads), a budget (a CLI that reports no cost)."""
        protocol = self.protocol
        if cli_config and not protocol.accepts_cli_config:
            raise InvalidInput(
                "cli_config and config_home are for codex and gemini (a CLI home of their own); "
                f"give {self.cli} flags with extra_arguments"
            )
        if session_id and protocol.names_its_threads:
            raise InvalidInput(
                f"{self.cli} names its conversations itself: give resume=<its id> to continue one, not session_id"
            )
        if budget and not protocol.capabilities.reports_cost:
            raise InvalidInput(
                f"{self.cli} reports no cost, so max_budget_usd cannot be kept; bound its turns with max_turns"
            )

    def require_definition(self) -> AgentDefinition | None:
        """The definition, or ``AGENT_NOT_FOUND`` when a name found none (None: no agent named)."""
        if self.definition is None and self.agent_name is not None:
            raise AgentNotFound(self.definition_error, details={"agent": self.agent_name})
        return self.definition
