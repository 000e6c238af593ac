"""The pure parts of elynav_nb.notebook, without a server: minimal text edits, messages, outputs, journal, locate."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jupyter_ydoc import YNotebook
from pycrdt import Doc, Text

from elynav_nb.errors import CellNotFound, InvalidInput, NotFound, ProtocolError
from elynav_nb.notebook import cells, wire
from elynav_nb.notebook.journal import Journal, Write
from elynav_nb.notebook.kernel_wire import MainShell, decode_kernel_message, encode_kernel_message
from elynav_nb.notebook.locate import locate_current
from elynav_nb.notebook.outputs import OutputCollector, outputs_as_text, outputs_summary

TEXT = st.text(alphabet="ab \néü\t", max_size=80)


@settings(max_examples=200, deadline=None)
@given(old=TEXT, new=TEXT)
def test_set_source_makes_the_text_read_the_new_source(old, new):
    doc: Doc = Doc()
    doc["t"] = text = Text(old)
    cells.set_source(text, new)
    assert str(text) == new


@settings(max_examples=100, deadline=None)
@given(old=TEXT, new=TEXT, typed=st.text(alphabet="XYZ", min_size=1, max_size=5))
def test_a_concurrent_insert_at_the_start_survives_the_edit(old, new, typed):
    agent: Doc = Doc()
    agent["t"] = agent_text = Text(old)
    person: Doc = Doc()
    person.apply_update(agent.get_update())
    person_text = person.get("t", type=Text)
    person_text.insert(0, typed)  # the person types before seeing the agent's edit
    cells.set_source(agent_text, new)
    agent.apply_update(person.get_update(agent.get_state()))
    person.apply_update(agent.get_update(person.get_state()))
    assert str(agent_text) == str(person_text)
    assert typed in str(agent_text)


def test_the_edits_keep_what_did_not_change():
    assert cells.text_edits("x = 1\nprint(x)\n", "x = 1\nprint(x * 2)\n") == [(13, 13, " * 2")]
    assert cells.text_edits("same", "same") == []
    long_old = "".join(chr(97 + n % 26) for n in range(1000))
    assert cells.text_edits(long_old, long_old[::-1]) == [
        (0, 1000, long_old[::-1])
    ]  # one line: replaced whole


def test_cells_by_id_and_typed_refusals():
    notebook = YNotebook(Doc())
    cells.insert_cell(notebook, 0, "code", "x = 1", "one")
    cells.insert_cell(notebook, 1, "markdown", "# two", "two")
    cells.move_cell(notebook, 0, 1)
    assert [cell.id for cell in cells.read_cells(notebook)] == ["two", "one"]
    with pytest.raises(CellNotFound):
        cells.cell_index(notebook, "three")
    with pytest.raises(InvalidInput):
        cells.insert_cell(notebook, 9, "code", "", "x")
    with pytest.raises(InvalidInput):
        cells.set_outputs(notebook, 0, [], None)  # a markdown cell has no outputs
    cells.set_outputs(notebook, 1, [{"output_type": "stream", "name": "stdout", "text": "1\n"}], 3)
    [_, code] = cells.read_cells(notebook)
    assert code.execution_count == 3 and code.outputs[0]["text"] == "1\n"


def test_the_journal_replays_idempotently_and_never_resurrects():
    notebook = YNotebook(Doc())
    journal = Journal()
    writes = [
        Write("insert", "a", source="a = 1", index=0),
        Write("insert", "b", source="b = 1", index=1, after="a"),
        Write("source", "a", source="a = 2"),
        Write("delete", "b"),
    ]
    for write in writes:
        write.apply(notebook)
        journal.add(write)
    assert journal.replay(notebook, lambda: 0) == 4  # twice: the same notebook
    assert [(cell.id, cell.source) for cell in cells.read_cells(notebook)] == [("a", "a = 2")]
    fresh = YNotebook(Doc())  # a reset room: everything written again, nothing twice
    journal.replay(fresh, lambda: 0)
    assert [(cell.id, cell.source) for cell in cells.read_cells(fresh)] == [("a", "a = 2")]
    with pytest.raises(CellNotFound):
        Write("source", "gone", source="x").apply(fresh)
    assert Write("source", "gone", source="x").apply(fresh, replay=True) is None


def test_room_messages_and_their_faults():
    doc: Doc = Doc()
    doc["t"] = Text("x")
    probe = wire.probe_message(doc.get_state())
    assert wire.decode_message(probe).kind == "step1"
    assert wire.decode_message(wire.step2_message(doc.get_update())).kind == "step2"
    assert wire.decode_state_vector(doc.get_state()) == {doc.client_id: 1}
    assert wire.lost_clients({1: 5, 2: 3}, {1: 5, 2: 1}) == [2]
    for garbage in (b"", b"\x00\x07\x01\x00", b"\x09", b"\x00\x01\xff\xff\xff"):
        with pytest.raises(ProtocolError):
            wire.decode_message(garbage)


def test_outputs_are_built_as_a_frontend_builds_them_and_bounded():
    collector = OutputCollector(max_output_bytes=2_000)
    collector.add("execute_input", {"execution_count": 4})
    collector.add("stream", {"name": "stdout", "text": "a"})
    collector.add("stream", {"name": "stdout", "text": "b\n"})
    collector.add(
        "display_data", {"data": {"text/plain": "old"}, "metadata": {}, "transient": {"display_id": "d"}}
    )
    collector.add(
        "update_display_data",
        {"data": {"text/plain": "new"}, "metadata": {}, "transient": {"display_id": "d"}},
    )
    collector.add("stream", {"name": "stdout", "text": "x" * 10_000})
    outputs = collector.notebook_outputs()
    assert outputs[0] == {"output_type": "stream", "name": "stdout", "text": "ab\n"}
    assert outputs[1]["data"] == {"text/plain": "new"} and "_display_id" not in outputs[1]
    assert "cut by elynav" in outputs[2]["text"] and len(outputs[2]["text"]) < 2_000
    collector.add("clear_output", {"wait": True})
    collector.add(
        "execute_result",
        {"data": {"text/plain": "42", "image/png": "iVBOR"}, "metadata": {}, "execution_count": 4},
    )
    [result] = collector.notebook_outputs()
    assert outputs_as_text([result]) == "42\n[image/png, 0.0 KB]"
    assert outputs_summary([result]) == "execute_result (image/png, text/plain)"
    assert outputs_as_text(outputs, max_chars=10).endswith("more characters not shown]")


def test_kernel_messages_in_both_framings():
    message = {
        "channel": "shell",
        "header": {"msg_id": "1"},
        "parent_header": {},
        "metadata": {},
        "content": {"code": "é"},
    }
    for binary in (True, False):
        assert decode_kernel_message(encode_kernel_message(message, binary=binary)) == message
    with pytest.raises(ProtocolError):
        decode_kernel_message(b"\x05\x00\x00")


def test_locate_finds_the_notebook_of_a_server_kernel(tmp_path):
    root = tmp_path / "root"
    (root / "work").mkdir(parents=True)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "jpserver-4242.json").write_text(
        json.dumps({"url": "http://127.0.0.1:8888/", "token": "t0k3n", "root_dir": str(root)})
    )
    environment = {
        "JPY_SESSION_NAME": str(root / "work" / "a.ipynb"),
        "JPY_PARENT_PID": "4242",
        "JUPYTER_RUNTIME_DIR": str(runtime),
    }
    place = locate_current(environment)
    assert (place.path, place.server_url, place.token) == ("work/a.ipynb", "http://127.0.0.1:8888/", "t0k3n")
    assert "t0k3n" not in repr(place)
    with pytest.raises(NotFound):
        locate_current({"JPY_PARENT_PID": "4242"})  # a kernel of jupyter_client alone (nbval)


def _status(state: str, parent_id: str = "", **parent: str) -> dict:
    parent_header = {"msg_id": parent_id, "msg_type": "execute_request", **parent} if parent_id else {}
    return {
        "header": {"msg_type": "status"},
        "parent_header": parent_header,
        "content": {"execution_state": state},
    }


def test_the_main_shell_stays_busy_through_a_subshells_idle() -> None:
    """The server's last-status view says idle here; the main shell is still running the person's cell."""
    shell = MainShell()
    shell.begin(busy=False)
    shell.see(_status("busy", "cell"))
    shell.see(_status("busy", "ours", subshell_id="s1"))
    shell.see(_status("idle", "ours", subshell_id="s1"))
    assert shell.busy
    shell.see(_status("idle", "cell"))
    assert not shell.busy


def test_a_cell_running_before_we_connected_ends_with_its_own_idle() -> None:
    shell = MainShell()
    shell.begin(busy=True)  # the server's view at connection: a cell we did not see start
    shell.see(_status("busy", "info", msg_type="kernel_info_request"))
    shell.see(_status("idle", "info", msg_type="kernel_info_request"))
    shell.see(_status("idle", "ours", subshell_id="s1"))
    assert shell.busy  # neither a control request nor a subshell ends it
    shell.see(_status("idle", "unseen"))
    assert not shell.busy


def test_a_new_kernel_process_clears_the_main_shell() -> None:
    shell = MainShell()
    shell.begin(busy=True)
    shell.see(_status("busy", "cell"))
    shell.see(_status("starting"))
    assert not shell.busy and shell.known


def test_cell_index_stays_right_as_cells_move_come_and_go():
    """The index a cell was last found at is a hint checked at each use, never trusted blindly."""
    notebook = YNotebook(Doc())
    for index, cell_id in enumerate("abc"):
        cells.insert_cell(notebook, index, "code", cell_id, cell_id)
    assert [cells.cell_index(notebook, cell_id) for cell_id in "abc"] == [0, 1, 2]
    other = YNotebook(Doc())  # a person, elsewhere, inserts at the top and deletes "b"
    other.ydoc.apply_update(notebook.ydoc.get_update())
    cells.insert_cell(other, 0, "markdown", "top", "top")
    del other.ycells[cells.cell_index(other, "b")]
    notebook.ydoc.apply_update(other.ydoc.get_update(notebook.ydoc.get_state()))
    assert [cells.cell_index(notebook, cell_id) for cell_id in ("top", "a", "c")] == [0, 1, 2]
    with pytest.raises(CellNotFound):
        cells.cell_index(notebook, "b")
    cells.move_cell(notebook, 2, 0)
    assert [cells.cell_index(notebook, cell_id) for cell_id in ("c", "top", "a")] == [0, 1, 2]
    assert cells.read_cell(notebook, "a").source == "a" and cells.read_cell(notebook, "a").index == 2
