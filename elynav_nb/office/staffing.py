"""Who the employees are, and how each one's CLI is started.

Where it sits: called by ``Office.start`` (which definitions) and whenever the office makes a
runner (at start, and when a conversation cannot be resumed). Reads agent files; starts nothing.

- ``resolve_definitions``: the agents of ``<workspace>/.claude/agents`` (the six Elynav agents are
  installed there when it has none), or the names / definitions the caller chose.
- ``runner_for``: one ``AgentRunner`` per employee (the office's ``RunnerOptions``, laid per employee),
  resumed on its canonical session, with what
  every agent process of an office gets (``agent_environment``): the socket path, its own token,
  the ``elynav`` script on ``PATH`` (kernels often lack their venv's ``bin``), and Bash time bounds
  as long as an ask (the real CLI cuts a Bash command at 2 min by default, which would cut a
  delegated ``elynav ask``); and ``--allowedTools`` with the tools of its definition. An agent the
  office runs headless has nobody to answer a permission prompt: the tools its definition lists are
  the ones it is meant to use (``Bash(elynav ask:*)``, its ``mcp__crm__...`` tools, which the real
  CLI 2.1.332 denies in ``default`` and ``acceptEdits`` modes without a rule), the rest is denied.

An employee may be any CLI: its definition's ``cli`` (``codex``, ``gemini``; claude by default)
picks it, as for any runner: the office asks the runner's plan (``plan_runner``, the protocol
registry), and what the CLI can do decides the rest (no branch on CLI names here). A CLI that takes
tool rules on its command line gets them as its plan says (claude: ``--allowedTools``); the others
get their definition's tools through their runner's config home (codex: its ``Bash(...)`` rules, ``elynav ask`` among them, become
exec-policy ``allow`` rules, so delegating runs without a prompt and outside the sandbox). A codex
employee (app-server) keeps the office's permission prompts; an ACP one too, its ``elynav ask`` and
``elynav cancel`` commands allowed by the office when its definition lists ``ASK_RULE``
(``office_commands``); a gemini one, or codex in
``cli_mode="exec"`` (a process per turn cannot ask), runs in its definition's permission mode. The
office's ``executable`` is claude's unless it maps CLI names to
commands (``{"claude": "standin", "codex": [...]}``); codex and gemini are otherwise found on PATH
(or ``ELYNAV_CODEX_CLI`` / ``ELYNAV_GEMINI_CLI``).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from elynav_nb.agents.definitions import AgentDefinition, builtin_agents, install_agents, load_agents
from elynav_nb.agents.options import PermissionSettings, RunnerOptions
from elynav_nb.agents.protocols.registry import DEFAULT_CLI, plan_runner
from elynav_nb.agents.runner import AgentRunner
from elynav_nb.errors import AgentNotFound, InvalidInput
from elynav_nb.office.office_commands import allow_office_commands
from elynav_nb.office.peers import TOKEN_VARIABLE
from elynav_nb.office.rights import USER
from elynav_nb.office.wire import SOCKET_VARIABLE

__all__ = [
    "ASK_RULE",
    "Executable",
    "agent_environment",
    "executable_for",
    "resolve_definitions",
    "runner_for",
]

Executable = str | Sequence[str] | Mapping[str, str | Sequence[str]] | None
"""An office's CLI command: the default CLI's (claude: a path, words or "standin"), or one per CLI name."""

ASK_RULE = "Bash(elynav ask:*)"
"""The permission rule an agent definition lists in ``tools`` to delegate with ``elynav ask``."""


def resolve_definitions(
    workspace: Path, choice: Sequence[str | AgentDefinition] | None
) -> list[AgentDefinition]:
    """The definitions of the employees (``AGENT_NOT_FOUND`` for a name defined nowhere)."""
    folder = workspace / ".claude" / "agents"
    if choice is None:
        if not folder.is_dir() or not any(folder.glob("*.md")):
            install_agents(workspace)
        return list(load_agents(folder).values())
    found = load_agents(folder) if folder.is_dir() else {}
    builtins = builtin_agents()
    definitions: list[AgentDefinition] = []
    for item in choice:
        if isinstance(item, AgentDefinition):
            definitions.append(item)
        elif item in found or item in builtins:
            definitions.append(found.get(item) or builtins[item])
        else:
            raise AgentNotFound(
                f"no agent {item!r} in {folder} nor among the built-in Elynav agents", details={"agent": item}
            )
    names = [definition.name for definition in definitions]
    if len(set(names)) != len(names) or USER in names:
        raise InvalidInput(f"agent names must be unique and not {USER!r}: {names}")
    return definitions


def agent_environment(token: str, socket_path: Path | None, ask_timeout: float) -> dict[str, str]:
    """The variables every agent process of an office gets."""
    environment = {TOKEN_VARIABLE: token}
    if socket_path is not None:
        environment[SOCKET_VARIABLE] = str(socket_path)
    script_folder = elynav_script_folder()
    path = os.environ.get("PATH", "")
    if script_folder and script_folder not in path.split(os.pathsep):
        environment["PATH"] = os.pathsep.join([script_folder, path]) if path else script_folder
    bash_bound_ms = str(int(ask_timeout * 1000))
    environment["BASH_DEFAULT_TIMEOUT_MS"] = bash_bound_ms
    environment["BASH_MAX_TIMEOUT_MS"] = bash_bound_ms
    return environment


def executable_for(executable: Executable, cli: str) -> str | tuple[str, ...] | None:
    """The command of ``cli`` in an office's ``executable`` (a plain one is the default CLI's: claude's)."""
    chosen = (
        executable.get(cli) if isinstance(executable, Mapping) else executable if cli == DEFAULT_CLI else None
    )
    return chosen if chosen is None or isinstance(chosen, str) else tuple(chosen)


def runner_for(
    definition: AgentDefinition,
    workspace: Path,
    *,
    token: str,
    socket_path: Path | None,
    ask_timeout: float,
    executable: Executable,
    resume: str | None,
    runner_options: RunnerOptions,
) -> AgentRunner:
    """The runner of one employee: ``runner_options`` with the office's environment, tool rules and prompts."""
    plan = plan_runner(definition, workspace, cli=runner_options.cli, cli_mode=runner_options.cli_mode)
    capabilities = plan.capabilities
    process = runner_options.process
    permissions = runner_options.permissions
    if (
        capabilities.permission_prompts
        and not capabilities.tool_rules_as_arguments
        and ASK_RULE in definition.tools
        and permissions.handler is None
    ):
        # An ACP agent takes no tool rules: the office answers the prompts of its own commands itself
        permissions = dataclasses.replace(permissions, prompts=True, handler=allow_office_commands())
    if not capabilities.permission_prompts:
        # A process per turn cannot ask: the definition's permission mode rules. (codex over
        # app-server asks; its exec-policy rules, from the definition's Bash(...) tools, let
        # `elynav ask` run without asking, as claude's --allowedTools does.)
        permissions = PermissionSettings(mode=permissions.mode)
    options = dataclasses.replace(
        runner_options,
        cli=plan.cli,
        process=dataclasses.replace(
            process,
            executable=executable_for(executable, plan.cli) if executable is not None else process.executable,
            environment={**process.environment, **agent_environment(token, socket_path, ask_timeout)},
            extra_arguments=(*process.extra_arguments, *plan.tool_rule_arguments(definition.tools)),
        ),
        permissions=permissions,
    )
    return AgentRunner.from_options(definition, workspace, options, resume=resume)


def elynav_script_folder() -> str | None:
    """The folder of the ``elynav`` script that belongs to this Python, else the one on PATH."""
    beside_python = Path(sys.executable).parent / "elynav"
    if beside_python.is_file():
        return str(beside_python.parent)
    found = shutil.which("elynav")
    return str(Path(found).parent) if found else None
