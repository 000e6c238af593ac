"""elynav_nb: the Elynav agent platform in JupyterLab.

The names most notebooks need are available here; each capability keeps its full surface in its
own sub-package (``elynav_nb.agents``, ``elynav_nb.office``, ``elynav_nb.templates``,
``elynav_nb.crm``, ``elynav_nb.docs``, ``elynav_nb.notebook``). Capabilities are imported on first use of one of their names, so
``import elynav_nb`` stays fast for scripts, the ``elynav`` CLI and MCP servers. Importing
this package has no side effect: no event-loop policy, no nest_asyncio, no display, no logging
configuration, except one switch from outside: with ``ELYNAV_LOG=debug`` (or ``info``, ``warning``,
``error``) set, the import installs one stderr handler on the ``elynav_nb`` logger (``_logging.py``). In IPython,
``%load_ext elynav_nb`` adds the ``%%agent`` and ``%%ask`` magics (``elynav_nb.magics``).
"""

from __future__ import annotations

import importlib
import os as _os
from typing import TYPE_CHECKING, Any

from elynav_nb.errors import ElynavError

if _os.environ.get("ELYNAV_LOG"):  # never otherwise: a library does not configure logging by default
    importlib.import_module("elynav_nb._logging").configure_from_environment()

if TYPE_CHECKING:
    from elynav_nb.agents import (
        AgentDefinition,
        AgentRunner,
        RunnerManager,
        Turn,
        TurnResult,
        install_agents,
        load_agents,
    )
    from elynav_nb.agents.tools import agent_tool, df_tools, kernel_tools
    from elynav_nb.crm import Crm, write_mcp_config
    from elynav_nb.notebook import LiveNotebook, notebook_tools
    from elynav_nb.office import Office
    from elynav_nb.templates import Templates

__version__ = "0.1.0"

_LAZY_NAMES = {
    "AgentDefinition": "elynav_nb.agents",
    "AgentRunner": "elynav_nb.agents",
    "RunnerManager": "elynav_nb.agents",
    "Turn": "elynav_nb.agents",
    "TurnResult": "elynav_nb.agents",
    "install_agents": "elynav_nb.agents",
    "load_agents": "elynav_nb.agents",
    "agent_tool": "elynav_nb.agents.tools",
    "df_tools": "elynav_nb.agents.tools",
    "kernel_tools": "elynav_nb.agents.tools",
    "Office": "elynav_nb.office",
    "Templates": "elynav_nb.templates",
    "Crm": "elynav_nb.crm",
    "write_mcp_config": "elynav_nb.crm",
    "LiveNotebook": "elynav_nb.notebook",
    "notebook_tools": "elynav_nb.notebook",
}

__all__ = [
    "AgentDefinition",
    "AgentRunner",
    "Crm",
    "ElynavError",
    "LiveNotebook",
    "Office",
    "RunnerManager",
    "Templates",
    "Turn",
    "TurnResult",
    "__version__",
    "agent_tool",
    "df_tools",
    "install_agents",
    "kernel_tools",
    "load_agents",
    "notebook_tools",
    "write_mcp_config",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext elynav_nb``: the ``%%agent`` / ``%%ask`` magics (``elynav_nb.magics``)."""
    from elynav_nb.magics import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from elynav_nb.magics import unload_ipython_extension as unload

    unload(ipython)


def __getattr__(name: str) -> Any:
    module_name = _LAZY_NAMES.get(name)
    if module_name is None:
        raise AttributeError(f"module 'elynav_nb' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
