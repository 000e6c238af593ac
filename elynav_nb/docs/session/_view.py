"""How a ``DocsSession`` shows its blocks: one frame row per block, and the HTML of its repr.

Where it sits: internal to ``docs/session/``, under ``DocsSession.to_frame()`` and
``_repr_html_``. Pure: blocks (``blocknote.Block``) and a few strings in, a ``pandas.DataFrame`` or
HTML out; inline markdown is shown through ``markdown.inline_html``. No I/O, no session state.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from elynav_nb.docs.blocknote import Block
from elynav_nb.docs.markdown.inline_html import inline_markdown_to_html
from elynav_nb.errors import ElynavError

if TYPE_CHECKING:
    import pandas

__all__ = ["FRAME_COLUMNS", "HTML_BLOCKS", "blocks_frame", "session_html", "session_status"]

FRAME_COLUMNS = ["id", "type", "text", "level", "depth", "parent_id", "editable"]
HTML_BLOCKS = 50
"""How many blocks the HTML repr lists (the others are counted)."""


def heading_level(block: Block) -> int | None:
    """A heading's level as an int (pycrdt reads JS numbers back as floats); None elsewhere."""
    if block.type != "heading":
        return None
    level = block.props.get("level")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or level != int(level):
        return None
    return int(level)


def blocks_frame(blocks: list[Block]) -> pandas.DataFrame:
    """One row per block, depth first (``FRAME_COLUMNS``); ``level`` is a nullable ``Int64``."""
    import pandas

    rows: list[dict[str, Any]] = []
    pending: list[tuple[Block, int, str | None]] = [(block, 0, None) for block in reversed(blocks)]
    while pending:
        block, depth, parent_id = pending.pop()
        rows.append(
            {
                "id": block.id,
                "type": block.type,
                "text": block.text,
                "level": heading_level(block),
                "depth": depth,
                "parent_id": parent_id,
                "editable": not block.opaque,
            }
        )
        for child in reversed(block.children):
            pending.append((child, depth + 1, block.id))
    frame = pandas.DataFrame(rows, columns=FRAME_COLUMNS)
    frame["level"] = frame["level"].astype("Int64")
    return frame


def session_status(*, closed: bool, failure: ElynavError | None, read_only: bool) -> str:
    """The session's state in a word or two: closed, failed (with the code), read-only or read-write."""
    if closed:
        return "closed"
    if failure is not None:
        return f"failed ({failure.code})"
    return "read-only" if read_only else "read-write"


def session_html(title: str, status: str, save_note: str, link: str, blocks: list[Block]) -> str:
    """The session's card: title, status, save state, a link to Docs, and its first blocks."""
    rows = []
    for block in blocks[:HTML_BLOCKS]:
        level = f" h{block.props.get('level')}" if block.type == "heading" else ""
        rows.append(
            f"<tr><td><code>{html.escape(block.id[:8])}</code></td><td>{html.escape(block.type)}{level}</td>"
            f"<td>{inline_markdown_to_html(block.text[:200])}</td></tr>"
        )
    more = f"<p>… {len(blocks) - HTML_BLOCKS} more blocks</p>" if len(blocks) > HTML_BLOCKS else ""
    return (
        f"<div><strong>{html.escape(title or 'Untitled')}</strong> "
        f"<small>{html.escape(status)} · {html.escape(save_note)} · "
        f"<a href='{html.escape(link)}'>open in Docs</a></small>"
        f"<table><tr><th>id</th><th>type</th><th>text</th></tr>{''.join(rows)}</table>{more}</div>"
    )
