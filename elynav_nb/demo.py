"""``elynav demo``: the main job on embedded defaults — one streamed agent turn, offline.

Where it sits: at the edge, beside ``cli.py``; it assembles capabilities (agents + crm) the way
a user would, so it is allowed to import both. Nothing else imports it.

How data flows: a workspace (a scratch folder unless ``--workspace``) gets the six Elynav agents
(``.claude/agents``), a deterministic demo CRM (SQLite) and a ``.mcp.json`` declaring the CRM's
MCP server -> an ``AgentRunner`` starts the stand-in CLI (the real ``claude`` with ``--real``)
-> the turn streams to the terminal: text as it arrives, tool calls and results as lines ->
one summary line. On the stand-in, a directive line in the prompt makes it call the CRM's
``search_accounts`` tool through a real MCP client over stdio, as the real CLI would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from elynav_nb.agents import (
    AgentError,
    AgentRunner,
    AgentStarted,
    PermissionRequest,
    PermissionWithdrawn,
    TextDelta,
    ToolResult,
    ToolUse,
    TurnResult,
    install_agents,
)
from elynav_nb.crm import write_mcp_config
from elynav_nb.crm.demo_database import create_demo_database

__all__ = ["configure", "run", "run_demo"]

DEFAULT_AGENT = "elynav-sdr"
DEFAULT_QUESTION = "Bonjour ! Quels comptes avons-nous à Lyon dans le CRM ?"
DEMO_SEARCH = {"query": "Lyon", "limit": 3}
READ_ONLY_CRM_TOOL_PREFIXES = ("mcp__crm__search_", "mcp__crm__get_", "mcp__crm__list_", "mcp__crm__pipeline_summary")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", type=Path, help="folder to set up and run in (default: a scratch folder)")
    parser.add_argument("--agent", default=DEFAULT_AGENT, help=f"agent to run (default: {DEFAULT_AGENT})")
    parser.add_argument("--prompt", default=DEFAULT_QUESTION, help="what to ask the agent")
    parser.add_argument("--real", action="store_true", help="use the real claude CLI (needs an account)")
    parser.add_argument("--timeout", type=float, default=120.0, help="bound for the whole turn, in seconds")


def run(args: argparse.Namespace) -> int:
    if args.workspace is not None:
        result = asyncio.run(run_demo(args.workspace, agent=args.agent, prompt=args.prompt, real=args.real, timeout=args.timeout))
    else:
        with tempfile.TemporaryDirectory(prefix="elynav-demo-") as scratch:
            result = asyncio.run(run_demo(Path(scratch), agent=args.agent, prompt=args.prompt, real=args.real, timeout=args.timeout))
    return 0 if result.ok else 1


def prepare_workspace(workspace: Path) -> Path:
    """Agents, a demo CRM and ``.mcp.json`` in ``workspace``; returns the CRM database path."""
    workspace.mkdir(parents=True, exist_ok=True)
    install_agents(workspace)
    database = workspace / "crm-demo.sqlite"
    if not database.exists():
        create_demo_database(database, accounts=60, seed=7)
    write_mcp_config(workspace, crm_database=database)
    return database


def allow_read_only_crm_tools(request: PermissionRequest) -> bool:
    """The demo's permission policy: CRM reads are allowed, everything else is denied."""
    return request.tool_name.startswith(READ_ONLY_CRM_TOOL_PREFIXES)


async def run_demo(
    workspace: Path,
    *,
    agent: str = DEFAULT_AGENT,
    prompt: str = DEFAULT_QUESTION,
    real: bool = False,
    timeout: float = 120.0,
    output: TextIO = sys.stdout,
) -> TurnResult:
    """Set up ``workspace``, run one turn, stream it to ``output``, print the summary line."""
    prepare_workspace(workspace)
    if not real:
        prompt = f"{prompt}\n@standin mcp crm search_accounts {json.dumps(DEMO_SEARCH)}"
    runner = AgentRunner(
        agent,
        workspace,
        executable=None if real else "standin",
        fallback_to_standin=not real,
        permission_handler=allow_read_only_crm_tools,
        turn_timeout=timeout,
    )
    async with runner:
        print(f"elynav demo · agent {agent} · CLI {runner.cli.label if runner.cli else '?'}", file=output)
        turn = runner.send(prompt)
        async for event in turn:
            write_event(event, output)
        result = await turn
    print(file=output)
    print(result.summary_line(), file=output)
    return result


def write_event(event: object, output: TextIO) -> None:
    """One event as terminal text: the answer streams inline, everything else on its own line."""
    if isinstance(event, TextDelta) and event.parent_tool_use_id is None:
        output.write(event.text)
        output.flush()
    elif isinstance(event, AgentStarted):
        failed = [server.name for server in event.mcp_servers if server.status != "connected"]
        servers = ", ".join(f"{server.name} ({server.status})" for server in event.mcp_servers) or "none"
        print(f"session {event.session_id} · model {event.model} · MCP servers: {servers}", file=output)
        if failed:
            print(f"warning: MCP servers not connected: {', '.join(failed)}", file=output)
    elif isinstance(event, ToolUse):
        print(f"\n  → {event.name} {json.dumps(event.input, ensure_ascii=False)}", file=output)
    elif isinstance(event, ToolResult):
        first_line = event.text.strip().splitlines()[0] if event.text.strip() else ""
        state = "error" if event.is_error else "ok"
        print(f"  ← {state}: {first_line[:160]}", file=output)
    elif isinstance(event, PermissionRequest):
        print(f"  ? permission asked for {event.tool_name}", file=output, end="")
    elif isinstance(event, PermissionWithdrawn):
        print(f": {event.decision}", file=output)
    elif isinstance(event, AgentError):
        print(f"\n  ! {event.code}: {event.message}", file=output)
