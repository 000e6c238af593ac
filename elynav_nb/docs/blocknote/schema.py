"""The BlockNote 0.51.4 schema as elynav_nb models it: the ``Block`` record, default props, the types
we write, and the small rules shared by the reader and the writer.

Where it sits: the pure base of the document model (design note §4). ``blocknote.reader`` builds ``Block``
records with it, ``blocknote`` writes nodes with it, ``markdown.render`` renders blocks; none of them
import each other for these names. No I/O, no pycrdt.

Rules kept here: a mark is present when its key is (``{}`` is falsy), keys may carry a ``--`` +
8-character hash suffix that readers strip, and JS numbers come back from Yjs as ``float``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "COLOUR_PROPS",
    "DEFAULT_PROPS",
    "DOCUMENT_FRAGMENT",
    "HARD_BREAK",
    "INLINE_TEXT_TYPES",
    "TEXT_PROPS",
    "WRITABLE_BLOCK_TYPES",
    "Block",
    "base_mark_name",
    "plain_value",
]

DOCUMENT_FRAGMENT: Final = "document-store"
HARD_BREAK: Final = "hardBreak"

COLOUR_PROPS: Final = {"backgroundColor": "default", "textColor": "default"}
TEXT_PROPS: Final = {**COLOUR_PROPS, "textAlignment": "left"}

# Default props of BlockNote 0.51.4's default blocks (design note §4.2), in the order browsers write them.
DEFAULT_PROPS: Final[dict[str, dict[str, Any]]] = {
    "paragraph": dict(TEXT_PROPS),
    "heading": {**TEXT_PROPS, "level": 1, "isToggleable": False},
    "quote": dict(COLOUR_PROPS),
    "bulletListItem": dict(TEXT_PROPS),
    "toggleListItem": dict(TEXT_PROPS),
    "numberedListItem": dict(TEXT_PROPS),
    "checkListItem": {**TEXT_PROPS, "checked": False},
    "codeBlock": {"language": "text"},
    "divider": {},
    "image": {
        "textAlignment": "left",
        "backgroundColor": "default",
        "name": "",
        "url": "",
        "caption": "",
        "showPreview": True,
    },
}

WRITABLE_BLOCK_TYPES: Final = (
    "paragraph",
    "heading",
    "bulletListItem",
    "numberedListItem",
    "checkListItem",
    "quote",
    "codeBlock",
)
INLINE_TEXT_TYPES: Final = frozenset(WRITABLE_BLOCK_TYPES) - {"codeBlock"} | {"toggleListItem"}
"""Block types whose text is inline markdown with no inline nodes to hide (others are opaque)."""

_HASH_SUFFIX: Final = re.compile(r"--[A-Za-z0-9+/=]{8}$")


@dataclass(frozen=True)
class Block:
    """One BlockNote block. ``text`` is inline markdown (plain text for ``codeBlock``)."""

    id: str
    type: str
    text: str
    props: dict[str, Any] = field(default_factory=dict)
    children: tuple[Block, ...] = ()
    opaque: bool = False

    def walk(self) -> Iterator[Block]:
        """This block, then its descendants, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


def base_mark_name(key: str) -> str:
    """The mark name without y-prosemirror's ``--`` + 8-character hash suffix."""
    return _HASH_SUFFIX.sub("", key)


def plain_value(value: Any) -> Any:
    """JS numbers come back as float: give integral ones back as int."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
