"""The tour notebook, run top to bottom by a person in JupyterLab: every cell ends without an error, the
agent turn's live view and the office board render as widgets, and they show what the cells did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .lab import LabBrowser, LabServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TOUR = "00_tour.ipynb"
SCREENSHOT = Path("/tmp/browser_tour.png")


def code_cells(notebook: Path) -> list[tuple[int, str]]:
    """(index among all cells, source) of each code cell, in order."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [
        (index, "".join(cell["source"])) for index, cell in enumerate(cells) if cell["cell_type"] == "code"
    ]


def test_the_tour_runs_in_jupyterlab_and_its_widgets_render(tmp_path: Path, lab_browser: LabBrowser) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    notebook_json = json.loads((NOTEBOOKS / TOUR).read_text(encoding="utf-8"))
    for cell in notebook_json["cells"]:  # a fresh copy, as a person gets it after "Clear all outputs"
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    (folder / TOUR).write_text(json.dumps(notebook_json), encoding="utf-8")
    cells = code_cells(folder / TOUR)
    turn_cell = next(index for index, source in cells if source.rstrip().endswith("turn"))
    board_cell = next(index for index, source in cells if "office.board()" in source)
    ask_cell = next(index for index, source in cells if "office.ask(" in source)
    agent_cell = next(index for index, source in cells if source.startswith("%%agent"))

    with LabServer.start(folder) as server, lab_browser.open_notebook(server, TOUR) as notebook:
        notebook.failure_screenshot_dir = tmp_path / "failures"
        for index, _source in cells:
            notebook.run_cell(index)
            notebook.wait_for_cell_finished(index, timeout=120)  # raises CellFailed on an error output
            if index in (turn_cell, agent_cell):  # the live transcript follows the turn to its end,
                notebook.wait_for_output(index, "completed", timeout=30)  # then hides its Cancel
                assert "Cancel" not in notebook.visible_button_labels(index)
                notebook.wait_for_widgets_rendered(index)  # still the live view once its display is updated
            if index == ask_cell:  # the board, in another cell, saw the two asks end
                notebook.wait_for_output(board_cell, "asks served", timeout=30)
                notebook.screenshot(SCREENSHOT.with_name("browser_tour_board.png"), cell=board_cell)
        assert "done · user -> elynav-orchestrator" in notebook.output_text(ask_cell)
        assert "Office · closed" in notebook.wait_for_output(board_cell, "Office · closed", timeout=30)
        notebook.screenshot(SCREENSHOT)

    assert server.leftover_processes == [], "processes outlived the server's shutdown"


def test_the_saved_tour_reopened_without_widget_state_shows_how_each_turn_ended(
    tmp_path: Path, lab_browser: LabBrowser
) -> None:
    """The committed notebook, opened as a reader opens it (no kernel run, no widget state): each turn's
    output is its saved final transcript, not "starting · 0 events"."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    (folder / TOUR).write_bytes((NOTEBOOKS / TOUR).read_bytes())
    cells = code_cells(folder / TOUR)
    turn_cell = next(index for index, source in cells if source.rstrip().endswith("turn"))
    agent_cell = next(index for index, source in cells if source.startswith("%%agent"))
    with LabServer.start(folder) as server, lab_browser.open_notebook(server, TOUR) as notebook:
        for index, said in (
            (turn_cell, "You said: Bonjour ! Qui es-tu ?"),
            (agent_cell, "que sais-tu faire ?"),
        ):
            shown = notebook.wait_for_output(index, said, timeout=30)
            assert shown.startswith("completed · agent elynav-sdr") and "starting" not in shown, shown
        notebook.screenshot(SCREENSHOT.with_name("browser_tour_saved.png"), cell=turn_cell)
