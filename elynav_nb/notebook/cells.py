"""The notebook's cells in its Y document: read them as values, change them in place, minimal text edits.

Where it sits: the pure document model of ``elynav_nb.notebook`` (no I/O). ``live.py`` calls these
inside one transaction per write; ``connection.py`` then sends the transaction's update. The schema
is ``jupyter_ydoc.YNotebook``'s (a ``cells`` array of maps: ``id``, ``cell_type``, ``source`` as a
Y text, ``metadata`` map, ``outputs`` array, ``execution_count``, ``execution_state``); new cells are
built by ``YNotebook.create_ycell``, as the server builds them.

How data flows::

    YNotebook -> read_cells -> [CellView(index, id, cell_type, source, execution_count, outputs, running)]
    cell id   -> cell_index (CELL_NOT_FOUND when no cell has it): the index it was last found at, checked
                 with one read; a scan of every cell only when that is wrong
    new text  -> set_source: common prefix and suffix kept, the middle diffed by lines, small changed
                 blocks by characters (``text_edits``); pycrdt Text offsets are UTF-8 bytes, converted here
    outputs   -> set_outputs: the fewest changes (outputs kept, a grown stream appended), count and
                 execution_state set, in the caller's transaction; a ``running`` state shown with its
                 runner marks the run in ``RUNS_ROOT``, ``idle`` drops the mark
    marks     -> runs_shown (cell id -> the process showing its run), end_run (a mark dropped; its cell,
                 when still ``running``, idle with its outputs)

Characters that stay are never deleted and re-inserted, so a person typing in the same cell keeps
their characters. A move is a delete and an insert of the same cell (Yjs 13, which JupyterLab runs,
has no move of its own), inside one transaction.
"""

from __future__ import annotations

import copy
import difflib
import weakref
from dataclasses import dataclass, field
from typing import Any, Final

from jupyter_ydoc import YNotebook
from pycrdt import Array, Map, Text

from elynav_nb._text_diff import common_ends
from elynav_nb.errors import CellNotFound, InvalidInput

__all__ = [
    "CELL_TYPES",
    "RUNS_ROOT",
    "CellView",
    "cell_index",
    "end_run",
    "insert_cell",
    "move_cell",
    "read_cell",
    "read_cells",
    "runs_shown",
    "set_outputs",
    "set_source",
    "text_edits",
]

CELL_TYPES: Final = ("code", "markdown", "raw")
RUNS_ROOT: Final = "elynav_runs"
"""A root map of the notebook's Y document beside ``cells``: cell id -> the process that shows that cell's run
as ``[*]``. Never saved (``YNotebook.get`` reads the cells and the metadata); peers that do not know it
ignore it. It lets a later client end a ``[*]`` that a process which died left in the room."""
_DIFF_WINDOW: Final = 20_000
_CHARACTER_DIFF_LIMIT: Final = 400


@dataclass(frozen=True)
class CellView:
    """One cell as it is now (a copy: changing it changes nothing in the notebook)."""

    index: int
    id: str
    cell_type: str
    source: str
    execution_count: int | None = None
    outputs: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    running: bool = False
    """Its ``execution_state`` is ``running``: every peer shows ``[*]``."""


def _as_count(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return int(value)
    return None


def _view(index: int, ycell: Any) -> CellView:
    cell = ycell.to_py() or {}
    outputs = cell.get("outputs") or []
    return CellView(
        index=index,
        id=str(cell.get("id", "")),
        cell_type=str(cell.get("cell_type", "code")),
        source=str(cell.get("source", "")),
        execution_count=_as_count(cell.get("execution_count")),
        outputs=[dict(output) for output in outputs if isinstance(output, dict)],
        metadata=dict(cell.get("metadata") or {}),
        running=cell.get("execution_state") == "running",
    )


def read_cells(notebook: YNotebook) -> list[CellView]:
    with notebook.ydoc.transaction():
        return [_view(index, ycell) for index, ycell in enumerate(notebook.ycells)]


def read_cell(notebook: YNotebook, cell_id: str) -> CellView:
    """The cell ``cell_id`` alone (``CELL_NOT_FOUND`` when no cell has it)."""
    with notebook.ydoc.transaction():
        index = cell_index(notebook, cell_id)
        return _view(index, notebook.ycells[index])


# Where each cell id was last found, per notebook: a hint, checked at each use (one read), so that
# finding a cell costs one read instead of a scan of the whole notebook (~6 us a cell with pycrdt).
_LAST_SEEN: weakref.WeakKeyDictionary[YNotebook, dict[str, int]] = weakref.WeakKeyDictionary()


def cell_index(notebook: YNotebook, cell_id: str) -> int:
    """The index of the cell ``cell_id``; ``CELL_NOT_FOUND`` when no cell has it."""
    seen = _LAST_SEEN.setdefault(notebook, {})
    hint = seen.get(cell_id)
    with notebook.ydoc.transaction():
        if hint is not None and hint < len(notebook.ycells) and notebook.ycells[hint].get("id") == cell_id:
            return hint
        seen.clear()  # cells moved, came or went: learn them all again, in one pass
        for index, ycell in enumerate(notebook.ycells):
            seen.setdefault(str(ycell.get("id")), index)
    if cell_id in seen:
        return seen[cell_id]
    raise CellNotFound(
        f"no cell has the id {cell_id!r} (it may have been deleted): read the notebook again for the ids",
        details={"cell_id": cell_id},
    )


def check_cell_type(cell_type: str) -> str:
    if cell_type not in CELL_TYPES:
        raise InvalidInput(f"cell_type must be one of {', '.join(CELL_TYPES)}, not {cell_type!r}")
    return cell_type


def insert_cell(notebook: YNotebook, index: int, cell_type: str, source: str, cell_id: str) -> None:
    """A new cell at ``index`` (0 to the number of cells), built as the server builds one."""
    if not 0 <= index <= len(notebook.ycells):
        raise InvalidInput(f"index {index} is outside 0..{len(notebook.ycells)}")
    cell: dict[str, Any] = {"id": cell_id, "cell_type": check_cell_type(cell_type), "source": source}
    cell["metadata"] = {}
    if cell_type == "code":
        cell["outputs"] = []
        cell["execution_count"] = None
    notebook.ycells.insert(index, notebook.create_ycell(cell))
    _LAST_SEEN.setdefault(notebook, {})[cell_id] = index


def move_cell(notebook: YNotebook, from_index: int, to_index: int) -> None:
    """The cell at ``from_index`` ends at ``to_index`` (delete and insert a copy, same id)."""
    count = len(notebook.ycells)
    if not 0 <= to_index < count:
        raise InvalidInput(f"index {to_index} is outside 0..{count - 1}")
    if from_index == to_index:
        return
    cell = notebook.get_cell(from_index)
    del notebook.ycells[from_index]
    notebook.ycells.insert(to_index, notebook.create_ycell(cell))


def _line_starts(lines: list[str]) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def text_edits(old: str, new: str) -> list[tuple[int, int, str]]:
    """``(start, end, replacement)`` in characters of ``old``, from the last to the first.

    The common prefix and suffix stay; the middle is diffed by lines (``difflib``), and a changed
    block of lines of at most 400 characters each side again by characters; a bigger block, or a
    middle over 20,000 characters, is one replacement. So the cost stays linear-ish for large cells.
    """
    if old == new:
        return []
    prefix, suffix = common_ends(old, new)
    old_middle = old[prefix : len(old) - suffix]
    new_middle = new[prefix : len(new) - suffix]
    if not old_middle or not new_middle or max(len(old_middle), len(new_middle)) > _DIFF_WINDOW:
        return [(prefix, prefix + len(old_middle), new_middle)]
    old_lines = old_middle.splitlines(keepends=True)
    new_lines = new_middle.splitlines(keepends=True)
    old_starts, new_starts = _line_starts(old_lines), _line_starts(new_lines)
    edits: list[tuple[int, int, str]] = []
    lines = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, old_first, old_last, new_first, new_last in lines.get_opcodes():
        if tag == "equal":
            continue
        old_start, old_end = old_starts[old_first], old_starts[old_last]
        new_start, new_end = new_starts[new_first], new_starts[new_last]
        old_block, new_block = old_middle[old_start:old_end], new_middle[new_start:new_end]
        if tag != "replace" or max(len(old_block), len(new_block)) > _CHARACTER_DIFF_LIMIT:
            edits.append((prefix + old_start, prefix + old_end, new_block))
            continue
        characters = difflib.SequenceMatcher(a=old_block, b=new_block, autojunk=False)
        for char_tag, old_from, old_to, new_from, new_to in characters.get_opcodes():
            if char_tag != "equal":
                edits.append(
                    (prefix + old_start + old_from, prefix + old_start + old_to, new_block[new_from:new_to])
                )
    edits.reverse()
    return edits


def set_source(text: Text, new: str) -> int:
    """Make ``text`` read ``new`` with the fewest changes; the number of characters changed."""
    old = str(text)
    changed = 0
    for start, end, replacement in text_edits(old, new):
        byte_start = len(old[:start].encode("utf-8"))
        byte_end = byte_start + len(old[start:end].encode("utf-8"))
        if byte_end > byte_start:
            del text[byte_start:byte_end]
        if replacement:
            text.insert(byte_start, replacement)
        changed += (end - start) + len(replacement)
    return changed


def _as_y_output(output: dict[str, Any]) -> Map[Any]:
    written = copy.deepcopy(output)
    if written.get("output_type") == "stream":
        text = written.get("text", "")
        written["text"] = Text(text if isinstance(text, str) else "".join(text))
    return Map(written)


def _same_output(youtput: Any, output: dict[str, Any]) -> bool:
    return isinstance(youtput, Map) and youtput.to_py() == output


def _append_to_stream(youtput: Any, output: dict[str, Any]) -> bool:
    """Append the new characters when ``output`` is this stream output with more text; False if not."""
    if not isinstance(youtput, Map) or output.get("output_type") != "stream":
        return False
    text = youtput.get("text")
    if youtput.get("output_type") != "stream" or youtput.get("name") != output.get("name"):
        return False
    if not isinstance(text, Text) or set(youtput.keys()) != set(output.keys()):
        return False
    old, new = str(text), str(output.get("text", ""))
    if len(new) <= len(old) or not new.startswith(old):
        return False
    text += new[len(old) :]
    return True


def set_outputs(
    notebook: YNotebook,
    index: int,
    outputs: list[dict[str, Any]],
    execution_count: int | None,
    execution_state: str | None = None,
    runner: dict[str, Any] | None = None,
) -> None:
    """The cell's outputs made ``outputs``, its count set, and its ``execution_state`` (``running``,
    ``idle``; None leaves it) set, with the fewest changes: an output already there is kept, a stream
    that grew gets its new characters appended (a run's outputs are written as they come). A
    ``running`` cell is marked as ``runner``'s run (when given), an ``idle`` one no longer."""
    ycell: Map[Any] = notebook.ycells[index]
    if ycell.get("cell_type") != "code":
        raise InvalidInput("only a code cell has outputs")
    youtputs = ycell.get("outputs")
    if not isinstance(youtputs, Array):
        youtputs = Array()
        ycell["outputs"] = youtputs
    for position, output in enumerate(outputs):
        if position >= len(youtputs):
            youtputs.append(_as_y_output(output))
            continue
        youtput = youtputs[position]
        if _same_output(youtput, output):
            continue
        if not _append_to_stream(youtput, output):
            youtputs[position] = _as_y_output(output)
    if len(youtputs) > len(outputs):
        del youtputs[len(outputs) :]
    if ycell.get("execution_count") != execution_count:
        ycell["execution_count"] = execution_count
    if execution_state is not None and ycell.get("execution_state") != execution_state:
        ycell["execution_state"] = execution_state
    runs: Map[Any] = notebook.ydoc.get(RUNS_ROOT, type=Map)
    cell_id = str(ycell.get("id"))
    if execution_state == "running" and runner is not None and runs.get(cell_id) != runner:
        runs[cell_id] = runner
    elif execution_state == "idle" and cell_id in runs:
        del runs[cell_id]


def runs_shown(notebook: YNotebook) -> dict[str, Any]:
    """The runs marked as shown: cell id -> the record of the process showing it."""
    return dict(notebook.ydoc.get(RUNS_ROOT, type=Map).to_py() or {})


def end_run(notebook: YNotebook, cell_id: str) -> bool:
    """The cell's run mark dropped, and the cell, when there and still ``running``, made ``idle`` with the
    outputs it has (as JupyterLab leaves a run that failed); whether the cell changed. Without a mark,
    nothing: a ``running`` cell that no one marked is a person's run."""
    runs: Map[Any] = notebook.ydoc.get(RUNS_ROOT, type=Map)
    if cell_id not in runs:
        return False
    del runs[cell_id]
    try:
        ycell = notebook.ycells[cell_index(notebook, cell_id)]
    except CellNotFound:
        return False
    if ycell.get("execution_state") != "running":
        return False
    ycell["execution_state"] = "idle"
    return True
