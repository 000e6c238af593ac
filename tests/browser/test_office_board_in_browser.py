"""The office board in JupyterLab: it stays live while another cell awaits an ask, and its Cancel ends that ask.

A person shows the board in one cell, queues a long ask in the next, awaits it in a third, and clicks the
ask's Cancel button on the board: the click must reach the kernel while the awaiting cell still runs,
the board must have been updating meanwhile (busy, the ask's row), and the awaiting cell must end with
a reply cancelled by the user.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .lab import LabBrowser, LabServer, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENSHOT = Path("/tmp/browser_office_board.png")
NOTEBOOK = "office_board.ipynb"

START_OFFICE = """\
import tempfile
from pathlib import Path
from elynav_nb.agents import AgentDefinition
from elynav_nb.office import ASK_RULE, Office

workspace = tempfile.TemporaryDirectory(prefix="elynav-browser-office-")
helper = AgentDefinition(name="helper", description="a test agent", tools=("Read", ASK_RULE), prompt="You help.")
office = await Office(workspace.name, ["elynav-sdr", helper], executable="standin").start()
print("office", office.status)"""

SHOW_BOARD = """\
office.board()"""

SUBMIT_ASK = """\
long = office.submit("sdr", "@standin slow 40\\nUne longue prospection")
print("queued", long.status)"""

AWAIT_ASK = """\
print("awaiting the ask", flush=True)
reply = await long
print("REPLY", reply.outcome, "by", reply.cancelled_by)"""

ASK_FOR_A_TOOL = """\
needs = office.submit("helper", "@standin bash touch rapport.txt")
print("awaiting the permission", flush=True)
reply = await needs
print("PERMISSION", reply.outcome, (Path(workspace.name) / "rapport.txt").exists())"""

STOP_OFFICE = """\
await office.stop()
workspace.cleanup()
print("stopped", office.status)"""

START_CELL = "await Office("
BOARD_CELL = "office.board()"
SUBMIT_CELL = "long = office.submit("
AWAIT_CELL = "await long"
PERMISSION_CELL = "await needs"
STOP_CELL = "await office.stop()"


def test_a_cancel_click_on_the_board_ends_the_ask_another_cell_awaits(
    tmp_path: Path, lab_browser: LabBrowser
) -> None:
    folder = tmp_path / "notebooks"
    write_notebook(
        folder / NOTEBOOK, [START_OFFICE, SHOW_BOARD, SUBMIT_ASK, AWAIT_ASK, ASK_FOR_A_TOOL, STOP_OFFICE]
    )

    with LabServer.start(folder) as server, lab_browser.open_notebook(server, NOTEBOOK) as notebook:
        notebook.failure_screenshot_dir = tmp_path / "failures"
        notebook.run_cell(START_CELL)
        notebook.wait_for_cell_finished(START_CELL, timeout=120)
        notebook.run_cell(BOARD_CELL)
        notebook.wait_for_cell_finished(BOARD_CELL, timeout=30)
        notebook.wait_for_output(BOARD_CELL, "0 busy", timeout=30)

        notebook.run_cell(SUBMIT_CELL)
        notebook.wait_for_cell_finished(SUBMIT_CELL, timeout=30)
        notebook.run_cell(AWAIT_CELL)
        notebook.wait_for_output(AWAIT_CELL, "awaiting the ask", timeout=30)

        # The board, in another cell, follows the office while this cell awaits.
        notebook.wait_for_output(BOARD_CELL, "1 busy", timeout=30)
        board_text = notebook.wait_for_output(BOARD_CELL, "Une longue prospection", timeout=30)
        assert "elynav-sdr" in board_text and "user" in board_text
        assert notebook.prompt(AWAIT_CELL) == "[*]:", "the awaiting cell should still run before the click"
        notebook.click_button(BOARD_CELL, "Follow elynav-sdr")  # the live output of the busy employee
        notebook.wait_for_output(BOARD_CELL, "Following elynav-sdr, working for user", timeout=30)
        notebook.wait_for_output(BOARD_CELL, "[elynav stand-in]", timeout=30)  # its reply, streaming in
        notebook.screenshot(SCREENSHOT.with_name("browser_office_board_busy.png"))

        notebook.click_button(BOARD_CELL, "Cancel ask")
        notebook.wait_for_cell_finished(AWAIT_CELL, timeout=60)

        assert "REPLY cancelled by user" in notebook.output_text(AWAIT_CELL)
        notebook.wait_for_output(BOARD_CELL, "0 busy", timeout=15)
        notebook.click_button(BOARD_CELL, "History")
        history_text = notebook.wait_for_output(BOARD_CELL, "History (1 asks", timeout=15)
        assert "cancelled" in history_text and "CANCELLED" in history_text
        notebook.screenshot(SCREENSHOT)

        # A tool outside the agent's list: the board shows Allow / Deny on the ask's row while a cell awaits.
        notebook.run_cell(PERMISSION_CELL)
        notebook.wait_for_output(PERMISSION_CELL, "awaiting the permission", timeout=30)
        notebook.wait_for_output(BOARD_CELL, "asks permission", timeout=30)
        notebook.screenshot(SCREENSHOT.with_name("browser_office_board_permission.png"), cell=BOARD_CELL)
        notebook.click_button(BOARD_CELL, "Allow")
        notebook.wait_for_cell_finished(PERMISSION_CELL, timeout=60)
        assert "PERMISSION done True" in notebook.output_text(PERMISSION_CELL)

        notebook.run_cell(STOP_CELL)
        notebook.wait_for_cell_finished(STOP_CELL, timeout=60)
        assert "stopped closed" in notebook.output_text(STOP_CELL)

    assert server.leftover_processes == [], "processes outlived the server's shutdown"
