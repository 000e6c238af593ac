"""Agents made from templates: real Claude Code agent files, manifest, drift, explicit sync."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from elynav_nb.errors import AgentNotFound, Duplicate, InvalidInput, StoreCorrupt, TemplateNotFound
from elynav_nb.templates.domain import AgentDriftDetected, AgentSynced
from elynav_nb.templates.service import TemplateService
from elynav_nb.templates.workspace_agents import AgentDrift, WorkspaceAgents, create_agent_from_template

from .helpers import snapshot

PROMPT = "You review pull requests.\n\n---\n\nBe brief: one paragraph per finding.\n"


def _front_matter_and_body(path: Path) -> tuple[dict[str, object], str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    header, body = text[4:].split("\n---\n\n", 1)  # a blank line between the front matter and the prompt
    return yaml.safe_load(header), body


def test_agent_file_is_a_claude_code_agent_file(service: TemplateService, workspace: Path) -> None:
    template = service.create("Code reviewer: strict", PROMPT, "claude-sonnet-editor")
    entry = WorkspaceAgents(service).create_agent_from_template(template.id, "reviewer", workspace)
    agent_file = workspace / ".claude" / "agents" / "reviewer.md"
    assert entry.file == ".claude/agents/reviewer.md"
    front_matter, body = _front_matter_and_body(agent_file)
    assert front_matter == {
        "name": "reviewer",
        "description": f"Code reviewer: strict (made from template {template.id})",
        "tools": "Read, Grep, Glob, Edit, Write",
        "model": "sonnet",
        "permissionMode": "acceptEdits",
        "cli": "claude",
    }
    assert body == PROMPT


def test_agent_file_loads_with_the_agent_runners_loader(service: TemplateService, workspace: Path) -> None:
    from elynav_nb.agents.definitions import AgentDefinition  # the loader the agent runners use

    template = service.create("Reviewer", PROMPT, "claude-haiku")
    WorkspaceAgents(service).create_agent_from_template(
        template.id, "reviewer", workspace, description='Reviews code: "strict" mode'
    )
    definition = AgentDefinition.load(workspace / ".claude" / "agents" / "reviewer.md")
    assert definition.name == "reviewer"
    assert definition.description == 'Reviews code: "strict" mode'
    assert definition.model == "haiku"
    assert list(definition.tools or ()) == ["Read", "Grep", "Glob"]
    assert definition.permission_mode == "default"
    assert definition.prompt.strip() == PROMPT.strip()


def test_manifest_records_the_seed_fields(service: TemplateService, workspace: Path) -> None:
    template = service.create("Reviewer", PROMPT)
    service.update(template.id, content=PROMPT + "More.\n")
    create_agent_from_template(template.id, "reviewer", workspace, service=service)
    manifest = json.loads((workspace / ".elynav" / "agents.json").read_text())
    recorded = manifest["agents"]["reviewer"]
    assert recorded["template_id"] == template.id
    assert recorded["synchronized"] is True
    assert recorded["synced_template_version"] == 2


def test_update_never_touches_agents_drift_shows_and_sync_is_explicit(
    service: TemplateService, workspace: Path
) -> None:
    agents = WorkspaceAgents(service)
    template = service.create("Reviewer", "v1 prompt\n")
    other = service.create("Writer", "writer prompt\n")
    agents.create_agent_from_template(template.id, "reviewer", workspace)
    agents.create_agent_from_template(template.id, "reviewer-2", workspace)
    agents.create_agent_from_template(other.id, "writer", workspace)
    assert agents.detect_drift(workspace) == []

    before_update = snapshot(workspace)
    service.update(template.id, content="v2 prompt\n")
    service.update(template.id, name="Renamed, same content")
    assert snapshot(workspace) == before_update  # an update never touches agents by itself

    events: list[object] = []
    service.subscribe(events.append)
    drifts = agents.detect_drift(workspace)
    assert drifts == [AgentDrift("reviewer", template.id, 1, 2), AgentDrift("reviewer-2", template.id, 1, 2)]
    assert events == [
        AgentDriftDetected(str(workspace), "reviewer", template.id, 1, 2),
        AgentDriftDetected(str(workspace), "reviewer-2", template.id, 1, 2),
    ]
    assert snapshot(workspace) == before_update  # detection does not write either

    synced = agents.sync_agent(workspace, "reviewer")
    assert synced.synced_template_version == 2
    _front_matter, body = _front_matter_and_body(workspace / ".claude" / "agents" / "reviewer.md")
    assert body == "v2 prompt\n"
    _front_matter, untouched_body = _front_matter_and_body(workspace / ".claude" / "agents" / "reviewer-2.md")
    assert untouched_body == "v1 prompt\n"
    assert events[-1] == AgentSynced(str(workspace), "reviewer", template.id, 1, 2)
    assert agents.detect_drift(workspace, publish_events=False) == [
        AgentDrift("reviewer-2", template.id, 1, 2)
    ]


def test_a_deleted_template_leaves_its_agents_and_drift_skips_them(
    service: TemplateService, workspace: Path
) -> None:
    agents = WorkspaceAgents(service)
    template = service.create("Reviewer", "v1\n")
    agents.create_agent_from_template(template.id, "reviewer", workspace)
    service.update(template.id, content="v2\n")
    before = snapshot(workspace)
    service.delete(template.id)
    assert snapshot(workspace) == before
    assert agents.detect_drift(workspace) == []
    with pytest.raises(TemplateNotFound):
        agents.sync_agent(workspace, "reviewer")
    assert snapshot(workspace) == before


def test_bad_agent_requests(service: TemplateService, workspace: Path, tmp_path: Path) -> None:
    agents = WorkspaceAgents(service)
    template = service.create("Reviewer", "v1\n")
    agents.create_agent_from_template(template.id, "reviewer", workspace)
    before = snapshot(workspace)
    with pytest.raises(Duplicate):
        agents.create_agent_from_template(template.id, "reviewer", workspace)
    with pytest.raises(InvalidInput):
        agents.create_agent_from_template(template.id, "-dash", workspace)
    with pytest.raises(InvalidInput):
        agents.create_agent_from_template(template.id, "../escape", workspace)
    with pytest.raises(TemplateNotFound):
        agents.create_agent_from_template("missing-9", "other", workspace)
    with pytest.raises(AgentNotFound):
        agents.sync_agent(workspace, "nobody")
    with pytest.raises(InvalidInput):
        agents.create_agent_from_template(template.id, "other", tmp_path / "not-a-folder")
    empty = service.create("Empty", "  \n")
    with pytest.raises(InvalidInput):  # agent loaders refuse an empty system prompt
        agents.create_agent_from_template(empty.id, "empty", workspace)
    assert snapshot(workspace) == before


def test_an_existing_hand_written_agent_file_is_not_overwritten(
    service: TemplateService, workspace: Path
) -> None:
    template = service.create("Reviewer", "v1\n")
    hand_written = workspace / ".claude" / "agents" / "reviewer.md"
    hand_written.parent.mkdir(parents=True)
    hand_written.write_text("---\nname: reviewer\ndescription: mine\n---\nmine\n")
    with pytest.raises(Duplicate):
        WorkspaceAgents(service).create_agent_from_template(template.id, "reviewer", workspace)
    assert hand_written.read_text().endswith("mine\n")


def test_a_corrupt_manifest_is_a_clear_error(service: TemplateService, workspace: Path) -> None:
    template = service.create("Reviewer", "v1\n")
    (workspace / ".elynav").mkdir()
    (workspace / ".elynav" / "agents.json").write_text("{oops")
    with pytest.raises(StoreCorrupt):
        WorkspaceAgents(service).create_agent_from_template(template.id, "reviewer", workspace)
    with pytest.raises(StoreCorrupt):
        WorkspaceAgents(service).detect_drift(workspace)
    assert (workspace / ".elynav" / "agents.json").read_text() == "{oops"
