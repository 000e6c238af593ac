"""``ClaudeLauncher``: claude in stream-json mode (or its embedded stand-in), before the process runs.

Where it sits: the registry's launcher for (claude, stream-json), called by the persistent driver.
It installs the agent file when the workspace lacks it, names the workspace's ``.mcp.json``, adds
the kernel tools' SDK MCP server (on the protocol's own pipe: ``tools/kernel_tool_server.py``) and the
hooks' ``hook_callback`` server, and builds the command (``protocols/claude/launch.py``) and a new
``ClaudeStreamWire``. claude's ``--json-schema``, ``--max-turns`` and ``--max-budget-usd`` are flags of
the process: the driver asks for them in its ``LaunchRequest``.
"""

from __future__ import annotations

import logging
import os
from functools import partial
from typing import Any

from elynav_nb.agents.context import RunnerContext
from elynav_nb.agents.definitions import find_agent_file, install_agents
from elynav_nb.agents.hooks.rules import CLAUDE_HOOKS, claude_initialize_hooks
from elynav_nb.agents.limits import TurnLimits
from elynav_nb.agents.protocols.child_environment import build_child_environment
from elynav_nb.agents.protocols.claude.launch import (
    ClaudeLaunch,
    agents_with_structured_output,
    build_claude_argv,
)
from elynav_nb.agents.protocols.claude.wire import ClaudeStreamWire, RequestServer
from elynav_nb.agents.protocols.command import CliCommand, CliLocation
from elynav_nb.agents.protocols.launcher import Launch, LaunchRequest, PersistentLauncher

__all__ = ["CLAUDE_LOCATION", "ClaudeLauncher"]

logger = logging.getLogger("elynav_nb.agents")

CLAUDE_LOCATION = CliLocation(
    name="claude",
    environment_variable="ELYNAV_AGENT_CLI",
    install_hint=(
        "install Claude Code with `npm install -g @anthropic-ai/claude-code` and log in with `claude`, "
        "or run on the embedded stand-in with executable='standin'"
    ),
    split="whole",
    standin_module="elynav_nb.sandbox.claude.claude_standin",
    standin_script="elynav-claude-standin",
    reports_version=False,
)


class ClaudeLauncher(PersistentLauncher):
    """claude in stream-json mode (or its stand-in)."""

    location = CLAUDE_LOCATION
    schema_per_process = True

    def launch_sync(self, context: RunnerContext, request: LaunchRequest, command: CliCommand) -> Launch:
        options, plan, conversation = context.options, context.plan, context.conversation
        self._ensure_agent_installed(context)
        mcp_config = plan.workspace / ".mcp.json"
        resuming = conversation.resume_next_start
        endpoint = context.tools
        tool_flags: list[str] = []
        request_servers: dict[str, RequestServer] = {}
        agents: dict[str, dict[str, Any]] = {}
        if endpoint is not None:
            from elynav_nb.agents.tools.kernel_tool_server import (
                agents_with_kernel_tools,
                check_server_name_free,
                claude_tool_flags,
                mcp_message_server,
            )

            check_server_name_free(mcp_config, endpoint)
            tool_flags = claude_tool_flags(endpoint)
            request_servers["mcp_message"] = mcp_message_server(endpoint)
            agents = agents_with_kernel_tools(plan.definition, endpoint)
        schema = request.output_schema
        launch = ClaudeLaunch(
            agent_name=plan.agent_name,
            include_partial_messages=options.include_partial_messages,
            mcp_config_path=str(mcp_config) if mcp_config.is_file() else None,
            permission_mode=conversation.permission_mode,
            permission_prompts=options.permissions.prompts,
            session_id=None if resuming else conversation.session_id,
            resume_session_id=conversation.session_id if resuming else None,
            model=conversation.model,
            json_schema=schema.key if schema is not None else None,
            max_turns=request.limits.max_turns,
            max_budget_usd=request.limits.max_budget_usd,
            extra_arguments=(*tool_flags, *options.process.extra_arguments),
        )
        if schema is not None:
            agents = agents_with_structured_output(agents, plan.definition)
        if context.hooks:
            request_servers["hook_callback"] = partial(context.hooks.serve, CLAUDE_HOOKS)
        wire = ClaudeStreamWire(
            session_id=lambda: conversation.session_id,
            agent_name=plan.agent_name,
            permission_mode=conversation.permission_mode,
            partial_messages=options.include_partial_messages,
            start_timeout=options.bounds.start,
            interrupt_timeout=options.bounds.interrupt,
            request_servers=request_servers,
            agents=agents,
            initialize_hooks=claude_initialize_hooks(context.hooks.hook_set),
        )
        return Launch(
            argv=tuple(build_claude_argv(command.argv, launch)),
            cwd=plan.workspace,
            environment=build_child_environment(
                os.environ, {**context.agent_identity, **options.process.environment}
            ),
            wire=wire,
        )

    def restart_for_limits(self, running: TurnLimits, limits: TurnLimits, spent_usd: float) -> bool:
        """claude's bounds are flags of the process: ``--max-turns`` counts per turn, so a different
        bound needs a new process; ``--max-budget-usd`` counts the whole process, so a budget needs
        a process that has spent nothing yet."""
        if limits != running:
            return True
        return limits.max_budget_usd is not None and spent_usd > 0

    @staticmethod
    def _ensure_agent_installed(context: RunnerContext) -> None:
        """claude reads an agent from its file: a given or built-in definition is written where it looks.

        One rule for a name, whatever names it (``AgentRunner("elynav-sdr")``, a definition object,
        ``%%agent sdr``): a built-in agent runs in any workspace, its file written into
        ``<workspace>/.claude/agents/`` (logged at INFO); an unknown name is ``AGENT_NOT_FOUND``
        naming the agents that exist.
        """
        plan = context.plan
        name = plan.agent_name
        if name is None or find_agent_file(plan.workspace, name) is not None:
            return
        definition = plan.require_definition()  # AGENT_NOT_FOUND listing the choices
        assert definition is not None
        (path,) = install_agents(plan.workspace, [definition])
        logger.info("agent %s written to %s (claude reads agents there)", name, path)
