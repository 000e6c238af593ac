"""Claude Code agent files (``.claude/agents/<name>.md``): the public import path of the definitions.

Where it sits: in ``elynav_nb.agents``; the runners, the office, ``elynav agents install``, the
notebooks and the tests import from here. The code lives in two modules, one responsibility each:

* ``agent_definition.py``: ``AgentDefinition``, one agent file's text parsed, checked and written
  back (the format itself is ``elynav_nb._agent_file``, shared with the templates);
* ``agent_folders.py``: agent files in folders: ``builtin_agents``, ``load_agents``,
  ``find_agent_file`` (the file ``claude --agent NAME`` would use), ``install_agents``.

An agent file is YAML front matter between two ``---`` lines, a blank line, then the system prompt::

    ---
    name: elynav-sdr
    description: When to use this agent.
    tools: WebSearch, mcp__crm__search_accounts
    model: sonnet
    permissionMode: default
    cli: codex            # optional: claude (the default), codex or gemini
    ---

    You are ...

Data flow: a folder -> ``load_agents`` / ``find_agent_file`` -> text -> ``AgentDefinition.parse`` ->
``AgentDefinition`` -> ``to_markdown`` -> ``install_agents`` (atomic write), or
``to_cli_agents_json`` for the CLI's ``--agents``.
"""

from __future__ import annotations

from elynav_nb.agents.definitions.agent_definition import (
    AGENT_CLIS,
    ALLOWED_PERMISSION_MODES,
    AgentDefinition,
)
from elynav_nb.agents.definitions.agent_folders import (
    AGENTS_FOLDER_IN_WORKSPACE,
    builtin_agents,
    default_agents_folder,
    find_agent_file,
    install_agents,
    load_agents,
)

__all__ = [
    "AGENTS_FOLDER_IN_WORKSPACE",
    "AGENT_CLIS",
    "ALLOWED_PERMISSION_MODES",
    "AgentDefinition",
    "builtin_agents",
    "default_agents_folder",
    "find_agent_file",
    "install_agents",
    "load_agents",
]
