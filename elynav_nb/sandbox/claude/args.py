"""The stand-in's command line: the claude CLI flags, parsed the way its ``commander`` parser does.

Where it sits: first step of ``claude_standin.main``. Pure: argv in, ``StandinOptions`` out, or a
``FlagError`` carrying the exact stderr line and exit status of the real CLI (``error: unknown
option '--bogus'``, ``error: option '--permission-mode <mode>' argument 'bogus' is invalid. ...``).
The checks that need the file system or the environment (root + bypass, sessions, agents) live in
``claude_standin``; the order of all checks follows the real binary.

Data flow: ``sys.argv[1:]`` -> ``parse_arguments`` -> ``StandinOptions`` -> the process loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from elynav_nb.sandbox.claude.tools import split_rules

__all__ = [
    "HELP_TEXT",
    "FlagError",
    "StandinOptions",
    "parse_arguments",
    "permission_mode_choices",
]

# flag -> (attribute, kind). Kinds: "bool", "value", "optional" (value may be absent), "list" (variadic).
_FLAGS: dict[str, tuple[str, str]] = {
    "-p": ("print_mode", "bool"),
    "--print": ("print_mode", "bool"),
    "--verbose": ("verbose", "bool"),
    "--output-format": ("output_format", "value"),
    "--input-format": ("input_format", "value"),
    "--include-partial-messages": ("include_partial_messages", "bool"),
    "--include-hook-events": ("include_hook_events", "bool"),
    "--replay-user-messages": ("replay_user_messages", "bool"),
    "--json-schema": ("json_schema", "value"),
    "--agent": ("agent", "value"),
    "--agents": ("agents_json", "value"),
    "--mcp-config": ("mcp_configs", "list"),
    "--strict-mcp-config": ("strict_mcp_config", "bool"),
    "--permission-mode": ("permission_mode", "value"),
    "--permission-prompt-tool": ("permission_prompt_tool", "value"),
    "--permission-prompts": ("permission_prompts", "value"),
    "--dangerously-skip-permissions": ("dangerously_skip_permissions", "bool"),
    "--allow-dangerously-skip-permissions": ("allow_dangerously_skip_permissions", "bool"),
    "--session-id": ("session_id", "value"),
    "-r": ("resume", "optional"),
    "--resume": ("resume", "optional"),
    "-c": ("continue_session", "bool"),
    "--continue": ("continue_session", "bool"),
    "--fork-session": ("fork_session", "bool"),
    "--no-session-persistence": ("no_session_persistence", "bool"),
    "-n": ("name", "value"),
    "--name": ("name", "value"),
    "--model": ("model", "value"),
    "--fallback-model": ("fallback_model", "value"),
    "--max-turns": ("max_turns", "value"),
    "--max-budget-usd": ("max_budget_usd", "value"),
    "--system-prompt": ("system_prompt", "value"),
    "--system-prompt-file": ("system_prompt_file", "value"),
    "--append-system-prompt": ("append_system_prompt", "value"),
    "--append-system-prompt-file": ("append_system_prompt_file", "value"),
    "--tools": ("tools", "list"),
    "--allowedTools": ("allowed_tools", "list"),
    "--allowed-tools": ("allowed_tools", "list"),
    "--disallowedTools": ("disallowed_tools", "list"),
    "--disallowed-tools": ("disallowed_tools", "list"),
    "--setting-sources": ("setting_sources", "value"),
    "--settings": ("settings", "value"),
    "--add-dir": ("add_dirs", "list"),
    "--betas": ("betas", "list"),
    "--plugin-dir": ("plugin_dirs", "list"),
    "--effort": ("effort", "value"),
    "--thinking": ("thinking", "value"),
    "--max-thinking-tokens": ("max_thinking_tokens", "value"),
    "--forward-subagent-text": ("forward_subagent_text", "bool"),
    "--bare": ("bare", "bool"),
    "--safe-mode": ("safe_mode", "bool"),
    "--restricted": ("restricted", "bool"),
    "--exclude-dynamic-system-prompt-sections": ("exclude_dynamic_sections", "bool"),
    "--disable-slash-commands": ("disable_slash_commands", "bool"),
    "--system-prompt-snapshot": ("system_prompt_snapshot", "value"),
    "--autocompact": ("autocompact", "value"),
    "--resume-session-at": ("resume_session_at", "value"),
    "--await-initialize": ("await_initialize", "bool"),
    "-d": ("debug", "optional"),
    "--debug": ("debug", "optional"),
    "--debug-file": ("debug_file", "value"),
    "--ide": ("ide", "bool"),
    "--chrome": ("chrome", "bool"),
    "--no-chrome": ("no_chrome", "bool"),
    "-h": ("help", "bool"),
    "--help": ("help", "bool"),
    "-v": ("version", "bool"),
    "--version": ("version", "bool"),
}

# flag -> (commander placeholder, allowed choices); checked at parse time like commander's .choices().
_CHOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "--output-format": ("<format>", ("text", "json", "stream-json")),
    "--input-format": ("<format>", ("text", "stream-json")),
    "--permission-prompts": ("<target>", ("host", "none")),
    "--effort": ("<level>", ("low", "medium", "high", "xhigh", "max")),
    "--system-prompt-snapshot": ("<on|off>", ("on", "off")),
}

_PERMISSION_MODES_MODERN = ("acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan")
_PERMISSION_MODES_LEGACY = ("acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan")

HELP_TEXT = """Usage: claude [options] [command] [prompt]

elynav stand-in for the Claude Code CLI: not Claude. It speaks the stream-json protocol of
`claude --print` with deterministic local replies, no account and no network.
Scripted behaviours: put a line `@standin <name> <args>` in a user message
(bash, ask, mcp, slow, sleep-tool, flood, big-result, think, api-error, no-login, max-turns, subagent,
cost, json: the StructuredOutput value with --json-schema). Hooks registered by the host's initialize
request are asked with hook_callback requests.

Options:
  -p, --print                       Print response and exit
  --output-format <format>          "text", "json" or "stream-json"
  --input-format <format>           "text" or "stream-json"
  --verbose                         Required with --print and --output-format=stream-json
  --include-partial-messages        Add stream_event lines (token deltas)
  --replay-user-messages            Echo stdin user messages with "isReplay": true
  --agent <agent>                   Run the session as this agent (front-matter name)
  --agents <json-or-file>           Define agents inline
  --mcp-config <configs...>         MCP servers from JSON files or strings
  --strict-mcp-config               Only use --mcp-config servers
  --permission-mode <mode>          Permission mode for the session
  --permission-prompt-tool <tool>   "stdio": ask the host with can_use_tool control requests
  --dangerously-skip-permissions    Bypass all permission checks (refused as root unless IS_SANDBOX=1)
  --session-id <uuid>               Use a specific session id
  -r, --resume [value]              Resume a conversation by session id
  -c, --continue                    Continue the most recent conversation in this directory
  --fork-session                    With --resume/--continue: a new session id, same history
  --no-session-persistence          Do not save the session
  --json-schema <schema>            End every turn with a StructuredOutput call matching the schema
  --model <model>                   Model alias (the stand-in reports elynav-standin:<alias>)
  --max-turns <turns>               Limit of API round trips per turn
  --max-budget-usd <amount>         Limit of the process's total cost (@standin cost sets a price)
  --system-prompt, --append-system-prompt, --tools, --allowedTools, --disallowedTools,
  --setting-sources, --settings, --add-dir, --fallback-model
                                    Accepted
  -v, --version                     Output the version number
  -h, --help                        Display help for command
"""


class FlagError(Exception):
    """A start-up refusal: ``stderr_line`` is written verbatim, then the process exits with ``exit_code``."""

    def __init__(self, stderr_line: str, exit_code: int = 1) -> None:
        super().__init__(stderr_line)
        self.stderr_line = stderr_line
        self.exit_code = exit_code


@dataclass
class StandinOptions:
    """Every flag the stand-in understands; unknown-but-accepted flags land in ``ignored``."""

    print_mode: bool = False
    verbose: bool = False
    output_format: str = "text"
    input_format: str = "text"
    include_partial_messages: bool = False
    include_hook_events: bool = False
    replay_user_messages: bool = False
    json_schema: str | None = None
    agent: str | None = None
    agents_json: str | None = None
    mcp_configs: list[str] = field(default_factory=list)
    strict_mcp_config: bool = False
    permission_mode: str | None = None
    permission_prompt_tool: str | None = None
    permission_prompts: str = "host"
    dangerously_skip_permissions: bool = False
    allow_dangerously_skip_permissions: bool = False
    session_id: str | None = None
    resume: str | bool | None = None
    continue_session: bool = False
    fork_session: bool = False
    no_session_persistence: bool = False
    name: str | None = None
    model: str | None = None
    fallback_model: str | None = None
    max_turns: int | None = None
    max_budget_usd: str | None = None
    system_prompt: str | None = None
    system_prompt_file: str | None = None
    append_system_prompt: str | None = None
    append_system_prompt_file: str | None = None
    tools: list[str] | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    setting_sources: str | None = None
    settings: str | None = None
    add_dirs: list[str] = field(default_factory=list)
    betas: list[str] = field(default_factory=list)
    plugin_dirs: list[str] = field(default_factory=list)
    effort: str | None = None
    thinking: str | None = None
    max_thinking_tokens: str | None = None
    forward_subagent_text: bool = False
    bare: bool = False
    safe_mode: bool = False
    restricted: bool = False
    exclude_dynamic_sections: bool = False
    disable_slash_commands: bool = False
    system_prompt_snapshot: str | None = None
    autocompact: str | None = None
    resume_session_at: str | None = None
    await_initialize: bool = False
    debug: str | bool | None = None
    debug_file: str | None = None
    ide: bool = False
    chrome: bool = False
    no_chrome: bool = False
    help: bool = False
    version: bool = False
    prompt: str | None = None

    @property
    def bypass_requested(self) -> bool:
        return self.dangerously_skip_permissions or self.permission_mode == "bypassPermissions"


def permission_mode_choices(modern: bool) -> tuple[str, ...]:
    """The ``--permission-mode`` choices the imitated version prints in its error."""
    return _PERMISSION_MODES_MODERN if modern else _PERMISSION_MODES_LEGACY


def _split_tool_list(values: list[str]) -> list[str]:
    """``--tools "Bash,Read" Edit`` -> ``["Bash", "Read", "Edit"]``: comma or space separated, but a rule's
    parentheses keep their spaces and commas (``"Bash(elynav ask:*)"`` stays one rule)."""
    names: list[str] = []
    for value in values:
        names.extend(split_rules(value, ", \t\n"))
    return names


def _check_choice(flag: str, value: str, modern: bool) -> None:
    if flag == "--permission-mode":
        choices = permission_mode_choices(modern)
        # 2.1.332 still accepts "default" although it no longer lists it
        if value in choices or (modern and value == "default"):
            return
        raise FlagError(
            f"error: option '--permission-mode <mode>' argument '{value}' is invalid. "
            f"Allowed choices are {', '.join(choices)}."
        )
    if flag in _CHOICES:
        placeholder, choices = _CHOICES[flag]
        if value not in choices:
            raise FlagError(
                f"error: option '{flag} {placeholder}' argument '{value}' is invalid. "
                f"Allowed choices are {', '.join(choices)}."
            )
    if flag == "--max-turns":
        try:
            float(value)
        except ValueError:
            raise FlagError(
                f"error: option '--max-turns <turns>' argument '{value}' is invalid. must be a number"
            ) from None


def parse_arguments(argv: list[str], *, modern: bool) -> StandinOptions:
    """Parse like commander: ``--flag value``, ``--flag=value``, variadic lists stop at the next ``-``."""
    options = StandinOptions()
    positionals: list[str] = []
    index = 0
    while index < len(argv):
        argument = argv[index]
        index += 1
        if argument == "--":
            positionals.extend(argv[index:])
            break
        if not argument.startswith("-") or argument == "-":
            positionals.append(argument)
            continue
        inline_value: str | None = None
        flag = argument
        if argument.startswith("--") and "=" in argument:
            flag, inline_value = argument.split("=", 1)
        if flag not in _FLAGS:
            raise FlagError(f"error: unknown option '{flag}'")
        attribute, kind = _FLAGS[flag]
        if kind == "bool":
            setattr(options, attribute, True)
            if attribute == "version":
                return options  # commander prints the version as soon as it meets the flag
            continue
        if kind == "optional":
            if inline_value is not None:
                setattr(options, attribute, inline_value)
            elif index < len(argv) and not argv[index].startswith("-"):
                setattr(options, attribute, argv[index])
                index += 1
            else:
                setattr(options, attribute, True)
            continue
        if kind == "value":
            if inline_value is None:
                if index >= len(argv) or (argv[index].startswith("-") and argv[index] != "-"):
                    placeholder = _CHOICES.get(flag, ("<value>", ()))[0]
                    raise FlagError(f"error: option '{flag} {placeholder}' argument missing")
                inline_value = argv[index]
                index += 1
            _check_choice(flag, inline_value, modern)
            if attribute == "max_turns":
                setattr(options, attribute, int(float(inline_value)))
            else:
                setattr(options, attribute, inline_value)
            continue
        # variadic list
        values: list[str] = []
        if inline_value is not None:
            values.append(inline_value)
        while index < len(argv) and not argv[index].startswith("-"):
            values.append(argv[index])
            index += 1
        if attribute in ("tools", "allowed_tools", "disallowed_tools"):
            values = _split_tool_list(values) if values != [""] else []
        existing = getattr(options, attribute)
        if existing is None:
            setattr(options, attribute, values)
        else:
            existing.extend(values)
    if positionals:
        options.prompt = " ".join(positionals)
    return options
