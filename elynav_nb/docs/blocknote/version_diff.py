"""What changed between two states of a document: a markdown diff and the changed blocks.

Where it sits: pure (no I/O), over ``reader`` and ``markdown.render``. ``DocsSession.diff`` feeds it
two Yjs states (two versions, or a version and now); the MCP tool ``diff_versions`` shows it.

How data flows::

    state -> a fresh pycrdt.Doc -> read_blocks -> (blocks, markdown)      for each side
    markdown diff: difflib.unified_diff of the two markdowns' lines (what a person reads)
    block changes: blocks matched by id (BlockNote keeps a block's id for its life), in reading
        order: added, deleted, changed (type, text or props), moved (same block, another
        parent or another place among its siblings)

A state that is not Yjs is ``INVALID_INPUT``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from pycrdt import Doc

from elynav_nb.docs.blocknote.reader import read_blocks
from elynav_nb.docs.blocknote.schema import Block
from elynav_nb.docs.markdown.render import blocks_to_markdown
from elynav_nb.errors import InvalidInput

if TYPE_CHECKING:
    import pandas

__all__ = ["BlockChange", "DocumentState", "VersionDiff", "diff_states", "read_state"]

ChangeKind = Literal["added", "deleted", "changed", "moved"]
_COLUMNS: Final = ["block_id", "change", "type", "old_text", "new_text", "depth"]


@dataclass(frozen=True)
class DocumentState:
    """A document as it was at one point: its blocks and their markdown."""

    label: str
    blocks: list[Block]

    @property
    def markdown(self) -> str:
        return blocks_to_markdown(self.blocks)


def read_state(state: bytes, label: str) -> DocumentState:
    """The blocks of a saved Yjs state (``b""``: an empty document)."""
    doc: Doc[Any] = Doc()
    if state:
        try:
            doc.apply_update(state)
        except Exception:  # pycrdt says ValueError; whatever it says, this is not a Yjs state
            raise InvalidInput(f"{label} is not a Yjs document state") from None
    return DocumentState(label, read_blocks(doc))


@dataclass(frozen=True)
class BlockChange:
    block_id: str
    change: ChangeKind
    type: str
    old_text: str | None
    new_text: str | None
    depth: int


@dataclass(frozen=True)
class VersionDiff:
    """Two states of a document compared: ``markdown`` (a unified diff), ``changes`` (per block)."""

    old: DocumentState
    new: DocumentState
    markdown: str
    changes: tuple[BlockChange, ...]

    def to_frame(self) -> pandas.DataFrame:
        """One row per changed block: block_id, change, type, old_text, new_text, depth."""
        import pandas

        return pandas.DataFrame([change.__dict__ for change in self.changes], columns=_COLUMNS)

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for change in self.changes:
            counts[change.change] = counts.get(change.change, 0) + 1
        said = ", ".join(f"{count} {kind}" for kind, count in counts.items()) or "no change"
        return f"<VersionDiff {self.old.label} -> {self.new.label}: {said}>"

    def _repr_markdown_(self) -> str:
        return f"```diff\n{self.markdown}```" if self.markdown else "*no change*"


def _placed(blocks: Sequence[Block]) -> Iterator[tuple[Block, int, str | None, int]]:
    """Every block depth first, with its depth, its parent's id and its index among its siblings."""
    pending: list[tuple[Block, int, str | None, int]] = [
        (block, 0, None, index) for index, block in reversed(list(enumerate(blocks)))
    ]
    while pending:
        block, depth, parent, index = pending.pop()
        yield block, depth, parent, index
        pending.extend(
            (child, depth + 1, block.id, position)
            for position, child in reversed(list(enumerate(block.children)))
        )


def diff_states(old: DocumentState, new: DocumentState) -> VersionDiff:
    """Compare two states: a unified markdown diff and the block changes, in reading order."""
    old_markdown, new_markdown = old.markdown, new.markdown
    markdown = "".join(
        difflib.unified_diff(
            old_markdown.splitlines(keepends=True),
            new_markdown.splitlines(keepends=True),
            fromfile=old.label,
            tofile=new.label,
        )
    )
    before = {block.id: (block, depth, parent) for block, depth, parent, _ in _placed(old.blocks)}
    old_order = [block.id for block, _, _, _ in _placed(old.blocks)]
    new_order = [block.id for block, _, _, _ in _placed(new.blocks)]
    new_ids = set(new_order)
    kept_old = [block_id for block_id in old_order if block_id in new_ids]
    kept_new = [block_id for block_id in new_order if block_id in before]
    in_place = _unmoved(kept_old, kept_new)
    changes: list[BlockChange] = []
    seen: set[str] = set()
    for block, depth, parent, _ in _placed(new.blocks):
        seen.add(block.id)
        earlier = before.get(block.id)
        if earlier is None:
            changes.append(BlockChange(block.id, "added", block.type, None, block.text, depth))
            continue
        old_block, _, old_parent = earlier
        if (old_block.type, old_block.text, old_block.props) != (block.type, block.text, block.props):
            changes.append(BlockChange(block.id, "changed", block.type, old_block.text, block.text, depth))
        elif old_parent != parent or block.id not in in_place:
            changes.append(BlockChange(block.id, "moved", block.type, old_block.text, block.text, depth))
    for block, depth, _, _ in _placed(old.blocks):
        if block.id not in seen:
            changes.append(BlockChange(block.id, "deleted", block.type, block.text, None, depth))
    return VersionDiff(old, new, markdown, tuple(changes))


def _unmoved(old: list[str], new: list[str]) -> set[str]:
    """The blocks in the longest common subsequence of the two orders: the others moved."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    unmoved: set[str] = set()
    for block in matcher.get_matching_blocks():
        unmoved.update(old[block.a : block.a + block.size])
    return unmoved
