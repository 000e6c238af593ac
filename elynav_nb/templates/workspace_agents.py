"""Agents made from templates, in one workspace: create, detect drift, sync explicitly.

Where it sits: I/O over a workspace folder, next to ``service.py`` (which it uses to read
templates and to publish events). Text is rendered and decoded by ``agent_files`` (pure);
writes are atomic (``elynav_nb._files``) and serialised by a lock on ``.elynav/.agents.lock``
(``fileio``).

Data flow:

* ``create_agent_from_template`` reads the template, renders ``.claude/agents/<agent>.md`` from
  it and its default profile, then records the agent in ``.elynav/agents.json``
  (``template_id``, ``synchronized: true``, ``synced_template_version``);
* ``detect_drift`` compares each synchronized agent's ``synced_template_version`` with its
  template's current version and publishes ``AgentDriftDetected`` for each one behind;
  agents whose template was deleted are skipped;
* ``sync_agent`` is the only operation that rewrites an agent from its template.

A template update never reaches this module by itself (seed rule: no automatic sync).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from elynav_nb._files import write_atomically
from elynav_nb.errors import AgentNotFound, Duplicate, InvalidInput, TemplateNotFound
from elynav_nb.templates.agent_files import (
    ManifestEntry,
    decode_manifest,
    encode_manifest,
    render_agent_file,
)
from elynav_nb.templates.domain import (
    AgentDriftDetected,
    AgentSynced,
    AgentTemplate,
    checked_one_line,
    validate_agent_name,
)
from elynav_nb.templates.fileio import file_lock
from elynav_nb.templates.service import TemplateService

__all__ = [
    "AgentDrift",
    "WorkspaceAgents",
    "create_agent_from_template",
    "detect_drift",
    "sync_agent",
]

MANIFEST_PATH = Path(".elynav") / "agents.json"
LOCK_PATH = Path(".elynav") / ".agents.lock"
AGENTS_FOLDER = Path(".claude") / "agents"


@dataclass(frozen=True)
class AgentDrift:
    """A synchronized agent whose template moved on since its last sync."""

    agent_name: str
    template_id: str
    synced_template_version: int
    template_version: int


def _checked_prompt(template: AgentTemplate) -> str:
    """The template's content as an agent prompt; agent loaders refuse an empty prompt, so do we."""
    if not template.content_md.strip():
        raise InvalidInput(
            f"template {template.id!r} has no content: an agent needs a system prompt",
            details={"templateId": template.id},
        )
    return template.content_md


def _checked_workspace(workspace: Path | str) -> Path:
    folder = Path(workspace).expanduser()
    if not folder.is_dir():
        raise InvalidInput(f"workspace {str(folder)!r} is not a folder", details={"field": "workspace"})
    return folder


class WorkspaceAgents:
    """Template-made agents of any workspace, through one template service."""

    def __init__(self, service: TemplateService) -> None:
        self.service = service

    def __repr__(self) -> str:
        return f"WorkspaceAgents({self.service!r})"

    # --- manifest I/O ---------------------------------------------------------------------

    @staticmethod
    def _read_manifest(workspace: Path) -> dict[str, ManifestEntry]:
        try:
            data = (workspace / MANIFEST_PATH).read_bytes()
        except FileNotFoundError:
            return {}
        return decode_manifest(data)

    @staticmethod
    def _write_manifest(workspace: Path, entries: dict[str, ManifestEntry]) -> None:
        write_atomically(workspace / MANIFEST_PATH, encode_manifest(entries))

    def agents(self, workspace: Path | str) -> list[ManifestEntry]:
        """The template-made agents recorded in the workspace manifest, by name."""
        folder = _checked_workspace(workspace)
        if not (folder / MANIFEST_PATH).exists():
            return []  # no template-made agents yet: do not create .elynav/ just to read
        with file_lock(folder / LOCK_PATH, shared=True):
            entries = self._read_manifest(folder)
        return [entries[name] for name in sorted(entries)]

    # --- use cases ------------------------------------------------------------------------

    def create_agent_from_template(
        self,
        template_id: str,
        agent_name: str,
        workspace: Path | str,
        *,
        description: str | None = None,
    ) -> ManifestEntry:
        """Write ``.claude/agents/<agent_name>.md`` from the template and record it as synchronized."""
        validate_agent_name(agent_name)
        folder = _checked_workspace(workspace)
        template = self.service.read(template_id)
        profile = self.service.profiles.get(template.default_profile_id)
        agent_description = (
            description if description else f"{template.name} (made from template {template.id})"
        )
        checked_one_line(agent_description, "description", "the agent description")
        relative_file = (AGENTS_FOLDER / f"{agent_name}.md").as_posix()
        with file_lock(folder / LOCK_PATH):
            entries = self._read_manifest(folder)
            if agent_name in entries or (folder / relative_file).exists():
                raise Duplicate(
                    f"agent {agent_name!r} already exists in this workspace",
                    details={"agentName": agent_name},
                )
            text = render_agent_file(agent_name, agent_description, profile, _checked_prompt(template))
            write_atomically(folder / relative_file, text.encode("utf-8"))
            entry = ManifestEntry(
                agent_name=agent_name,
                template_id=template.id,
                synchronized=True,
                synced_template_version=template.version,
                profile_id=profile.id,
                description=agent_description,
                file=relative_file,
            )
            entries[agent_name] = entry
            self._write_manifest(folder, entries)
        return entry

    def detect_drift(self, workspace: Path | str, *, publish_events: bool = True) -> list[AgentDrift]:
        """Synchronized agents whose template has a newer version (deleted templates are skipped).

        Each drift is also published as ``AgentDriftDetected`` unless ``publish_events`` is false
        (displays that only count drift use that).
        """
        folder = _checked_workspace(workspace)
        drifts: list[AgentDrift] = []
        for entry in self.agents(folder):
            if not entry.synchronized:
                continue
            try:
                template = self.service.read(entry.template_id)
            except TemplateNotFound:
                continue  # a deleted template leaves its agents as they are
            if template.version > entry.synced_template_version:
                drifts.append(
                    AgentDrift(
                        entry.agent_name, entry.template_id, entry.synced_template_version, template.version
                    )
                )
        if not publish_events:
            return drifts
        for drift in drifts:
            self.service.publish(
                AgentDriftDetected(
                    str(folder),
                    drift.agent_name,
                    drift.template_id,
                    drift.synced_template_version,
                    drift.template_version,
                )
            )
        return drifts

    def sync_agent(self, workspace: Path | str, agent_name: str) -> ManifestEntry:
        """Rewrite the agent's file from its template's current content; record the new version."""
        validate_agent_name(agent_name)
        folder = _checked_workspace(workspace)
        with file_lock(folder / LOCK_PATH):
            entries = self._read_manifest(folder)
            entry = entries.get(agent_name)
            if entry is None:
                raise AgentNotFound(
                    f"agent {agent_name!r} is not a template-made agent of this workspace",
                    details={"agentName": agent_name},
                )
            if not entry.synchronized:
                raise InvalidInput(
                    f"agent {agent_name!r} is not synchronized with its template",
                    details={"agentName": agent_name},
                )
            template = self.service.read(entry.template_id)
            profile = self.service.profiles.get(entry.profile_id)
            text = render_agent_file(agent_name, entry.description, profile, _checked_prompt(template))
            write_atomically(folder / entry.file, text.encode("utf-8"))
            synced = replace(entry, synced_template_version=template.version)
            entries[agent_name] = synced
            self._write_manifest(folder, entries)
        self.service.publish(
            AgentSynced(str(folder), agent_name, template.id, entry.synced_template_version, template.version)
        )
        return synced


def create_agent_from_template(
    template_id: str, agent_name: str, workspace: Path | str, *, service: TemplateService | None = None
) -> ManifestEntry:
    """``WorkspaceAgents.create_agent_from_template`` on ``service`` (default: the user's store)."""
    return WorkspaceAgents(service or TemplateService.open()).create_agent_from_template(
        template_id, agent_name, workspace
    )


def detect_drift(workspace: Path | str, *, service: TemplateService | None = None) -> list[AgentDrift]:
    """``WorkspaceAgents.detect_drift`` on ``service`` (default: the user's store)."""
    return WorkspaceAgents(service or TemplateService.open()).detect_drift(workspace)


def sync_agent(
    workspace: Path | str, agent_name: str, *, service: TemplateService | None = None
) -> ManifestEntry:
    """``WorkspaceAgents.sync_agent`` on ``service`` (default: the user's store)."""
    return WorkspaceAgents(service or TemplateService.open()).sync_agent(workspace, agent_name)
