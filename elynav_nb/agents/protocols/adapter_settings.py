"""What a codex or gemini runner hands its adapter: the agent definition and the runner's settings.

Where it sits: called by the per-turn driver (codex exec, gemini) and the codex app-server launcher;
turns the runner's options, its live conversation settings (model, permission mode) and the
definition of its plan (given, found in the workspace, or built in: read once by the registry's
``plan_runner``) into the ``PerTurnSettings`` an adapter plans from, with the address and secret of
the runner's kernel tool server when it serves (``kernel_tools_server``). No I/O here.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from elynav_nb.agents.context import RunnerContext
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.protocols.launch import KernelToolsServer
from elynav_nb.agents.protocols.per_turn import PerTurnSettings, default_home

if TYPE_CHECKING:
    from elynav_nb.agents.tools.loopback_server import LoopbackMcpServer
    from elynav_nb.agents.tools.tool_set import KernelToolSet

__all__ = ["adapter_settings", "kernel_tools_server"]


def adapter_settings(
    context: RunnerContext, definition: AgentDefinition | None, kernel_tools: KernelToolsServer | None = None
) -> PerTurnSettings:
    """The runner's settings for its adapter (the definition's prompt, tools and model)."""
    options, plan, conversation = context.options, context.plan, context.conversation
    process = options.process
    return PerTurnSettings(
        workspace=plan.workspace,
        home=process.config_home or default_home(plan.workspace, plan.cli, plan.agent_name),
        system_prompt=definition.prompt if definition is not None else "",
        tools=definition.tools if definition is not None else (),
        model=conversation.model or (definition.model if definition is not None else None),
        permission_mode=conversation.permission_mode,
        permission_prompts=options.permissions.prompts,
        parent_environment=dict(os.environ),
        environment_overrides={**context.agent_identity, **process.environment},
        cli_config=dict(process.cli_config),
        extra_arguments=process.extra_arguments,
        kernel_tools=kernel_tools,
    )


def kernel_tools_server(
    server: LoopbackMcpServer | None, tool_set: KernelToolSet | None
) -> KernelToolsServer | None:
    """How the CLI reaches the runner's loopback tool server (None: no tools, or not serving yet)."""
    if server is None or not server.is_serving or tool_set is None:
        return None
    return KernelToolsServer(
        name=server.endpoint.server_name,
        url=server.url,
        token=server.secret,
        tool_names=tuple(tool_set.names),
        tool_timeout=tool_set.tool_timeout,
    )
