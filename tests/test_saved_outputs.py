"""A notebook executed by nbclient (nbconvert's engine) saves how each turn ended, not how it started.

A live turn is displayed when it starts; its display is then updated with the same display id once it
settles (``_display.show_live``), so the saved ``text/plain`` and ``text/html`` (what GitHub, nbviewer
and a notebook reopened without widget state show) hold the final transcript. The notebook below
covers the three ways a turn reaches a later cell: awaited in the next cell, run by ``%%agent`` in its
own cell, and never awaited but ending while another cell runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.slow

CELLS = [
    """\
import asyncio
from elynav_nb.agents import AgentRunner
runner = await AgentRunner("elynav-sdr", WORKSPACE, executable="standin").start()""",
    """\
turn = runner.send("Bonjour, qui es-tu ?")
turn""",
    "result = await turn",
    """\
%load_ext elynav_nb
%config ElynavMagics.workspace = WORKSPACE
%config ElynavMagics.executable = "standin\"""",
    "%%agent sdr\n@standin bash echo depuis-un-outil",
    """\
late = runner.send("@standin slow 1\\nTard")
late""",
    """\
for _ in range(600):  # not awaited: the turn ends while this cell runs
    if late.done:
        break
    await asyncio.sleep(0.1)
await asyncio.sleep(0.5)""",
    """\
await runner.stop()
%elynav_stop""",
]


def executed(workspace: Path) -> Any:
    notebook = nbformat.v4.new_notebook()
    cells = [f"WORKSPACE = {str(workspace)!r}", *CELLS]
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3", store_widget_state=False)
    client.execute(cwd=str(workspace))
    return notebook


def only_output(cell: Any) -> dict[str, Any]:
    outputs = [output for output in cell.outputs if output.output_type in ("display_data", "execute_result")]
    assert len(outputs) == 1, cell.outputs
    return dict(outputs[0]["data"])


def text_of(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


def test_each_turn_is_saved_as_it_ended(tmp_path: Path) -> None:
    notebook = executed(tmp_path)
    displayed, agent_cell, late = (only_output(notebook.cells[index]) for index in (2, 5, 6))
    for data in (displayed, agent_cell, late):
        plain, page = text_of(data["text/plain"]), text_of(data["text/html"])
        assert "application/vnd.jupyter.widget-view+json" in data  # the live view is still there
        assert plain.startswith("<Turn completed agent='elynav-sdr'"), plain
        assert "starting" not in plain and "starting" not in page
        assert "[elynav stand-in]" in plain and "[elynav stand-in]" in page  # the answer itself
        assert "<b>completed</b>" in page
    assert "You said: Bonjour, qui es-tu ?" in text_of(displayed["text/plain"])
    agent_plain = text_of(agent_cell["text/plain"])
    assert "→ Bash" in agent_plain and "← ok" in agent_plain and "depuis-un-outil" in agent_plain
    assert "tool <b>Bash</b>" in text_of(agent_cell["text/html"])
    assert "Tard" in text_of(late["text/plain"])
