"""``Templates()`` (repr, HTML, DataFrame) and its widget, headless: edit, save, conflict shown plainly."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from elynav_nb._display import view_for
from elynav_nb.errors import InvalidInput
from elynav_nb.templates.notebook import FRAME_COLUMNS, Templates
from elynav_nb.widgets.templates_view import TemplatesView, diff_html


@pytest.fixture
def templates(home: Path, workspace: Path) -> Templates:
    return Templates(home, workspace=workspace)


def test_three_faces_of_templates(templates: Templates) -> None:
    assert repr(templates) == "<Templates: 0 templates, 0 drifted agents>"
    assert "no templates yet" in templates._repr_html_()
    assert list(templates.to_frame().columns) == FRAME_COLUMNS

    reviewer = templates.create("Code <reviewer>", "v1\n")
    writer = templates.create("Writer", "write\n", "claude-opus")
    templates.create_agent(reviewer.id, "reviewer")
    templates.create_agent(reviewer.id, "reviewer-2")
    templates.create_agent(writer.id, "writer")
    templates.update(reviewer.id, content="v2\n")

    assert repr(templates) == "<Templates: 2 templates, 2 drifted agents>"
    frame = templates.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert frame["id"].tolist() == [reviewer.id, writer.id]
    assert frame["version"].tolist() == [2, 1]
    assert frame["agents"].tolist() == [2, 1]
    assert frame["drifted_agents"].tolist() == [2, 0]
    html_table = templates._repr_html_()
    assert "Code &lt;reviewer&gt;" in html_table and "<reviewer>" not in html_table

    bundle = templates._repr_mimebundle_()
    assert bundle["text/plain"] == repr(templates)  # outside a kernel: HTML and text, no widget
    assert "text/html" in bundle and "application/vnd.jupyter.widget-view+json" not in bundle

    templates.sync_agent("reviewer")
    assert [drift.agent_name for drift in templates.drift()] == ["reviewer-2"]


def test_agent_calls_need_a_workspace(home: Path) -> None:
    templates = Templates(home)
    template = templates.create("Reviewer", "v1\n")
    with pytest.raises(InvalidInput):
        templates.create_agent(template.id, "reviewer")
    assert templates.to_frame()["drifted_agents"].tolist() == [0]


def test_widget_is_registered_as_the_view_of_templates(templates: Templates) -> None:
    assert isinstance(view_for(templates), TemplatesView)


def test_widget_table_and_selector_are_readable_inside_a_widget(templates: Templates) -> None:
    # Inside a widget JupyterLab's table styles do not apply: the cells carry their own padding, and the
    # selector's label is not cut to the default description width (both found in a real JupyterLab).
    templates.create("Code reviewer", "v1\n")
    view = TemplatesView(templates)
    assert view.table.value.count("<th style='padding") == len(FRAME_COLUMNS)
    assert "<td style='padding" in view.table.value
    assert view.selector.style.description_width == "initial"


def test_widget_edit_and_save(templates: Templates) -> None:
    template = templates.create("Reviewer", "line one\nline two\n")
    view = TemplatesView(templates)
    assert view.selector.value == template.id
    assert "Reviewer" in view.table.value and ">1</td>" in view.table.value
    assert view.editor.value == "line one\nline two\n"
    assert "no changes" in view.diff.value

    view.editor.value = "line one\nline 2\n"
    assert "-line two" in view.diff.value and "+line 2" in view.diff.value
    view.save_button.click()
    assert templates.read(template.id).version == 2
    assert templates.read(template.id).content_md == "line one\nline 2\n"
    assert view.status.value == "saved: version 2"
    assert "no changes" in view.diff.value
    assert ">2</td>" in view.table.value
    assert repr(view) == f"<TemplatesView editing {template.id} v2>"
    assert view._repr_mimebundle_()["text/plain"] == repr(view)


def test_widget_shows_a_conflict_plainly_and_keeps_the_edit(templates: Templates) -> None:
    template = templates.create("Reviewer", "base\n")
    view = TemplatesView(templates)
    view.editor.value = "my edit\n"
    templates.update(template.id, content="someone else's edit\n")  # another writer saves version 2 first

    view.save_button.click()
    assert "VERSION_CONFLICT" in view.status.value
    assert "version 2" in view.status.value and "version 1" in view.status.value
    assert view.editor.value == "my edit\n"  # the edit is kept
    assert templates.read(template.id).content_md == "someone else's edit\n"  # nothing overwritten
    assert "stored version 2" in view.diff.value
    assert "-someone else&#x27;s edit" in view.diff.value and "+my edit" in view.diff.value

    view.save_button.click()  # a second Save replaces version 2 knowingly
    assert templates.read(template.id).content_md == "my edit\n"
    assert templates.read(template.id).version == 3


def test_widget_reload_discards_the_edit_and_errors_are_shown(templates: Templates) -> None:
    template = templates.create("Reviewer", "base\n")
    view = TemplatesView(templates)
    view.editor.value = "a" * (2 * 1024 * 1024)
    view.save_button.click()
    assert "INVALID_INPUT" in view.status.value
    view.reload_button.click()
    assert view.editor.value == "base\n"
    templates.delete(template.id)
    view.reload()
    assert view.selector.options == ()
    assert view.save_button.disabled


def test_diff_html_escapes() -> None:
    assert diff_html("a", "a", "stored") == "<i>no changes</i>"
    rendered = diff_html("<b>", "<i>", "stored")
    assert "&lt;b&gt;" in rendered and "<b>" not in rendered.replace("<b style", "")
