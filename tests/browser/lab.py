"""A real JupyterLab in a real headless Chromium, driven the way a person drives it.

``LabServer`` runs JupyterLab on 127.0.0.1 (a free port, a token, a temporary copy of a notebook
folder, isolated Jupyter settings with every notebook cell rendered); ``LabBrowser`` is Debian's
Chromium under Playwright; ``NotebookPage`` is one open notebook: run a cell without waiting for
it (Ctrl+Enter on the selected cell), wait until it has finished, click a widget button in its
output with the mouse, read its output, take screenshots.

Every wait is bounded and fails with ``StepTimeout`` naming the step and what the page showed.

    with LabServer.start(folder) as server, LabBrowser.start() as browser:
        notebook = browser.open_notebook(server, "demo.ipynb")
        notebook.run_cell("marker in the cell's source")
        notebook.wait_for_cell_finished(0)
"""

from __future__ import annotations

import contextlib
import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .lab_server import (
    CellFailed,
    ClosedOnExit,
    LabError,
    LabServer,
    StepTimeout,
    _wait_until,
    browser_unavailable_reason,
    find_chromium,
    write_notebook,
)

if TYPE_CHECKING:  # Playwright is imported when a browser starts: this module loads without it.
    from playwright.sync_api import Browser, ConsoleMessage, Locator, Page, Playwright

__all__ = [
    "CellFailed",
    "CellRef",
    "LabBrowser",
    "LabError",
    "LabServer",
    "NotebookPage",
    "StepTimeout",
    "browser_unavailable_reason",
    "find_chromium",
    "open_in_lab",
    "write_notebook",
]

T = TypeVar("T")

CellRef = int | str
"""A cell: its index (0 = first cell) or a marker string found in exactly one cell's source."""

# JupyterLab 4 DOM, as a person sees it.
NOTEBOOK_PANEL = ".jp-NotebookPanel"
CELL = ".jp-Notebook .jp-Cell"
INPUT_PROMPT = ".jp-InputPrompt"
OUTPUT_AREA = ".jp-Cell-outputArea"
EXECUTION_INDICATOR = ".jp-Notebook-ExecutionIndicator"
DIALOG = ".jp-Dialog"
FINISHED_PROMPT = re.compile(r"^\[(\d+)\]:$")
RUNNING_PROMPT = "[*]:"
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# Error outputs of one cell, from the notebook model (``--LabApp.expose_app_in_browser``).
CELL_ERRORS_JS = """([panelId, index]) => {
    const panel = [...window.jupyterapp.shell.widgets('main')].find((widget) => widget.id === panelId);
    const outputs = panel.content.widgets[index].model.outputs.toJSON();
    return outputs.filter((output) => output.output_type === 'error');
}"""

# What became of one cell's widget outputs: how many the model holds, how many rendered as a view.
CELL_WIDGETS_JS = """([panelId, index]) => {
    const panel = [...window.jupyterapp.shell.widgets('main')].find((widget) => widget.id === panelId);
    const cell = panel.content.widgets[index];
    const mime = 'application/vnd.jupyter.widget-view+json';
    const expected = cell.model.outputs.toJSON().filter((output) => output.data && output.data[mime]).length;
    const children = [...cell.node.querySelectorAll('.jp-OutputArea-child')];
    const views = children.filter((child) => child.querySelector('.jupyter-widgets'));
    return {expected, rendered: views.length, texts: children.map((child) => child.innerText.slice(0, 300))};
}"""
WIDGET_FALLBACKS = ("Loading widget", "Error displaying widget")
PLAIN_WIDGET_REPR = re.compile(
    r"^\s*(VBox|HBox|Box|HTML|Button|Output|Label|Dropdown|Textarea)\(", re.MULTILINE
)

# Indices of the selected cells and of the active one.
SELECTION_JS = """(cellSelector) => {
    const cells = [...document.querySelectorAll(cellSelector)];
    const having = (name) => cells.flatMap((cell, index) => (cell.classList.contains(name) ? [index] : []));
    return {selected: having('jp-mod-selected'), active: having('jp-mod-active')};
}"""


def _describe_error(error: dict[str, Any]) -> str:
    traceback = "\n".join(ANSI_ESCAPE.sub("", line) for line in error.get("traceback", []))
    return f"{error.get('ename')}: {error.get('evalue')}\n{traceback}".rstrip()


# -- the browser -----------------------------------------------------------------------------------


class LabBrowser(ClosedOnExit):
    """Headless Chromium under Playwright; ``open_notebook`` gives a ``NotebookPage``."""

    def __init__(self, playwright: Playwright, browser: Browser) -> None:
        self._playwright = playwright
        self.browser = browser
        self.pages: list[NotebookPage] = []

    @classmethod
    def start(cls, *, executable: str | None = None, headless: bool = True) -> LabBrowser:
        from playwright.sync_api import sync_playwright

        executable = executable or find_chromium()
        if executable is None:
            raise LabError(browser_unavailable_reason() or "no Chromium")
        playwright = sync_playwright().start()
        try:
            browser = playwright.chromium.launch(
                executable_path=executable,
                headless=headless,
                args=["--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check"],
                timeout=60_000,
            )
        except BaseException:
            playwright.stop()
            raise
        return cls(playwright, browser)

    def open_notebook(
        self,
        server: LabServer,
        notebook_path: str,
        *,
        kernel_name: str | None = None,
        timeout: float = 90.0,
        viewport: tuple[int, int] = (1280, 900),
        hide_file_browser: bool = True,
    ) -> NotebookPage:
        """Open ``notebook_path`` (relative to the server's root) in a new page; wait for an idle kernel.

        The notebook's kernelspec must name a kernel the server has (no "Select Kernel" dialog);
        ``kernel_name`` rewrites it in the server's copy first.
        """
        sources = _prepare_notebook(server, notebook_path, kernel_name)
        context = self.browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        page = context.new_page()
        page.set_default_timeout(30_000)
        notebook = NotebookPage(page, server, notebook_path, sources)
        try:
            notebook._load(timeout=timeout, hide_file_browser=hide_file_browser)
        except BaseException:
            notebook.close()
            raise
        self.pages.append(notebook)
        return notebook

    def close(self) -> None:
        """Close every page this browser opened, then the browser and Playwright."""
        for notebook in self.pages:
            with contextlib.suppress(Exception):
                notebook.close()
        self.pages.clear()
        with contextlib.suppress(Exception):
            self.browser.close()
        self._playwright.stop()


def _prepare_notebook(server: LabServer, notebook_path: str, kernel_name: str | None) -> list[str]:
    """Check (or set) the kernelspec of the server's copy; return the cells' sources."""
    file_path = server.root_dir / notebook_path
    if not file_path.is_file():
        raise LabError(f"open {notebook_path}: no such notebook in {server.root_dir}")
    content = json.loads(file_path.read_text(encoding="utf-8"))
    metadata = content.setdefault("metadata", {})
    available = server.api("GET", "/api/kernelspecs")["kernelspecs"]
    if kernel_name is not None:
        if kernel_name not in available:
            raise LabError(
                f"open {notebook_path}: the server has no kernel {kernel_name!r} ({sorted(available)})"
            )
        spec = available[kernel_name]["spec"]
        metadata["kernelspec"] = {
            "name": kernel_name,
            "display_name": spec.get("display_name", kernel_name),
            "language": spec.get("language", "python"),
        }
        file_path.write_text(json.dumps(content, indent=1), encoding="utf-8")
    wanted = metadata.get("kernelspec", {}).get("name")
    if wanted not in available:
        raise LabError(
            f"open {notebook_path}: its kernelspec {wanted!r} is not one of the server's kernels "
            f"{sorted(available)}; JupyterLab would ask which kernel to use. Pass kernel_name="
        )
    return ["".join(cell.get("source", "")) for cell in content.get("cells", [])]


# -- one open notebook -----------------------------------------------------------------------------


class NotebookPage(ClosedOnExit):
    """One notebook open in JupyterLab: cells are run, waited for, clicked and read through the page."""

    def __init__(self, page: Page, server: LabServer, notebook_path: str, sources: list[str]) -> None:
        self.page = page
        self.server = server
        self.notebook_path = notebook_path
        self.sources = sources
        self.console_errors: list[str] = []
        self.closed = False
        self.failure_screenshot_dir: Path | None = None
        """When set, a failed wait also saves a screenshot there (its path is in the error)."""
        self._panel_id = ""
        self._panel_selector = NOTEBOOK_PANEL
        page.on("console", self._record_console_message)
        page.on("pageerror", lambda error: self.console_errors.append(f"pageerror: {error}"))

    def _record_console_message(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console_errors.append(message.text[:500])

    # -- opening -----------------------------------------------------------------------------------

    def _load(self, *, timeout: float, hide_file_browser: bool) -> None:
        workspace = f"elynav-{uuid.uuid4().hex[:12]}"
        self.page.goto(self.server.lab_url(self.notebook_path, workspace=workspace), timeout=timeout * 1000)
        panel_id = self._step(
            f"open {self.notebook_path} (wait for its notebook panel)",
            timeout,
            self._single_panel_id,
        )
        self._panel_id = panel_id
        self._panel_selector = f"#{panel_id}"
        self._step(
            f"open {self.notebook_path} (wait for its {len(self.sources)} cells to render)",
            timeout,
            lambda: True if self._cells().count() == len(self.sources) else None,
            lambda: f"{self._cells().count()} cells in the page",
        )
        self.wait_for_kernel_idle(
            timeout=timeout, step=f"open {self.notebook_path} (wait for an idle kernel)"
        )
        if hide_file_browser:
            self._collapse_left_sidebar()

    def _single_panel_id(self) -> str | None:
        self._fail_on_dialog("open notebook")
        panels = self.page.locator(NOTEBOOK_PANEL)
        if panels.count() != 1:
            return None
        panel_id = panels.first.get_attribute("id")
        return panel_id or None

    def _collapse_left_sidebar(self) -> None:
        """Click the open tab of the left side bar (a person's way to hide the file browser)."""
        open_tab = self.page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
        if open_tab.count() == 1:
            open_tab.click()
            self._step(
                "hide the file browser",
                10.0,
                lambda: True if open_tab.count() == 0 else None,
            )

    # -- the kernel ----------------------------------------------------------------------------------

    def wait_for_kernel_idle(self, *, timeout: float = 60.0, step: str = "wait for an idle kernel") -> None:
        """Wait until the notebook's status shows an idle kernel and the server agrees."""
        self._step(step, timeout, self._kernel_is_idle, self._describe_kernel)

    def _kernel_is_idle(self) -> bool | None:
        self._fail_on_dialog("wait for the kernel")
        indicator = self.page.locator(f"{self._panel_selector} {EXECUTION_INDICATOR}")
        if indicator.count() != 1 or indicator.get_attribute("data-status") != "idle":
            return None
        return True if self.server.kernel_state(self.notebook_path) == "idle" else None

    def _describe_kernel(self) -> str:
        indicator = self.page.locator(f"{self._panel_selector} {EXECUTION_INDICATOR}")
        shown = indicator.get_attribute("data-status") if indicator.count() == 1 else "no status shown"
        return f"page shows kernel {shown!r}, server says {self.server.kernel_state(self.notebook_path)!r}"

    def _fail_on_dialog(self, step: str) -> None:
        dialog = self.page.locator(DIALOG)
        if dialog.count():
            text = " ".join(dialog.first.inner_text().split())
            raise LabError(f"{step}: a dialog is in the way: {text[:300]!r}")

    # -- cells ---------------------------------------------------------------------------------------

    def cell_index(self, cell: CellRef) -> int:
        """Index of ``cell``: an index as is, or the one cell whose source contains the marker."""
        if isinstance(cell, int):
            if not 0 <= cell < len(self.sources):
                raise LabError(f"no cell {cell}: the notebook has {len(self.sources)} cells")
            return cell
        matches = [index for index, source in enumerate(self.sources) if cell in source]
        if len(matches) != 1:
            raise LabError(f"marker {cell!r} is in {len(matches)} cells ({matches}), not exactly one")
        return matches[0]

    def cell(self, cell: CellRef) -> Locator:
        """The Playwright locator of a cell (for checks this class does not offer)."""
        return self._cells().nth(self.cell_index(cell))

    def _cells(self) -> Locator:
        return self.page.locator(f"{self._panel_selector} {CELL}")

    def prompt(self, cell: CellRef) -> str:
        """The cell's input prompt as shown: ``[ ]:``, ``[*]:`` (running or queued) or ``[n]:``."""
        text = self.cell(cell).locator(INPUT_PROMPT).inner_text(timeout=5_000)
        return " ".join(text.split())

    def _prompts(self) -> list[str]:
        texts: list[str] = self._cells().locator(INPUT_PROMPT).all_inner_texts()
        return [" ".join(text.split()) for text in texts]

    def run_cell(self, cell: CellRef, *, timeout: float = 15.0) -> int:
        """Select the cell and press Ctrl+Enter; return its index once it shows it was started.

        Does not wait for the cell to finish (see ``wait_for_cell_finished``): other cells can be
        run and widgets clicked meanwhile.
        """
        index = self.cell_index(cell)
        step = f"run cell {index}"
        target = self.cell(index)
        target.scroll_into_view_if_needed(timeout=timeout * 1000)
        before = self.prompt(index)
        if before == RUNNING_PROMPT:
            raise LabError(f"{step}: the cell is already running or queued ({before})")
        target.locator(INPUT_PROMPT).click(timeout=timeout * 1000)
        self._step(
            f"{step} (select it)",
            timeout,
            lambda: True if self._only_selected_cell() == index else None,
            lambda: f"selected cell {self._only_selected_cell()}",
        )
        self.page.keyboard.press("Control+Enter")
        self._step(
            f"{step} (its prompt should leave {before!r} after Ctrl+Enter)",
            timeout,
            lambda: True if self.prompt(index) != before else None,
            lambda: f"prompt {self.prompt(index)!r}",
        )
        return index

    def _only_selected_cell(self) -> int | None:
        """The active cell's index when it is the only selected cell (Ctrl+Enter runs all selected)."""
        selection: dict[str, list[int]] = self.page.evaluate(SELECTION_JS, f"{self._panel_selector} {CELL}")
        if len(selection["active"]) == 1 and selection["selected"] == selection["active"]:
            return selection["active"][0]
        return None

    def wait_for_cell_finished(
        self, cell: CellRef, *, timeout: float = 60.0, check_error: bool = True
    ) -> int:
        """Wait until the cell shows an execution count; return it.

        When no other cell is running or queued, also wait for the idle kernel: the count comes
        with the kernel's reply, and the cell's last outputs can arrive just after it (the idle
        status comes after them). With another cell running, use ``wait_for_output`` instead.
        With ``check_error`` a cell that ended with an exception raises ``CellFailed`` (traceback
        included). A cell that ran before and was not run again counts as finished at once.
        """
        index = self.cell_index(cell)
        step = f"wait for cell {index} to finish"
        deadline = time.monotonic() + timeout

        def execution_count() -> int | None:
            match = FINISHED_PROMPT.match(self.prompt(index))
            return int(match.group(1)) if match else None

        count = self._step(
            step,
            timeout,
            execution_count,
            lambda: (
                f"prompt {self.prompt(index)!r}, {self._describe_kernel()}, "
                f"output {self.output_text(index)[-300:]!r}"
            ),
        )
        if RUNNING_PROMPT not in self._prompts():
            self.wait_for_kernel_idle(
                timeout=max(deadline - time.monotonic(), 5.0), step=f"{step} (idle kernel)"
            )
        if check_error:
            error = self.error_text(index)
            if error:
                raise CellFailed(f"cell {index} failed:\n{error}")
        return count

    # -- outputs -------------------------------------------------------------------------------------

    def output_text(self, cell: CellRef) -> str:
        """The text a person reads in the cell's output area (widgets included)."""
        area = self.cell(cell).locator(OUTPUT_AREA)
        return str(area.inner_text(timeout=5_000)) if area.count() else ""

    def error_text(self, cell: CellRef) -> str:
        """The cell's error outputs (exception and traceback, without colours), or ``""``.

        The page shows a traceback and a stderr stream alike (both red ``stderr`` blocks): the
        output's type is read from the notebook model, through the app the server exposes.
        """
        errors: list[dict[str, Any]] = self.page.evaluate(
            CELL_ERRORS_JS, [self._panel_id, self.cell_index(cell)]
        )
        return "\n".join(_describe_error(error) for error in errors)

    def wait_for_output(self, cell: CellRef, text: str, *, timeout: float = 30.0) -> str:
        """Wait until the cell's output contains ``text``; return the whole output text."""
        index = self.cell_index(cell)
        return self._step(
            f"wait for {text!r} in the output of cell {index}",
            timeout,
            lambda: output if text in (output := self.output_text(index)) else None,
            lambda: f"output {self.output_text(index)[-500:]!r}",
        )

    # -- widgets -------------------------------------------------------------------------------------

    def widget_problems(self, cell: CellRef) -> list[str]:
        """What a person would see instead of the cell's widgets: a fallback text, a plain ``VBox(...)``
        repr, or a widget output the page did not render as a view (the ipywidgets front end missing)."""
        index = self.cell_index(cell)
        found: dict[str, Any] = self.page.evaluate(CELL_WIDGETS_JS, [self._panel_id, index])
        problems = []
        if found["rendered"] != found["expected"]:
            problems.append(
                f"cell {index}: {found['expected']} widget outputs, {found['rendered']} rendered as views"
            )
        for text in found["texts"]:
            problems.extend(
                f"cell {index} shows {fallback!r}" for fallback in WIDGET_FALLBACKS if fallback in text
            )
        if PLAIN_WIDGET_REPR.search(self.output_text(index)):
            problems.append(f"cell {index} shows a widget's plain repr instead of its view")
        return problems

    def wait_for_widgets_rendered(self, cell: CellRef, *, timeout: float = 15.0) -> None:
        """Wait until the cell shows every widget output as a view (``LabError`` with what it shows)."""
        index = self.cell_index(cell)
        self._step(
            f"wait for the widgets of cell {index} to render",
            timeout,
            lambda: True if not self.widget_problems(index) else None,
            lambda: "; ".join(self.widget_problems(index)),
        )

    def button(self, cell: CellRef, text: str, *, timeout: float = 30.0, enabled: bool = True) -> Locator:
        """Wait for the one visible button labelled ``text`` in the cell's output; its locator."""
        index = self.cell_index(cell)
        exact_label = re.compile(rf"^\s*{re.escape(text)}\s*$")
        buttons = self.cell(index).locator(OUTPUT_AREA).locator("button").filter(has_text=exact_label)

        def ready_button() -> Locator | None:
            if buttons.count() != 1 or not buttons.first.is_visible():
                return None
            if enabled and not buttons.first.is_enabled():
                return None
            return buttons.first

        labels = self.cell(index).locator(OUTPUT_AREA).locator("button")
        return self._step(
            f"wait for {'an enabled' if enabled else 'a'} button {text!r} in the output of cell {index}",
            timeout,
            ready_button,
            lambda: f"{buttons.count()} such buttons; buttons there: {labels.all_inner_texts()}",
        )

    def visible_button_labels(self, cell: CellRef) -> list[str]:
        """The labels of the buttons a person sees in the cell's output (hidden ones left out)."""
        buttons = self.cell(cell).locator(OUTPUT_AREA).locator("button")
        return [button.inner_text().strip() for button in buttons.all() if button.is_visible()]

    def click_button(self, cell: CellRef, text: str, *, timeout: float = 30.0) -> None:
        """Click the button labelled ``text`` in the cell's output with the mouse (a trusted click)."""
        button = self.button(cell, text, timeout=timeout)
        button.scroll_into_view_if_needed(timeout=timeout * 1000)
        button.click(timeout=timeout * 1000)

    # -- pictures, failures, closing --------------------------------------------------------------------

    def screenshot(self, path: Path | str, *, cell: CellRef | None = None) -> Path:
        """Save a PNG of the page (or of one cell) to ``path``; return the path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if cell is None:
            self.page.screenshot(path=str(target))
        else:
            self.cell(cell).screenshot(path=str(target))
        return target

    def _step(
        self,
        step: str,
        timeout: float,
        probe: Callable[[], T | None],
        describe: Callable[[], str] = lambda: "",
    ) -> T:
        try:
            return _wait_until(step, timeout, probe, describe)
        except StepTimeout as error:
            raise StepTimeout(f"{error}{self._failure_context(step)}") from None

    def _failure_context(self, step: str) -> str:
        parts = []
        if self.console_errors:
            parts.append("browser console errors: " + " | ".join(self.console_errors[-5:]))
        if self.failure_screenshot_dir is not None:
            slug = re.sub(r"[^a-z0-9]+", "-", step.lower()).strip("-")[:80]
            with contextlib.suppress(Exception):
                parts.append(f"screenshot: {self.screenshot(self.failure_screenshot_dir / f'{slug}.png')}")
        return "".join(f"\n{part}" for part in parts)

    def close(self) -> None:
        """Close the page (and its browser context): the kernel stays until the server stops."""
        if not self.closed:
            self.closed = True
            self.page.context.close()


@contextlib.contextmanager
def open_in_lab(
    notebook_folder: Path, notebook_path: str, *, browser: LabBrowser | None = None, **open_options: Any
) -> Iterator[NotebookPage]:
    """Serve ``notebook_folder``, open ``notebook_path`` and yield its page; stop everything after."""
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(LabServer.start(notebook_folder))
        if browser is None:
            browser = stack.enter_context(LabBrowser.start())
        notebook = browser.open_notebook(server, notebook_path, **open_options)
        stack.callback(notebook.close)
        yield notebook
