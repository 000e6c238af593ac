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
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar
from urllib.parse import quote

import psutil

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

CellRef = int | str
"""A cell: its index (0 = first cell) or a marker string found in exactly one cell's source."""

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/lib/chromium/chromium", "/usr/bin/chromium-browser")
DEFAULT_KERNEL = "python3"
POLL_INTERVAL_S = 0.1
PORT_ATTEMPTS = 3

# JupyterLab settings of the server we start: every cell rendered (no windowing, so any cell can be
# found and clicked), no news or update toasts over the notebook.
LAB_USER_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "full"},
    "@jupyterlab/apputils-extension/notification": {"checkForUpdates": False, "fetchNews": "false"},
}

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

# Indices of the selected cells and of the active one.
SELECTION_JS = """(cellSelector) => {
    const cells = [...document.querySelectorAll(cellSelector)];
    const having = (name) => cells.flatMap((cell, index) => (cell.classList.contains(name) ? [index] : []));
    return {selected: having('jp-mod-selected'), active: having('jp-mod-active')};
}"""

T = TypeVar("T")


class LabError(RuntimeError):
    """The harness could not do a step (no such cell, a dialog in the way, a server that died)."""


class StepTimeout(LabError, TimeoutError):
    """A bounded wait ran out; the message names the step and what was seen last."""


class CellFailed(LabError):
    """A cell finished with an error output (its traceback is in the message)."""


# -- what the machine has --------------------------------------------------------------------------


def find_chromium() -> str | None:
    """Path of a Chromium executable (``$ELYNAV_CHROMIUM``, Debian's, or one on PATH), else ``None``."""
    candidates = [os.environ.get("ELYNAV_CHROMIUM", ""), *CHROMIUM_CANDIDATES, shutil.which("chromium") or ""]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def browser_unavailable_reason() -> str | None:
    """Why browser tests cannot run here (for ``pytest.skip``), or ``None`` when they can."""
    if find_chromium() is None:
        return "no Chromium: apt-get install chromium (or set ELYNAV_CHROMIUM to a Chromium binary)"
    missing = [name for name in ("playwright", "jupyterlab") if not _importable(name)]
    if missing:
        return f"missing Python packages {', '.join(missing)}: pip install playwright jupyterlab"
    return None


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def write_notebook(path: Path, cell_sources: Sequence[str], *, kernel_name: str = DEFAULT_KERNEL) -> Path:
    """Write an nbformat 4.5 notebook of code cells whose kernelspec is ``kernel_name``."""
    cells: list[dict[str, Any]] = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": uuid.uuid4().hex[:8],
            "metadata": {},
            "outputs": [],
            "source": source,
        }
        for source in cell_sources
    ]
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"name": kernel_name, "display_name": kernel_name, "language": "python"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return path


def _wait_until(
    step: str,
    timeout: float,
    probe: Callable[[], T | None],
    describe: Callable[[], str] = lambda: "",
) -> T:
    """Call ``probe`` until it returns something other than ``None``; ``StepTimeout`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None:
            return value
        if time.monotonic() >= deadline:
            seen = describe()
            raise StepTimeout(f"{step}: not done within {timeout:g} s" + (f"; {seen}" if seen else ""))
        time.sleep(POLL_INTERVAL_S)


# -- the server ------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LabServer:
    """A JupyterLab server on 127.0.0.1 serving a temporary copy of a notebook folder.

    Its Jupyter config, data, runtime, IPython, settings and workspace folders are temporary too,
    so nothing of the machine's own Jupyter set-up leaks in and nothing is left behind. Kernels
    are the server's Python (``python3`` is ipykernel in the same environment).
    """

    def __init__(self, process: subprocess.Popen[bytes], port: int, token: str, home: Path) -> None:
        self.process = process
        self.port = port
        self.token = token
        self.home = home
        self.root_dir = home / "root"
        self.log_path = home / "server.log"
        self.leftover_processes: list[str] = []
        """Processes (kernels, their children) that outlived the shutdown and had to be killed."""
        self._stopped = False

    @classmethod
    def start(
        cls,
        notebook_folder: Path,
        *,
        timeout: float = 60.0,
        idle_shutdown_s: int = 1800,
        extra_args: Sequence[str] = (),
    ) -> LabServer:
        """Copy ``notebook_folder`` and serve it; return once the server answers its REST API.

        ``idle_shutdown_s`` is a safety net only: should the test process die without ``stop()``,
        the server culls idle kernels and then exits by itself after about that long.
        """
        home = Path(tempfile.mkdtemp(prefix="elynav-lab-"))
        try:
            shutil.copytree(notebook_folder, home / "root")
            _write_user_settings(home / "settings")
            for _attempt in range(PORT_ATTEMPTS):  # a free port can be taken between our probe and the bind
                server = cls._launch(
                    home, timeout=timeout, idle_shutdown_s=idle_shutdown_s, extra_args=extra_args
                )
                if server is not None:
                    return server
            raise LabError(f"start JupyterLab: every port tried was taken ({PORT_ATTEMPTS} attempts)")
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            raise

    @classmethod
    def _launch(
        cls, home: Path, *, timeout: float, idle_shutdown_s: int, extra_args: Sequence[str]
    ) -> LabServer | None:
        port = _free_port()
        token = secrets.token_hex(16)
        environment = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(home / "config"),
            "JUPYTER_DATA_DIR": str(home / "data"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "IPYTHONDIR": str(home / "ipython"),
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYTHONUNBUFFERED": "1",
        }
        command = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={home / 'root'}",
            f"--LabApp.user_settings_dir={home / 'settings'}",
            f"--LabApp.workspaces_dir={home / 'workspaces'}",
            f"--ServerApp.shutdown_no_activity_timeout={idle_shutdown_s}",
            f"--MappingKernelManager.cull_idle_timeout={idle_shutdown_s}",
            "--MappingKernelManager.cull_interval=60",
            "--MappingKernelManager.cull_connected=True",
            "--LabApp.expose_app_in_browser=True",
            *extra_args,
        ]  # fmt: skip
        with open(home / "server.log", "ab") as log:
            process = subprocess.Popen(
                command,
                cwd=home,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        server = cls(process, port, token, home)
        try:
            _wait_until(
                "start JupyterLab (wait for /api/status)",
                timeout,
                server._answers_or_died,
                lambda: f"server log tail:\n{server.log_tail()}",
            )
        except BaseException:
            server._terminate_process()
            raise
        if server.process.poll() is None:
            return server
        if "address already in use" in server.log_tail().lower():
            return None
        raise LabError(
            f"start JupyterLab: the server exited with {server.process.returncode}:\n{server.log_tail()}"
        )

    def _answers_or_died(self) -> bool | None:
        if self.process.poll() is not None:
            return True
        try:
            self.api("GET", "/api/status", timeout=2.0)
        except (OSError, LabError):
            return None
        return True

    # -- talking to it ------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def lab_url(self, notebook_path: str, *, workspace: str) -> str:
        """URL that opens ``notebook_path`` (relative to the root) in a workspace of its own."""
        return f"{self.base_url}/lab/workspaces/{workspace}/tree/{quote(notebook_path)}?token={self.token}"

    def api(self, method: str, path: str, body: Any = None, *, timeout: float = 10.0) -> Any:
        """Call the server's REST API with the token; the decoded JSON answer (``None`` when empty)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                payload = response.read()
        except urllib.error.HTTPError as error:
            raise LabError(f"{method} {path}: HTTP {error.code} {error.read()[:500]!r}") from error
        return json.loads(payload) if payload else None

    def kernel_state(self, notebook_path: str) -> str | None:
        """The execution state the server has for the kernel of ``notebook_path``'s session, if any."""
        for session in self.api("GET", "/api/sessions"):
            if session.get("path") == notebook_path and session.get("kernel"):
                return str(session["kernel"].get("execution_state"))
        return None

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # -- stopping -----------------------------------------------------------------------------------

    def stop(self, *, timeout: float = 30.0) -> None:
        """Shut the kernels and the server down, kill whatever outlived that, delete the temp copy.

        Processes that had to be killed are listed in ``leftover_processes``.
        """
        if self._stopped:
            return
        self._stopped = True
        try:
            descendants = self._descendants()
            if self.process.poll() is None:
                self._shut_down_kernels(timeout)
                with contextlib.suppress(OSError, LabError):
                    self.api("POST", "/api/shutdown", timeout=timeout)
                try:
                    self.process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self._terminate_process()
            self._reap(descendants + self._descendants())
        finally:
            shutil.rmtree(self.home, ignore_errors=True)

    def _shut_down_kernels(self, timeout: float) -> None:
        with contextlib.suppress(OSError, LabError):
            for session in self.api("GET", "/api/sessions"):
                with contextlib.suppress(OSError, LabError):
                    self.api("DELETE", f"/api/sessions/{session['id']}", timeout=timeout)

    def _descendants(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            return []

    def _terminate_process(self) -> None:
        """SIGTERM the server's process group (Jupyter cleans up on it), then SIGKILL."""
        for signal_number, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            if self.process.poll() is not None:
                return
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal_number)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=grace)

    def _reap(self, processes: list[psutil.Process], grace: float = 10.0) -> None:
        """Give the server's former children ``grace`` seconds to exit, then kill the rest."""
        unique = list({process.pid: process for process in processes}.values())
        deadline = time.monotonic() + grace
        alive = [process for process in unique if _is_alive(process)]
        while alive and time.monotonic() < deadline:
            time.sleep(POLL_INTERVAL_S)
            alive = [process for process in alive if _is_alive(process)]
        for process in alive:
            with contextlib.suppress(psutil.Error):
                self.leftover_processes.append(f"{process.pid} {' '.join(process.cmdline())[:200]}")
                process.kill()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


def _is_alive(process: psutil.Process) -> bool:
    """Running and not a zombie (an exited orphan waits for init to reap it: it is gone for us)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _describe_error(error: dict[str, Any]) -> str:
    traceback = "\n".join(ANSI_ESCAPE.sub("", line) for line in error.get("traceback", []))
    return f"{error.get('ename')}: {error.get('evalue')}\n{traceback}".rstrip()


def _write_user_settings(settings_dir: Path) -> None:
    for plugin, values in LAB_USER_SETTINGS.items():
        path = settings_dir / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values, indent=1))


# -- the browser -----------------------------------------------------------------------------------


class LabBrowser:
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

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


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


class NotebookPage:
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

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


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
