"""elynav_nb.crm: a SQLite CRM served over MCP, agent workspaces wired to it, analysis in pandas.

Modules (one job each): ``schema`` (DDL and migrations), ``domain`` (records, validation, search
quoting, cursors; pure), ``store`` (the CRM's reads and writes) over ``database`` (the SQLite
connection, migrations, typed errors), ``server`` (the MCP server; its command line: ``command`` and
``stdio_options``), ``session`` (one MCP session across cells), ``frames`` (any MCP result -> DataFrame), ``columns`` (CRM dtypes,
Arrow-backed), ``reader`` (read-only frames through Arrow), ``analysis`` (ready-made analyses), ``demo_data`` and
``demo_database`` (deterministic demo CRM), ``workspace`` (``.mcp.json``), ``crm`` (``Crm``).

Typical use::

    create_demo_database("crm.sqlite", accounts=200, seed=7)
    crm = Crm.open("crm.sqlite")
    crm.accounts()                                    # read-only DataFrame
    await crm.call("search_accounts", query="acme")   # through MCP, as a DataFrame
    await crm.aclose()

The names below load on first use (PEP 562), so ``python -m elynav_nb.crm.server`` starts
without importing pandas.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elynav_nb.crm.analysis import (
        activities_per_agent_per_week,
        pipeline_by_stage,
        plot_activities_per_agent_per_week,
        plot_pipeline_by_stage,
        untouched_accounts,
    )
    from elynav_nb.crm.columns import with_numpy_dtypes
    from elynav_nb.crm.crm import Crm
    from elynav_nb.crm.demo_database import create_demo_database
    from elynav_nb.crm.frames import mcp_result_to_frame
    from elynav_nb.crm.server import build_crm_server
    from elynav_nb.crm.store import CrmStore
    from elynav_nb.crm.workspace import crm_server_entry, write_mcp_config

_EXPORTS: dict[str, str] = {
    "Crm": "elynav_nb.crm.crm",
    "CrmStore": "elynav_nb.crm.store",
    "activities_per_agent_per_week": "elynav_nb.crm.analysis",
    "build_crm_server": "elynav_nb.crm.server",
    "create_demo_database": "elynav_nb.crm.demo_database",
    "crm_server_entry": "elynav_nb.crm.workspace",
    "mcp_result_to_frame": "elynav_nb.crm.frames",
    "pipeline_by_stage": "elynav_nb.crm.analysis",
    "plot_activities_per_agent_per_week": "elynav_nb.crm.analysis",
    "plot_pipeline_by_stage": "elynav_nb.crm.analysis",
    "untouched_accounts": "elynav_nb.crm.analysis",
    "with_numpy_dtypes": "elynav_nb.crm.columns",
    "write_mcp_config": "elynav_nb.crm.workspace",
}

__all__ = [
    "Crm",
    "CrmStore",
    "activities_per_agent_per_week",
    "build_crm_server",
    "create_demo_database",
    "crm_server_entry",
    "mcp_result_to_frame",
    "pipeline_by_stage",
    "plot_activities_per_agent_per_week",
    "plot_pipeline_by_stage",
    "untouched_accounts",
    "with_numpy_dtypes",
    "write_mcp_config",
]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'elynav_nb.crm' has no attribute {name!r}")
    return getattr(importlib.import_module(module_name), name)


def __dir__() -> list[str]:
    return sorted(__all__)
