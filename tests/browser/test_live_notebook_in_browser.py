"""A person types in one cell in JupyterLab while the agent rewrites another, inserts a third and runs it.

Real JupyterLab with jupyter-collaboration in headless Chromium; the agent is a ``LiveNotebook`` on its
own thread and event loop (Playwright's sync API holds this thread's loop). Afterwards: the person's text
intact, the agent's cell there once with its output once, the agent's name shown in the page, and the
notebook saved on disk with the same cells, valid for nbformat.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from elynav_nb.notebook.presence import UNNAMED
from tests.notebook.servers import LIVE, live_missing, start_server, write_notebook
from tests.tiers import needs

pytestmark = [pytest.mark.browser, pytest.mark.live, pytest.mark.slow, needs(LIVE, live_missing())]

AGENT = "Elynav Agent"
PERSON_TEXT = "\n# typed by the person, letter by letter"
MODEL_JS = """(panelId) => {
    const panel = [...window.jupyterapp.shell.widgets('main')].find((widget) => widget.id === panelId);
    return panel.context.model.toJSON();
}"""


def _wait(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.1)


class LoopThread(threading.Thread):
    """An agent's ``_work`` on an event loop of its own (Playwright's sync API holds the test's)."""

    def __init__(self, server: Any, path: str) -> None:
        super().__init__(daemon=True)
        self.server = server
        self.path = path
        self.error: BaseException | None = None
        self.done = threading.Event()

    def run(self) -> None:
        try:
            asyncio.run(self._work())
        except BaseException as error:  # handed to the test
            self.error = error
        finally:
            self.done.set()

    async def _work(self) -> None:
        raise NotImplementedError


class AgentThread(LoopThread):
    """The agent's work: rewrite cell 1, insert a cell after it, run that cell."""

    def __init__(self, server: Any, path: str) -> None:
        super().__init__(server, path)
        self.inserted_id: str | None = None
        self.release = threading.Event()

    async def _work(self) -> None:
        from elynav_nb.notebook import LiveNotebook

        async with LiveNotebook.open(
            self.path, server_url=self.server.base_url, token=self.server.token, user_name=AGENT
        ) as nb:
            rewritten = nb.cells[1].id
            await nb.update_cell(rewritten, "total = sum(range(10))  # rewritten by the agent")
            self.inserted_id = await nb.insert_cell("print('agent ran', 6 * 7)", after=rewritten)
            await nb.run_cell(self.inserted_id, timeout=60)
            for step in range(40):  # keep moving the cursor (its name flag shows 2 s after each move)
                if self.release.is_set():
                    break
                await nb.show_cursor(self.inserted_id, 20 + step % 5)
                await asyncio.sleep(0.5)


def test_a_person_and_the_agent_in_the_same_notebook(lab_browser, tmp_path: Path) -> None:
    folder = tmp_path / "root"
    write_notebook(folder / "shared.ipynb", ["person = 1", "total = 0"])
    server = start_server("collaboration", folder)
    agent: AgentThread | None = None
    try:
        notebook = lab_browser.open_notebook(server, "shared.ipynb")
        page = notebook.page
        editor = notebook.cell(0).locator(".cm-content")
        editor.click()
        page.keyboard.press("Control+End")
        agent = AgentThread(server, "shared.ipynb")
        agent.start()
        page.keyboard.type(PERSON_TEXT, delay=25)  # while the agent writes

        def model() -> dict[str, Any]:
            return page.evaluate(MODEL_JS, notebook._panel_id)

        def sources() -> list[str]:
            return ["".join(cell["source"]) for cell in model()["cells"]]

        _wait(lambda: agent.inserted_id is not None, 60, "the agent's insert")
        _wait(
            lambda: "agent ran 42" in page.locator(".jp-Cell-outputArea").all_inner_texts().__str__(),
            60,
            "the agent's output in the page",
        )
        name_flags = page.get_by_text(AGENT, exact=True)
        _wait(
            lambda: any(name_flags.nth(i).is_visible() for i in range(name_flags.count())),
            20,
            "the agent's name shown",
        )
        agent.release.set()
        _wait(agent.done.is_set, 30, "the agent to finish")
        assert agent.error is None, repr(agent.error)

        expected = [
            "person = 1" + PERSON_TEXT,
            "total = sum(range(10))  # rewritten by the agent",
            "print('agent ran', 6 * 7)",
        ]
        _wait(lambda: sources() == expected, 20, f"the page to show {expected} (it shows {sources()})")
        cells = model()["cells"]
        assert [cell["id"] for cell in cells][2] == agent.inserted_id
        assert cells[2]["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "agent ran 42\n"}]
        assert cells[2]["execution_count"] is not None
        texts = page.locator(".jp-Cell-outputArea").all_inner_texts()
        assert sum(text.count("agent ran 42") for text in texts) == 1, texts

        page.keyboard.press("Control+s")  # the person saves; the server saves on its own too

        def saved() -> dict[str, Any]:
            return json.loads((server.root_dir / "shared.ipynb").read_text())

        _wait(lambda: ["".join(cell["source"]) for cell in saved()["cells"]] == expected, 20, "the save")
        import nbformat

        on_disk = saved()
        nbformat.validate(nbformat.from_dict(on_disk))
        assert on_disk["cells"][2]["outputs"][0]["text"] in ("agent ran 42\n", ["agent ran 42\n"])
    finally:
        if agent is not None:
            agent.release.set()
            agent.join(30)
        server.stop()


class SlowRunThread(LoopThread):
    """The agent runs a cell that prints a step a second."""

    def __init__(self, server: Any, path: str) -> None:
        super().__init__(server, path)
        self.count: int | None = None

    async def _work(self) -> None:
        from elynav_nb.notebook import LiveNotebook

        async with LiveNotebook.open(
            self.path, server_url=self.server.base_url, token=self.server.token, user_name=AGENT
        ) as nb:
            cell_id = nb.cells[0].id
            await nb.run_cell(await nb.insert_cell("'warm'"), timeout=60)  # the kernel started first
            result = await nb.run_cell(cell_id, timeout=60)
            self.count = result.execution_count


def test_a_person_sees_the_agents_run_as_it_goes(lab_browser, tmp_path: Path) -> None:
    """While the agent's run goes on, the person's JupyterLab shows ``[*]`` and the steps printed so far;
    at the end, the count and every step once. An agent killed during its run leaves ``[*]``, which the
    next client to open the notebook ends (the steps that came kept)."""
    folder = tmp_path / "root"
    code = "import time\nfor step in range(4):\n    print('step', step, flush=True)\n    time.sleep(1)"
    write_notebook(folder / "slow.ipynb", [code])
    server = start_server("collaboration", folder)
    agent: SlowRunThread | None = None
    try:
        notebook = lab_browser.open_notebook(server, "slow.ipynb")
        page = notebook.page
        prompt = notebook.cell(0).locator(".jp-InputPrompt")
        outputs = notebook.cell(0).locator(".jp-OutputArea-output")
        agent = SlowRunThread(server, "slow.ipynb")
        agent.start()
        _wait(
            lambda: "step 1" in outputs.all_inner_texts().__str__(), 60, "the run's second step in the page"
        )
        during = (prompt.inner_text(), " ".join(outputs.all_inner_texts()))
        page.screenshot(path=str(tmp_path / "run_as_it_goes.png"))
        agent.join(60)
        assert agent.error is None, repr(agent.error)
        assert "[*]" in during[0] and "step 3" not in during[1], during  # seen while it ran
        _wait(lambda: prompt.inner_text().strip() == f"[{agent.count}]:", 20, "the count in the prompt")
        text = " ".join(outputs.all_inner_texts())
        assert [text.count(f"step {step}") for step in range(4)] == [1, 1, 1, 1], text
        # an agent killed in the middle of its run leaves the [*]; the next client to open ends it
        killed = subprocess.Popen([sys.executable, "-c", RUN_FROM_A_PROCESS, server.base_url, server.token])
        try:
            _wait(
                lambda: "[*]" in prompt.inner_text() and "step 0" in str(outputs.all_inner_texts()), 60, "[*]"
            )
        finally:
            killed.kill()
            killed.wait()
        shown = " ".join(outputs.all_inner_texts())
        time.sleep(1.5)
        assert "[*]" in prompt.inner_text()  # no one left to end it
        opener = OpeningThread(server, "slow.ipynb")
        opener.start()
        _wait(lambda: prompt.inner_text().strip() == "[ ]:", 30, "the [*] ended in the page")
        assert opener.done.wait(30) and opener.error is None, repr(opener.error)
        assert " ".join(outputs.all_inner_texts()) == shown and shown.count("step 0") == 1, shown
        page.screenshot(path=str(tmp_path / "stale_run_ended.png"))
    finally:
        if agent is not None:
            agent.join(30)
        server.stop()


RUN_FROM_A_PROCESS = """
import asyncio, sys
from elynav_nb.notebook import LiveNotebook

async def main():
    nb = await LiveNotebook.open("slow.ipynb", server_url=sys.argv[1], token=sys.argv[2], user_name="Killed agent")
    await nb.run_cell(nb.cells[0].id, timeout=60)

asyncio.run(main())
"""


class OpeningThread(LoopThread):
    """A client that opens the notebook and closes it."""

    async def _work(self) -> None:
        from elynav_nb.notebook import LiveNotebook

        async with LiveNotebook.open(self.path, server_url=self.server.base_url, token=self.server.token):
            pass


SHOW_THE_NOTEBOOK = """\
from elynav_nb.notebook import LiveNotebook
nb = await LiveNotebook.current(user_name="Kernel agent")
nb"""


class InsertAndRunThread(LoopThread):
    """An agent outside the kernel adds a cell at the end and runs it."""

    async def _work(self) -> None:
        from elynav_nb.notebook import LiveNotebook

        async with LiveNotebook.open(
            self.path, server_url=self.server.base_url, token=self.server.token, user_name=AGENT
        ) as nb:
            await nb.run_cell(await nb.insert_cell("agent_was_here = 6 * 7\nagent_was_here"), timeout=60)


def test_the_notebooks_own_view_follows_the_agent(lab_browser, tmp_path: Path) -> None:
    """``nb`` at the end of a cell shows the live notebook as a widget in the page; while another agent
    adds a cell and runs it, the view shows that cell, its count and who wrote it; the person's name
    comes once the room relays it."""
    folder = tmp_path / "root"
    write_notebook(folder / "view.ipynb", [SHOW_THE_NOTEBOOK])
    server = start_server("collaboration", folder)
    try:
        notebook = lab_browser.open_notebook(server, "view.ipynb")
        notebook.run_cell(0)
        notebook.wait_for_output(0, "Live notebook", timeout=60)
        notebook.wait_for_widgets_rendered(0)
        agent = InsertAndRunThread(server, "view.ipynb")
        agent.start()
        assert agent.done.wait(60) and agent.error is None, repr(agent.error)
        view = notebook.wait_for_output(0, "agent_was_here", timeout=30)
        _wait(lambda: "[2]" in notebook.output_text(0) and AGENT in notebook.output_text(0), 30, "the run")
        assert "Kernel agent" in view and notebook.widget_problems(0) == []
        # the server relays a person's awareness when JupyterLab renews it (every 15 s): their name comes
        # then, and the cells they edited before it are named too
        _wait(lambda: "no one else" not in notebook.output_text(0), 40, "the person listed as also here")
        _wait(lambda: UNNAMED not in notebook.output_text(0), 10, "the person's edit named")
        notebook.screenshot(tmp_path / "notebook_view.png", cell=0)
    finally:
        server.stop()
