"""An employee in JupyterLab's chat (jupyter-ai's persona manager, the ``chat`` extra), beside a notebook
that hosts the office: one conversation, one FIFO for the chat and the notebook's ``%%ask``.

In a real JupyterLab in headless Chromium: the notebook starts the office (the stand-in CLI) and shows
its board; the chat picks the persona ``elynav-sdr`` and sends a long message: its answer streams into
the chat and the board shows the chat's ask running; a second chat message, sent while it works, waits
and the chat says so; a ``%%ask sdr`` cell run meanwhile waits its turn behind it; Stop cancels the
message in flight (the user's cancel), then the second message and the cell's ask are answered in
that order.

Its own tier: ``ELYNAV_REQUIRE_CHAT`` (``.ci/run``'s chat phase, in ``$ELYNAV_CHAT_VENV``).
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from tests.tiers import needs

from .lab import LabBrowser, LabServer, write_notebook

CHAT_MISSING = (
    None
    if importlib.util.find_spec("jupyter_ai_persona_manager") is not None
    else "jupyter-ai's persona manager is not installed (pip install -e '.[chat]' in a venv of its own)"
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs("ELYNAV_REQUIRE_CHAT", CHAT_MISSING)]

NOTEBOOK = "office.ipynb"
CHAT = "office.chat"
PERSONA = "elynav-sdr"

START_OFFICE = """\
%load_ext elynav_nb
from elynav_nb.office import Office
office = await Office(".", ["elynav-sdr"], executable="standin").start()
print("office", office.status)"""

SHOW_BOARD = """\
office.board()"""

ASK_CELL = """\
%%ask sdr -o from_cell
Bonjour de la cellule"""

PRINT_REPLY = """\
print("CELL", from_cell.outcome, from_cell.text.strip()[-30:])
print("ORDER", list(office.history()["prompt"].str.split().str[-1]))"""


class ChatPage:
    """The chat document open in its own page: pick a persona, send, read messages, Stop."""

    def __init__(self, browser: LabBrowser, server: LabServer) -> None:
        context = browser.browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = context.new_page()
        self.page.set_default_timeout(30_000)
        self.page.goto(f"{server.base_url}/lab/tree/{CHAT}?token={server.token}")
        self.page.locator(".jp-chat-input-container textarea[role=combobox]").wait_for(timeout=90_000)

    def pick(self, persona: str) -> None:
        self.page.locator(".jp-jai-personaControls-persona-btn").click()
        self.page.get_by_role("menuitem", name=persona).click()
        self.page.locator(".jp-jai-personaControls-persona", has_text=persona).wait_for()

    def send(self, *lines: str) -> None:
        box = self.page.locator(".jp-chat-input-container textarea[role=combobox]")
        box.click()
        for index, line in enumerate(lines):
            if index:
                box.press("Shift+Enter")
            box.type(line)
        box.press("Enter")

    def text(self) -> str:
        return str(self.page.locator(".jp-chat-messages-container, .jp-chat-messages").first.inner_text())

    def wait_for_text(self, text: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.text()
            if text in shown:
                return shown
            time.sleep(0.2)
        self.page.screenshot(path="/tmp/browser_chat_failure.png")
        raise AssertionError(f"the chat never showed {text!r}; it shows:\n{self.text()[-2000:]}")

    def stop(self) -> None:
        button = self.page.locator(".jp-jai-stopButton")
        button.wait_for(state="visible")
        deadline = time.monotonic() + 30
        while not button.is_enabled() and time.monotonic() < deadline:
            time.sleep(0.1)
        button.click()


def test_an_employee_in_the_chat_shares_one_fifo_with_the_notebook(
    tmp_path: Path, lab_browser: LabBrowser
) -> None:
    folder = tmp_path / "notebooks"
    write_notebook(folder / NOTEBOOK, [START_OFFICE, SHOW_BOARD, ASK_CELL, PRINT_REPLY])
    with (
        LabServer.start(folder, extra_args=["--LabApp.news_url=None"]) as server,
        lab_browser.open_notebook(server, NOTEBOOK) as notebook,
    ):
        notebook.failure_screenshot_dir = tmp_path / "failures"
        notebook.run_cell("await Office(")
        notebook.wait_for_output("await Office(", "office open", timeout=120)
        notebook.run_cell("office.board()")
        notebook.wait_for_output("office.board()", "0 busy", timeout=30)

        server.api("PUT", f"/api/contents/{CHAT}", {"type": "file", "format": "text", "content": ""})
        chat = ChatPage(lab_browser, server)
        chat.pick(PERSONA)
        chat.send("@standin slow 30", "Une longue prospection")
        chat.wait_for_text("You said", timeout=90)  # it streams while the employee works
        notebook.wait_for_output("office.board()", "Une longue prospection", timeout=30)  # the chat's ask
        notebook.wait_for_output("office.board()", "1 busy", timeout=30)

        chat.send("Deuxième message")
        chat.wait_for_text(f"Waiting in {PERSONA}'s queue: next, busy for user.", timeout=30)
        notebook.run_cell("%%ask sdr")
        notebook.wait_for_output("office.board()", "2 queued", timeout=30)  # the cell waits its turn too

        chat.stop()
        chat.wait_for_text("cancelled by user", timeout=60)
        chat.wait_for_text("You said: Deuxième message", timeout=90)
        notebook.wait_for_cell_finished("%%ask sdr", timeout=120)
        notebook.run_cell('print("CELL"')
        output = notebook.wait_for_output('print("CELL"', "ORDER", timeout=30)
        assert "CELL done" in output and "Bonjour de la cellule" in output
        assert "['prospection', 'message', 'cellule']" in output  # one FIFO: chat, chat, then the cell
        chat.page.screenshot(path="/tmp/browser_chat.png")
