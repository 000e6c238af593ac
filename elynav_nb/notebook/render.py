"""The live notebook as HTML (``LiveNotebook._repr_html_``, which its widget view re-renders) and as a
pandas DataFrame (``LiveNotebook.to_frame``).

Where it sits: the pure rendering of ``elynav_nb.notebook`` (no I/O). ``live.py`` passes what it holds
(the path, the backend, who the agent is, who else is in the room, the cells, who edited each last);
``widgets/notebook_view.py`` re-renders the HTML each time the notebook changes. Every character that
comes from the notebook is escaped; a source shows its first lines only, outputs their summary.

How data flows::

    cells (CellView) -> cells_frame: one row each (index, id, type, source, execution_count as Int64,
                        outputs summarised, last_editor)

    cells (CellView) -> one row each: #, id (8 characters), type, the run as a person sees it
                        ([3], [*] while it runs, [ ] never run), the source's first lines, the outputs'
                        summary (``outputs.outputs_summary``), who edited it last
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from elynav_nb.notebook.cells import CellView
from elynav_nb.notebook.outputs import outputs_summary

if TYPE_CHECKING:
    import pandas

__all__ = ["cells_frame", "notebook_html"]

_SOURCE_LINES: Final = 4
_SOURCE_CHARS: Final = 300


def _prompt(cell: CellView) -> str:
    if cell.cell_type != "code":
        return ""
    if cell.running:
        return "[*]"
    return f"[{cell.execution_count}]" if cell.execution_count is not None else "[ ]"


def _source(text: str) -> str:
    lines = text.splitlines()
    shown = "\n".join(lines[:_SOURCE_LINES])[:_SOURCE_CHARS]
    cut = len(shown) < len(text.rstrip("\n"))
    return html.escape(shown) + (" …" if cut else "")


def notebook_html(
    *,
    path: str,
    backend: str | None,
    user_name: str,
    status: str,
    collaborators: Sequence[str],
    cells: Sequence[CellView],
    last_editor: Mapping[str, str],
) -> str:
    """The notebook as a heading (path, backend, us, the others there, open or closed) and a table."""
    others = ", ".join(html.escape(name) for name in collaborators) or "no one else"
    rows = "".join(
        f"<tr><td>{cell.index}</td><td><code>{html.escape(cell.id[:8])}</code></td>"
        f"<td>{html.escape(cell.cell_type)}</td><td><code>{_prompt(cell)}</code></td>"
        f"<td style='text-align:left'><pre style='margin:0'>{_source(cell.source)}</pre></td>"
        f"<td>{html.escape(outputs_summary(cell.outputs))}</td>"
        f"<td>{html.escape(last_editor.get(cell.id, ''))}</td></tr>"
        for cell in cells
    )
    return (
        f"<div class='elynav-live-notebook'><b>Live notebook</b> <code>{html.escape(path)}</code>"
        f" ({html.escape(str(backend))}, {html.escape(status)}), as <b>{html.escape(user_name)}</b>;"
        f" also here: {others}"
        "<table><thead><tr><th>#</th><th>id</th><th>type</th><th>run</th><th>source</th><th>outputs</th>"
        f"<th>last edited by</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def cells_frame(cells: Sequence[CellView], last_editor: Mapping[str, str]) -> pandas.DataFrame:
    """One row per cell: index, id, type, source, execution_count, outputs (summary), last_editor."""
    import pandas

    columns = ["index", "id", "type", "source", "execution_count", "outputs", "last_editor"]
    rows = [
        (
            cell.index,
            cell.id,
            cell.cell_type,
            cell.source,
            cell.execution_count,
            outputs_summary(cell.outputs),
            last_editor.get(cell.id, ""),
        )
        for cell in cells
    ]
    frame = pandas.DataFrame(rows, columns=columns)
    frame["execution_count"] = frame["execution_count"].astype("Int64")
    return frame
