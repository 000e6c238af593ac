"""``elynav demo``: the main job on embedded defaults — one streamed agent turn, offline.

Where it sits: at the edge, beside ``cli.py``; it assembles capabilities (agents, crm, docs and
the sandbox) the way a user would, so it is allowed to import them. Nothing else imports it.

How data flows: a local Docs stand-in (``DocsSandbox``) starts with one empty document; a workspace
(a scratch folder unless ``--workspace``) gets the six Elynav agents (``.claude/agents``), a
deterministic demo CRM (SQLite) and a ``.mcp.json`` declaring the CRM and Docs MCP servers (the
Docs one reaches the sandbox through ``DOCS_*`` variables in the agent's environment) -> an
``AgentRunner`` starts the stand-in CLI (the real ``claude`` with ``--real``) -> the turn streams to
the terminal: text as it arrives, tool calls and results as lines -> one summary line -> the Docs
document as saved over REST. On the stand-in, directive lines in the prompt make it call the CRM's
``search_accounts`` and Docs' ``insert_block`` through real MCP clients over stdio, as the real CLI
would; the real CLI is asked in words to write its answer into the document. Then the office: an
``Office`` on the same workspace, where the orchestrator delegates to ``elynav-sdr`` by running
``elynav ask`` in its Bash tool (a real process, identified by the office from the process tree);
its summary line, the reply text and the unified history (who asked whom, outcome, times) are
printed.

Before anything starts, ``run`` checks what the command line asked for, so a mistake is one typed
line naming the fix on the command line: ``--agent`` must be one of the six Elynav agents (or an
agent defined where ``--workspace`` points), ``--real`` / ``--cli codex|gemini`` need that CLI
installed (else: drop the flag for the stand-in, or install it); ``--prompt`` must hold text and
``--timeout`` be a positive number of seconds (it bounds the turn, and the office's ask on its own);
a ``--workspace`` is created if missing, but not its parent: one that cannot be created or written is
``INVALID_INPUT`` naming its whole path. The scratch folder used without ``--workspace`` is named
when the demo starts and said removed at its end.

The office step prints as it goes (who works for whom, each ask as it ends), then the reply of
``elynav-sdr`` to the orchestrator (the point of the delegation), the orchestrator's reply to you,
and the history. An ask that runs out of time is a ``timeout`` reply, printed like the others.

``--cli codex`` / ``--cli gemini`` run the same demo on that CLI (always the real one: there is no
stand-in for them, as their registry location says; its own login, or a model API given by its
environment variables), the office's two agents included (the office's ``cli=``, as a runner keyword).
The exit code is 0 only when the turn and the office's ask both completed.
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
    AgentRunner,
    PermissionRequest,
    TurnResult,
    builtin_agents,
    find_agent_file,
    install_agents,
)
from elynav_nb.agents.locate import check_cli_name, locate_cli
from elynav_nb.agents.protocols.registry import DEFAULT_CLI, location_of
from elynav_nb.agents.transcript_display import event_text
from elynav_nb.crm import write_mcp_config
from elynav_nb.crm.demo_database import create_demo_database
from elynav_nb.docs import DocsSession
from elynav_nb.errors import AgentNotFound, CliNotFound, InvalidInput
from elynav_nb.office import Ask, Office, Reply
from elynav_nb.office.ask_command import positive_seconds
from elynav_nb.sandbox.docs.server import DocsSandbox

__all__ = ["configure", "run", "run_demo"]

DEFAULT_AGENT = "elynav-sdr"
DEFAULT_QUESTION = "Bonjour ! Quels comptes avons-nous à Lyon dans le CRM ?"
DEMO_SEARCH = {"query": "Lyon", "limit": 3}
READ_ONLY_CRM_TOOL_PREFIXES = (
    "mcp__crm__search_",
    "mcp__crm__get_",
    "mcp__crm__list_",
    "mcp__crm__pipeline_summary",
)
DOCS_TOOLS_ALLOWED = (
    "mcp__docs__read_document",
    "mcp__docs__get_document_metadata",
    "mcp__docs__insert_block",
)
DEMO_DOCUMENT_TITLE = "Comptes à Lyon"
DEMO_HEADING = "Comptes à **Lyon** (démo)"
OFFICE_REQUEST = (
    "Demande à elynav-sdr, avec elynav ask, quels comptes relancer cette semaine, puis résume sa réponse."
)
OFFICE_DELEGATION = "Quels comptes relancer cette semaine ?"
CLI_INSTALL_COMMANDS = {
    "claude": "npm install -g @anthropic-ai/claude-code",
    "codex": "npm install -g @openai/codex",
    "gemini": "npm install -g @google/gemini-cli",
}
DEMO_CLIS = ("claude", "codex", "gemini")
"""The CLIs the demo's script is known to run on (an ACP agent needs its command: not a demo choice)."""


def runs_real(cli: str, real: bool) -> bool:
    """Whether the demo runs the real ``cli``: asked to, or the CLI has no embedded stand-in (its location)."""
    return real or not location_of(check_cli_name(cli)).standin_module


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace",
        type=Path,
        help="folder to set up and run in, created if missing (its parent must exist); "
        "default: a scratch folder, removed at the end",
    )
    parser.add_argument("--agent", default=DEFAULT_AGENT, help=f"agent to run (default: {DEFAULT_AGENT})")
    parser.add_argument(
        "--prompt", default=DEFAULT_QUESTION, help="what to ask the agent (default: %(default)r)"
    )
    parser.add_argument("--real", action="store_true", help="use the real claude CLI (needs an account)")
    parser.add_argument(
        "--cli",
        choices=DEMO_CLIS,
        default=DEFAULT_CLI,
        help=f"the agent CLI (codex and gemini are always the real ones; default: {DEFAULT_CLI})",
    )
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=120.0,
        help="seconds the agent's turn may take, and the office's ask (each; default: %(default)g)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the demo; 0 only when its turn and the office's ask completed (any CLI)."""
    check_demo_agent(args.agent, args.workspace)
    if not args.prompt.strip():
        raise InvalidInput("--prompt is empty: give the demo a question, or leave --prompt out for its own")
    if runs_real(args.cli, args.real):
        check_real_cli(args.cli, real_flag=args.real)
    options = {
        "agent": args.agent,
        "prompt": args.prompt,
        "real": args.real,
        "timeout": args.timeout,
        "cli": args.cli,
    }
    if args.workspace is not None:
        result, reply = asyncio.run(run_demo(args.workspace, **options))
    else:
        with tempfile.TemporaryDirectory(prefix="elynav-demo-") as scratch:
            print(f"workspace: {scratch} (a scratch folder, removed at the end; --workspace DIR keeps one)")
            result, reply = asyncio.run(run_demo(Path(scratch), **options))
        print(f"scratch workspace {scratch} removed")
    return 0 if result.ok and reply.ok else 1


def check_demo_agent(agent: str, workspace: Path | None) -> None:
    """``AGENT_NOT_FOUND`` listing the six Elynav agents unless ``agent`` is one of them, or an agent
    the CLI would find from ``workspace`` (or, for a scratch folder, from the temporary folder)."""
    names = sorted(builtin_agents())
    if agent in names:
        return
    seen_from = workspace if workspace is not None else Path(tempfile.gettempdir())
    if find_agent_file(seen_from, agent) is not None:
        return
    elsewhere = f", or one defined in {workspace.absolute()}/.claude/agents" if workspace is not None else ""
    raise AgentNotFound(
        f"no agent {agent!r} for the demo: pass --agent with one of the six Elynav agents it installs: "
        f"{', '.join(names)} (default: {DEFAULT_AGENT}){elsewhere}",
        details={"agent": agent, "choices": names},
    )


def check_real_cli(cli: str, *, real_flag: bool) -> None:
    """``CLI_NOT_FOUND`` saying what to change on the command line when the real ``cli`` is not installed."""
    cli_name = check_cli_name(cli)
    try:
        locate_cli(None, fallback_to_standin=False, cli=cli_name)
    except CliNotFound as error:
        executable = error.details.get("executable")
        missing = (
            f"the {cli} CLI {executable!r} named by ${location_of(cli_name).environment_variable} is not found (fix or unset it)"
            if executable
            else f"the {cli} CLI is not on PATH"
        )
        flags = ([f"--cli {cli}"] if cli != DEFAULT_CLI else []) + (["--real"] if real_flag else [])
        raise CliNotFound(
            f"{missing}; drop {' and '.join(flags)} to run the demo on the embedded stand-in "
            f"(`elynav demo`), or install it (`{CLI_INSTALL_COMMANDS[cli]}`), log in, and run "
            f"`elynav demo {' '.join(flags)}` again",
            details=error.details,
        ) from None


def prepare_workspace(workspace: Path) -> Path:
    """Agents, a demo CRM and ``.mcp.json`` in ``workspace``; returns the CRM database path.

    A folder that cannot be created or written is ``INVALID_INPUT`` naming its whole path."""
    if workspace.exists() and not workspace.is_dir():
        raise InvalidInput(
            f"the demo workspace {workspace.absolute()} is a file, not a folder; pass --workspace a folder "
            "(created if missing), or leave --workspace out to run in a scratch folder",
            details={"path": str(workspace.absolute())},
        )
    if not workspace.absolute().parent.is_dir():
        raise InvalidInput(
            f"the demo workspace {workspace.absolute()} cannot be made: its parent folder "
            f"{workspace.absolute().parent} does not exist; pass --workspace a folder whose parent exists "
            "(the demo creates one folder, not a whole path), or leave --workspace out for a scratch folder",
            details={"path": str(workspace.absolute())},
        )
    try:
        workspace.mkdir(exist_ok=True)
        install_agents(workspace)
        database = workspace / "crm-demo.sqlite"
        if not database.exists():
            create_demo_database(database, accounts=60, seed=7)
        write_mcp_config(workspace, crm_database=database, docs=True)
    except OSError as error:
        where = f" ({error.filename})" if error.filename and Path(error.filename) != workspace else ""
        raise InvalidInput(
            f"the demo workspace {workspace.absolute()} cannot be set up: {error.strerror or error}{where}; "
            "pass --workspace a folder you can create and write to, or leave --workspace out to run in "
            "a scratch folder",
            details={"path": str(workspace.absolute())},
        ) from None
    return database


def allow_demo_tools(request: PermissionRequest) -> bool:
    """The demo's permission policy: CRM reads and adding blocks to Docs; everything else is denied."""
    return (
        request.tool_name.startswith(READ_ONLY_CRM_TOOL_PREFIXES) or request.tool_name in DOCS_TOOLS_ALLOWED
    )


def demo_prompt(prompt: str, document_id: str, document_link: str, *, real: bool) -> str:
    """The question, plus what writes the answer into the Docs document."""
    if real:
        return f"{prompt}\nÉcris ta réponse, en quelques blocs, dans le document Docs {document_link} (outils docs)."
    heading = {"doc_id": document_id, "content": {"type": "heading", "level": 2, "text": DEMO_HEADING}}
    return (
        f"{prompt}\n@standin mcp crm search_accounts {json.dumps(DEMO_SEARCH)}"
        f"\n@standin mcp docs insert_block {json.dumps(heading, ensure_ascii=False)}"
    )


async def run_demo(
    workspace: Path,
    *,
    agent: str = DEFAULT_AGENT,
    prompt: str = DEFAULT_QUESTION,
    real: bool = False,
    timeout: float = 120.0,
    output: TextIO = sys.stdout,
    cli: str = DEFAULT_CLI,
) -> tuple[TurnResult, Reply]:
    """Set up ``workspace``, run one turn, stream it to ``output``, print the summary line and the
    Docs document the agent wrote to; then one delegation through the office."""
    real = runs_real(cli, real)
    prepare_workspace(workspace)
    async with DocsSandbox() as sandbox:
        document = sandbox.create_document(DEMO_DOCUMENT_TITLE)
        link = sandbox.document_link(document.id)
        runner = AgentRunner(
            agent,
            workspace,
            cli=check_cli_name(cli),
            executable=None if real else "standin",
            fallback_to_standin=not real,
            permission_handler=allow_demo_tools,
            turn_timeout=timeout,
            environment={  # read by the Docs MCP server the CLI starts (never printed)
                "DOCS_INSTANCE_URL": sandbox.url,
                "DOCS_SESSION_ID": sandbox.session_id,
                "DOCS_CSRF_TOKEN": sandbox.csrf_token,
            },
        )
        async with runner:
            print(f"elynav demo · agent {agent} · CLI {runner.cli.label if runner.cli else '?'}", file=output)
            turn = runner.send(demo_prompt(prompt, document.id, link, real=real))
            tool_names: dict[str, str] = {}
            async for event in turn:
                output.write(event_text(event, tool_names))
                output.flush()
            result = await turn
        print(file=output)
        print(result.summary_line(), file=output)
        async with DocsSession.open(link, sandbox.credentials()) as written:
            markdown = written.to_markdown().strip() or "(empty)"
        print(f"Docs document {DEMO_DOCUMENT_TITLE!r} on the local Docs sandbox, as saved:", file=output)
        for line in markdown.splitlines():
            print(f"  {line}", file=output)
        reply = await run_office_step(
            workspace,
            real=real,
            timeout=timeout,
            environment=dict(runner.environment_overrides),
            output=output,
            cli=cli,
        )
    return result, reply


async def run_office_step(
    workspace: Path,
    *,
    real: bool,
    timeout: float,
    environment: dict[str, str],
    output: TextIO,
    cli: str = DEFAULT_CLI,
) -> Reply:
    """The orchestrator asks elynav-sdr through ``elynav ask``; the reply and the office's history are printed."""
    request = OFFICE_REQUEST if real else f"{OFFICE_REQUEST}\n@standin ask elynav-sdr {OFFICE_DELEGATION}"
    names = ("elynav-orchestrator", "elynav-sdr")
    office = Office(
        workspace,
        list(names),
        executable=None if real else "standin",
        fallback_to_standin=not real,
        environment=environment,
        cli=cli,  # every employee's runner: the plan reads it before the definitions' own
    )
    async with office:
        print(file=output)
        print(
            "elynav office · elynav-orchestrator delegates to elynav-sdr with `elynav ask` (a real process)",
            file=output,
        )
        office.add_listener(lambda event, ask: write_progress(event, ask, output))
        reply = await office.ask("orchestrator", request, timeout=timeout)
        print(reply.summary_line(), file=output)
        delegated = [row for row in office.history().itertuples() if row.sender == "elynav-orchestrator"]
        for row in delegated:  # what the agent asked got back: the point of the delegation
            print(f"Reply of {row.agent} to {row.sender} (through `elynav ask`, {row.outcome}):", file=output)
            write_indented(str(row.reply or ""), output)
        print(f"Reply of {reply.agent} to you:", file=output)
        write_indented(reply.text, output)
        print("History (.elynav/history.jsonl):", file=output)
        for row in office.history().itertuples():
            print(
                f"  {row.sender} -> {row.agent} · {row.outcome} · waited {row.wait_s:.2f} s · ran {row.run_s:.2f} s",
                file=output,
            )
    return reply


def write_progress(event: str, ask: Ask | None, output: TextIO) -> None:
    """The office's steps as they happen, so its seconds of work are not silent."""
    if ask is None or event not in ("started", "ended"):
        return
    if event == "started":
        print(f"  … {ask.agent} works on ask {ask.id} from {ask.sender}", file=output, flush=True)
    else:
        print(f"  … ask {ask.id} to {ask.agent}: {ask.status}", file=output, flush=True)


def write_indented(text: str, output: TextIO) -> None:
    for line in (text.strip() or "(empty)").splitlines():
        print(f"  {line}", file=output)
