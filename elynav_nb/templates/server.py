"""The template tools over MCP (SDK 2.x ``MCPServer``), for one agent identity.

Where it sits: a thin transport over ``catalogue.dispatch``. ``tools/list`` shows only the
catalogued tools the agent's policy allows, with the catalogue's JSON schemas and the
read-only / destructive annotations; ``tools/call`` runs ``dispatch`` in a worker thread (the
store blocks on file locks) and turns the outcome into a ``CallToolResult``:

* success: ``structured_content`` = the result object, plus the same JSON as one text block;
* a typed error: the mapping every elynav MCP server shares (``elynav_nb/_mcp_errors.py``):
  ``is_error=True``, text ``"CODE: message"`` (then the details as JSON, if any),
  ``structured_content`` = ``{code, message[, details]}`` (the same payload the OpenAI invoker returns);
* anything else (a bug, a full disk): ``is_error=True`` with only ``Error executing tool <name>``;
  the traceback stays in the server log (the OpenAI invoker lets such exceptions propagate).

The policy check inside ``dispatch`` comes first, so calling a hidden write tool by name is
refused with ``NOT_ALLOWED`` before any effect. ``elynav mcp templates --agent NAME`` (see
``command.py``) serves this over stdio.
"""

from __future__ import annotations

import json
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import UnexpectedToolError
from mcp.types import CallToolResult, TextContent, Tool, ToolAnnotations

from elynav_nb._mcp_errors import typed_error_result
from elynav_nb._mcp_stdio import AnsweringStdio
from elynav_nb.errors import ElynavError
from elynav_nb.templates.catalogue import CATALOGUE, ToolSpec, dispatch
from elynav_nb.templates.policy import AgentPolicy
from elynav_nb.templates.service import TemplateService

__all__ = ["TemplatesMCPServer", "build_server"]

_INSTRUCTIONS = (
    "Administer the global IdeA agent templates. Reading is always allowed; create, update and delete "
    "are refused unless granted to this agent. Pass expectedVersion to update and delete to avoid "
    "overwriting someone else's change (VERSION_CONFLICT). Updating a template never changes existing "
    "agents: they drift until someone syncs them."
)


def _annotations(spec: ToolSpec) -> ToolAnnotations:
    if spec.read_only:
        return ToolAnnotations(title=spec.title, read_only_hint=True, open_world_hint=False)
    return ToolAnnotations(
        title=spec.title,
        read_only_hint=False,
        destructive_hint=spec.destructive,
        idempotent_hint=spec.idempotent,
        open_world_hint=False,
    )


def _mcp_tool(spec: ToolSpec) -> Tool:
    return Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=_annotations(spec),
    )


class TemplatesMCPServer(AnsweringStdio, MCPServer):
    """An ``MCPServer`` whose tools are the template catalogue, filtered by one agent's policy."""

    def __init__(self, service: TemplateService, policy: AgentPolicy) -> None:
        super().__init__("elynav-templates", version="0.1.0", instructions=_INSTRUCTIONS)
        self.service = service
        self.policy = policy

    async def list_tools(self) -> list[Tool]:
        """The catalogued tools this agent may call (reads always; writes only when granted)."""
        tools: list[Tool] = []
        for spec in CATALOGUE:
            if self.policy.allows(spec.name):
                tools.append(_mcp_tool(spec))
        return tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult:
        """Run one tool through the shared dispatcher; typed errors become ``is_error`` results."""
        try:
            result = await anyio.to_thread.run_sync(dispatch, self.service, self.policy, name, arguments)
        except ElynavError as error:
            return typed_error_result(error)
        except Exception as error:  # a bug or an OS failure: logged by the SDK, not shown to the model
            raise UnexpectedToolError(f"Error executing tool {name}") from error
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
            structured_content=result,
        )


def build_server(
    agent: str, service: TemplateService | None = None, grants: list[str] | None = None
) -> TemplatesMCPServer:
    """The MCP server for ``agent``: durable grants from ``policy.json`` plus the ephemeral ``grants``."""
    template_service = service if service is not None else TemplateService.open()
    book = template_service.store.load_policy_book()
    if grants:
        book = book.with_grants(agent, grants)
    return TemplatesMCPServer(template_service, book.for_agent(agent))
