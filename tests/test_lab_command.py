"""``elynav lab``: a clear line when the lab extra is missing, the right folder, and a real JupyterLab."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from elynav_nb import lab_command
from elynav_nb.cli import main
from tests.tiers import needs

REPOSITORY = Path(__file__).resolve().parents[1]


def test_a_missing_lab_extra_is_one_clear_line_and_starts_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Whatever this venv has (the README's test extra alone, or the lab extra too): only the widgets
    # front end is missing here.
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "jupyterlab_widgets" else object(),
    )
    monkeypatch.chdir(REPOSITORY)
    started: list[Any] = []
    monkeypatch.setattr(os, "execv", lambda *args: started.append(args))
    assert main(["lab"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("NOT_FOUND: the lab extra is missing: jupyterlab_widgets (")
    assert "jupyterlab (" not in error and "ipykernel (" not in error
    # From the checkout: the editable install of this folder, never a download of the published package.
    assert "python -m pip install -e '.[lab]'" in error and "Traceback" not in error
    assert started == []


def test_every_missing_lab_module_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None)
    monkeypatch.setattr(os, "execv", lambda *args: pytest.fail("JupyterLab must not start"))
    assert main(["lab"]) == 2
    error = capsys.readouterr().err
    assert all(f"{name} (" in error for name in lab_command.LAB_MODULES)


def test_the_install_hint_names_the_checkout_from_elsewhere(tmp_path: Path) -> None:
    assert lab_command.lab_install_command(REPOSITORY) == "python -m pip install -e '.[lab]'"
    assert lab_command.lab_install_command(tmp_path) == f"python -m pip install -e '{REPOSITORY}[lab]'"


def test_the_folder_is_the_argument_else_the_checkouts_notebooks(tmp_path: Path) -> None:
    assert lab_command.notebooks_folder(str(tmp_path)) == tmp_path.resolve()
    assert lab_command.notebooks_folder(None) == REPOSITORY / "notebooks"  # this checkout's
    with pytest.raises(lab_command.NotFound) as raised:
        lab_command.notebooks_folder(str(tmp_path / "absent"))
    assert raised.value.code == "NOT_FOUND"


def test_the_command_line_uses_this_interpreter() -> None:
    command = lab_command.jupyterlab_command(Path("/x"), port=8899, open_browser=False)
    as_root = ["--allow-root"] if os.geteuid() == 0 else []
    assert command == [
        sys.executable,
        "-m",
        "jupyterlab",
        "--ServerApp.root_dir=/x",
        "--ServerApp.port=8899",
        "--no-browser",
        *as_root,
    ]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
@pytest.mark.lab
@needs(
    "ELYNAV_REQUIRE_LAB",
    f"the lab extra is missing: {', '.join(lab_command.missing_lab_modules())}"
    if lab_command.missing_lab_modules()
    else None,
)
def test_elynav_lab_serves_the_notebooks(tmp_path: Path) -> None:
    port = free_port()
    environment = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_DATA_DIR=str(tmp_path / "data"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
    )
    log = tmp_path / "lab.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "elynav_nb", "lab", "--no-browser", "--port", str(port)],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=environment,
            start_new_session=True,
        )
    try:
        token = None
        deadline = time.monotonic() + 90
        while token is None and time.monotonic() < deadline and process.poll() is None:
            found = re.search(
                rf"http://127\.0\.0\.1:{port}/lab\?token=([0-9a-f]+)", log.read_text(errors="replace")
            )
            token = found.group(1) if found else None
            time.sleep(0.2)
        assert token, log.read_text(errors="replace")[-2000:]
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/contents?token={token}", timeout=30
        ) as answer:
            listing = json.load(answer)
        names = {entry["name"] for entry in listing["content"]}
        assert "00_tour.ipynb" in names
        assert log.read_text().startswith(f"opening {REPOSITORY / 'notebooks'} in JupyterLab")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
