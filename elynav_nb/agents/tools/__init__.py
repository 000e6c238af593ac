"""elynav_nb.agents.tools: Python functions and DataFrames of the kernel offered to agents as tools.

The kernel-side core of "agents that work inside the kernel": ``@agent_tool`` makes a plain or
``async`` function a ``KernelTool`` (name, description, input JSON Schema, ``await tool.call(args)``
-> ``ToolOutcome``); ``kernel_tools(...)`` gathers tools into a ``KernelToolSet`` with one timeout and
one result bound; ``df_tools(frame)`` is a ready-made read-only set over a DataFrame. The MCP side:
``mcp_endpoint`` (MCP's JSON-RPC over a set, no I/O), ``loopback_http`` (the streamable HTTP rules:
secret, Host/Origin, sessions) and ``loopback_server`` (the loopback HTTP server codex and gemini reach;
claude's transport is ``kernel_tool_server.py``, the SDK MCP server on claude's own pipe). Nothing here starts a CLI.

Modules: ``docstrings`` (summary and parameter texts), ``arguments`` (schema and strict checks, via
pydantic), ``json_values`` (results as bounded JSON), ``outcome`` (``ToolOutcome``, redacted tool
errors), ``kernel_tool`` (the decorator and the bounded call), ``tool_set`` (the set),
``query_rules`` / ``query_eval`` (the safe pandas-query subset), ``frame_tools`` (``df_tools``).
``df_tools`` is imported on first use, so that ``@agent_tool`` alone does not import pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from elynav_nb.agents.tools.kernel_tool import KernelTool, agent_tool
from elynav_nb.agents.tools.outcome import ToolOutcome
from elynav_nb.agents.tools.tool_set import KernelToolSet, kernel_tools

if TYPE_CHECKING:
    from elynav_nb.agents.tools.frame_tools import df_tools

__all__ = ["KernelTool", "KernelToolSet", "ToolOutcome", "agent_tool", "df_tools", "kernel_tools"]


def __getattr__(name: str) -> Any:
    if name != "df_tools":
        raise AttributeError(f"module 'elynav_nb.agents.tools' has no attribute {name!r}")
    value = importlib.import_module("elynav_nb.agents.tools.frame_tools").df_tools
    globals()[name] = value
    return value
