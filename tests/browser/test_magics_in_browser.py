"""``%%agent`` cells in JupyterLab: a turn streams in the cell, Cancel is clicked while the cell runs,
and the notebook's stop button (a kernel interrupt) ends another turn.

A person loads the extension, runs an ``%%agent`` cell (its own output shows the live view with a
Cancel button while the cell is still running: the cell awaits the turn), clicks Cancel, then runs a
second one and presses the toolbar's "Interrupt the kernel" button. Both turns end cancelled, within
their bounds, and the kernel goes on serving.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .lab import LabBrowser, LabServer, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENSHOT = Path("/tmp/browser_magics.png")
NOTEBOOK = "magics.ipynb"

LOAD = """\
import tempfile
workspace = tempfile.TemporaryDirectory(prefix="elynav-browser-magics-")
%load_ext elynav_nb
%config ElynavMagics.workspace = workspace.name
%config ElynavMagics.executable = "standin"
print("loaded")"""

CANCELLED_BY_CLICK = """\
%%agent sdr -o clicked
@standin slow 30
Une longue réponse, annulée d'un clic"""

SHOW_CLICKED = """print("CLICKED", clicked.outcome)"""

INTERRUPTED = """\
%%agent sdr -o never_set
@standin slow 30
Une longue réponse, interrompue"""

SHOW_INTERRUPTED = """\
runner = get_ipython().magics_manager.registry["ElynavMagics"].runners[("elynav-sdr", "claude")]
print("INTERRUPTED", runner.history[-1].outcome, "never_set" in globals())"""

STOP = """\
await get_ipython().magics_manager.registry["ElynavMagics"].stop_all()
workspace.cleanup()
print("stopped")"""

LOAD_CELL = "%load_ext elynav_nb"
CLICK_CELL = "annulée d'un clic"
SHOW_CLICKED_CELL = 'print("CLICKED"'
INTERRUPT_CELL = "interrompue"
SHOW_INTERRUPTED_CELL = 'print("INTERRUPTED"'
STOP_CELL = "stop_all()"
INTERRUPT_BUTTON = '[data-command="notebook:interrupt-kernel"]'


def test_an_agent_cell_streams_is_cancelled_by_a_click_and_by_the_stop_button(
    tmp_path: Path, lab_browser: LabBrowser
) -> None:
    folder = tmp_path / "notebooks"
    write_notebook(
        folder / NOTEBOOK, [LOAD, CANCELLED_BY_CLICK, SHOW_CLICKED, INTERRUPTED, SHOW_INTERRUPTED, STOP]
    )
    with LabServer.start(folder) as server, lab_browser.open_notebook(server, NOTEBOOK) as notebook:
        notebook.failure_screenshot_dir = tmp_path / "failures"
        notebook.run_cell(LOAD_CELL)
        notebook.wait_for_cell_finished(LOAD_CELL, timeout=120)
        assert "loaded" in notebook.output_text(LOAD_CELL)

        notebook.run_cell(CLICK_CELL)
        notebook.button(CLICK_CELL, "Cancel", timeout=60)  # the live view, in the running cell's output
        assert notebook.prompt(CLICK_CELL) == "[*]:", "the %%agent cell should still await its turn"
        notebook.click_button(CLICK_CELL, "Cancel")
        notebook.wait_for_cell_finished(CLICK_CELL, timeout=60)
        notebook.wait_for_output(CLICK_CELL, "cancelled", timeout=15)
        notebook.screenshot(SCREENSHOT, cell=CLICK_CELL)
        notebook.run_cell(SHOW_CLICKED_CELL)
        notebook.wait_for_cell_finished(SHOW_CLICKED_CELL, timeout=30)
        assert "CLICKED cancelled" in notebook.output_text(SHOW_CLICKED_CELL)

        notebook.run_cell(INTERRUPT_CELL)
        notebook.button(INTERRUPT_CELL, "Cancel", timeout=60)
        notebook.page.locator(INTERRUPT_BUTTON).first.click(timeout=15_000)
        notebook.wait_for_cell_finished(INTERRUPT_CELL, timeout=60, check_error=False)
        assert "CancelledError" in notebook.error_text(INTERRUPT_CELL)  # the interrupted cell says so
        notebook.wait_for_output(INTERRUPT_CELL, "cancelled", timeout=15)  # and its view: the turn ended
        notebook.run_cell(SHOW_INTERRUPTED_CELL)
        notebook.wait_for_cell_finished(SHOW_INTERRUPTED_CELL, timeout=30)
        assert "INTERRUPTED cancelled False" in notebook.output_text(SHOW_INTERRUPTED_CELL)

        notebook.run_cell(STOP_CELL)
        notebook.wait_for_cell_finished(STOP_CELL, timeout=60)
        assert "stopped" in notebook.output_text(STOP_CELL)

    assert server.leftover_processes == [], "processes outlived the server's shutdown"
