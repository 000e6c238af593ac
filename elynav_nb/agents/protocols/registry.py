"""The protocol registry: every (CLI, mode) a runner can drive, as one entry each, and the plan of a runner.

Where it sits: above the protocol folders (``protocols/<cli>/``: codec, wire or adapter, launch,
launcher, hooks) and below the runner, the public ``locate.py`` and the office. Which CLI and mode
a runner uses is decided here once (``plan_runner``); everything else reads the entry's data:

- ``traits`` (``plan.ProtocolTraits``): the capabilities, the limitation and hook notes, the hook
  style (``control``, ``command``, ``kernel``), how kernel tools reach the CLI (``pipe`` or
  ``loopback``), what it accepts (``cli_config``, a ``session_id`` of ours), whether it reads the
  agent from its file in the workspace (``agent_file_in_workspace``: claude);
- ``location`` (``protocols/command.CliLocation``): how its CLI is found, and the hint when it is not;
- ``launcher``: how to build its launch step (``protocols/launcher.py``: persistent, or a process per turn);
- ``mode_variable``: the environment variable that picks the CLI's default mode;
- ``models_note``, ``standin_note``: how a model is chosen, and its stand-in (``%elynav list``).

What belongs to a CLI whatever its mode (``location``, ``mode_variable``, the notes) is read from its
first (default) entry: ``cli_entry``.

Adding a protocol is one folder and one ``register_protocol(ProtocolEntry(...))``; the built-in
entries are the table below. No I/O here but ``plan_runner`` reading the agent file a name points to.

How data flows::

    AgentRunner(definition, workspace, cli=, cli_mode=) -> plan_runner -> the definition (given, the
      agent file the workspace names, a built-in agent) -> its cli (claude by default) -> the mode
      (``cli_mode``, else ``mode_variable``, else the CLI's first) -> RunnerPlan(protocol=traits)
    the runner -> launcher_for(plan) -> the entry's launcher -> the driver the plan names
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from elynav_nb.agents.definitions import AgentDefinition, builtin_agents, find_agent_file
from elynav_nb.agents.plan import Capabilities, ProtocolTraits, RunnerPlan
from elynav_nb.agents.protocols.acp.launch import ACP_NOTES
from elynav_nb.agents.protocols.acp.launcher import ACP_HOOK_NOTES, ACP_LOCATION, AcpLauncher
from elynav_nb.agents.protocols.claude.launcher import CLAUDE_LOCATION, ClaudeLauncher
from elynav_nb.agents.protocols.codex.launcher import (
    CODEX_APP_SERVER_HOOK_NOTES,
    CODEX_APP_SERVER_NOTES,
    CODEX_EXEC_HOOK_NOTES,
    CODEX_EXEC_NOTES,
    CODEX_LOCATION,
    CodexAppServerLauncher,
    CodexExecLauncher,
)
from elynav_nb.agents.protocols.command import CliLocation, CliName
from elynav_nb.agents.protocols.gemini.launch import KERNEL_TOKEN_NOTE
from elynav_nb.agents.protocols.gemini.launcher import (
    GEMINI_HOOK_NOTES,
    GEMINI_LOCATION,
    GEMINI_NOTES,
    GeminiLauncher,
)
from elynav_nb.agents.protocols.launcher import Launcher
from elynav_nb.errors import ElynavError, InvalidInput

__all__ = [
    "DEFAULT_CLI",
    "ProtocolEntry",
    "capabilities_of",
    "check_cli_name",
    "choose_cli_mode",
    "cli_entry",
    "cli_modes",
    "cli_names",
    "launcher_for",
    "location_of",
    "plan_runner",
    "protocol_entries",
    "protocol_entry",
    "register_protocol",
    "unregister_protocol",
]


@dataclass(frozen=True)
class ProtocolEntry:
    """One (CLI, mode) a runner can drive (see the module docstring)."""

    cli: CliName
    mode: str
    traits: ProtocolTraits
    location: CliLocation
    launcher: Callable[[], Launcher]
    mode_variable: str = ""  # the environment variable that picks the CLI's default mode ("": none)
    models_note: str = ""  # how a model is chosen for this CLI ("": nothing to say)
    standin_note: str = ""  # its stand-in ("": the location's stand-in script, else none)


_ENTRIES: dict[tuple[str, str], ProtocolEntry] = {}

DEFAULT_CLI: CliName = "claude"
"""The CLI of a runner whose ``cli=`` and definition name none."""


def register_protocol(entry: ProtocolEntry) -> None:
    """Add ``entry`` (``INVALID_INPUT`` for a (CLI, mode) already there, or traits that contradict each other).

    A CLI's first registered mode is its default one.
    """
    key = (entry.cli, entry.mode)
    if key in _ENTRIES:
        raise InvalidInput(f"the protocol {entry.cli} {entry.mode} is registered already")
    traits = entry.traits
    if traits.capabilities.native_tool_hooks != (traits.hook_style != "kernel"):
        raise InvalidInput(
            f"{entry.cli} {entry.mode}: native_tool_hooks and hook_style {traits.hook_style!r} disagree"
        )
    if traits.capabilities.tool_rules_as_arguments != bool(traits.tool_rules_flag):
        raise InvalidInput(f"{entry.cli} {entry.mode}: tool_rules_as_arguments and tool_rules_flag disagree")
    _ENTRIES[key] = entry


def unregister_protocol(cli: CliName, mode: str) -> None:
    """Remove an entry (a test's own protocol, once the test is over)."""
    _ENTRIES.pop((cli, mode), None)


def protocol_entries() -> tuple[ProtocolEntry, ...]:
    return tuple(_ENTRIES.values())


def cli_names() -> tuple[CliName, ...]:
    return tuple(dict.fromkeys(cli for cli, _ in _ENTRIES))


def cli_modes(cli: CliName) -> tuple[str, ...]:
    """The modes of ``cli``, its default first."""
    return tuple(mode for name, mode in _ENTRIES if name == cli)


def check_cli_name(name: str) -> CliName:
    """``name`` if the registry knows it; ``INVALID_INPUT`` naming the known CLIs otherwise."""
    if name in cli_names():
        return name
    raise InvalidInput(
        f"unknown agent CLI {name!r}: choose one of {', '.join(cli_names())}", details={"cli": name}
    )


def cli_entry(cli: CliName) -> ProtocolEntry:
    """The default-mode entry of ``cli``: what belongs to the CLI whatever its mode (``INVALID_INPUT`` if unknown)."""
    return _ENTRIES[(check_cli_name(cli), cli_modes(cli)[0])]


def choose_cli_mode(cli: CliName, mode: str | None, environment: Mapping[str, str] | None = None) -> str:
    """How a runner drives ``cli``: ``mode``, else the CLI's mode variable (``$ELYNAV_CODEX_MODE``), else its default.

    ``INVALID_INPUT`` for a mode the CLI has not.
    """
    environment = os.environ if environment is None else environment
    variable = cli_entry(cli).mode_variable
    chosen = mode or (environment.get(variable) if variable else None) or cli_modes(cli)[0]
    if chosen not in cli_modes(cli):
        raise InvalidInput(
            f"{cli} has no mode {chosen!r}: choose one of {', '.join(cli_modes(cli))}",
            details={"cli": cli, "cli_mode": chosen},
        )
    return chosen


def protocol_entry(cli: CliName, mode: str | None = None) -> ProtocolEntry:
    """The entry of ``cli`` in ``mode`` (its default mode when None)."""
    return _ENTRIES[(cli, choose_cli_mode(check_cli_name(cli), mode))]


def location_of(cli: CliName) -> CliLocation:
    """Where ``cli`` is looked for (``INVALID_INPUT`` for an unknown CLI)."""
    return cli_entry(cli).location


def capabilities_of(cli: CliName, mode: str | None = None) -> Capabilities:
    """What ``cli`` can do in ``mode`` (its default mode when None)."""
    return protocol_entry(cli, mode).traits.capabilities


def launcher_for(plan: RunnerPlan) -> Launcher:
    """A new launcher of the plan's protocol (one per runner: it may keep what the last start wrote)."""
    return _ENTRIES[(plan.cli, plan.mode)].launcher()


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
    chosen_cli = check_cli_name(
        cli or (resolved.cli if resolved is not None and resolved.cli else DEFAULT_CLI)
    )
    mode = choose_cli_mode(chosen_cli, cli_mode)
    return RunnerPlan(
        cli=chosen_cli,
        mode=mode,
        agent_name=agent_name,
        definition=resolved,
        definition_given=given is not None,
        definition_error=error,
        protocol=_ENTRIES[(chosen_cli, mode)].traits,
        workspace=workspace,
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


# -- the built-in protocols ------------------------------------------------------------------------

_CODEX_MODELS = "the codex account's models (model= or cli_config); claude aliases fall back to its default"
_CODEX_STANDIN = "none (tests run the real codex on FakeModelApi)"

register_protocol(
    ProtocolEntry(
        "claude",
        "stream-json",
        ProtocolTraits(
            Capabilities(
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
            hook_style="control",
            kernel_tools="pipe",
            accepts_cli_config=False,
            tool_rules_flag="--allowedTools",
            speaker="the agent CLI",
            agent_file_in_workspace=True,
        ),
        CLAUDE_LOCATION,
        ClaudeLauncher,
        models_note="sonnet, opus, haiku (aliases) or a full model id: model: in the agent file, or model=",
        standin_note="executable='standin' (elynav-claude-standin; used when claude is not found)",
    )
)
register_protocol(
    ProtocolEntry(
        "codex",
        "app-server",
        ProtocolTraits(
            Capabilities(
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
            hook_style="kernel",
            kernel_tools="loopback",
            notes=CODEX_APP_SERVER_NOTES,
            hook_notes=CODEX_APP_SERVER_HOOK_NOTES,
            names_its_threads=True,
        ),
        CODEX_LOCATION,
        CodexAppServerLauncher,
        mode_variable="ELYNAV_CODEX_MODE",
        models_note=_CODEX_MODELS,
        standin_note=_CODEX_STANDIN,
    )
)
register_protocol(
    ProtocolEntry(
        "codex",
        "exec",
        ProtocolTraits(
            Capabilities(
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
            hook_style="command",
            kernel_tools="loopback",
            notes=CODEX_EXEC_NOTES,
            hook_notes=CODEX_EXEC_HOOK_NOTES,
            names_its_threads=True,
        ),
        CODEX_LOCATION,
        CodexExecLauncher,
        mode_variable="ELYNAV_CODEX_MODE",
        models_note=_CODEX_MODELS,
        standin_note=_CODEX_STANDIN,
    )
)
register_protocol(
    ProtocolEntry(
        "gemini",
        "print",
        ProtocolTraits(
            Capabilities(
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
            hook_style="command",
            kernel_tools="loopback",
            notes=GEMINI_NOTES,
            hook_notes=GEMINI_HOOK_NOTES,
            kernel_tools_note=KERNEL_TOKEN_NOTE,
        ),
        GEMINI_LOCATION,
        GeminiLauncher,
        models_note="gemini-2.5-pro, gemini-2.5-flash... (model=); claude aliases fall back to its default",
        standin_note="none (tests run the real gemini on FakeModelApi)",
    )
)
register_protocol(
    ProtocolEntry(
        "acp",
        "stdio",
        ProtocolTraits(
            Capabilities(  # what the protocol can carry; each agent may do less (its notes)
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
            hook_style="kernel",
            kernel_tools="loopback",
            notes=ACP_NOTES,
            hook_notes=ACP_HOOK_NOTES,
            names_its_threads=True,
        ),
        ACP_LOCATION,
        AcpLauncher,
        models_note="the agent lists its models at session start; model= / runner.set_model picks one",
        standin_note="executable='standin' (elynav-acp-standin)",
    )
)
