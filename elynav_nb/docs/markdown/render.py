"""A whole BlockNote document as markdown: headings, lists, quotes, code fences, images, tables,
nested blocks indented.

Where it sits: the last step of the read path (``blocknote.reader`` gives ``Block`` records whose
``text`` is already inline markdown, a table's the pipe table; this module lays the blocks out as
lines). Pure: no I/O, no pycrdt. ``blocknote.blocks_to_markdown`` is this module's function.

What it writes is the dialect ``markdown.blocks`` reads (whole-markdown writing), so writing the
markdown back gives the same blocks: children indented two spaces under their block, line breaks
as a backslash at the end of the line, a text that would read as a new block escaped
(``markdown.syntax.escape_block_start``), a numbered list's ``start``, quotes with ``>`` on every line.
Empty paragraphs have no markdown (as in BlockNote's own export).

Bullet items are written with ``*`` by default, as BlockNote's ``blocksToMarkdownLossy`` (Docs' own
markdown export) writes them: the marker a person typed (``-``, ``+`` or ``*``) is not part of the
document (a BlockNote ``bulletListItem`` has no such property), so no reader can give it back.
``bullet="-"`` writes ``-`` instead; all three read back as the same blocks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from elynav_nb.docs.blocknote.schema import Block
from elynav_nb.docs.markdown.syntax import escape_block_start, render_image, with_hard_breaks
from elynav_nb.errors import InvalidInput

__all__ = ["BULLET_MARKERS", "blocks_to_markdown"]

BULLET_MARKERS: Final = ("*", "-", "+")


def blocks_to_markdown(blocks: Sequence[Block], *, bullet: str = "*") -> str:
    """A whole-document markdown view (headings, lists, quotes, code fences; nested items indented).

    ``bullet``: the marker of bullet and check items (``*`` as BlockNote writes it, ``-`` or ``+``).
    """
    if bullet not in BULLET_MARKERS:
        raise InvalidInput("bullet must be one of *, - and +", details={"bullet": str(bullet)[:8]})
    lines: list[str] = []
    _append_markdown(blocks, 0, lines, bullet)
    return "\n".join(lines).rstrip("\n") + ("\n" if lines else "")


_LIST_TYPES: Final = ("bulletListItem", "numberedListItem", "checkListItem", "toggleListItem")


def _last_descendant(block: Block) -> Block:
    while block.children:
        block = block.children[-1]
    return block


def _ends_in_list_item(block: Block) -> bool:
    """Whether the last line written for this block (its last descendant's) is a list item's."""
    return _last_descendant(block).type in _LIST_TYPES


def _ordered(block: Block) -> bool:
    """Numbered items make another list than bullets and checks: a blank line goes between them
    (as BlockNote's own markdown has it)."""
    return block.type == "numberedListItem"


def _append_markdown(blocks: Sequence[Block], depth: int, lines: list[str], bullet: str) -> None:
    indent = "  " * depth
    number = 0
    previous_type = ""
    previous_ends_in_item = False
    previous_ordered = False
    for block in blocks:
        if block.type == "numberedListItem" and previous_type == "numberedListItem":
            number += 1
        else:
            start = block.props.get("start")
            number = start if isinstance(start, int) and not isinstance(start, bool) and start >= 0 else 1
        if block.type in _LIST_TYPES and previous_ends_in_item and _ordered(block) == previous_ordered:
            while lines and lines[-1] == "":
                lines.pop()  # keep a list tight (after a paragraph, an empty item would continue it)
        text = with_hard_breaks(block.text, indent)
        if block.type == "heading":
            level = block.props.get("level", 1)
            lines.append(f"{indent}{'#' * int(level)} {text}")
        elif block.type == "bulletListItem" or block.type == "toggleListItem":
            lines.append(f"{indent}{bullet} {escape_block_start(text, bullet=True)}".rstrip(" "))
        elif block.type == "numberedListItem":
            lines.append(f"{indent}{number}. {escape_block_start(text)}".rstrip(" "))
        elif block.type == "checkListItem":
            mark = "x" if block.props.get("checked") else " "
            lines.append(f"{indent}{bullet} [{mark}] {text}".rstrip(" "))
        elif block.type == "quote":
            quoted = with_hard_breaks(block.text, indent + "> ")
            lines.append(f"{indent}> {escape_block_start(quoted)}".rstrip(" "))
        elif block.type == "codeBlock":
            language = str(block.props.get("language") or "")
            fence = "```"
            while fence in block.text:
                fence += "`"
            lines.append(f"{indent}{fence}{'' if language == 'text' else language}")
            lines.extend(f"{indent}{line}" for line in block.text.split("\n"))
            lines.append(f"{indent}{fence}")
        elif block.type == "divider":
            lines.append(f"{indent}***")
        elif block.type == "image" and block.props.get("url"):
            props = block.props
            image = render_image(
                str(props.get("name") or ""), str(props["url"]), str(props.get("caption") or "")
            )
            lines.append(f"{indent}{image}")
        elif block.type == "table" and block.text:
            lines.extend(f"{indent}{line}" for line in block.text.split("\n"))
        elif block.type == "paragraph":
            if text:
                lines.append(f"{indent}{escape_block_start(text)}")
        else:
            lines.append(f"{indent}{text}" if text else f"{indent}<!-- {block.type} -->")
        if block.children:
            if block.type not in _LIST_TYPES or block.children[0].type not in _LIST_TYPES:
                lines.append("")  # else the first child line could continue this block's text
            child_lines: list[str] = []
            _append_markdown(block.children, depth + 1, child_lines, bullet)
            lines.extend(child_lines)
        if lines and lines[-1] != "":
            lines.append("")
        previous_type = block.type
        previous_ends_in_item = _ends_in_list_item(block)
        previous_ordered = _ordered(_last_descendant(block))
