"""Shared pieces of the command builders of the process-per-turn CLIs, codex and gemini (pure).

Where it sits: imported by ``codex/launch.py`` and ``gemini/launch.py``. Nothing here touches the
disk or the process table: the runner reads ``.mcp.json`` and hands its ``mcpServers`` here, and
writes the ``ConfigFile`` objects the builders return before it spawns.

What it holds:

* ``TurnCommand``: everything one turn's process is started with (argv, environment, cwd; stdin
  is ``/dev/null``: ``codex exec`` waits for EOF on an open pipe, gemini reads a pipe's data as
  part of the prompt; a new session, so signals reach the whole group). A prompt longer than
  ``PROMPT_ARGUMENT_LIMIT`` bytes (Linux refuses one argument over 128 KiB) goes to stdin instead:
  ``stdin_data``, written then closed.
* ``ConfigFile``: a file a runner writes into its own config home (``config.toml``, ``settings.json``).
* ``McpServer``: one ``.mcp.json`` entry, read once (stdio or HTTP), ``${VAR}`` placeholders
  expanded against the child's environment (claude expands them itself; codex does not).
* ``KernelToolsServer``: the runner's own loopback MCP server (``agents/tools/loopback_server.py``):
  its URL, the variable that carries its secret to the child (never a file), its tool names.
* ``DefinitionTools``: an agent definition's ``tools`` split into built-in names and MCP tools per
  server (``mcp__<server>__<tool>``), so each builder maps what its CLI can filter and reports the rest.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elynav_nb.errors import InvalidInput

__all__ = [
    "PROMPT_ARGUMENT_LIMIT",
    "ConfigFile",
    "DefinitionTools",
    "KERNEL_TOOLS_TOKEN_VARIABLE",
    "KernelToolsServer",
    "McpServer",
    "TurnCommand",
    "bash_rule_prefix",
    "expand_placeholders",
    "prompt_goes_to_stdin",
    "read_mcp_servers",
    "split_definition_tools",
]

PROMPT_ARGUMENT_LIMIT = 100_000
"""Bytes of prompt passed as an argument; a longer prompt is written to the CLI's stdin."""

KERNEL_TOOLS_TOKEN_VARIABLE = "ELYNAV_KERNEL_TOOLS_TOKEN"
"""The child's environment variable that holds the kernel tool server's secret (codex and gemini read it)."""

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_BASH_RULE = re.compile(r"^Bash\((?P<command>[^()]*?)(?::\*|\s\*)?\)$")
_MCP_TOOL = re.compile(r"^mcp__(?P<server>[^_](?:[^_]|_(?!_))*)(?:__(?P<tool>.+))?$")


@dataclass(frozen=True)
class TurnCommand:
    """How to start one turn's process: ``new_session`` is always on; stdin is ``/dev/null`` unless
    ``stdin_data`` holds a long prompt (then ``stdin_devnull`` is false: write it, close the pipe)."""

    argv: tuple[str, ...]
    environment: Mapping[str, str] = field(repr=False)
    cwd: Path
    stdin_devnull: bool = True
    new_session: bool = True
    stdin_data: bytes = field(default=b"", repr=False)


def prompt_goes_to_stdin(prompt: str) -> bool:
    """Whether ``prompt`` is too long for one command-line argument (see ``PROMPT_ARGUMENT_LIMIT``)."""
    return len(prompt.encode("utf-8")) > PROMPT_ARGUMENT_LIMIT


@dataclass(frozen=True)
class ConfigFile:
    """A file the runner writes before its first turn (and again when its settings change)."""

    path: Path
    text: str


@dataclass(frozen=True)
class McpServer:
    """One MCP server of the workspace: ``command``/``args``/``env`` (stdio) or ``url``/``headers``."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    transport: str = "stdio"


def expand_placeholders(text: str, environment: Mapping[str, str]) -> str:
    """``${NAME}`` and ``${NAME:-default}`` replaced from ``environment`` (missing: the default or "")."""

    def replace(match: re.Match[str]) -> str:
        value = environment.get(match.group(1))
        if value is None:
            return match.group(2) or ""
        return value

    return _PLACEHOLDER.sub(replace, text)


def read_mcp_servers(mcp_config: Mapping[str, Any], environment: Mapping[str, str]) -> tuple[McpServer, ...]:
    """The servers of a parsed ``.mcp.json`` (``{"mcpServers": {...}}``), placeholders expanded.

    ``INVALID_INPUT`` for an entry that is neither a command nor a URL.
    """
    servers = mcp_config.get("mcpServers", {})
    if not isinstance(servers, Mapping):
        raise InvalidInput(".mcp.json: 'mcpServers' must be an object")
    found = []
    for name, entry in servers.items():
        if not isinstance(entry, Mapping):
            raise InvalidInput(f".mcp.json: server {name!r} must be an object")
        transport = str(entry.get("type") or ("http" if entry.get("url") else "stdio"))
        if transport == "stdio":
            command = entry.get("command")
            if not isinstance(command, str) or not command:
                raise InvalidInput(f".mcp.json: server {name!r} has no command")
            arguments = entry.get("args") or []
            env = entry.get("env") or {}
            found.append(
                McpServer(
                    name=str(name),
                    command=expand_placeholders(command, environment),
                    args=tuple(expand_placeholders(str(argument), environment) for argument in arguments),
                    env={
                        str(key): expand_placeholders(str(value), environment) for key, value in env.items()
                    },
                )
            )
            continue
        url = entry.get("url")
        if not isinstance(url, str) or not url:
            raise InvalidInput(f".mcp.json: server {name!r} ({transport}) has no url")
        headers = entry.get("headers") or {}
        found.append(
            McpServer(
                name=str(name),
                url=expand_placeholders(url, environment),
                headers={
                    str(key): expand_placeholders(str(value), environment) for key, value in headers.items()
                },
                transport=transport,
            )
        )
    return tuple(found)


@dataclass(frozen=True)
class KernelToolsServer:
    """The runner's kernel tool server as a CLI reaches it: ``url`` (``http://127.0.0.1:PORT/mcp``), the
    secret sent as ``Authorization: Bearer`` (put in the child's environment as ``token_variable``),
    the tools' names and their timeout (the CLI's own timeout is set above it)."""

    name: str
    url: str
    token: str = field(repr=False)
    tool_names: tuple[str, ...] = ()
    tool_timeout: float = 60.0
    token_variable: str = KERNEL_TOOLS_TOKEN_VARIABLE

    @property
    def environment(self) -> dict[str, str]:
        return {self.token_variable: self.token}

    def check_name_free(self, servers: Iterable[McpServer]) -> None:
        """``INVALID_INPUT`` when the workspace's ``.mcp.json`` already names a server like ours."""
        refuse_taken_server_name(self.name, (server.name for server in servers))


def refuse_taken_server_name(name: str, taken: Iterable[str], source: str = ".mcp.json") -> None:
    """``INVALID_INPUT`` when ``taken`` (the servers ``source`` defines) holds the kernel tools' server ``name``."""
    if name in set(taken):
        raise InvalidInput(
            f"{source} already defines an MCP server named {name!r}: the kernel tools are"
            " served under that name; rename that server",
            details={"server": name},
        )


@dataclass(frozen=True)
class DefinitionTools:
    """An agent definition's tool list, split. ``restricted`` is false when the definition lists none.

    ``mcp`` maps a server to the tools listed for it; an empty tuple means all of its tools (the
    definition listed ``mcp__<server>`` alone).
    """

    restricted: bool
    builtin: tuple[str, ...] = ()
    mcp: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def allows_server(self, server: str) -> bool:
        """Whether any tool of ``server`` may be offered (all of them when unrestricted)."""
        return not self.restricted or server in self.mcp


def bash_rule_prefix(tool: str) -> tuple[str, ...]:
    """The command words a claude ``Bash(...)`` rule allows: ``Bash(elynav ask:*)`` -> ``("elynav", "ask")``.

    ``()`` for anything else (a bare ``Bash``, another tool, a rule whose words cannot be split).
    """
    match = _BASH_RULE.match(tool.strip())
    if not match:
        return ()
    try:
        return tuple(shlex.split(match.group("command")))
    except ValueError:
        return ()


def split_definition_tools(tools: Iterable[str]) -> DefinitionTools:
    """``("Read", "mcp__crm__get_account")`` -> builtin ``("Read",)``, mcp ``{"crm": ("get_account",)}``."""
    listed = [tool.strip() for tool in tools if tool.strip()]
    builtin: list[str] = []
    mcp: dict[str, list[str]] = {}
    whole_servers: set[str] = set()
    for tool in listed:
        match = _MCP_TOOL.match(tool)
        if match and match.group("tool"):
            mcp.setdefault(match.group("server"), []).append(match.group("tool"))
        elif match:
            whole_servers.add(match.group("server"))
        else:
            builtin.append(tool)
    return DefinitionTools(
        restricted=bool(listed),
        builtin=tuple(builtin),
        mcp={
            **{server: tuple(names) for server, names in mcp.items() if server not in whole_servers},
            **{server: () for server in whole_servers},
        },
    )
