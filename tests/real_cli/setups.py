"""Per-CLI set-up for the real-binary tests: a runner plan pointed at the fake model API, one turn run.

Each helper builds what the phase-2 runner will build (``plan_codex_runner`` / ``plan_gemini_runner``,
then ``build_*_turn``), writes the plan's config files and runs the turn through ``driver.run_turn``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from elynav_nb.agents.events import AgentEvent
from elynav_nb.agents.protocols.codex.exec_codec import CodexEventDecoder
from elynav_nb.agents.protocols.codex.launch import CodexRunnerPlan, build_codex_turn, plan_codex_runner
from elynav_nb.agents.protocols.gemini.codec import GeminiEventDecoder
from elynav_nb.agents.protocols.gemini.launch import GeminiRunnerPlan, build_gemini_turn, plan_gemini_runner
from elynav_nb.agents.protocols.launch import McpServer, read_mcp_servers
from elynav_nb.crm.demo_database import create_demo_database
from elynav_nb.crm.workspace import write_mcp_config
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi

from .conftest import RealCli
from .driver import TurnRun, run_turn, write_config_files

TEST_AGENT_PROMPT = "You are elynav-test-agent, a careful assistant of the Elynav office. Answer briefly."
CODEX_MODEL = "gpt-5.5"  # a slug codex has metadata for (an unknown one adds a warning item)
GEMINI_MODEL = "gemini-2.5-flash"  # an explicit model: no router request before the turn
TURN_TIMEOUT = 120.0


def crm_workspace(tmp_path: Path) -> tuple[Path, tuple[McpServer, ...]]:
    """A workspace whose ``.mcp.json`` declares the CRM server on a small demo database."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    database = tmp_path / "crm.sqlite"
    create_demo_database(database, accounts=20)
    config_path = write_mcp_config(workspace, crm_database=database)
    servers = read_mcp_servers(json.loads(config_path.read_text()), os.environ)
    return workspace, servers


def plain_workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    return workspace


def codex_plan(
    api: FakeModelApi,
    workspace: Path,
    tmp_path: Path,
    *,
    tools: Sequence[str] = (),
    mcp_servers: Sequence[McpServer] = (),
    permission_mode: str | None = None,
) -> CodexRunnerPlan:
    plan = plan_codex_runner(
        workspace=workspace,
        codex_home=tmp_path / "codex-home",
        system_prompt=TEST_AGENT_PROMPT,
        tools=tools,
        mcp_servers=mcp_servers,
        model=CODEX_MODEL,
        permission_mode=permission_mode,
        provider_base_url=api.openai_base_url,
        request_max_retries=0,
        stream_max_retries=0,
        parent_environment={},
    )
    write_config_files(plan.config_files)
    return plan


async def codex_turn(
    cli: RealCli,
    plan: CodexRunnerPlan,
    prompt: str,
    home: Mapping[str, str],
    *,
    resume_thread_id: str | None = None,
    previous_thread_usage: Mapping[str, int] | None = None,
    on_event: Callable[[AgentEvent, TurnRun], None] | None = None,
) -> tuple[TurnRun, CodexEventDecoder]:
    command = build_codex_turn(
        cli.argv,
        plan,
        prompt,
        resume_thread_id=resume_thread_id,
        parent_environment=os.environ,
        environment={**home, "CODEX_API_KEY": "sk-fake-codex-key"},
    )
    decoder = CodexEventDecoder(
        model=CODEX_MODEL, cli_version=cli.version, previous_thread_usage=previous_thread_usage
    )
    run = await run_turn(command, decoder, timeout=TURN_TIMEOUT, on_event=on_event)
    return run, decoder


def gemini_plan(
    api: FakeModelApi,
    workspace: Path,
    tmp_path: Path,
    *,
    tools: Sequence[str] = (),
    mcp_servers: Sequence[McpServer] = (),
    permission_mode: str | None = None,
) -> GeminiRunnerPlan:
    plan = plan_gemini_runner(
        workspace=workspace,
        gemini_home=tmp_path / "gemini-home",
        system_prompt=TEST_AGENT_PROMPT,
        tools=tools,
        mcp_servers=mcp_servers,
        model=GEMINI_MODEL,
        permission_mode=permission_mode,
        base_url=api.url,
        api_key="fake-gemini-key",
        parent_environment={},
    )
    write_config_files(plan.config_files)
    return plan


async def gemini_turn(
    cli: RealCli,
    plan: GeminiRunnerPlan,
    prompt: str,
    home: Mapping[str, str],
    *,
    resume_session_id: str | None = None,
    on_event: Callable[[AgentEvent, TurnRun], None] | None = None,
) -> tuple[TurnRun, GeminiEventDecoder]:
    command = build_gemini_turn(
        cli.argv,
        plan,
        prompt,
        resume_session_id=resume_session_id,
        parent_environment=os.environ,
        environment=dict(home),
    )
    decoder = GeminiEventDecoder(mcp_server_names=plan.mcp_server_names, cli_version=cli.version)
    run = await run_turn(command, decoder, timeout=TURN_TIMEOUT, on_event=on_event)
    return run, decoder
