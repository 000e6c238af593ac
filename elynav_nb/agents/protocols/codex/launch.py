"""Pure builder of a codex runner: its ``CODEX_HOME/config.toml``, environment and per-turn command line.

Where it sits: the runner (phase 2) calls ``plan_codex_runner`` once per runner, writes the
returned ``config_files``, then ``build_codex_turn`` for each turn and spawns what it returns.
Nothing here touches the disk or the process table.

One process per turn (design note ``codex-gemini-protocol.md`` §1)::

    CODEX_HOME=<runner home> CODEX_API_KEY=… \\
    codex exec --json --skip-git-repo-check [resume <thread_id>] -- PROMPT      </dev/null

Everything that must hold for new and resumed turns alike lives in ``config.toml`` (``exec
resume`` has no ``-s``): ``allow_login_shell = false`` (tool commands keep the runner's ``PATH``;
``bash -lc`` would rebuild it from the profile), ``model``, ``sandbox_mode`` (or the bypass flag), ``developer_instructions``
(the agent's system prompt, sent as a developer message after codex's own instructions),
``rules/elynav.rules`` (the definition's ``Bash(<command>:*)`` rules as exec-policy ``allow`` rules),
``[mcp_servers.<name>]`` (``required = true``: without it codex does not wait for a slow server
and the model's tool search finds nothing; ``default_tools_approval_mode = "approve"``: exec has no
one to ask; ``enabled_tools`` from the definition), ``[mcp_servers.kernel]`` when the runner has
kernel tools (``kernel_tools_table``: its loopback URL, the secret read from
``ELYNAV_KERNEL_TOOLS_TOKEN``, which ``shell_environment_policy.exclude`` keeps out of the commands
codex runs and of its shell snapshot), and, when ``provider_base_url`` is given, a
model provider ``elynav`` speaking the Responses API there (``env_key = "CODEX_API_KEY"``, the
variable ``codex exec`` reads: ``OPENAI_API_KEY`` is copied into it when only that one is set).

Permission modes: ``bypassPermissions`` -> ``--dangerously-bypass-approvals-and-sandbox``;
``acceptEdits`` -> ``sandbox_mode = "workspace-write"``; any other -> ``read-only`` (codex's default:
commands run, writes are refused). What codex cannot honour is listed in ``limitations``: filters
on built-in tools (codex offers its own shell, apply_patch and web search whatever the definition
lists), claude model aliases (``opus``, ``sonnet``...), SSE MCP servers, per-turn cost.
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
    bash_rule_prefix,
    prompt_goes_to_stdin,
    split_definition_tools,
)

__all__ = [
    "CLAUDE_MODEL_ALIASES",
    "CODEX_PROVIDER_NAME",
    "CodexRunnerPlan",
    "build_codex_app_server",
    "build_codex_turn",
    "codex_child_environment",
    "exec_policy_rules",
    "kernel_tools_table",
    "codex_config_arguments",
    "plan_codex_runner",
    "render_toml",
    "thread_policy",
]

CODEX_PROVIDER_NAME = "elynav"
CLAUDE_MODEL_ALIASES = frozenset({"opus", "sonnet", "haiku", "inherit", "opusplan", "default"})
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # JSON string escapes are valid TOML basic strings
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return (
            "{"
            + ", ".join(f"{_toml_key(str(key))} = {_toml_value(item)}" for key, item in value.items())
            + "}"
        )
    raise TypeError(f"no TOML form for {type(value).__name__}")


def render_toml(document: Mapping[str, Any]) -> str:
    """TOML text: top-level values first, then one ``[table]`` per nested mapping (two levels deep; a
    table's own values before its sub-tables)."""
    lines: list[str] = []
    tables: list[tuple[str, Mapping[str, Any]]] = []
    for key, value in document.items():
        if isinstance(value, Mapping):
            plain = {name: item for name, item in value.items() if not isinstance(item, Mapping)}
            if plain:
                tables.append((_toml_key(key), plain))
            for inner_key, inner_value in value.items():
                if isinstance(inner_value, Mapping):
                    tables.append((f"{_toml_key(key)}.{_toml_key(str(inner_key))}", inner_value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for name, table in tables:
        lines.append("")
        lines.append(f"[{name}]")
        for key, value in table.items():
            lines.append(f"{_toml_key(str(key))} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def codex_config_arguments(settings: Mapping[str, Any]) -> tuple[str, ...]:
    """``{"model_providers.elynav.request_max_retries": 0}`` -> ``("-c", "model_providers.elynav.request_max_retries=0")``.

    Keys are dotted config paths, values become TOML (``-c`` parses its value as TOML).
    """
    arguments: list[str] = []
    for key, value in settings.items():
        arguments += ["-c", f"{key}={_toml_value(value)}"]
    return tuple(arguments)


@dataclass(frozen=True)
class CodexRunnerPlan:
    """What every turn of one codex runner shares. ``limitations`` are for the runner's repr and docs."""

    workspace: Path
    codex_home: Path
    config_files: tuple[ConfigFile, ...]
    environment_overrides: Mapping[str, str] = field(repr=False)
    bypass_sandbox: bool = False
    sandbox_mode: str = "read-only"  # "danger-full-access" when bypassed
    asks_for_approval: bool = False
    model: str | None = None
    mcp_server_names: tuple[str, ...] = ()
    limitations: tuple[str, ...] = ()
    extra_arguments: tuple[str, ...] = ()


def _mcp_table(
    server: McpServer, enabled_tools: tuple[str, ...] | None, startup_timeout_sec: float
) -> dict[str, Any]:
    table: dict[str, Any] = {}
    if server.transport == "stdio":
        table["command"] = server.command
        table["args"] = list(server.args)
        if server.env:
            table["env"] = dict(server.env)
    else:
        table["url"] = server.url
        if server.headers:
            table["http_headers"] = dict(server.headers)
    table["required"] = True
    table["startup_timeout_sec"] = startup_timeout_sec
    table["default_tools_approval_mode"] = "approve"
    if enabled_tools:
        table["enabled_tools"] = list(enabled_tools)
    return table


def kernel_tools_table(kernel_tools: KernelToolsServer, startup_timeout_sec: float) -> dict[str, Any]:
    """``[mcp_servers.kernel]``: the runner's loopback server over streamable HTTP, its secret read
    from the environment (``bearer_token_env_var``), its tools run without asking (the user handed
    them over; exec has nobody to ask), and a tool timeout above the tool set's own."""
    return {
        "url": kernel_tools.url,
        "bearer_token_env_var": kernel_tools.token_variable,
        "required": True,
        "startup_timeout_sec": startup_timeout_sec,
        "tool_timeout_sec": kernel_tools.tool_timeout + 15.0,
        "default_tools_approval_mode": "approve",
    }


def plan_codex_runner(
    *,
    workspace: Path,
    codex_home: Path,
    system_prompt: str = "",
    tools: Sequence[str] = (),
    mcp_servers: Sequence[McpServer] = (),
    model: str | None = None,
    permission_mode: str | None = None,
    provider_base_url: str | None = None,
    request_max_retries: int | None = None,
    stream_max_retries: int | None = None,
    mcp_startup_timeout_sec: float = 30.0,
    parent_environment: Mapping[str, str] | None = None,
    extra_config: Mapping[str, Any] | None = None,
    extra_arguments: Sequence[str] = (),
    asks_for_approval: bool = False,
    kernel_tools: KernelToolsServer | None = None,
) -> CodexRunnerPlan:
    """The config home, environment and limitations of one codex runner (see the module docstring)."""
    limitations: list[str] = ["codex reports no cost; its token usage is per thread (made per turn here)"]
    # Tool commands run in the runner's environment: a login shell would rebuild PATH from the
    # profile and lose what the runner put there (the office's `elynav` script).
    config: dict[str, Any] = {"allow_login_shell": False}
    chosen_model = model
    if chosen_model in CLAUDE_MODEL_ALIASES:
        limitations.append(
            f"model {chosen_model!r} is a claude alias: codex uses its configured default model"
        )
        chosen_model = None
    if chosen_model:
        config["model"] = chosen_model
    bypass = permission_mode == "bypassPermissions"
    sandbox_mode = "workspace-write" if permission_mode == "acceptEdits" else "read-only"
    if not bypass:
        config["sandbox_mode"] = sandbox_mode
    if not asks_for_approval and permission_mode in (None, "default", "plan", "manual", "dontAsk", "auto"):
        limitations.append(
            f"permission mode {permission_mode or 'default'!r} without prompts: codex never asks; its read-only sandbox "
            "refuses writes and sockets (network, the office's `elynav ask`)"
        )
    if system_prompt.strip():
        config["developer_instructions"] = system_prompt.strip()
    if provider_base_url:
        config["model_provider"] = CODEX_PROVIDER_NAME
    definition_tools = split_definition_tools(tools)
    allowed_commands = [prefix for prefix in map(bash_rule_prefix, definition_tools.builtin) if prefix]
    not_enforced = [tool for tool in definition_tools.builtin if not bash_rule_prefix(tool)]
    if not_enforced:
        limitations.append(
            "codex cannot filter its built-in tools (shell, apply_patch, web search): "
            f"{', '.join(not_enforced)} not enforced"
        )
    if allowed_commands:
        limitations.append(
            "Bash(...) rules become codex exec-policy rules: those commands run without asking and outside "
            "the sandbox, as claude runs them without asking"
        )
    servers: dict[str, Any] = {}
    if kernel_tools is not None:
        kernel_tools.check_name_free(mcp_servers)
        servers[kernel_tools.name] = kernel_tools_table(kernel_tools, mcp_startup_timeout_sec)
    for server in mcp_servers:
        if not definition_tools.allows_server(server.name):
            continue
        if server.transport == "sse":
            limitations.append(f"MCP server {server.name!r} uses SSE, which codex does not speak: left out")
            continue
        enabled = definition_tools.mcp.get(server.name) if definition_tools.restricted else None
        servers[server.name] = _mcp_table(server, enabled or None, mcp_startup_timeout_sec)
    if kernel_tools is not None:
        # codex hands its whole environment to the commands it runs and writes it into a shell
        # snapshot in CODEX_HOME: the secret stays out of both (checked on codex-cli 0.171.0).
        config["shell_environment_policy"] = {"exclude": [kernel_tools.token_variable]}
    config.update(dict(extra_config or {}))
    document: dict[str, Any] = dict(config)
    if servers:
        document["mcp_servers"] = servers
    if provider_base_url:
        provider: dict[str, Any] = {
            "name": CODEX_PROVIDER_NAME,
            "base_url": provider_base_url,
            "wire_api": "responses",
            "env_key": "CODEX_API_KEY",
        }
        if request_max_retries is not None:
            provider["request_max_retries"] = request_max_retries
        if stream_max_retries is not None:
            provider["stream_max_retries"] = stream_max_retries
        document["model_providers"] = {CODEX_PROVIDER_NAME: provider}
    environment = {"CODEX_HOME": str(codex_home)}
    if kernel_tools is not None:
        environment.update(kernel_tools.environment)  # the secret: in the child's environment, never on disk
    parent = parent_environment or {}
    if not parent.get("CODEX_API_KEY") and parent.get("OPENAI_API_KEY"):
        environment["CODEX_API_KEY"] = parent["OPENAI_API_KEY"]
    return CodexRunnerPlan(
        workspace=workspace,
        codex_home=codex_home,
        config_files=(
            ConfigFile(codex_home / "config.toml", render_toml(document)),
            ConfigFile(codex_home / "rules" / "elynav.rules", exec_policy_rules(allowed_commands)),
        ),
        environment_overrides=environment,
        bypass_sandbox=bypass,
        sandbox_mode="danger-full-access" if bypass else sandbox_mode,
        asks_for_approval=asks_for_approval,
        model=chosen_model,
        mcp_server_names=tuple(servers),
        limitations=tuple(limitations),
        extra_arguments=tuple(extra_arguments),
    )


def exec_policy_rules(allowed_commands: Sequence[Sequence[str]]) -> str:
    """``$CODEX_HOME/rules/elynav.rules``: one ``prefix_rule(..., decision="allow")`` per allowed command.

    codex runs a command an ``allow`` rule matches without asking and outside its sandbox (checked
    on codex-cli 0.171.0: a ``touch`` allowed this way writes in a read-only sandbox).
    """
    lines = ["# Written by elynav_nb from the agent definition's Bash(...) rules; rewritten at each start."]
    for words in allowed_commands:
        lines.append(f'prefix_rule(pattern={json.dumps(list(words), ensure_ascii=False)}, decision="allow")')
    return "\n".join(lines) + "\n"


def codex_child_environment(
    plan: CodexRunnerPlan,
    parent_environment: Mapping[str, str] | None = None,
    environment: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The parent's environment, the plan's (``CODEX_HOME``, the key), then the runner's own on top."""
    child_environment = dict(parent_environment or {})
    child_environment.update(plan.environment_overrides)
    child_environment.update(environment or {})
    return child_environment


def build_codex_app_server(
    executable: Sequence[str],
    plan: CodexRunnerPlan,
    *,
    parent_environment: Mapping[str, str] | None = None,
    environment: Mapping[str, str] | None = None,
) -> TurnCommand:
    """The persistent ``codex app-server`` process of a runner (JSON-RPC on stdin/stdout).

    The sandbox and approval policy go in ``thread/start`` (``thread_policy``): app-server has no
    bypass flag.
    """
    return TurnCommand(
        argv=(*executable, "app-server", *plan.extra_arguments),
        environment=codex_child_environment(plan, parent_environment, environment),
        cwd=plan.workspace,
        stdin_devnull=False,
    )


def thread_policy(plan: CodexRunnerPlan) -> dict[str, str]:
    """The ``sandbox`` and ``approvalPolicy`` of ``thread/start`` / ``thread/resume`` for the plan.

    ``bypassPermissions``: no sandbox, never ask. Otherwise the sandbox of ``config.toml``
    (``read-only``, or ``workspace-write`` for ``acceptEdits``), and ``untrusted`` when the runner
    takes permission prompts (codex asks before any command it does not know to be safe), else
    ``never`` (what the sandbox refuses fails, as with ``codex exec``).
    """
    asks = plan.asks_for_approval and not plan.bypass_sandbox
    return {"sandbox": plan.sandbox_mode, "approvalPolicy": "untrusted" if asks else "never"}


def build_codex_turn(
    executable: Sequence[str],
    plan: CodexRunnerPlan,
    prompt: str,
    *,
    resume_thread_id: str | None = None,
    parent_environment: Mapping[str, str] | None = None,
    environment: Mapping[str, str] | None = None,
    output_schema_path: Path | None = None,
) -> TurnCommand:
    """One turn's command: a new thread, or ``resume <thread_id>`` of an earlier one.

    ``output_schema_path``: ``--output-schema FILE`` (the JSON Schema of the final message).

    ``environment`` (the runner's own overrides, e.g. a test's ``HOME``) wins over the plan's. A
    prompt too long for an argument is read from stdin (``-``).
    """
    argv = [*executable, "exec", "--json", "--skip-git-repo-check"]
    if plan.bypass_sandbox:
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    argv += list(plan.extra_arguments)
    if output_schema_path is not None:
        argv += ["--output-schema", str(output_schema_path)]
    if resume_thread_id:
        argv += ["resume", resume_thread_id]
    through_stdin = prompt_goes_to_stdin(prompt)
    argv += ["-"] if through_stdin else ["--", prompt]
    return TurnCommand(
        argv=tuple(argv),
        environment=codex_child_environment(plan, parent_environment, environment),
        cwd=plan.workspace,
        stdin_devnull=not through_stdin,
        stdin_data=prompt.encode("utf-8") if through_stdin else b"",
    )
