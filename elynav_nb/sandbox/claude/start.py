"""How the stand-in starts: the flags checked in the real CLI's order, the session chosen, the tools offered.

Where it sits: ``claude_standin.main`` calls ``plan_start`` once, before the conversation loop; a
start-up error raises ``FlagError`` (the real CLI's text and exit code) or ``ResumeFailure`` (a
``--resume`` of an unknown session: the real CLI's result line). Reads the session store, the agent
files and the ``--mcp-config`` / ``--json-schema`` arguments; writes nothing.

How data flows: ``StandinOptions`` (argv) -> ``plan_start`` -> ``StartPlan`` (style, session id, the
earlier transcript, agents, MCP servers, schema) -> ``Conversation``; ``base_tools`` gives the tool list
of ``system/init``.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elynav_nb.sandbox.claude import wire as wire
from elynav_nb.sandbox.claude.agents import AgentCatalogue, load_agent_catalogue
from elynav_nb.sandbox.claude.args import FlagError, StandinOptions
from elynav_nb.sandbox.claude.mcp_servers import McpServerConfig, load_mcp_configuration
from elynav_nb.sandbox.claude.sessions import SessionStore, TranscriptEntry, standin_home
from elynav_nb.sandbox.claude.structured import SchemaFlagError, load_schema

DEFAULT_TOOLS = [
    "Task", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree", "ListAgents",
    "Monitor", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill", "TaskStop",
    "ToolSearch", "WebFetch", "WebSearch", "Workflow", "Write",
]  # fmt: skip
PROMPT_TOOLS = ["AskUserQuestion", "EnterPlanMode", "ExitPlanMode"]
MCP_RESOURCE_TOOLS = ["ListMcpResourcesTool", "ReadMcpResourceDirTool", "ReadMcpResourceTool"]
PERMISSION_MODES = ("default", "manual", "acceptEdits", "auto", "bypassPermissions", "dontAsk", "plan")


class ResumeFailure(Exception):
    """``--resume`` names nothing stored: a ``result`` line on stdout, the message on stderr, exit 1."""

    def __init__(self, session_id: str, message: str, stderr_line: str) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.message = message
        self.stderr_line = stderr_line


@dataclass
class StartPlan:
    """Everything the start-up checks decided."""

    options: StandinOptions
    style: wire.WireStyle
    cwd: Path
    session_id: str
    earlier: list[TranscriptEntry]
    catalogue: AgentCatalogue
    agent_tools: list[str] | None
    mcp_configs: list[McpServerConfig] = field(default_factory=list)
    json_schema: dict[str, Any] | None = None


def imitated_style() -> wire.WireStyle:
    requested = os.environ.get("ELYNAV_STANDIN_VERSION", wire.DEFAULT_VERSION).strip()
    if requested not in wire.SUPPORTED_VERSIONS:
        requested = wire.DEFAULT_VERSION
    return wire.WireStyle(requested)


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return len(text) == 36


def _sandbox_escape_set() -> bool:
    for name in ("IS_SANDBOX", "CLAUDE_CODE_BUBBLEWRAP"):
        value = os.environ.get(name, "")
        if value and value.lower() not in ("0", "false", "no"):
            return True
    return False


def plan_start(options: StandinOptions, style: wire.WireStyle) -> StartPlan:
    """The start-up checks, in the order the real binary applies them (verified on 2.1.332)."""
    cwd = Path.cwd()
    home = standin_home()
    if options.session_id is not None and not _is_uuid(options.session_id):
        raise FlagError("Error: Invalid session ID. Must be a valid UUID.")
    resuming = options.resume is not None or options.continue_session
    if options.session_id is not None and resuming and not options.fork_session:
        if style.modern:
            raise FlagError("Error: --session-id with --continue or --resume also needs --fork-session.")
        raise FlagError(
            "Error: --session-id can only be used with --continue or --resume if --fork-session is also specified."
        )
    if (
        options.bypass_requested
        and hasattr(os, "geteuid")
        and os.geteuid() == 0
        and not _sandbox_escape_set()
    ):
        raise FlagError(
            "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
        )
    if options.input_format == "stream-json" and options.output_format != "stream-json":
        raise FlagError("Error: --input-format=stream-json requires output-format=stream-json.")
    if options.include_partial_messages and options.output_format != "stream-json":
        raise FlagError("Error: --include-partial-messages requires --print and --output-format=stream-json.")
    mcp_configs = load_mcp_configuration(
        options.mcp_configs, cwd=cwd, strict=options.strict_mcp_config, environment=dict(os.environ)
    )
    session_id = options.session_id or str(uuid.uuid4())
    earlier: list[TranscriptEntry] = []
    if options.resume is not None:
        resume_usage = (
            "Error: --resume requires a valid session ID or session title when used with --print. "
            "Usage: claude -p --resume <session-id|title>"
        )
        if options.resume is True:
            raise ResumeFailure(session_id, resume_usage, resume_usage)
        resume_id = str(options.resume)
        if not _is_uuid(resume_id):
            message = f'{resume_usage}. Provided value "{resume_id}" is not a UUID and does not match any session title.'
            raise ResumeFailure(session_id, message, message)
        stored = SessionStore.load(home, resume_id)
        if stored is None:
            message = f"No conversation found with session ID: {resume_id}"
            reported_id = options.session_id if options.fork_session and options.session_id else resume_id
            raise ResumeFailure(reported_id, message, message)
        earlier = stored
        session_id = options.session_id if options.fork_session and options.session_id else resume_id
        if options.fork_session and not options.session_id:
            session_id = str(uuid.uuid4())
    elif options.continue_session:
        recent = SessionStore.most_recent_for(home, str(cwd))
        if recent is not None:
            earlier = SessionStore.load(home, recent) or []
            session_id = recent if not options.fork_session else (options.session_id or str(uuid.uuid4()))
    elif options.session_id is not None and SessionStore.exists(home, options.session_id):
        raise FlagError(f"Error: Session ID {options.session_id} is already in use.")
    catalogue = load_agent_catalogue(cwd, Path.home(), options.agents_json)
    agent_tools: list[str] | None = None
    if options.agent is not None:
        agent = catalogue.find(options.agent)
        if agent is None and options.input_format != "stream-json":
            available = ", ".join(catalogue.names())
            raise FlagError(f"--agent '{options.agent}' not found. Available agents: {available}")
        if agent is not None:
            agent_tools = agent.tools
    if options.output_format == "stream-json" and not options.verbose:
        raise FlagError("Error: When using --print, --output-format=stream-json requires --verbose")
    json_schema = None
    if options.json_schema is not None:
        try:
            json_schema = load_schema(options.json_schema)
        except SchemaFlagError as error:
            raise FlagError(str(error)) from None
    return StartPlan(
        options, style, cwd, session_id, earlier, catalogue, agent_tools, mcp_configs, json_schema
    )


def base_tools(plan: StartPlan) -> tuple[list[str], bool]:
    """``(tools, mcp tools only when listed)``: agent tools > ``--tools`` > the default set, minus disallowed."""
    options = plan.options
    restricted = False
    if plan.agent_tools is not None:
        # A permission rule such as Bash(elynav ask:*) makes its tool available: init lists "Bash".
        tools = list(dict.fromkeys(tool.split("(")[0].strip() for tool in plan.agent_tools))
        restricted = True
    elif options.tools is not None and options.tools != ["default"]:
        tools = list(options.tools)
        restricted = True
    else:
        others = [name for name in DEFAULT_TOOLS if name != "Task"]
        if options.permission_prompt_tool == "stdio":
            others.extend(PROMPT_TOOLS)
        if plan.mcp_configs:
            others.extend(MCP_RESOURCE_TOOLS)
        tools = ["Task", *sorted(others)]
    tools = [name for name in tools if name not in options.disallowed_tools]
    return tools, restricted
