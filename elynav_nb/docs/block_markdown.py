"""A whole BlockNote document as markdown: headings, lists, quotes, code fences, nested items indented.

Where it sits: the last step of the read path (``block_reader`` gives ``Block`` records whose
``text`` is already inline markdown; this module lays the blocks out as lines). Pure: no I/O, no
pycrdt. ``blocknote.blocks_to_markdown`` is this module's function.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from elynav_nb.docs.block_schema import Block

__all__ = ["blocks_to_markdown"]


def blocks_to_markdown(blocks: Sequence[Block]) -> str:
    """A whole-document markdown view (headings, lists, quotes, code fences; nested items indented)."""
    lines: list[str] = []
    _append_markdown(blocks, 0, lines)
    return "\n".join(lines).rstrip("\n") + ("\n" if lines else "")


_LIST_TYPES: Final = ("bulletListItem", "numberedListItem", "checkListItem", "toggleListItem")
_BLOCK_START_PATTERN: Final = re.compile(r"^(#{1,6}\s|>|[-+*]\s|\d+[.)]\s|```|~~~)")


def _append_markdown(blocks: Sequence[Block], depth: int, lines: list[str]) -> None:
    indent = "  " * depth
    number = 0
    previous_type = ""
    for block in blocks:
        number = number + 1 if block.type == "numberedListItem" and previous_type == "numberedListItem" else 1
        if block.type in _LIST_TYPES and previous_type in _LIST_TYPES and lines and lines[-1] == "":
            lines.pop()  # keep a list tight
        text = block.text.replace("\n", "\\\n" + indent)
        if block.type == "heading":
            level = block.props.get("level", 1)
            lines.append(f"{indent}{'#' * int(level)} {text}")
        elif block.type == "bulletListItem" or block.type == "toggleListItem":
            lines.append(f"{indent}* {text}")
        elif block.type == "numberedListItem":
            lines.append(f"{indent}{number}. {text}")
        elif block.type == "checkListItem":
            mark = "x" if block.props.get("checked") else " "
            lines.append(f"{indent}* [{mark}] {text}")
        elif block.type == "quote":
            lines.append(f"{indent}> {text}")
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
        elif block.type == "paragraph":
            if _BLOCK_START_PATTERN.match(text):
                text = "\\" + text
            lines.append(f"{indent}{text}")
        else:
            lines.append(f"{indent}{text}" if text else f"{indent}<!-- {block.type} -->")
        if block.children:
            child_lines: list[str] = []
            _append_markdown(block.children, depth + 1, child_lines)
            lines.extend(child_lines)
        lines.append("")
        previous_type = block.type
