"""Every walkthrough notebook removes the scratch folders it makes (issue 32, item 13).

Notebooks 00, 01, 02 and 07 left their ``elynav-*`` workspaces in the system temp folder after each run
(nbval's, a reader's); 05 and 06 cleaned up. A folder made with ``tempfile.mkdtemp`` is removed by the
notebook itself: at its end, or when the kernel stops (``atexit``, where widgets use it after Run All).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
SCRATCH = re.compile(r"^(\w+) = Path\(tempfile\.mkdtemp\(", re.MULTILINE)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_each_scratch_folder_is_removed_by_its_notebook(path: Path) -> None:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
    for folder in SCRATCH.findall(code):
        removed = (f"shutil.rmtree({folder}", f"atexit.register(shutil.rmtree, {folder}")
        assert any(way in code for way in removed), f"{path.name} leaves {folder} in the temp folder"
