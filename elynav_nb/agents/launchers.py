"""What happens before a persistent CLI is spawned: locate it, prepare its files, build its command and wire.

Where it sits: called by ``PersistentDriver.prepare`` (off the event loop for the disk work). One
launcher per persistent protocol: ``ClaudeLauncher`` (the CLI or its stand-in, the agent file in the
workspace, ``--mcp-config`` from ``.mcp.json``), ``CodexAppServerLauncher`` (the runner's
``CODEX_HOME`` written by the codex adapter) and ``AcpLauncher`` (any ACP agent: its command, the
workspace's MCP servers and the kernel tools in ACP's form, the client's fs and terminal services). Each returns a ``Launch``: the command and a new wire
for that process. The wires themselves (``agents/cli/*_wire.py``) do no I/O.

Structured results: claude's ``--json-schema`` belongs to the process, so ``ClaudeLauncher`` says
``schema_per_process`` and starts each process with ``output_schema`` (set by the driver from the
turn that needs the process); codex app-server takes a schema per turn (``turn/start``).

How data flows::

    runner settings + plan -> launcher.launch(runner) -> locate_cli (+ version) -> files
      -> Launch(argv, cwd, environment, wire) -> the driver spawns argv and opens the wire
"""

from __future__ import annotations

import asyncio
import logging
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elynav_nb.agents.acp_files import WorkspaceFiles
from elynav_nb.agents.acp_terminals import WorkspaceTerminals
from elynav_nb.agents.adapter_settings import adapter_settings, kernel_tools_of
from elynav_nb.agents.cli.acp_launch import ACP_NOTES, MCP_WAIT, acp_agent_label, acp_mcp_servers
from elynav_nb.agents.cli.acp_wire import AcpWire
from elynav_nb.agents.cli.claude_launch import (
    ClaudeLaunch,
    agents_with_structured_output,
    build_child_environment,
    build_claude_argv,
)
from elynav_nb.agents.cli.claude_wire import ClaudeStreamWire, RequestServer
from elynav_nb.agents.cli.codex_app_wire import CodexAppServerWire
from elynav_nb.agents.cli.codex_launch import build_codex_app_server
from elynav_nb.agents.cli.wire import PersistentWire
from elynav_nb.agents.cli_adapter import merged_limitations, read_workspace_mcp_servers
from elynav_nb.agents.codex_adapter import CodexAdapter
from elynav_nb.agents.definitions import find_agent_file, install_agents
from elynav_nb.agents.hooks import claude_initialize_hooks
from elynav_nb.agents.limits import TurnLimits
from elynav_nb.agents.locate import cli_version, locate_cli
from elynav_nb.agents.output_schema import OutputSchema

if TYPE_CHECKING:
    from elynav_nb.agents.runner import AgentRunner

__all__ = ["AcpLauncher", "ClaudeLauncher", "CodexAppServerLauncher", "Launch", "PersistentLauncher"]

logger = logging.getLogger("elynav_nb.agents")

_CODEX_HOOKS_NOTE = (
    "codex app-server cannot run hooks= on its own tools (its command hooks need a trust review it offers "
    "no way to skip; use cli_mode='exec' for them): they apply to kernel tools only"
)
_CODEX_NOTES = (
    "codex answers permission prompts for commands only: allow(updated_input) runs the command as asked",
    "set_permission_mode restarts codex app-server on the same thread before the next turn",
)


@dataclass(frozen=True)
class Launch:
    """One process to spawn, and the wire that speaks to it."""

    argv: tuple[str, ...]
    cwd: Path
    environment: dict[str, str]
    wire: PersistentWire
    version: str = ""


class PersistentLauncher(ABC):
    """The launch step of one persistent protocol (see the module docstring)."""

    adapter: CodexAdapter | None = None  # the adapter that wrote the CLI's home, where there is one
    schema_per_process = False  # True: a turn's output schema is a flag of the process (claude)
    output_schema: OutputSchema | None = None  # the schema the next process starts with (schema_per_process)

    @abstractmethod
    def launch_sync(self, runner: AgentRunner) -> Launch:
        """Locate the CLI, write its files, build its command and a new wire (off the event loop)."""

    async def launch(self, runner: AgentRunner) -> Launch:
        return await asyncio.to_thread(self.launch_sync, runner)

    def limitations(self, runner: AgentRunner) -> tuple[str, ...]:
        return ()

    def restart_for_limits(self, runner: AgentRunner, limits: TurnLimits, spent_usd: float) -> bool:
        """Whether the running process must restart before a turn bounded by ``limits``."""
        return False


class ClaudeLauncher(PersistentLauncher):
    """claude in stream-json mode (or its stand-in)."""

    schema_per_process = True

    def launch_sync(self, runner: AgentRunner) -> Launch:
        runner.cli = locate_cli(runner.executable, fallback_to_standin=runner.fallback_to_standin)
        self._ensure_agent_installed(runner)
        mcp_config = runner.workspace / ".mcp.json"
        resuming = runner.resume_next_start
        endpoint = runner.tool_endpoint
        tool_flags: list[str] = []
        request_servers: dict[str, RequestServer] = {}
        agents: dict[str, dict[str, Any]] = {}
        if endpoint is not None:
            from elynav_nb.agents.kernel_tool_server import (
                agents_with_kernel_tools,
                check_server_name_free,
                claude_tool_flags,
                mcp_message_server,
            )

            check_server_name_free(mcp_config, endpoint)
            tool_flags = claude_tool_flags(endpoint)
            request_servers["mcp_message"] = mcp_message_server(endpoint)
            agents = agents_with_kernel_tools(runner.plan.definition, endpoint)
        launch = ClaudeLaunch(
            agent_name=runner.agent_name,
            include_partial_messages=runner.include_partial_messages,
            mcp_config_path=str(mcp_config) if mcp_config.is_file() else None,
            permission_mode=runner.permission_mode,
            permission_prompts=runner.permission_prompts,
            session_id=None if resuming else runner.session_id,
            resume_session_id=runner.session_id if resuming else None,
            model=runner.model,
            json_schema=self.output_schema.key if self.output_schema is not None else None,
            max_turns=runner.process_limits.max_turns,
            max_budget_usd=runner.process_limits.max_budget_usd,
            extra_arguments=(*tool_flags, *runner.extra_arguments),
        )
        if self.output_schema is not None:
            agents = agents_with_structured_output(agents, runner.plan.definition)
        if runner.hooks:
            request_servers["hook_callback"] = runner.hooks.serve_claude
        agent_identity = {"ELYNAV_AGENT_NAME": runner.agent_name} if runner.agent_name else {}
        wire = ClaudeStreamWire(
            session_id=lambda: runner.session_id,
            agent_name=runner.agent_name,
            permission_mode=runner.permission_mode,
            partial_messages=runner.include_partial_messages,
            start_timeout=runner.start_timeout,
            interrupt_timeout=runner.interrupt_timeout,
            request_servers=request_servers,
            agents=agents,
            initialize_hooks=claude_initialize_hooks(runner.hooks.hook_set),
        )
        return Launch(
            argv=tuple(build_claude_argv(runner.cli.argv, launch)),
            cwd=runner.workspace,
            environment=build_child_environment(
                os.environ, {**agent_identity, **runner.environment_overrides}
            ),
            wire=wire,
        )

    def restart_for_limits(self, runner: AgentRunner, limits: TurnLimits, spent_usd: float) -> bool:
        """claude's bounds are flags of the process: ``--max-turns`` counts per turn, so a different
        bound needs a new process; ``--max-budget-usd`` counts the whole process, so a budget needs
        a process that has spent nothing yet."""
        running = runner.process_limits
        if limits != running:
            return True
        return limits.max_budget_usd is not None and spent_usd > 0

    @staticmethod
    def _ensure_agent_installed(runner: AgentRunner) -> None:
        """claude reads an agent from its file: a given or built-in definition is written where it looks.

        One rule for a name, whatever names it (``AgentRunner("elynav-sdr")``, a definition object,
        ``%%agent sdr``): a built-in agent runs in any workspace, its file written into
        ``<workspace>/.claude/agents/`` (logged at INFO); an unknown name is ``AGENT_NOT_FOUND``
        naming the agents that exist.
        """
        name = runner.agent_name
        if name is None or find_agent_file(runner.workspace, name) is not None:
            return
        definition = runner.plan.require_definition()  # AGENT_NOT_FOUND listing the choices
        assert definition is not None
        (path,) = install_agents(runner.workspace, [definition])
        logger.info("agent %s written to %s (claude reads agents there)", name, path)


class CodexAppServerLauncher(PersistentLauncher):
    """``codex app-server`` with the runner's own ``CODEX_HOME``."""

    def __init__(self) -> None:
        self.adapter: CodexAdapter | None = None

    def launch_sync(self, runner: AgentRunner) -> Launch:
        runner.cli = locate_cli(runner.executable, cli="codex", fallback_to_standin=False)
        version = cli_version(runner.cli)
        definition = runner.plan.require_definition()
        adapter = CodexAdapter(adapter_settings(runner, definition), interactive=True)
        adapter.prepare(runner.cli, version)
        assert adapter.plan is not None
        self.adapter = adapter
        command = build_codex_app_server(
            runner.cli.argv,
            adapter.plan,
            parent_environment=adapter.settings.parent_environment,
            environment=adapter.settings.environment_overrides,
        )

        def set_thread_id(thread_id: str) -> None:
            runner.session_id = thread_id

        wire = CodexAppServerWire(
            plan=adapter.plan,
            cli_version=version,
            workspace=runner.workspace,
            home=adapter.settings.home,
            thread_id=runner.session_id if runner.resume_next_start else "",
            resume_asked=runner.resume_asked,
            set_thread_id=set_thread_id,
            start_timeout=runner.start_timeout,
            interrupt_timeout=runner.interrupt_timeout,
            retry_timeout=runner.retry_timeout,
        )
        return Launch(
            argv=tuple(command.argv),
            cwd=command.cwd,
            environment=dict(command.environment),
            wire=wire,
            version=version,
        )

    def limitations(self, runner: AgentRunner) -> tuple[str, ...]:
        if self.adapter is not None:
            planned = self.adapter.limitations
        elif runner.plan.definition is not None:
            planned = CodexAdapter(
                adapter_settings(runner, runner.plan.definition), interactive=True
            ).planned_limitations()
        else:
            planned = ()
        hooks_note = (_CODEX_HOOKS_NOTE,) if runner.hooks else ()
        return merged_limitations((*planned, *_CODEX_NOTES, *hooks_note))


class AcpLauncher(PersistentLauncher):
    """Any Agent Client Protocol agent, its command given as ``executable`` (or the ACP stand-in)."""

    def launch_sync(self, runner: AgentRunner) -> Launch:
        runner.cli = locate_cli(runner.executable, cli="acp", fallback_to_standin=False)
        definition = runner.plan.require_definition()
        mcp_config = runner.workspace / ".mcp.json"
        kernel = kernel_tools_of(runner)
        if kernel is not None and runner.tool_endpoint is not None:
            from elynav_nb.agents.kernel_tool_server import check_server_name_free

            check_server_name_free(mcp_config, runner.tool_endpoint)
        agent_identity = {"ELYNAV_AGENT_NAME": runner.agent_name} if runner.agent_name else {}
        environment = {
            **MCP_WAIT,
            **build_child_environment(
                os.environ,
                {**agent_identity, **runner.environment_overrides, **(kernel.environment if kernel else {})},
            ),
        }
        servers = acp_mcp_servers(read_workspace_mcp_servers(runner.workspace, environment), kernel)

        def set_session_id(session_id: str) -> None:
            runner.session_id = session_id

        wire = AcpWire(
            workspace=runner.workspace,
            session_id=runner.session_id if runner.resume_next_start else "",
            resume_asked=runner.resume_asked,
            set_session_id=set_session_id,
            mcp_servers=servers,
            environment=environment,
            start_timeout=runner.start_timeout,
            interrupt_timeout=runner.interrupt_timeout,
            permission_mode=runner.permission_mode,
            model=runner.model,
            instructions=definition.prompt if definition is not None else "",
            files=WorkspaceFiles(runner.workspace),
            terminals=WorkspaceTerminals(runner.workspace, environment, timeout=runner.turn_timeout),
            label="the ACP stand-in"
            if runner.cli.is_standin
            else f"the ACP agent {acp_agent_label(runner.cli.argv)}",
        )
        return Launch(argv=runner.cli.argv, cwd=runner.workspace, environment=environment, wire=wire)

    def limitations(self, runner: AgentRunner) -> tuple[str, ...]:
        hooks_note = (
            ("hooks= apply to kernel tools only: an ACP agent runs its own tools",) if runner.hooks else ()
        )
        return merged_limitations((*ACP_NOTES, *hooks_note))
