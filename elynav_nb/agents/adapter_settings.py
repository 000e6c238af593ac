"""What a codex or gemini runner hands its adapter: the agent definition and the runner's settings.

Where it sits: called by the per-turn driver (codex exec, gemini) and the codex app-server launcher;
turns the runner's arguments and the definition of its plan (given, found in the workspace, or built
in: read once, by ``plan.py``) into the ``PerTurnSettings`` an adapter plans from, with the address
and secret of the runner's kernel tool server when it serves. No I/O here.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from elynav_nb.agents.cli.per_turn_launch import KernelToolsServer
from elynav_nb.agents.cli_adapter import PerTurnSettings, default_home
from elynav_nb.agents.definitions import AgentDefinition

if TYPE_CHECKING:
    from elynav_nb.agents.runner import AgentRunner

__all__ = ["adapter_settings", "kernel_tools_of"]


def adapter_settings(runner: AgentRunner, definition: AgentDefinition | None) -> PerTurnSettings:
    """The runner's settings for its adapter (the definition's prompt, tools and model)."""
    agent_identity = {"ELYNAV_AGENT_NAME": runner.agent_name} if runner.agent_name else {}
    return PerTurnSettings(
        workspace=runner.workspace,
        home=runner.config_home or default_home(runner.workspace, runner.cli_name, runner.agent_name),
        system_prompt=definition.prompt if definition is not None else "",
        tools=definition.tools if definition is not None else (),
        model=runner.model or (definition.model if definition is not None else None),
        permission_mode=runner.permission_mode,
        permission_prompts=runner.permission_prompts,
        parent_environment=dict(os.environ),
        environment_overrides={**agent_identity, **runner.environment_overrides},
        cli_config=runner.cli_config,
        extra_arguments=runner.extra_arguments,
        kernel_tools=kernel_tools_of(runner),
    )


def kernel_tools_of(runner: AgentRunner) -> KernelToolsServer | None:
    """How the CLI reaches the runner's loopback tool server (None: no tools, or not serving yet)."""
    server = runner.tool_server
    if server is None or not server.is_serving or runner.tools is None:
        return None
    return KernelToolsServer(
        name=server.endpoint.server_name,
        url=server.url,
        token=server.secret,
        tool_names=tuple(runner.tools.names),
        tool_timeout=runner.tools.tool_timeout,
    )
