"""The template admin widget: a table (version, drift count), an editor, Save with ``expected_version``, a diff.

Where it sits: in ``elynav_nb.widgets``; it imports the capability (``elynav_nb.templates``),
never the reverse. Importing this module registers ``TemplatesView`` as the view of
``Templates`` (``_display.register_view``), so ``Templates()`` in a kernel shows this widget.

Data flow: every change comes from a click or an edit in this view (no background task, so no
throttling is needed and no ``with out:``). Save sends ``expected_version`` = the version the
editor was loaded from; a ``VERSION_CONFLICT`` is shown plainly in the status line, the edit is
kept, and the diff switches to "newest stored version vs your edit". A second Save then
replaces that newest version knowingly; Reload discards the edit.
"""

from __future__ import annotations

import difflib
import html
from typing import Any

import ipywidgets as widgets  # type: ignore[import-untyped]

from elynav_nb._display import register_view
from elynav_nb.errors import ElynavError, VersionConflict
from elynav_nb.templates.domain import AgentTemplate
from elynav_nb.templates.notebook import Templates

__all__ = ["TemplatesView", "diff_html"]

_ADDED_STYLE = "color:#1a7f37;background:#e6ffec"
_REMOVED_STYLE = "color:#cf222e;background:#ffebe9"


def diff_html(stored: str, edited: str, stored_label: str, edited_label: str = "your edit") -> str:
    """A unified diff of two texts as escaped, coloured HTML (``<i>no changes</i>`` when equal)."""
    lines = list(
        difflib.unified_diff(
            stored.splitlines(), edited.splitlines(), fromfile=stored_label, tofile=edited_label, lineterm=""
        )
    )
    if not lines:
        return "<i>no changes</i>"
    rendered: list[str] = []
    for line in lines:
        escaped = html.escape(line)
        if line.startswith("+") and not line.startswith("+++"):
            rendered.append(f'<span style="{_ADDED_STYLE}">{escaped}</span>')
        elif line.startswith("-") and not line.startswith("---"):
            rendered.append(f'<span style="{_REMOVED_STYLE}">{escaped}</span>')
        else:
            rendered.append(escaped)
    return "<pre style='margin:0'>" + "\n".join(rendered) + "</pre>"


class TemplatesView:
    """An editor over a ``Templates`` object. ``.widget`` is the ipywidgets tree."""

    def __init__(self, templates: Templates) -> None:
        self.templates = templates
        self.base: AgentTemplate | None = None  # the stored version the edit is based on
        self.table = widgets.HTML()
        self.selector = widgets.Dropdown(
            description="Template",
            options=[],
            style={"description_width": "initial"},  # the default width cuts the label off
            layout=widgets.Layout(width="auto", min_width="24em"),
        )
        self.editor = widgets.Textarea(
            placeholder="Template content (Markdown)",
            continuous_update=False,
            layout=widgets.Layout(width="100%", height="240px"),
        )
        self.save_button = widgets.Button(description="Save", icon="save", button_style="primary")
        self.reload_button = widgets.Button(description="Reload", icon="refresh")
        self.status = widgets.HTML()
        self.diff = widgets.HTML()
        self.selector.observe(self._on_select, names="value")
        self.editor.observe(self._on_edit, names="value")
        self.save_button.on_click(lambda _button: self.save())
        self.reload_button.on_click(lambda _button: self.reload())
        self.widget = widgets.VBox(
            [
                self.table,
                self.selector,
                self.editor,
                widgets.HBox([self.save_button, self.reload_button, self.status]),
                self.diff,
            ]
        )
        self.refresh()

    # --- state ----------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the store: table, selector options (the selection is kept when it still exists)."""
        rows = self.templates.rows()
        self.table.value = self.templates.table_html(rows)
        options = [(f"{row['name']} ({row['id']}, v{row['version']})", row["id"]) for row in rows]
        current = self.selector.value
        self.selector.options = options
        ids = [template_id for _label, template_id in options]
        if current in ids:
            self.selector.value = current
        elif ids:
            self.selector.value = ids[0]
        else:
            self.selector.value = None
            self._load(None)

    def _on_select(self, change: dict[str, Any]) -> None:
        template_id = change["new"]
        self._load(self.templates.read(template_id) if template_id else None)

    def _on_edit(self, _change: dict[str, Any]) -> None:
        self._show_diff()

    def _load(self, template: AgentTemplate | None) -> None:
        self.base = template
        self.editor.value = template.content_md if template is not None else ""
        self.editor.disabled = template is None
        self.save_button.disabled = template is None
        self._set_status("" if template is None else f"editing version {template.version}")
        self._show_diff()

    def _show_diff(self) -> None:
        if self.base is None:
            self.diff.value = ""
            return
        label = f"stored version {self.base.version}"
        self.diff.value = diff_html(self.base.content_md, self.editor.value, label)

    def _set_status(self, text: str, *, problem: bool = False) -> None:
        escaped = html.escape(text)
        self.status.value = f"<b style='color:#cf222e'>{escaped}</b>" if problem else escaped

    # --- actions --------------------------------------------------------------------------

    def select(self, template_id: str) -> None:
        self.selector.value = template_id

    def reload(self) -> None:
        """Discard the edit and load the newest stored version."""
        self.refresh()
        if self.selector.value:
            self._load(self.templates.read(self.selector.value))

    def save(self) -> AgentTemplate | None:
        """Save the editor's text with ``expected_version``; a conflict is shown, never hidden."""
        if self.base is None:
            return None
        base = self.base
        try:
            saved = self.templates.update(base.id, content=self.editor.value, expected_version=base.version)
        except VersionConflict as conflict:
            self._show_conflict(base, conflict)
            return None
        except ElynavError as error:
            self._set_status(f"{error.code}: {error.message}", problem=True)
            return None
        self.base = saved
        self.refresh()
        self._set_status(f"saved: version {saved.version}")
        self._show_diff()
        return saved

    def _show_conflict(self, base: AgentTemplate, conflict: VersionConflict) -> None:
        newest = self.templates.read(base.id)
        self.base = newest  # a second Save replaces this version knowingly
        self.table.value = self.templates.table_html()
        self._set_status(
            f"{conflict.code}: someone saved version {newest.version} while you edited version {base.version}. "
            f"Your text is kept; the diff shows version {newest.version} against it. "
            f"Save again to replace version {newest.version}, or Reload to drop your edit.",
            problem=True,
        )
        self._show_diff()

    # --- display --------------------------------------------------------------------------

    def __repr__(self) -> str:
        editing = "nothing" if self.base is None else f"{self.base.id} v{self.base.version}"
        return f"<TemplatesView editing {editing}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = repr(self)
        return bundle


register_view(Templates, TemplatesView)
