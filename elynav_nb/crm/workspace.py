"""Wire an agent workspace to the MCP servers: write its ``.mcp.json``.

Where it sits: used by whoever prepares a workspace for a ``claude`` agent (the notebooks, the
agent runners' callers). The runner passes ``--mcp-config <workspace>/.mcp.json`` when the file
exists (seed 000), and the CLI starts each declared server over stdio.

Each server is declared as ``{"command": <this Python>, "args": ["-m", <module>, ...]}``: the
absolute interpreter path works whatever PATH the agent CLI gets and whether or not a virtual
environment is activated, which the ``elynav`` console script on PATH does not guarantee. Paths
in the arguments are absolute (the CLI may start servers from another folder).

Three servers can be declared: ``crm`` (on a database file), ``templates`` (the template admin,
whose policy applies to the agent named by ``${ELYNAV_AGENT_NAME}``: the agent runner sets that
variable for each agent, and the CLI expands it in ``.mcp.json``) and ``docs`` (live La Suite Docs
editing; instance and credentials come from the environment, never from the file). Other
entries go in ``extra_servers``. Servers the user already declared in the file are kept; ours
are replaced. The file is written
atomically (``elynav_nb._files.write_atomically``: temporary file, then ``os.replace``), so an
agent never reads half a file; it is readable by its owner only (``0o600``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from elynav_nb._files import write_atomically
from elynav_nb.errors import InvalidInput, NotFound, StoreCorrupt

__all__ = [
    "MCP_CONFIG_FILE_NAME",
    "crm_server_entry",
    "docs_server_entry",
    "templates_server_entry",
    "write_mcp_config",
]

MCP_CONFIG_FILE_NAME = ".mcp.json"
CRM_SERVER_MODULE = "elynav_nb.crm.server"
AGENT_NAME_VARIABLE = "ELYNAV_AGENT_NAME"


def crm_server_entry(
    database_path: str | Path,
    *,
    python_executable: str | None = None,
    busy_timeout_seconds: float | None = None,
) -> dict[str, Any]:
    """The ``.mcp.json`` entry that starts the CRM server on ``database_path`` over stdio."""
    arguments = ["-m", CRM_SERVER_MODULE, "--db", str(Path(database_path).expanduser().resolve())]
    if busy_timeout_seconds is not None:
        arguments += ["--busy-timeout", f"{busy_timeout_seconds:g}"]
    return {"type": "stdio", "command": python_executable or sys.executable, "args": arguments, "env": {}}


def templates_server_entry(*, python_executable: str | None = None) -> dict[str, Any]:
    """The entry of ``elynav mcp templates``, for the agent the CLI runs as (``$ELYNAV_AGENT_NAME``)."""
    agent = f"${{{AGENT_NAME_VARIABLE}:-workspace}}"
    arguments = ["-m", "elynav_nb", "mcp", "templates", "--agent", agent]
    return {"type": "stdio", "command": python_executable or sys.executable, "args": arguments, "env": {}}


def docs_server_entry(*, python_executable: str | None = None) -> dict[str, Any]:
    """The entry of ``elynav mcp docs`` (instance and credentials from the environment); people
    see the agent's name (``$ELYNAV_AGENT_NAME``) on what it writes."""
    arguments = ["-m", "elynav_nb", "mcp", "docs"]
    environment = {"DOCS_MCP_USER_NAME": f"${{{AGENT_NAME_VARIABLE}:-Elynav bot}}"}
    return {
        "type": "stdio",
        "command": python_executable or sys.executable,
        "args": arguments,
        "env": environment,
    }


def _read_existing_servers(config_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The whole existing document and its ``mcpServers`` mapping (both empty when no file)."""
    if not config_path.exists():
        return {}, {}
    try:
        document = json.loads(config_path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise StoreCorrupt(f"{config_path} is not valid JSON; it was left untouched") from None
    servers = document.get("mcpServers", {}) if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise StoreCorrupt(f"{config_path} has no mcpServers object; it was left untouched")
    return document, dict(servers)


def write_mcp_config(
    workspace: str | Path,
    *,
    crm_database: str | Path | None = None,
    templates: bool = False,
    docs: bool = False,
    extra_servers: Mapping[str, Mapping[str, Any]] | None = None,
    python_executable: str | None = None,
) -> Path:
    """Write ``<workspace>/.mcp.json`` declaring the chosen servers; returns its path."""
    workspace_path = Path(workspace).expanduser().resolve()
    if not workspace_path.is_dir():
        raise NotFound(
            f"the workspace folder {workspace_path} does not exist", details={"path": str(workspace_path)}
        )
    new_servers: dict[str, dict[str, Any]] = {}
    if crm_database is not None:
        new_servers["crm"] = crm_server_entry(crm_database, python_executable=python_executable)
    if templates:
        new_servers["templates"] = templates_server_entry(python_executable=python_executable)
    if docs:
        new_servers["docs"] = docs_server_entry(python_executable=python_executable)
    for name, entry in (extra_servers or {}).items():
        if not isinstance(entry, Mapping) or "command" not in entry:
            raise InvalidInput(f"the MCP server entry {name!r} needs at least a 'command'")
        new_servers[name] = dict(entry)
    if not new_servers:
        raise InvalidInput("no MCP server to declare: pass crm_database, templates, docs or extra_servers")

    config_path = workspace_path / MCP_CONFIG_FILE_NAME
    document, servers = _read_existing_servers(config_path)
    servers.update(new_servers)
    document["mcpServers"] = servers
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"

    # 0o600 as the file always had: extra servers may carry secrets in their "env".
    write_atomically(config_path, text, mode=0o600)
    return config_path
