"""A runner's plan: which CLI, which mode, which driver, the agent definition read once, and what it can do.

Where it sits: ``AgentRunner.__init__`` calls ``plan_runner`` once; the runner then builds the driver
the plan names (``persistent`` for claude stream-json, codex app-server and ACP agents, ``per-turn`` for gemini
and codex exec). The office reads ``capabilities_of`` before it makes an employee's runner, and views
read ``runner.capabilities``: nobody else branches on CLI names. Pure but for reading the agent file
of a name (once).

How data flows::

    (definition or name, workspace, cli=, cli_mode=) -> the definition: given, else the agent file
      the workspace names (read once), else a built-in Elynav agent -> its ``cli`` field when
      ``cli=`` is not given (claude by default) -> the mode (``choose_cli_mode``) -> Capabilities
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from elynav_nb.agents.definitions import AgentDefinition, builtin_agents, find_agent_file
from elynav_nb.agents.locate import CliName, check_cli_name, choose_cli_mode
from elynav_nb.errors import AgentNotFound, ElynavError

__all__ = [
    "Capabilities",
    "DriverKind",
    "OutputSchemaSupport",
    "RunnerPlan",
    "capabilities_of",
    "plan_runner",
]

DriverKind = Literal["persistent", "per-turn"]
OutputSchemaSupport = Literal["value", "constrained", "prompt"]


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


_CAPABILITIES: dict[tuple[CliName, str], Capabilities] = {
    ("claude", "stream-json"): Capabilities(
        persistent_process=True,
        permission_prompts=True,
        tool_rules_as_arguments=True,
        reports_cost=True,
        token_deltas=True,
        thinking=True,
        live_mcp_status=True,
        live_settings=True,
        output_schema="value",
        native_tool_hooks=True,
        cli_keeps_limits=True,
    ),
    ("codex", "app-server"): Capabilities(
        persistent_process=True,
        permission_prompts=True,
        tool_rules_as_arguments=False,
        reports_cost=False,
        token_deltas=True,
        thinking=True,
        live_mcp_status=True,
        live_settings=False,
        output_schema="constrained",
    ),
    ("codex", "exec"): Capabilities(
        persistent_process=False,
        permission_prompts=False,
        tool_rules_as_arguments=False,
        reports_cost=False,
        token_deltas=False,
        thinking=True,
        live_mcp_status=False,
        live_settings=False,
        output_schema="constrained",
        native_tool_hooks=True,
    ),
    ("acp", "stdio"): Capabilities(  # what the protocol can carry; each agent may do less (its notes)
        persistent_process=True,
        permission_prompts=True,
        tool_rules_as_arguments=False,
        reports_cost=False,
        token_deltas=True,
        thinking=True,
        live_mcp_status=False,
        live_settings=True,
        output_schema="prompt",
    ),
    ("gemini", "print"): Capabilities(
        persistent_process=False,
        permission_prompts=False,
        tool_rules_as_arguments=False,
        reports_cost=False,
        token_deltas=True,
        thinking=False,
        live_mcp_status=False,
        live_settings=False,
        output_schema="prompt",
        native_tool_hooks=True,
    ),
}


def capabilities_of(cli: CliName, mode: str | None = None) -> Capabilities:
    """What ``cli`` can do in ``mode`` (its default mode when None)."""
    return _CAPABILITIES[(cli, choose_cli_mode(cli, mode))]


@dataclass(frozen=True)
class RunnerPlan:
    """How one runner runs (see the module docstring)."""

    cli: CliName
    mode: str
    agent_name: str | None
    definition: AgentDefinition | None  # given, else read from the agent file or a built-in (None: not found)
    definition_given: bool
    definition_error: str  # why a name found no definition ("" when it did, or when none is needed)

    @property
    def capabilities(self) -> Capabilities:
        return _CAPABILITIES[(self.cli, self.mode)]

    @property
    def driver(self) -> DriverKind:
        return "persistent" if self.capabilities.persistent_process else "per-turn"

    def require_definition(self) -> AgentDefinition | None:
        """The definition, or ``AGENT_NOT_FOUND`` when a name found none (None: no agent named)."""
        if self.definition is None and self.agent_name is not None:
            raise AgentNotFound(self.definition_error, details={"agent": self.agent_name})
        return self.definition


def plan_runner(
    definition: AgentDefinition | str | None, workspace: Path, *, cli: str | None, cli_mode: str | None
) -> RunnerPlan:
    """The plan of a runner on ``workspace`` (``INVALID_INPUT`` for an unknown CLI or mode)."""
    given = definition if isinstance(definition, AgentDefinition) else None
    agent_name = (
        given.name
        if given is not None
        else (definition if isinstance(definition, str) and definition else None)
    )
    resolved, error = (given, "") if given is not None else _definition_named(agent_name, workspace)
    chosen_cli = check_cli_name(cli or (resolved.cli if resolved is not None and resolved.cli else "claude"))
    return RunnerPlan(
        cli=chosen_cli,
        mode=choose_cli_mode(chosen_cli, cli_mode),
        agent_name=agent_name,
        definition=resolved,
        definition_given=given is not None,
        definition_error=error,
    )


def _definition_named(name: str | None, workspace: Path) -> tuple[AgentDefinition | None, str]:
    """The agent file the workspace names (as the claude CLI finds it), else a built-in agent."""
    if name is None:
        return None, ""
    reason = ""
    try:
        path = find_agent_file(workspace, name)
        if path is not None:
            return AgentDefinition.load(path), ""
    except (ElynavError, OSError) as error:
        reason = f" (its file could not be read: {error})"
    builtin = builtin_agents().get(name)
    if builtin is not None and not reason:
        return builtin, ""
    return None, (
        f"agent {name!r} is not defined in {workspace / '.claude' / 'agents'} "
        f"nor in a parent folder, ~/.claude/agents or the built-in Elynav agents{reason}; the built-in ones "
        f"run in any workspace: {', '.join(sorted(builtin_agents()))}; for another, write its file "
        f"{workspace / '.claude' / 'agents' / (name + '.md')}"
    )
