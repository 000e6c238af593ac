"""``AcpLauncher``: any Agent Client Protocol agent, its command given as ``executable`` (or the ACP stand-in).

Where it sits: the registry's launcher for (acp, stdio), called by the persistent driver. It lays the
agent's environment (the runner's, the kernel tool server's secret), lists the MCP servers for
``session/new`` (the workspace's ``.mcp.json`` and the kernel tools, in ACP's form: ``protocols/acp/launch.py``)
and builds a new ``AcpWire`` with the client's services: files confined to the workspace
(``files.py``) and terminals killed with their turn (``terminals.py``).
"""

from __future__ import annotations

import os

from elynav_nb.agents.context import RunnerContext
from elynav_nb.agents.protocols.acp.files import WorkspaceFiles
from elynav_nb.agents.protocols.acp.launch import MCP_WAIT, acp_agent_label, acp_mcp_servers
from elynav_nb.agents.protocols.acp.terminals import WorkspaceTerminals
from elynav_nb.agents.protocols.acp.wire import AcpWire
from elynav_nb.agents.protocols.child_environment import build_child_environment
from elynav_nb.agents.protocols.command import CliCommand, CliLocation
from elynav_nb.agents.protocols.launcher import Launch, LaunchRequest, PersistentLauncher
from elynav_nb.agents.protocols.per_turn import read_workspace_mcp_servers

__all__ = ["ACP_HOOK_NOTES", "ACP_LOCATION", "AcpLauncher"]

ACP_LOCATION = CliLocation(
    name="acp",
    environment_variable="ELYNAV_ACP_AGENT",
    install_hint=(
        "pass the ACP agent's command as executable=[...] (for example ['gemini', '--acp'] or "
        "['npx', '@zed-industries/codex-acp']), or set ELYNAV_ACP_AGENT; executable='standin' runs the "
        "embedded ACP stand-in (not a model)"
    ),
    split="shell",
    on_path=False,
    standin_module="elynav_nb.sandbox.acp.acp_standin",
    standin_script="elynav-acp-standin",
    reports_version=False,
)
ACP_HOOK_NOTES = "hooks= apply to kernel tools only: an ACP agent runs its own tools"


class AcpLauncher(PersistentLauncher):
    """Any ACP agent over stdio (see the module docstring)."""

    location = ACP_LOCATION

    def launch_sync(self, context: RunnerContext, request: LaunchRequest, command: CliCommand) -> Launch:
        options, plan, conversation = context.options, context.plan, context.conversation
        definition = plan.require_definition()
        mcp_config = plan.workspace / ".mcp.json"
        kernel = request.kernel_tools
        if kernel is not None and context.tools is not None:
            from elynav_nb.agents.tools.kernel_tool_server import check_server_name_free

            check_server_name_free(mcp_config, context.tools)
        environment = {
            **MCP_WAIT,
            **build_child_environment(
                os.environ,
                {
                    **context.agent_identity,
                    **options.process.environment,
                    **(kernel.environment if kernel else {}),
                },
            ),
        }
        servers = acp_mcp_servers(read_workspace_mcp_servers(plan.workspace, environment), kernel)

        def set_session_id(session_id: str) -> None:
            conversation.session_id = session_id

        wire = AcpWire(
            workspace=plan.workspace,
            session_id=conversation.session_id if conversation.resume_next_start else "",
            resume_asked=conversation.resume_asked,
            set_session_id=set_session_id,
            mcp_servers=servers,
            environment=environment,
            start_timeout=options.bounds.start,
            interrupt_timeout=options.bounds.interrupt,
            permission_mode=conversation.permission_mode,
            model=conversation.model,
            instructions=definition.prompt if definition is not None else "",
            files=WorkspaceFiles(plan.workspace),
            terminals=WorkspaceTerminals(plan.workspace, environment, timeout=options.bounds.turn),
            label="the ACP stand-in"
            if command.is_standin
            else f"the ACP agent {acp_agent_label(command.argv)}",
        )
        return Launch(argv=command.argv, cwd=plan.workspace, environment=environment, wire=wire)
