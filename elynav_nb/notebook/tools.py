"""``notebook_tools(nb)``: a live notebook offered to an agent as kernel tools, as ``df_tools`` offers a frame.

Where it sits: the agents' edge of ``elynav_nb.notebook``. It builds a ``KernelToolSet`` (the tool layer of
``elynav_nb.agents.tools``, shared by every capability that offers tools) whose tools call one
``LiveNotebook``; a runner serves it in the kernel to claude, codex, gemini and ACP agents, and
``elynav mcp notebook`` serves the same set over stdio (``mcp_server.py``).

Names and arguments follow jupyter-ai's notebook toolkit (jupyter-ai-tools) where the meaning is the same,
without its ``file_path`` (the set is bound to one notebook)::

    read_notebook(include_outputs=False)          the cells as markdown, each with its id
    read_cell(cell_id, include_outputs=True)      one cell as markdown
    add_cell(content, cell_id, add_above, cell_type)   relative to a cell (or at the end); its new id
    insert_cell(content, insert_index, cell_type) at an index; its new id
    edit_cell(cell_id, content)                   a minimal text diff (a person typing keeps their text)
    delete_cell(cell_id)
    move_cell(cell_id, insert_index)              (ours)
    run_cell(cell_id, timeout)                    runs it in the notebook's kernel; its outputs as text
    get_cell_outputs(cell_id, max_chars)          (ours) the outputs as text, bounded

Every write returns once the collaboration room holds it. Failures are tool errors with the typed code
(``CELL_NOT_FOUND``, ``RUN_REFUSED``, ``KERNEL_DIED``, ``SYNC_TIMEOUT``...), said to the model, never a hang:
each call is bounded by the set's ``tool_timeout``.
"""

from __future__ import annotations

from typing import Literal

from elynav_nb.agents.tools.kernel_tool import KernelTool, make_kernel_tool
from elynav_nb.agents.tools.tool_set import KernelToolSet
from elynav_nb.errors import InvalidInput
from elynav_nb.notebook.cells import CellView
from elynav_nb.notebook.live import LiveNotebook
from elynav_nb.notebook.outputs import outputs_as_text

__all__ = ["TOOL_NAMES", "notebook_markdown", "notebook_tools"]

TOOL_NAMES = (
    "read_notebook",
    "read_cell",
    "add_cell",
    "insert_cell",
    "edit_cell",
    "delete_cell",
    "move_cell",
    "run_cell",
    "get_cell_outputs",
)
CellType = Literal["code", "markdown", "raw"]
_OUTPUT_CHARS = 4000


def cell_markdown(cell: CellView, *, include_outputs: bool, max_output_chars: int = _OUTPUT_CHARS) -> str:
    """One cell as markdown: a heading with its index, id, type and count, its source, its outputs."""
    count = f", execution count {cell.execution_count}" if cell.execution_count is not None else ""
    language = "python" if cell.cell_type == "code" else ""
    fence = "````" if "```" in cell.source else "```"
    text = f"### cell {cell.index} (id {cell.id}, {cell.cell_type}{count})\n{fence}{language}\n{cell.source}\n{fence}"
    if include_outputs and cell.outputs:
        text += f"\noutputs:\n```\n{outputs_as_text(cell.outputs, max_output_chars)}\n```"
    return text


def notebook_markdown(nb: LiveNotebook, *, include_outputs: bool = False) -> str:
    cells = nb.cells
    parts = [f"# notebook {nb.path} ({len(cells)} cells)"]
    parts.extend(
        cell_markdown(cell, include_outputs=include_outputs, max_output_chars=1000) for cell in cells
    )
    return "\n\n".join(parts)


def notebook_tools(
    nb: LiveNotebook, *, tool_timeout: float = 120.0, run_timeout: float = 60.0
) -> KernelToolSet:
    """A ``KernelToolSet`` over the live notebook ``nb`` (read, add, insert, edit, delete, move, run, outputs)."""
    if not isinstance(nb, LiveNotebook):
        raise InvalidInput(f"notebook_tools needs a LiveNotebook, not {type(nb).__name__}")
    if run_timeout >= tool_timeout:
        raise InvalidInput("run_timeout must be shorter than tool_timeout, so a long run is said, not cut")
    return KernelToolSet(_tools(nb, run_timeout), tool_timeout=tool_timeout)


def _tools(nb: LiveNotebook, run_timeout: float) -> list[KernelTool]:
    async def read_notebook(include_outputs: bool = False) -> str:
        """The live notebook the user has open, as markdown: every cell with its index, id, type and source.

        Args:
            include_outputs: also each code cell's outputs, as text (bounded).
        """
        return notebook_markdown(nb, include_outputs=include_outputs)

    async def read_cell(cell_id: str, include_outputs: bool = True) -> str:
        """One cell of the notebook as markdown.

        Args:
            cell_id: the cell's id (from read_notebook).
            include_outputs: also its outputs, as text (bounded).
        """
        return cell_markdown(nb.cell(cell_id), include_outputs=include_outputs)

    async def add_cell(
        content: str = "", cell_id: str | None = None, add_above: bool = False, cell_type: CellType = "code"
    ) -> str:
        """Add a cell below (or above) the cell cell_id, or at the end of the notebook; returns its new id.

        Args:
            content: the new cell's source.
            cell_id: the cell to add it next to (default: at the end).
            add_above: above that cell instead of below.
            cell_type: code, markdown or raw.
        """
        if cell_id is None:
            return await nb.insert_cell(content, cell_type)
        index = nb.cell(cell_id).index
        return await nb.insert_cell(content, cell_type, index=index if add_above else index + 1)

    async def insert_cell(
        content: str = "", insert_index: int | None = None, cell_type: CellType = "code"
    ) -> str:
        """Insert a cell at an index (0 is the top; default: the end); returns its new id.

        Args:
            content: the new cell's source.
            insert_index: where the new cell goes.
            cell_type: code, markdown or raw.
        """
        return await nb.insert_cell(content, cell_type, index=insert_index)

    async def edit_cell(cell_id: str, content: str) -> str:
        """Replace a cell's source with content (only the characters that differ change, so a person
        typing in the same cell keeps their text).

        Args:
            cell_id: the cell's id.
            content: the whole new source.
        """
        changed = await nb.update_cell(cell_id, content)
        return f"cell {cell_id} edited ({changed} characters changed)"

    async def delete_cell(cell_id: str) -> str:
        """Delete a cell.

        Args:
            cell_id: the cell's id.
        """
        await nb.delete_cell(cell_id)
        return f"cell {cell_id} deleted"

    async def move_cell(cell_id: str, insert_index: int) -> str:
        """Move a cell to another index (0 is the top).

        Args:
            cell_id: the cell's id.
            insert_index: the index it ends at.
        """
        await nb.move_cell(cell_id, insert_index)
        return f"cell {cell_id} is now at index {insert_index}"

    async def run_cell(cell_id: str, timeout: float = run_timeout) -> str:
        """Run a code cell in the notebook's kernel, as the user would: its outputs and execution count are
        written into the notebook, and returned here as text.

        Args:
            cell_id: the code cell's id.
            timeout: seconds before the run ends TIMEOUT (interrupted, unless it ran on a subshell).
        """
        if not 0 < timeout <= run_timeout:
            raise InvalidInput(f"timeout must be from 0 to {run_timeout:g} seconds")
        result = await nb.run_cell(cell_id, timeout=timeout)
        outputs = outputs_as_text(result.outputs, _OUTPUT_CHARS) or "(no output)"
        return f"status: {result.status}, execution count {result.execution_count}\n{outputs}"

    async def get_cell_outputs(cell_id: str, max_chars: int = _OUTPUT_CHARS) -> str:
        """A code cell's outputs as text (images and large outputs are described, not shown).

        Args:
            cell_id: the cell's id.
            max_chars: at most this many characters (the cut is said).
        """
        if not 100 <= max_chars <= 50_000:
            raise InvalidInput("max_chars must be from 100 to 50000")
        return nb.outputs_text(cell_id, max_chars) or "(no output)"

    functions = (
        read_notebook,
        read_cell,
        add_cell,
        insert_cell,
        edit_cell,
        delete_cell,
        move_cell,
        run_cell,
        get_cell_outputs,
    )
    return [make_kernel_tool(function) for function in functions]
