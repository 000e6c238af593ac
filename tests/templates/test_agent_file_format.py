"""One agent file format: a template-made agent and an installed agent are written by one renderer."""

from __future__ import annotations

from pathlib import Path

import pytest

from elynav_nb._agent_file import render_agent_file
from elynav_nb.agents.definitions import AgentDefinition, install_agents
from elynav_nb.templates.domain import DEFAULT_PROFILES, Profile
from elynav_nb.templates.service import TemplateService
from elynav_nb.templates.workspace_agents import WorkspaceAgents

PROMPT = "You review pull requests.\n\n---\n\nBe brief: « une remarque » per finding.\n"


def _profile(profile_id: str) -> Profile:
    for profile in DEFAULT_PROFILES:
        if profile.id == profile_id:
            return profile
    raise AssertionError(f"no default profile {profile_id}")


def test_a_template_made_agent_keeps_its_cli(service: TemplateService, workspace: Path) -> None:
    template = service.create("Codex reviewer", PROMPT, "codex-default")
    entry = WorkspaceAgents(service).create_agent_from_template(template.id, "codex-reviewer", workspace)
    definition = AgentDefinition.load(workspace / entry.file)
    assert definition.cli == "codex"
    assert definition.model == "gpt-5-codex"
    assert "\ncli: codex\n" in (workspace / entry.file).read_text(encoding="utf-8")


@pytest.mark.parametrize("profile_id", [profile.id for profile in DEFAULT_PROFILES])
def test_both_paths_write_the_same_bytes_for_the_same_agent(
    service: TemplateService, workspace: Path, tmp_path: Path, profile_id: str
) -> None:
    profile = _profile(profile_id)
    template = service.create("Reviewer", PROMPT, profile_id)
    description = 'Reviews code: "strict" mode, accents é'
    entry = WorkspaceAgents(service).create_agent_from_template(
        template.id, "reviewer", workspace, description=description
    )
    from_template = (workspace / entry.file).read_bytes()

    same_agent = AgentDefinition(
        name="reviewer",
        description=description,
        tools=profile.tools,
        model=profile.model,
        permission_mode=profile.permission_mode,
        cli=profile.cli,
        prompt=PROMPT,
    )
    assert same_agent.to_markdown().encode("utf-8") == from_template
    (installed,) = install_agents(tmp_path / "other-workspace", [same_agent])
    assert installed.read_bytes() == from_template
    # and what the loader reads back writes the very same bytes again
    assert AgentDefinition.load(workspace / entry.file).to_markdown().encode("utf-8") == from_template


def test_the_renderer_leaves_out_what_is_absent_and_round_trips() -> None:
    text = render_agent_file(name="plain", description="Plain agent.", prompt="\n\n  Do it.\n\n")
    assert text == "---\nname: plain\ndescription: Plain agent.\n---\n\nDo it.\n"
    definition = AgentDefinition.parse(text)
    assert definition.tools == () and definition.cli is None and definition.prompt == "Do it."
    assert definition.to_markdown() == text
