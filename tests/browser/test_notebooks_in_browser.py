"""Every walkthrough notebook, run top to bottom by a person in JupyterLab: no cell ends with an error.

nbval runs the same cells in a bare kernel; here a real JupyterLab front end renders every output
(widgets included) while the cells run. The tour has its own test, with checks on its widgets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .lab import LabBrowser, LabServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SKIP_TAGS = {"skip-execution", "nbval-skip"}
WALKTHROUGHS = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb") if path.name != "00_tour.ipynb")


def fresh_copy(source: Path, target: Path) -> list[tuple[int, bool]]:
    """Copy a notebook without its outputs; return (cell index, error expected) for each code cell to run."""
    notebook = json.loads(source.read_text(encoding="utf-8"))
    to_run = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        cell["outputs"], cell["execution_count"] = [], None
        tags = set(cell.get("metadata", {}).get("tags", []))
        if not tags & SKIP_TAGS:
            to_run.append((index, "raises-exception" in tags))
    target.write_text(json.dumps(notebook), encoding="utf-8")
    return to_run


@pytest.mark.parametrize("name", WALKTHROUGHS)
def test_a_walkthrough_runs_in_jupyterlab(
    tmp_path: Path, lab_browser: LabBrowser, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The served copy has no ../tests/interop beside it: the Docs notebook's Node-peer step then says it
    # is skipped (nbval runs that step from the repository, after `npm ci`).
    monkeypatch.delenv("ELYNAV_REQUIRE_NODE", raising=False)
    folder = tmp_path / "notebooks"
    folder.mkdir()
    cells = fresh_copy(NOTEBOOKS / name, folder / name)
    with LabServer.start(folder) as server, lab_browser.open_notebook(server, name) as notebook:
        notebook.failure_screenshot_dir = tmp_path / "failures"
        for index, error_expected in cells:
            notebook.run_cell(index)
            notebook.wait_for_cell_finished(index, timeout=120, check_error=not error_expected)
        notebook.screenshot(Path("/tmp") / f"browser_{Path(name).stem}.png")
    assert server.leftover_processes == [], "processes outlived the server's shutdown"
