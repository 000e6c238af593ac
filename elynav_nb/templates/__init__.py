"""Agent-template admin: versioned templates, agents made from them (drift, explicit sync), a read/write
policy per agent, and the same five tools over MCP and OpenAI-style function calling.

Map of the package (pure modules do no I/O):

* ``domain`` (pure): ``AgentTemplate`` and its invariants, profiles, events;
* ``policy`` (pure): ``READ_ONLY_TOOLS``, ``WRITE_ACTION_TOOLS``, grants per agent;
* ``catalogue`` (pure): the five ``idea_template_*`` tools and the one dispatcher;
* ``index_format``, ``agent_files`` (pure): the on-disk formats;
* ``fileio``, ``store`` (I/O): the inter-process lock, the global store (atomic writes: ``elynav_nb._files``);
* ``service``: the use cases; ``workspace_agents``: agents from templates, drift, sync;
* ``server`` (MCP), ``openai_tools`` (function calling), ``command`` (``elynav mcp templates``);
* ``notebook``: the ``Templates`` object; its widget lives in ``elynav_nb.widgets.templates_view``.
"""

from elynav_nb.templates.catalogue import CATALOGUE, TOOL_NAMES, ToolSpec, dispatch
from elynav_nb.templates.domain import (
    DEFAULT_PROFILES,
    MAX_CONTENT_BYTES,
    AgentDriftDetected,
    AgentSynced,
    AgentTemplate,
    Profile,
    ProfileRegistry,
    TemplateCreated,
    TemplateDeleted,
    TemplateUpdated,
)
from elynav_nb.templates.notebook import Templates
from elynav_nb.templates.openai_tools import OpenAIToolInvoker, invoke, openai_tools
from elynav_nb.templates.policy import READ_ONLY_TOOLS, WRITE_ACTION_TOOLS, AgentPolicy, PolicyBook
from elynav_nb.templates.service import TemplateService
from elynav_nb.templates.store import TemplateStore, default_home
from elynav_nb.templates.workspace_agents import (
    AgentDrift,
    WorkspaceAgents,
    create_agent_from_template,
    detect_drift,
    sync_agent,
)

__all__ = [
    "CATALOGUE",
    "DEFAULT_PROFILES",
    "MAX_CONTENT_BYTES",
    "READ_ONLY_TOOLS",
    "TOOL_NAMES",
    "WRITE_ACTION_TOOLS",
    "AgentDrift",
    "AgentDriftDetected",
    "AgentPolicy",
    "AgentSynced",
    "AgentTemplate",
    "OpenAIToolInvoker",
    "PolicyBook",
    "Profile",
    "ProfileRegistry",
    "TemplateCreated",
    "TemplateDeleted",
    "TemplateService",
    "TemplateStore",
    "TemplateUpdated",
    "Templates",
    "ToolSpec",
    "WorkspaceAgents",
    "create_agent_from_template",
    "default_home",
    "detect_drift",
    "dispatch",
    "invoke",
    "openai_tools",
    "sync_agent",
]
