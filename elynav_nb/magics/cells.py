"""How an ``%%agent`` / ``%%ask`` cell (or an ``%agent`` line) becomes code the kernel awaits (pure).

Where it sits: ``elynav_nb.magics.extension`` registers ``rewrite_cell`` as an IPython input
transformer. A cell magic is a plain function call, so it cannot ``await``: a turn run from it would
block the kernel's event loop (no live view, no Cancel button) or need nest-asyncio. Rewritten into one
top-level ``await`` statement instead, the cell runs as a notebook's ``await runner.send(...)`` does:
the loop keeps running (views stream, Cancel works), and a kernel interrupt reaches the awaiting cell,
which cancels the turn (bounded).

How data flows::

    ["%%agent sdr -o r\n", "Bonjour {name}\n"]
      -> ["await get_ipython().magics_manager.registry['ElynavMagics']
             .run_magic_async('agent', 'sdr -o r', 'Bonjour {name}\n')\n"]
    ["%agent sdr Bonjour\n"]                     -> the same with body None (the line holds the message)

Only the magics named in ``MAGICS`` are rewritten, and only at the top of a cell (a line magic: a whole
line at column 0); everything else is left to IPython.
"""

from __future__ import annotations

__all__ = ["MAGICS", "rewrite_cell"]

MAGICS = ("agent", "ask", "elynav_stop")
_CALL = "await get_ipython().magics_manager.registry['ElynavMagics'].run_magic_async({name!r}, {line!r}, {body!r})\n"


def _magic_of(first_line: str, prefix: str) -> tuple[str, str] | None:
    if not first_line.startswith(prefix):
        return None
    words = first_line[len(prefix) :].rstrip("\n").split(None, 1)
    if not words or words[0] not in MAGICS:
        return None
    return words[0], words[1] if len(words) > 1 else ""


def rewrite_cell(lines: list[str]) -> list[str]:
    """The cell's lines, an ``%%agent``/``%%ask`` cell or ``%agent``/``%ask`` lines rewritten."""
    if not lines:
        return lines
    cell_magic = _magic_of(lines[0], "%%")
    if cell_magic is not None:
        name, line = cell_magic
        return [_CALL.format(name=name, line=line, body="".join(lines[1:]))]
    rewritten = []
    for text in lines:
        line_magic = _magic_of(text, "%") if not text.startswith("%%") else None
        if line_magic is None:
            rewritten.append(text)
        else:
            rewritten.append(_CALL.format(name=line_magic[0], line=line_magic[1], body=None))
    return rewritten
