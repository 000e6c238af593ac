"""The Cancel button of a turn's live view, clicked in JupyterLab while another cell awaits the turn.

A person runs a turn in one cell, awaits it in the next, and clicks Cancel in the first cell's
view: the click (a comm message) must reach the kernel while the awaiting cell still runs, and
the awaiting cell must end with a cancelled turn.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .lab import LabBrowser, LabServer, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENSHOT = Path("/tmp/browser_runner_cancel.png")
NOTEBOOK = "runner_cancel.ipynb"

START_RUNNER = """\
from elynav_nb.agents import AgentRunner, install_agents
import tempfile

workspace = tempfile.TemporaryDirectory(prefix="elynav-browser-")
install_agents(workspace.name)
runner = await AgentRunner("elynav-sdr", workspace.name, executable="standin").start()
print("runner", runner.status)"""

SEND_TURN = """\
turn = runner.send("@standin slow 30\\nhello")
turn"""

AWAIT_TURN = """\
print("awaiting the turn", flush=True)
result = await turn
print("OUTCOME", result.outcome)"""

STOP_RUNNER = """\
await runner.stop()
workspace.cleanup()
print("stopped")"""

# Markers: each is in exactly one cell's source.
START_CELL = "install_agents(workspace"
SEND_CELL = "runner.send("
AWAIT_CELL = "await turn"
STOP_CELL = "await runner.stop()"


def test_cancel_click_ends_the_turn_another_cell_awaits(tmp_path: Path, lab_browser: LabBrowser) -> None:
    folder = tmp_path / "notebooks"
    write_notebook(folder / NOTEBOOK, [START_RUNNER, SEND_TURN, AWAIT_TURN, STOP_RUNNER])

    with LabServer.start(folder) as server, lab_browser.open_notebook(server, NOTEBOOK) as notebook:
        notebook.failure_screenshot_dir = tmp_path / "failures"

        notebook.run_cell(START_CELL)
        notebook.wait_for_cell_finished(START_CELL, timeout=120)

        notebook.run_cell(SEND_CELL)
        notebook.wait_for_cell_finished(SEND_CELL, timeout=30)
        notebook.button(SEND_CELL, "Cancel", timeout=30)

        notebook.run_cell(AWAIT_CELL)
        notebook.wait_for_output(AWAIT_CELL, "awaiting the turn", timeout=30)
        assert notebook.prompt(AWAIT_CELL) == "[*]:", "the awaiting cell should still run before the click"

        notebook.click_button(SEND_CELL, "Cancel")
        notebook.wait_for_cell_finished(AWAIT_CELL, timeout=60)

        assert "OUTCOME cancelled" in notebook.output_text(AWAIT_CELL)
        notebook.wait_for_output(SEND_CELL, "cancelled", timeout=15)  # the view's status line
        notebook.screenshot(SCREENSHOT)

        notebook.run_cell(STOP_CELL)
        notebook.wait_for_cell_finished(STOP_CELL, timeout=60)

    assert server.leftover_processes == [], "processes outlived the server's shutdown"
