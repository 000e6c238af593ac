"""elynav_nb.notebook: the live notebook as the agents' workspace, beside the person editing it.

A notebook opens as a peer of its shared Y document (``jupyter_ydoc.YNotebook`` over pycrdt) through
the Jupyter server's collaboration room, on jupyter-collaboration 5.x or jupyter-server-documents
0.3.x: ``await LiveNotebook.open(path, server_url=..., token=...)``, or from inside the notebook's
own kernel ``await LiveNotebook.current()``. Reads come from the live replica; every write is a
minimal change acknowledged by the room; ``run_cell`` runs a cell in the notebook's kernel (in a
subshell where the kernel is busy with the asking cell) and shows it in the cell as it runs.
``notebook_tools(nb)`` offers it to agents; ``elynav mcp notebook`` serves the same tools over stdio.

Modules: ``wire`` (y-websocket messages, pure), ``cells`` (the Y cells, minimal text edits, pure),
``outputs`` (iopub -> nbformat outputs, bounded text, pure), ``journal`` (replayable writes, pure),
``locate`` (kernel -> notebook and server), ``server_api`` (REST), ``connection`` (the room's
WebSocket, acks, resets), ``kernel`` (runs over the kernel WebSocket), ``run_display`` (a run shown
in its cell as it goes), ``live`` (the facade), ``tools`` (``notebook_tools``), ``mcp_server`` and
``command`` (``elynav mcp notebook``).
The protocol facts both backends showed are in ``docs/notebook-live-protocol.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elynav_nb.notebook.cells import CellView
    from elynav_nb.notebook.kernel import RunResult
    from elynav_nb.notebook.live import LiveNotebook, NotebookChange
    from elynav_nb.notebook.tools import notebook_tools

__all__ = ["CellView", "LiveNotebook", "NotebookChange", "RunResult", "notebook_tools"]

_HOMES = {
    "CellView": "elynav_nb.notebook.cells",
    "LiveNotebook": "elynav_nb.notebook.live",
    "NotebookChange": "elynav_nb.notebook.live",
    "RunResult": "elynav_nb.notebook.kernel",
    "notebook_tools": "elynav_nb.notebook.tools",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'elynav_nb.notebook' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
