"""Re-execute the walkthrough notebooks in place, so their committed outputs match the code.

Run from the repository root: ``python notebooks/regenerate.py [name.ipynb ...]``. Each notebook runs
on the embedded stand-ins in its own folder, with widget state left out (random model ids would
make every regeneration a diff). ``python -m pytest`` then compares the outputs strictly (nbval).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK_FOLDER = Path(__file__).resolve().parent


def regenerate(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(NOTEBOOK_FOLDER)}},
    )
    client.execute()
    nbformat.write(notebook, path)
    print(f"regenerated {path.name}")


def main(names: list[str]) -> int:
    paths = [NOTEBOOK_FOLDER / name for name in names] or sorted(NOTEBOOK_FOLDER.glob("*.ipynb"))
    for path in paths:
        regenerate(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
