"""One workspace wired to several MCP servers: the agent runner, the stand-in CLI, the CRM and the
template admin meet through ``.mcp.json``, and the template policy sees which agent is calling."""

from __future__ import annotations

import json

import pytest

from elynav_nb.agents import AgentRunner, ToolResult, install_agents
from elynav_nb.crm import write_mcp_config
from elynav_nb.crm.demo_database import create_demo_database
from elynav_nb.templates import TemplateService


def test_mcp_config_declares_crm_templates_and_docs(tmp_path):
    path = write_mcp_config(tmp_path, crm_database=tmp_path / "crm.sqlite", templates=True, docs=True)
    servers = json.loads(path.read_text())["mcpServers"]
    assert sorted(servers) == ["crm", "docs", "templates"]
    assert servers["templates"]["args"][-2:] == ["--agent", "${ELYNAV_AGENT_NAME:-workspace}"]
    assert servers["docs"]["args"][-2:] == ["mcp", "docs"]
    assert "DOCS_SESSION_ID" not in path.read_text()  # credentials never go into the file


@pytest.mark.anyio
async def test_agent_calls_crm_and_templates_tools_under_its_own_identity(tmp_path):
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    install_agents(workspace, ["elynav-orchestrator"])
    create_demo_database(workspace / "crm.sqlite", accounts=20, seed=3)
    write_mcp_config(workspace, crm_database=workspace / "crm.sqlite", templates=True)
    TemplateService.open(home).create("Prospection", "Tu prospectes avec soin.")
    runner = AgentRunner(
        "elynav-orchestrator",
        workspace,
        executable="standin",
        permission_mode="bypassPermissions",
        environment={
            "ELYNAV_HOME": str(home),
            "IS_SANDBOX": "1",
            "ELYNAV_STANDIN_HOME": str(tmp_path / "standin"),
        },
    )
    async with runner:
        started = (await runner.send("bonjour")).events[0]
        listed = await runner.send("@standin mcp templates idea_template_list {}")
        refused = await runner.send(
            '@standin mcp templates idea_template_create {"name": "X", "content_md": "y"}'
        )
        pipeline = await runner.send("@standin mcp crm pipeline_summary {}")
    assert {(server.name, server.status) for server in started.mcp_servers} == {
        ("crm", "connected"),
        ("templates", "connected"),
    }
    [listed_result] = [event for event in listed.events if isinstance(event, ToolResult)]
    assert not listed_result.is_error and "Prospection" in listed_result.text
    [refused_result] = [event for event in refused.events if isinstance(event, ToolResult)]
    assert refused_result.is_error  # writes are not granted to elynav-orchestrator
    assert [template.name for template in TemplateService.open(home).list_templates()] == ["Prospection"]
    [pipeline_result] = [event for event in pipeline.events if isinstance(event, ToolResult)]
    assert not pipeline_result.is_error
