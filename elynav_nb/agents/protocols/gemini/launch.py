"""Pure builder of a gemini runner: its settings home, environment and per-turn command line.

Where it sits: the runner (phase 2) calls ``plan_gemini_runner`` once per runner, writes the
returned ``config_files``, then ``build_gemini_turn`` for each turn and spawns what it returns.
Nothing here touches the disk or the process table.

One process per turn (design note ``codex-gemini-protocol.md`` §2)::

    GEMINI_CLI_HOME=<runner home> GEMINI_CLI_TRUST_WORKSPACE=true [GOOGLE_GEMINI_BASE_URL=… GEMINI_API_KEY=…] \\
    gemini --output-format stream-json --approval-mode MODE [-m MODEL] [--resume <session id>] -p PROMPT   </dev/null

The runner home holds ``.gemini/settings.json`` (``mcpServers`` from the workspace's ``.mcp.json``
with ``trust: true`` and ``includeTools`` from the definition, and ``kernel``, the runner's loopback
tool server, when it has kernel tools: ``kernel_tools_settings``; ``tools.core`` / ``tools.allowed``
mapped from the definition's claude tool names; the auth type ``gemini-api-key`` when a key or
base URL is used: without it a base URL makes gemini pick ``gateway`` auth and exit 41) and
``.gemini/GEMINI.md``, the agent's system prompt (gemini appends its global context file to its
own system instruction). Sessions live under that home too, so ``--resume`` needs the same home.
``GEMINI_CLI_NO_RELAUNCH=true`` keeps gemini in one node process, which then honours signals
itself (the relaunching parent ignores SIGINT/SIGTERM); the group is still signalled.

Permission modes: ``bypassPermissions`` -> ``yolo``; ``acceptEdits`` -> ``auto_edit``; ``plan`` ->
``plan``; any other -> ``default`` (headless gemini never asks: tools needing a confirmation are
not offered at all). ``limitations`` lists what gemini cannot honour: claude tools it has no
counterpart for, claude model aliases, per-turn cost.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elynav_nb.agents.protocols.launch import (
    ConfigFile,
    KernelToolsServer,
    McpServer,
    TurnCommand,
    prompt_goes_to_stdin,
    split_definition_tools,
)
from elynav_nb.errors import InvalidInput

__all__ = [
    "CLAUDE_TO_GEMINI_TOOLS",
    "KERNEL_TOKEN_NOTE",
    "GeminiRunnerPlan",
    "build_gemini_turn",
    "gemini_mcp_tool_name",
    "gemini_tool_names",
    "kernel_tools_settings",
    "plan_gemini_runner",
]

CLAUDE_TO_GEMINI_TOOLS = {
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "replace",
    "MultiEdit": "replace",
    "Bash": "run_shell_command",
    "Grep": "grep_search",
    "Glob": "glob",
    "LS": "list_directory",
    "WebFetch": "web_fetch",
    "WebSearch": "google_web_search",
    "TodoWrite": "write_todos",
}
_APPROVAL_MODES = {"bypassPermissions": "yolo", "acceptEdits": "auto_edit", "plan": "plan"}
_CLAUDE_MODEL_ALIASES = frozenset({"opus", "sonnet", "haiku", "inherit", "opusplan", "default"})
MCP_TIMEOUT_MS = 60_000
KERNEL_TOKEN_NOTE = (
    "gemini hands its whole environment to its shell commands and stdio MCP servers, the kernel tool"
    " server's secret (ELYNAV_KERNEL_TOOLS_TOKEN) included: what the agent runs could call the kernel"
    " tools it already has (gemini's environment redaction would strip every secret-like variable)"
)
GEMINI_TOOL_NAME_LIMIT = 63  # gemini cuts a longer MCP tool name (and then asks before calling it)
_NOT_IN_A_TOOL_NAME = re.compile(r"[^a-zA-Z0-9_\-.:]")


def gemini_mcp_tool_name(server: str, tool: str) -> str:
    """The name gemini 0.61.0 gives an MCP tool: ``mcp_<server>_<tool>``, characters it does not take as ``_``."""
    return "mcp_" + _NOT_IN_A_TOOL_NAME.sub("_", f"{server}_{tool}")


def kernel_tools_settings(
    kernel_tools: KernelToolsServer, mcp_servers: Sequence[McpServer]
) -> dict[str, Any]:
    """``mcpServers.kernel``: the runner's loopback server over streamable HTTP (``httpUrl``), trusted (its
    tools are offered and run without asking, as the user handed them over).

    The secret stays out of the file: the header says ``${ELYNAV_KERNEL_TOOLS_TOKEN}``, which gemini
    expands from its environment when it reads its settings (``resolveEnvVarsInObject``).
    ``INVALID_INPUT`` for a kernel tool whose gemini name would be cut (over 63 characters) or could
    be taken by a tool of another server (gemini keeps the last tool registered under a name: a
    server ``kernel_x`` with a tool ``y`` is ``mcp_kernel_x_y``, as is the kernel tool ``x_y``).
    """
    kernel_tools.check_name_free(mcp_servers)
    others = [
        _NOT_IN_A_TOOL_NAME.sub("_", server.name)
        for server in mcp_servers
        if server.name != kernel_tools.name
    ]
    prefix = kernel_tools.name + "_"
    for tool in kernel_tools.tool_names:
        qualified = gemini_mcp_tool_name(kernel_tools.name, tool)
        if len(qualified) > GEMINI_TOOL_NAME_LIMIT:
            raise InvalidInput(
                f"kernel tool {tool!r} would be {qualified!r} in gemini, over its {GEMINI_TOOL_NAME_LIMIT}-character"
                " limit (gemini would cut the name): give it a shorter name",
                details={"tool": tool},
            )
        for other in others:
            if other.startswith(prefix) and tool.startswith(other[len(prefix) :] + "_"):
                raise InvalidInput(
                    f"kernel tool {tool!r} ({qualified!r} in gemini) could collide with a tool of the MCP server"
                    f" {other!r} of .mcp.json: rename the tool or the server",
                    details={"tool": tool, "server": other},
                )
    return {
        "httpUrl": kernel_tools.url,
        "headers": {"Authorization": f"Bearer ${{{kernel_tools.token_variable}}}"},
        "trust": True,
        "timeout": int((kernel_tools.tool_timeout + 15.0) * 1000),
    }


def gemini_tool_names(claude_tools: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Claude built-in tool names -> (gemini names, names gemini has no counterpart for).

    ``Bash(elynav ask:*)`` becomes ``run_shell_command(elynav ask)`` (gemini's command-prefix rule).
    """
    mapped: list[str] = []
    unknown: list[str] = []
    for tool in claude_tools:
        name, _, rule = tool.partition("(")
        gemini_name = CLAUDE_TO_GEMINI_TOOLS.get(name.strip())
        if gemini_name is None:
            unknown.append(tool)
            continue
        if rule and gemini_name == "run_shell_command":
            prefix = rule.rstrip(")").removesuffix(":*").removesuffix("*").strip()
            mapped.append(f"run_shell_command({prefix})" if prefix else gemini_name)
        elif gemini_name not in mapped:
            mapped.append(gemini_name)
    return tuple(mapped), tuple(unknown)


@dataclass(frozen=True)
class GeminiRunnerPlan:
    """What every turn of one gemini runner shares. ``limitations`` are for the runner's repr and docs."""

    workspace: Path
    gemini_home: Path
    config_files: tuple[ConfigFile, ...]
    environment_overrides: Mapping[str, str] = field(repr=False)
    approval_mode: str = "default"
    model: str | None = None
    mcp_server_names: tuple[str, ...] = ()
    limitations: tuple[str, ...] = ()
    extra_arguments: tuple[str, ...] = ()


def _server_settings(server: McpServer, include_tools: tuple[str, ...] | None) -> dict[str, Any]:
    entry: dict[str, Any]
    if server.transport == "stdio":
        entry = {"command": server.command, "args": list(server.args)}
        if server.env:
            entry["env"] = dict(server.env)
    elif server.transport == "sse":
        entry = {"url": server.url}
    else:
        entry = {"httpUrl": server.url}
    if server.headers:
        entry["headers"] = dict(server.headers)
    entry["trust"] = True
    entry["timeout"] = MCP_TIMEOUT_MS
    if include_tools:
        entry["includeTools"] = list(include_tools)
    return entry


def plan_gemini_runner(
    *,
    workspace: Path,
    gemini_home: Path,
    system_prompt: str = "",
    tools: Sequence[str] = (),
    mcp_servers: Sequence[McpServer] = (),
    model: str | None = None,
    permission_mode: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    parent_environment: Mapping[str, str] | None = None,
    extra_settings: Mapping[str, Any] | None = None,
    extra_arguments: Sequence[str] = (),
    kernel_tools: KernelToolsServer | None = None,
) -> GeminiRunnerPlan:
    """The settings home, environment and limitations of one gemini runner (see the module docstring)."""
    limitations: list[str] = ["gemini reports no cost"]
    parent = parent_environment or {}
    chosen_model = model
    if chosen_model in _CLAUDE_MODEL_ALIASES:
        limitations.append(f"model {chosen_model!r} is a claude alias: gemini picks its own model ('auto')")
        chosen_model = None
    settings: dict[str, Any] = {}
    key = api_key or parent.get("GEMINI_API_KEY")
    if key or base_url:
        settings["security"] = {"auth": {"selectedType": "gemini-api-key"}}
    definition_tools = split_definition_tools(tools)
    if definition_tools.restricted:
        mapped, unknown = gemini_tool_names(definition_tools.builtin)
        core = sorted({name.partition("(")[0] for name in mapped})
        # tools.core also denies every tool it does not name, MCP tools included: name them too.
        for server_name, server_tools in definition_tools.mcp.items():
            core += [f"mcp_{server_name}_{tool}" for tool in server_tools] or [f"mcp_{server_name}_*"]
        if kernel_tools is not None:  # handed over by the user: offered whatever the definition lists
            core += [gemini_mcp_tool_name(kernel_tools.name, tool) for tool in kernel_tools.tool_names]
        settings["tools"] = {"core": core, "allowed": list(mapped)}
        if unknown:
            limitations.append(f"gemini has no counterpart for: {', '.join(unknown)}")
    servers: dict[str, Any] = {}
    if kernel_tools is not None:
        servers[kernel_tools.name] = kernel_tools_settings(kernel_tools, mcp_servers)
    for server in mcp_servers:
        if not definition_tools.allows_server(server.name):
            continue
        include = definition_tools.mcp.get(server.name) if definition_tools.restricted else None
        servers[server.name] = _server_settings(server, include or None)
    if servers:
        settings["mcpServers"] = servers
    for name, value in (extra_settings or {}).items():
        settings[name] = value
    files = [
        ConfigFile(
            gemini_home / ".gemini" / "settings.json",
            json.dumps(settings, indent=2, ensure_ascii=False) + "\n",
        )
    ]
    if system_prompt.strip():
        files.append(ConfigFile(gemini_home / ".gemini" / "GEMINI.md", system_prompt.strip() + "\n"))
    environment = {
        "GEMINI_CLI_HOME": str(gemini_home),
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }
    if base_url:
        environment["GOOGLE_GEMINI_BASE_URL"] = base_url
    if key:
        environment["GEMINI_API_KEY"] = key
    if kernel_tools is not None:
        environment.update(kernel_tools.environment)  # the secret: in the child's environment, never on disk
    return GeminiRunnerPlan(
        workspace=workspace,
        gemini_home=gemini_home,
        config_files=tuple(files),
        environment_overrides=environment,
        approval_mode=_APPROVAL_MODES.get(permission_mode or "", "default"),
        model=chosen_model,
        mcp_server_names=tuple(servers),
        limitations=tuple(limitations),
        extra_arguments=tuple(extra_arguments),
    )


def build_gemini_turn(
    executable: Sequence[str],
    plan: GeminiRunnerPlan,
    prompt: str,
    *,
    resume_session_id: str | None = None,
    session_id: str | None = None,
    parent_environment: Mapping[str, str] | None = None,
    environment: Mapping[str, str] | None = None,
) -> TurnCommand:
    """One turn's command: a new session (its id preset with ``session_id``), or ``--resume <session
    id>`` of an earlier one.

    ``environment`` (the runner's own overrides, e.g. a test's ``TMPDIR``) wins over the plan's. A
    prompt too long for an argument is piped to stdin (headless gemini reads it as the prompt).
    """
    argv = [*executable, "--output-format", "stream-json", "--approval-mode", plan.approval_mode]
    if plan.model:
        argv += ["--model", plan.model]
    if resume_session_id:
        argv += ["--resume", resume_session_id]
    elif session_id:
        argv += ["--session-id", session_id]
    argv += list(plan.extra_arguments)
    through_stdin = prompt_goes_to_stdin(prompt)
    if not through_stdin:
        argv.append(f"--prompt={prompt}")
    child_environment = dict(parent_environment or {})
    child_environment.update(plan.environment_overrides)
    child_environment.update(environment or {})
    return TurnCommand(
        argv=tuple(argv),
        environment=child_environment,
        cwd=plan.workspace,
        stdin_devnull=not through_stdin,
        stdin_data=prompt.encode("utf-8") if through_stdin else b"",
    )
