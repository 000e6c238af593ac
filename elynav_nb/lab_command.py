"""``elynav lab [FOLDER] [--port N] [--no-browser]``: open the walkthrough notebooks in JupyterLab, installing nothing.

Where it sits: an entry of ``elynav_nb.cli.COMMANDS``. ``run`` finds the notebooks folder (the
argument, else ``notebooks/`` of the checkout this package runs from, else ``./notebooks``), checks
that the ``lab`` extra is importable (JupyterLab, ipykernel and the ipywidgets front end), then
replaces this process with ``python -m jupyterlab`` on that folder, so Ctrl-C stops JupyterLab as
usual (as root, common in containers, with ``--allow-root``). A missing piece is one clear line naming the extra to install, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from elynav_nb.errors import NotFound

__all__ = [
    "LAB_MODULES",
    "configure",
    "jupyterlab_command",
    "lab_install_command",
    "missing_lab_modules",
    "notebooks_folder",
    "run",
]

# The modules the `lab` extra brings, each with what it is for.
LAB_MODULES: dict[str, str] = {
    "jupyterlab": "JupyterLab itself",
    "ipykernel": "the Python kernel",
    "jupyterlab_widgets": "the ipywidgets front end (live views, Cancel buttons)",
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder", nargs="?", default=None, help="folder to open (default: the notebooks/ of this checkout)"
    )
    parser.add_argument("--port", type=int, default=None, help="JupyterLab's port (default: its own, 8888)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser tab")


def missing_lab_modules() -> list[str]:
    """The modules of the ``lab`` extra that cannot be imported here."""
    return [name for name in LAB_MODULES if importlib.util.find_spec(name) is None]


def notebooks_folder(folder: str | None, working_directory: Path | None = None) -> Path:
    """The folder to open: ``folder`` when given, else the checkout's ``notebooks/``, else ``./notebooks``."""
    if folder is not None:
        chosen = Path(folder).expanduser()
        if not chosen.is_dir():
            raise NotFound(f"no folder {chosen}: give the folder of the notebooks to open")
        return chosen.resolve()
    candidates = [
        Path(__file__).resolve().parents[1] / "notebooks",  # an editable install from a checkout
        (working_directory or Path.cwd()) / "notebooks",
    ]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise NotFound(
        "no notebooks/ folder next to this package or in the current directory: "
        "run `elynav lab` from a checkout of elynav-nb, or give a folder (`elynav lab PATH`)"
    )


def lab_install_command(working_directory: Path | None = None) -> str:
    """How to install the lab extra here: from the checkout this package runs from, else from the index."""
    checkout = Path(__file__).resolve().parents[1]
    if not (checkout / "pyproject.toml").is_file():
        return "python -m pip install 'elynav-nb[lab]'"
    here = (working_directory or Path.cwd()).resolve()
    where = "." if here == checkout else str(checkout)
    return f"python -m pip install -e '{where}[lab]'"


def jupyterlab_command(folder: Path, *, port: int | None = None, open_browser: bool = True) -> list[str]:
    """The command line that starts JupyterLab on ``folder`` with this interpreter."""
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={folder}"]
    if port is not None:
        command.append(f"--ServerApp.port={port}")
    if not open_browser:
        command.append("--no-browser")
    if os.geteuid() == 0:
        command.append("--allow-root")  # containers often run as root; JupyterLab refuses it otherwise
    return command


def run(args: argparse.Namespace) -> int:
    missing = missing_lab_modules()
    if missing:
        needed = ", ".join(f"{name} ({LAB_MODULES[name]})" for name in missing)
        raise NotFound(f"the lab extra is missing: {needed}. Install it with: {lab_install_command()}")
    folder = notebooks_folder(args.folder)
    command = jupyterlab_command(folder, port=args.port, open_browser=not args.no_browser)
    print(f"opening {folder} in JupyterLab (Ctrl-C to stop)", flush=True)
    os.execv(command[0], command)
    return 0  # not reached: execv replaces this process
