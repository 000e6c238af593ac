"""The live notebook's HTML and DataFrame, without a server: a run shown as a person sees it, every
character from the notebook escaped, a long source cut and the cut said; who edited a cell, named when
read."""

from __future__ import annotations

from elynav_nb.notebook.cells import CellView
from elynav_nb.notebook.presence import UNNAMED, Presence, user_state
from elynav_nb.notebook.render import cells_frame, notebook_html


def _cells() -> list[CellView]:
    return [
        CellView(0, "a" * 36, "code", "x = 1", execution_count=3, outputs=[]),
        CellView(1, "b" * 36, "code", "import time\ntime.sleep(9)", running=True),
        CellView(2, "c" * 36, "code", "\n".join(f"line {n}" for n in range(10))),
        CellView(3, "d" * 36, "markdown", "<script>alert('x')</script> **bold**"),
    ]


def test_the_html_shows_each_run_as_a_person_sees_it_and_escapes_everything():
    page = notebook_html(
        path="work/<report>.ipynb",
        backend="jupyter-collaboration",
        user_name="Agent & co",
        status="open",
        collaborators=["Alice <a@x>"],
        cells=_cells(),
        last_editor={"b" * 36: "Agent & co"},
    )
    prompts = [row.split("<td><code>")[2].split("</code>")[0] for row in page.split("<tr>")[2:]]
    assert prompts == ["[3]", "[*]", "[ ]", ""]  # a markdown cell has no prompt
    assert "<script>" not in page and "&lt;script&gt;" in page and "work/&lt;report&gt;.ipynb" in page
    assert "Alice &lt;a@x&gt;" in page and "Agent &amp; co" in page
    assert "line 3" in page and "line 4" not in page and "line 3 …" in page  # the first lines, the cut said
    assert "x = 1</pre>" in page  # a short source whole, no cut mark


def test_the_frame_has_a_row_per_cell_and_counts_as_nullable_integers():
    frame = cells_frame(_cells(), {"a" * 36: "Alice"})
    assert list(frame.columns) == [
        "index",
        "id",
        "type",
        "source",
        "execution_count",
        "outputs",
        "last_editor",
    ]
    assert frame["execution_count"].dtype == "Int64" and frame["execution_count"].isna().tolist() == [
        False,
        True,
        True,
        True,
    ]
    assert frame["last_editor"].tolist() == ["Alice", "", "", ""]
    assert cells_frame([], {}).empty and list(cells_frame([], {}).columns) == list(frame.columns)


def test_a_last_editor_is_named_when_read_and_a_name_outlives_its_peer():
    people = Presence("Agent")
    people.edited(["c1"], [11])  # a person's edit came before their awareness state
    assert people.last_editors() == {"c1": UNNAMED}
    people.learn({11: {"user": {"display_name": "Alice", "name": "alice"}}, 12: {}})
    people.wrote("c2")
    assert people.last_editors() == {"c1": "Alice", "c2": "Agent"}
    people.learn({})  # Alice's tab closed: her state went, her name stays
    people.edited(["c3"], [11, 13, 11])
    assert people.last_editors()["c3"] == f"Alice, {UNNAMED}"
    states = {11: {"user": {"name": "alice"}}, 14: {"user": {}}, 20: {"user": {"display_name": "Agent"}}}
    assert people.others(states, own_client_id=20) == ["alice", "client 14"]
    assert user_state("ada lovelace", "elynav-1", "#000")["initials"] == "AL"
    people.learn({15: ["not", "a", "map"], 16: {"user": "bob"}, 17: None})  # a peer's bad state: no name
    assert people.names_of([15, 16, 17]) == [UNNAMED]
    assert people.others({15: ["x"], 16: {"user": "bob"}}, own_client_id=20) == ["client 15", "client 16"]
