"""The JupyterLab server of the browser tests: started on 127.0.0.1 with isolated settings, stopped whole.

``LabServer`` runs JupyterLab (a free port, a token, a temporary copy of a notebook folder, isolated
Jupyter settings with every notebook cell rendered) and, when stopped, leaves no kernel or child
process behind. ``write_notebook`` writes the notebooks the tests open; the error types and the
bounded wait are shared with ``lab.py`` (the browser side).
"""

from __future__ import annotations

import abc
import contextlib
import json
import os
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
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar
from urllib.parse import quote

import psutil

__all__ = [
    "CHROMIUM_CANDIDATES",
    "DEFAULT_KERNEL",
    "POLL_INTERVAL_S",
    "CellFailed",
    "ClosedOnExit",
    "LabError",
    "LabServer",
    "StepTimeout",
    "browser_unavailable_reason",
    "find_chromium",
    "write_notebook",
]

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/lib/chromium/chromium", "/usr/bin/chromium-browser")
DEFAULT_KERNEL = "python3"
POLL_INTERVAL_S = 0.1
PORT_ATTEMPTS = 3

# JupyterLab settings of the server we start: every cell attached to the page (windowing "none"; "full"
# attaches only the cells in the viewport), so any cell can be found and clicked; no news or update
# toasts over the notebook.
LAB_USER_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"checkForUpdates": False, "fetchNews": "false"},
}

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


class ClosedOnExit(abc.ABC):
    """``with thing:`` closes ``thing`` on the way out (the harness's server, browser and pages)."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


class LabServer(ClosedOnExit):
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
        launcher: Sequence[str] = (sys.executable, "-m", "jupyterlab"),
    ) -> LabServer:
        """Copy ``notebook_folder`` and serve it; return once the server answers its REST API.

        ``launcher`` is the command before the options (another venv's ``jupyter lab``, say).

        ``idle_shutdown_s`` is a safety net only: should the test process die without ``stop()``,
        the server culls idle kernels and then exits by itself after about that long.
        """
        home = Path(tempfile.mkdtemp(prefix="elynav-lab-"))
        try:
            shutil.copytree(notebook_folder, home / "root")
            _write_user_settings(home / "settings")
            for _attempt in range(PORT_ATTEMPTS):  # a free port can be taken between our probe and the bind
                server = cls._launch(
                    home,
                    timeout=timeout,
                    idle_shutdown_s=idle_shutdown_s,
                    extra_args=extra_args,
                    launcher=launcher,
                )
                if server is not None:
                    return server
            raise LabError(f"start JupyterLab: every port tried was taken ({PORT_ATTEMPTS} attempts)")
        except BaseException:
            shutil.rmtree(home, ignore_errors=True)
            raise

    @classmethod
    def _launch(
        cls,
        home: Path,
        *,
        timeout: float,
        idle_shutdown_s: int,
        extra_args: Sequence[str],
        launcher: Sequence[str] = (sys.executable, "-m", "jupyterlab"),
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
            *launcher,
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

    def close(self) -> None:
        """``stop()``, under the name ``ClosedOnExit`` calls."""
        self.stop()


def _is_alive(process: psutil.Process) -> bool:
    """Running and not a zombie (an exited orphan waits for init to reap it: it is gone for us)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _write_user_settings(settings_dir: Path) -> None:
    for plugin, values in LAB_USER_SETTINGS.items():
        path = settings_dir / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values, indent=1))
