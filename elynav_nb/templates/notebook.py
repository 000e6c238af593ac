"""``Templates()``: the template admin as one notebook object (rich repr, ``to_frame()``, widget).

Where it sits: the user-facing face of ``elynav_nb.templates``, over ``TemplateService`` and
``WorkspaceAgents``. It shows a live editor in a notebook kernel through ``_display.rich_bundle``
(the widget module ``elynav_nb.widgets.templates_view`` registers itself; this module never
imports widgets), HTML in nbconvert / GitHub, and a one-line ``repr`` in terminals.

The calls are plain (not ``async``): every operation is a short local file operation under a
file lock, so there is nothing to await.
"""

from __future__ import annotations

import builtins
import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elynav_nb._display import rich_bundle
from elynav_nb.errors import InvalidInput
from elynav_nb.templates.agent_files import ManifestEntry
from elynav_nb.templates.domain import AgentTemplate
from elynav_nb.templates.service import EventListener, TemplateService
from elynav_nb.templates.workspace_agents import AgentDrift, WorkspaceAgents

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Templates"]

FRAME_COLUMNS = ["id", "name", "version", "default_profile_id", "content_bytes", "agents", "drifted_agents"]
# Inline styles: inside a widget (the editor's table) JupyterLab's rendered-HTML styles do not apply.
_HEADER_STYLE = "padding:3px 10px;text-align:left;border-bottom:1px solid #999;white-space:nowrap"
_CELL_STYLE = "padding:3px 10px;text-align:left;border-bottom:1px solid #ddd"


class Templates:
    """The user's agent templates, and the agents a workspace made from them.

    ``Templates(home=None, workspace=None)``: ``home`` defaults to ``$ELYNAV_HOME`` or the platform
    data folder; ``workspace`` (a project folder) is where agents made from templates live.
    """

    def __init__(
        self,
        home: Path | str | None = None,
        *,
        workspace: Path | str | None = None,
        service: TemplateService | None = None,
    ) -> None:
        self.service = service if service is not None else TemplateService.open(home)
        self.workspace_agents = WorkspaceAgents(self.service)
        self.workspace = Path(workspace) if workspace is not None else None

    # --- templates ------------------------------------------------------------------------

    def list(self) -> list[AgentTemplate]:
        return self.service.list_templates()

    def read(self, template_id: str) -> AgentTemplate:
        return self.service.read(template_id)

    def create(self, name: str, content: str, default_profile_id: str | None = None) -> AgentTemplate:
        return self.service.create(name, content, default_profile_id)

    def update(
        self,
        template_id: str,
        content: str | None = None,
        name: str | None = None,
        default_profile_id: str | None = None,
        expected_version: int | None = None,
    ) -> AgentTemplate:
        return self.service.update(template_id, content, name, default_profile_id, expected_version)

    def delete(self, template_id: str, expected_version: int | None = None) -> AgentTemplate:
        return self.service.delete(template_id, expected_version)

    def subscribe(self, listener: EventListener) -> Any:
        """Receive ``TemplateCreated/Updated/Deleted``, ``AgentDriftDetected`` and ``AgentSynced`` events."""
        return self.service.subscribe(listener)

    # --- agents of the workspace ----------------------------------------------------------

    def _workspace(self, workspace: Path | str | None) -> Path:
        chosen = Path(workspace) if workspace is not None else self.workspace
        if chosen is None:
            raise InvalidInput("no workspace: pass workspace=... here or to Templates(workspace=...)")
        return chosen

    def create_agent(
        self,
        template_id: str,
        agent_name: str,
        workspace: Path | str | None = None,
        *,
        description: str | None = None,
    ) -> ManifestEntry:
        """Write ``.claude/agents/<agent_name>.md`` from the template (see ``WorkspaceAgents``)."""
        return self.workspace_agents.create_agent_from_template(
            template_id, agent_name, self._workspace(workspace), description=description
        )

    def agents(self, workspace: Path | str | None = None) -> builtins.list[ManifestEntry]:
        return self.workspace_agents.agents(self._workspace(workspace))

    def drift(self, workspace: Path | str | None = None) -> builtins.list[AgentDrift]:
        """Synchronized agents whose template moved on (publishes ``AgentDriftDetected``)."""
        return self.workspace_agents.detect_drift(self._workspace(workspace))

    def sync_agent(self, agent_name: str, workspace: Path | str | None = None) -> ManifestEntry:
        """Rewrite one agent from its template's current content: the only way agents change."""
        return self.workspace_agents.sync_agent(self._workspace(workspace), agent_name)

    # --- displays -------------------------------------------------------------------------

    def rows(self) -> builtins.list[dict[str, Any]]:
        """One dict per template with its agent and drift counts in the workspace (0 without one)."""
        agent_counts: dict[str, int] = {}
        drift_counts: dict[str, int] = {}
        if self.workspace is not None and self.workspace.is_dir():
            for entry in self.workspace_agents.agents(self.workspace):
                agent_counts[entry.template_id] = agent_counts.get(entry.template_id, 0) + 1
            for drift in self.workspace_agents.detect_drift(self.workspace, publish_events=False):
                drift_counts[drift.template_id] = drift_counts.get(drift.template_id, 0) + 1
        rows: list[dict[str, Any]] = []
        for template in self.list():
            rows.append(
                {
                    "id": template.id,
                    "name": template.name,
                    "version": template.version,
                    "default_profile_id": template.default_profile_id,
                    "content_bytes": len(template.content_md.encode("utf-8")),
                    "agents": agent_counts.get(template.id, 0),
                    "drifted_agents": drift_counts.get(template.id, 0),
                }
            )
        return rows

    def to_frame(self) -> pd.DataFrame:
        """The templates as a DataFrame (columns in ``FRAME_COLUMNS``), one row per template."""
        import pandas as pd  # imported here so `elynav mcp templates` starts without pandas

        return pd.DataFrame(self.rows(), columns=FRAME_COLUMNS)

    def __repr__(self) -> str:
        rows = self.rows()
        drifted = sum(row["drifted_agents"] for row in rows)
        templates_word = "template" if len(rows) == 1 else "templates"
        agents_word = "drifted agent" if drifted == 1 else "drifted agents"
        return f"<Templates: {len(rows)} {templates_word}, {drifted} {agents_word}>"

    def _repr_html_(self) -> str:
        return self.table_html()

    def table_html(self, rows: builtins.list[dict[str, Any]] | None = None) -> str:
        """The HTML table of ``rows`` (default: the current ``rows()``)."""
        if rows is None:
            rows = self.rows()
        header = "".join(
            f"<th style='{_HEADER_STYLE}'>{html.escape(column)}</th>" for column in FRAME_COLUMNS
        )
        body_rows: list[str] = []
        for row in rows:
            cells = "".join(
                f"<td style='{_CELL_STYLE}'>{html.escape(str(row[column]))}</td>" for column in FRAME_COLUMNS
            )
            body_rows.append(f"<tr>{cells}</tr>")
        if not body_rows:
            body_rows.append(f'<tr><td colspan="{len(FRAME_COLUMNS)}"><i>no templates yet</i></td></tr>')
        return (
            f"<div><b>Agent templates</b> ({len(rows)})"
            f"<table style='border-collapse:collapse'><thead><tr>{header}</tr></thead><tbody>{''.join(body_rows)}</tbody></table></div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)
