"""The six Elynav agents: they load, follow the seed's tool table, and the two copies never drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from elynav_nb.agents.definitions import AgentDefinition, builtin_agents, default_agents_folder, load_agents
from elynav_nb.office import ASK_RULE

REPO_AGENTS_FOLDER = Path(__file__).resolve().parents[2] / "agents"

SIX_NAMES = {
    "elynav-orchestrator",
    "elynav-sdr",
    "elynav-cmo",
    "elynav-content",
    "elynav-dev-proposer",
    "elynav-dev-executor",
}

# The CRM server is named "crm" in .mcp.json; these are the tools its catalogue offers.
CRM_TOOLS = {
    "mcp__crm__search_accounts",
    "mcp__crm__get_account",
    "mcp__crm__create_account",
    "mcp__crm__update_account",
    "mcp__crm__search_contacts",
    "mcp__crm__create_contact",
    "mcp__crm__log_activity",
    "mcp__crm__list_activities",
    "mcp__crm__pipeline_summary",
    "mcp__crm__create_opportunity",
    "mcp__crm__update_opportunity_stage",
}
CRM_WRITE_TOOLS = {
    "mcp__crm__create_account",
    "mcp__crm__update_account",
    "mcp__crm__create_contact",
    "mcp__crm__create_opportunity",
    "mcp__crm__update_opportunity_stage",
}


@pytest.fixture(scope="module")
def agents() -> dict[str, AgentDefinition]:
    return builtin_agents()


def test_default_folder_is_inside_the_package() -> None:
    folder = default_agents_folder()
    assert folder.is_dir()
    assert folder.parent.name == "definitions" and folder.parent.parent.name == "agents"


def test_package_copy_is_byte_identical_to_repo_agents_folder() -> None:
    repo_files = sorted(path.name for path in REPO_AGENTS_FOLDER.glob("*.md"))
    package_files = sorted(path.name for path in default_agents_folder().glob("*.md"))
    assert repo_files == package_files
    for file_name in repo_files:
        repo_bytes = (REPO_AGENTS_FOLDER / file_name).read_bytes()
        package_bytes = (default_agents_folder() / file_name).read_bytes()
        assert repo_bytes == package_bytes, f"{file_name} differs: copy agents/ to elynav_nb/agents/builtin/"


def test_six_agents_load_with_file_name_equal_to_name(agents: dict[str, AgentDefinition]) -> None:
    assert set(agents) == SIX_NAMES
    for name, definition in agents.items():
        assert definition.source_path is not None
        assert definition.source_path.name == f"{name}.md"
    assert set(load_agents(REPO_AGENTS_FOLDER)) == SIX_NAMES


def test_files_are_in_canonical_form(agents: dict[str, AgentDefinition]) -> None:
    # So `install_agents`, which writes `to_markdown()`, installs exactly the shipped bytes.
    for definition in agents.values():
        assert definition.source_path is not None
        assert definition.to_markdown() == definition.source_path.read_text(encoding="utf-8")


def test_prompts_are_real_french_system_prompts(agents: dict[str, AgentDefinition]) -> None:
    for name, definition in agents.items():
        total_lines = len(definition.to_markdown().splitlines())
        assert 25 <= total_lines <= 60, f"{name}: {total_lines} lines"
        prompt = definition.prompt
        for section in ["## Entrées", "## Ce que tu ne fais jamais", "## Ton rapport de fin de tour"]:
            assert section in prompt, f"{name} lacks {section!r}"
        assert "Tu es" in prompt
        assert len(definition.description) > 60


def test_every_crm_tool_belongs_to_the_crm_catalogue(agents: dict[str, AgentDefinition]) -> None:
    for definition in agents.values():
        for tool in definition.tools:
            if tool.startswith("mcp__"):
                assert tool in CRM_TOOLS, f"{definition.name}: unknown MCP tool {tool}"


def _crm_tools(definition: AgentDefinition) -> set[str]:
    return {tool for tool in definition.tools if tool.startswith("mcp__crm__")}


def test_orchestrator_tools_follow_the_seed(agents: dict[str, AgentDefinition]) -> None:
    orchestrator = agents["elynav-orchestrator"]
    assert {"Read", "Write"} <= set(orchestrator.tools)
    assert "mcp__crm__pipeline_summary" in orchestrator.tools
    assert not _crm_tools(orchestrator) & CRM_WRITE_TOOLS, (
        "the orchestrator reads the CRM, logs decisions only"
    )
    assert "Bash" not in orchestrator.tools  # no shell: only the office's delegation command
    assert ASK_RULE in orchestrator.tools and "elynav ask" in orchestrator.prompt


def test_sdr_tools_follow_the_seed(agents: dict[str, AgentDefinition]) -> None:
    sdr = agents["elynav-sdr"]
    non_crm = {tool for tool in sdr.tools if not tool.startswith("mcp__")}
    assert non_crm == {"WebSearch", "WebFetch"}
    assert {"mcp__crm__search_accounts", "mcp__crm__create_account", "mcp__crm__create_contact"} <= set(
        sdr.tools
    )
    assert "mcp__crm__log_activity" in sdr.tools
    assert "mcp__crm__update_opportunity_stage" not in sdr.tools


def test_cmo_and_content_tools_follow_the_seed(agents: dict[str, AgentDefinition]) -> None:
    for name, delegation in [("elynav-cmo", {ASK_RULE}), ("elynav-content", set())]:
        definition = agents[name]
        non_crm = {tool for tool in definition.tools if not tool.startswith("mcp__")}
        assert non_crm == {"Read", "Write"} | delegation, name  # the CMO hands its briefs to content
        assert _crm_tools(definition), f"{name} reads the CRM"
        assert not _crm_tools(definition) & CRM_WRITE_TOOLS, f"{name} never writes the CRM"
        assert not _crm_tools(definition) & {"mcp__crm__log_activity"}, name


def test_dev_proposer_is_read_only_except_proposals(agents: dict[str, AgentDefinition]) -> None:
    proposer = agents["elynav-dev-proposer"]
    assert proposer.tools == ("Read", "Grep", "Glob", "Write")
    assert proposer.permission_mode in {"plan", "default"}
    assert "propositions/" in proposer.prompt


def test_dev_executor_has_every_dev_tool_in_bypass_mode(agents: dict[str, AgentDefinition]) -> None:
    executor = agents["elynav-dev-executor"]
    assert executor.permission_mode == "bypassPermissions"
    # Exactly what `init.tools` reports for `--agent elynav-dev-executor` on CLI 2.1.197 and 2.1.332: with Bash
    # in the list the CLI drops Grep and Glob (search goes through Bash), and TodoWrite is absent in --print mode.
    assert executor.tools == ("Read", "Write", "Edit", "Bash", "WebFetch", "WebSearch", "NotebookEdit")
    assert not _crm_tools(executor), "the executor never touches the CRM"
    assert "branche dédiée" in executor.prompt
    assert "ok push" in executor.prompt


def test_only_the_executor_bypasses_permissions(agents: dict[str, AgentDefinition]) -> None:
    bypassing = {
        name for name, definition in agents.items() if definition.permission_mode == "bypassPermissions"
    }
    assert bypassing == {"elynav-dev-executor"}
    for definition in agents.values():
        assert definition.model in {"sonnet", "opus", "haiku"}
