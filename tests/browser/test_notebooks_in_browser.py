"""Every walkthrough notebook, run top to bottom by a person in JupyterLab: no cell ends with an error.

nbval runs the same cells in a bare kernel; here a real JupyterLab front end renders every output
(widgets included) while the cells run. The tour has its own test, with checks on its widgets.

Where a notebook shows a live turn, the person clicks while it runs. A code cell tagged
``browser-click-above:<button>`` is such a moment: once it runs (its prompt ``[*]``), the test clicks
the button of that name in the nearest code cell above that shows one (a turn's Cancel, a prompt's
Allow), then waits for the cell to end; ``browser-expect:<text>`` then requires ``<text>`` in its output.
At the end every widget output must show as a view (no "Loading widget...", no "Error displaying
widget", no plain ``VBox(...)`` repr): the test fails when the ipywidgets front end is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from .lab import LabBrowser, LabServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SKIP_TAGS = {"skip-execution", "nbval-skip"}
WALKTHROUGHS = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb") if path.name != "00_tour.ipynb")


@dataclass(frozen=True)
class CellStep:
    """One code cell to run, and what the person does while it runs."""

    index: int
    error_expected: bool = False
    click: str | None = None  # a button to click in a cell above while this one runs
    click_cell: int | None = None
    expect: str | None = None  # text its output must hold at the end


def tagged(tags: set[str], prefix: str) -> str | None:
    return next((tag[len(prefix) :] for tag in sorted(tags) if tag.startswith(prefix)), None)


def fresh_copy(source: Path, target: Path) -> list[CellStep]:
    """Copy a notebook without its outputs; return the steps: each code cell to run, with its clicks."""
    notebook = json.loads(source.read_text(encoding="utf-8"))
    steps: list[CellStep] = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        cell["outputs"], cell["execution_count"] = [], None
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & SKIP_TAGS:
            continue
        click = tagged(tags, "browser-click-above:")
        click_cell = steps[-1].index if click and steps else None
        steps.append(
            CellStep(index, "raises-exception" in tags, click, click_cell, tagged(tags, "browser-expect:"))
        )
    target.write_text(json.dumps(notebook), encoding="utf-8")
    return steps


@pytest.mark.parametrize("name", WALKTHROUGHS)
def test_a_walkthrough_runs_in_jupyterlab(
    tmp_path: Path, lab_browser: LabBrowser, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The served copy has no ../tests/interop beside it: the Docs notebook's Node-peer step then says it
    # is skipped (nbval runs that step from the repository, after `npm ci`).
    monkeypatch.delenv("ELYNAV_REQUIRE_NODE", raising=False)
    folder = tmp_path / "notebooks"
    folder.mkdir()
    steps = fresh_copy(NOTEBOOKS / name, folder / name)
    with LabServer.start(folder) as server, lab_browser.open_notebook(server, name) as notebook:
        notebook.failure_screenshot_dir = tmp_path / "failures"
        for step in steps:
            notebook.run_cell(step.index)
            if step.click is not None:
                assert step.click_cell is not None, f"cell {step.index}: no code cell above to click in"
                notebook.button(step.click_cell, step.click, timeout=60)
                assert notebook.prompt(step.index) == "[*]:", f"cell {step.index} ended before the click"
                notebook.click_button(step.click_cell, step.click)
            notebook.wait_for_cell_finished(step.index, timeout=120, check_error=not step.error_expected)
            if step.expect is not None:
                assert step.expect in notebook.output_text(step.index), notebook.output_text(step.index)
        for step in steps:  # every widget output shows as a view: no fallback text, no plain repr
            notebook.wait_for_widgets_rendered(step.index)
        notebook.screenshot(Path("/tmp") / f"browser_{Path(name).stem}.png")
    assert server.leftover_processes == [], "processes outlived the server's shutdown"
