"""The browser harness itself, on plain ipywidgets: markers, errors, bounded waits, a click mid-await."""

from __future__ import annotations

from pathlib import Path

import pytest

from .lab import CellFailed, LabBrowser, LabError, LabServer, StepTimeout, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GREETING = "print('ready')"
FAILING = "1 / 0"
BUTTON = """\
import asyncio
import ipywidgets

clicks = []
button = ipywidgets.Button(description="Press me")
button.on_click(lambda _button: clicks.append("click"))
button"""
AWAIT_CLICK = """\
print("waiting for a click", flush=True)
while not clicks:
    await asyncio.sleep(0.05)
print("clicked", len(clicks))"""


def test_harness_runs_reads_clicks_and_fails_clearly(tmp_path: Path, lab_browser: LabBrowser) -> None:
    folder = tmp_path / "notebooks"
    write_notebook(folder / "harness.ipynb", [GREETING, FAILING, BUTTON, AWAIT_CLICK])
    write_notebook(folder / "unknown_kernel.ipynb", ["1"], kernel_name="no-such-kernel")

    with LabServer.start(folder) as server:
        with pytest.raises(LabError, match="no-such-kernel"):
            lab_browser.open_notebook(server, "unknown_kernel.ipynb")

        with lab_browser.open_notebook(server, "harness.ipynb") as notebook:
            assert notebook.cell_index("ready") == 0
            with pytest.raises(LabError, match="not exactly one"):
                notebook.cell_index("print(")

            notebook.run_cell("ready")
            assert notebook.wait_for_cell_finished("ready") == 1
            assert notebook.output_text("ready").strip() == "ready"

            notebook.run_cell(FAILING)
            with pytest.raises(CellFailed, match="ZeroDivisionError"):
                notebook.wait_for_cell_finished(FAILING)

            notebook.run_cell("ipywidgets.Button")
            notebook.wait_for_cell_finished("ipywidgets.Button")
            with pytest.raises(StepTimeout, match="button 'No such button' in the output of cell 2"):
                notebook.button("ipywidgets.Button", "No such button", timeout=1)

            notebook.run_cell("await asyncio.sleep")
            notebook.wait_for_output("await asyncio.sleep", "waiting for a click")
            notebook.click_button("ipywidgets.Button", "Press me")
            notebook.wait_for_cell_finished("await asyncio.sleep", timeout=30)
            assert "clicked 1" in notebook.output_text("await asyncio.sleep")

    assert server.leftover_processes == []
