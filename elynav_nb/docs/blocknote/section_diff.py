"""Replace the section under a heading with new markdown by the smallest change: ``replace_section``.

Where it sits: whole-markdown writing, beside ``blocknote.builder`` (which it uses to write new blocks).
``DocsSession.replace_section`` calls ``replace_section`` inside its acknowledged write. No I/O.

The section of a heading is what follows it in its group, up to the next heading of the same or a
higher level (a smaller or equal ``level``); the heading itself and its own nested children stay.

How the change is kept small: every block already there is seen *through markdown* (its key is
what ``parse_markdown(blocks_to_markdown([block]))`` gives: type, the props markdown shows, canonical
text), every new block by ``spec_key``; ``difflib.SequenceMatcher`` lines the two key sequences up.

* equal keys: the block is **not touched** (same id, marks markdown cannot show, a person's edit in
  progress, Docs-only blocks such as callouts or doc links, a table's column widths); its children
  are compared the same way;
* a replaced block facing a new block of the same writable type (not opaque, id unique): changed
  **in place**: props markdown shows (level, checked, language, start) set, text changed by
  ``update_block_text``'s minimal character diff, children compared;
* otherwise old blocks are deleted and new ones written (``blocknote.builder``), all in ONE transaction.

Blocks markdown cannot show at all (empty paragraphs, empty containers) are left where they are.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from pycrdt import Doc, XmlElement

from elynav_nb.docs.blocknote._location import find_block, locate_block, root_group
from elynav_nb.docs.blocknote._yxml_writer import NodeWriter, writer_for
from elynav_nb.docs.blocknote.builder import PreparedBlock, prepare_blocks, write_blocks
from elynav_nb.docs.blocknote.reader import read_blocks
from elynav_nb.docs.blocknote.schema import WRITABLE_BLOCK_TYPES, Block
from elynav_nb.docs.blocknote.writers import update_block_text
from elynav_nb.docs.markdown.blocks import BlockSpec, parse_markdown, spec_key
from elynav_nb.docs.markdown.render import blocks_to_markdown
from elynav_nb.errors import BlockNotFound, InvalidInput, UnsupportedBlockType

__all__ = ["SectionChange", "replace_section"]

_IN_PLACE_PROPS: Final = ("level", "checked", "language", "start")


@dataclass(frozen=True)
class SectionChange:
    """What ``replace_section`` did, by block id: blocks ``kept`` untouched, ``updated`` in place,
    ``inserted`` (new ids, depth first) and ``deleted`` (with their descendants)."""

    heading_id: str
    kept: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    inserted: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.updated or self.inserted or self.deleted)


@dataclass
class _Old:
    """A child of a group as it stands: its node, and its block (None for an empty container)."""

    element: XmlElement
    index: int
    block: Block | None
    key: Any = None

    @property
    def visible(self) -> bool:
        return self.key is not None


def _is_container_with_content(element: XmlElement) -> bool:
    return any(isinstance(child, XmlElement) and child.tag != "blockGroup" for child in element.children)


def _aligned(group: XmlElement, blocks: Sequence[Block]) -> list[_Old]:
    """The group's element children paired with the reader's blocks (which skip empty containers)."""
    items: list[_Old] = []
    remaining = iter(blocks)
    for index, child in enumerate(group.children):
        if not isinstance(child, XmlElement):
            continue
        if child.tag == "blockContainer" and not _is_container_with_content(child):
            items.append(_Old(child, index, None))
            continue
        items.append(_Old(child, index, next(remaining, None)))
    return items


def _nested_group(container: XmlElement) -> tuple[int, XmlElement] | None:
    """(index, element) of a container's nested ``blockGroup`` (the last one, as the reader reads)."""
    found: tuple[int, XmlElement] | None = None
    for index, child in enumerate(container.children):
        if isinstance(child, XmlElement) and child.tag == "blockGroup":
            found = (index, child)
    return found


def _content_element(container: XmlElement) -> XmlElement | None:
    for child in container.children:
        if isinstance(child, XmlElement) and child.tag != "blockGroup":
            return child
    return None


def _old_key(block: Block | None) -> Any:
    """What markdown shows of an existing block (children left out); None when it shows nothing."""
    if block is None:
        return None
    markdown = blocks_to_markdown([replace(block, children=())])
    try:
        specs = parse_markdown(markdown)
    except InvalidInput:
        return ("unreadable", block.id)
    if not specs:
        return None
    if len(specs) == 1:
        return spec_key(specs[0])
    return tuple(spec_key(spec) for spec in specs)


def _heading_level(block: Block) -> int:
    level = block.props.get("level", 1)
    return int(level) if isinstance(level, (int, float)) and not isinstance(level, bool) else 1


class _SectionWriter:
    """Applies one section replacement inside an open transaction."""

    def __init__(
        self, doc: Doc[Any], writer: NodeWriter, origin: object | None, unique_ids: set[str]
    ) -> None:
        self.doc = doc
        self.writer = writer
        self.origin = origin
        self.unique_ids = unique_ids
        self.change = SectionChange(heading_id="")

    def sync(
        self,
        group: XmlElement,
        old_items: Sequence[_Old],
        anchor: int,
        specs: Sequence[BlockSpec],
        prepared: Sequence[PreparedBlock],
    ) -> None:
        """Make the visible blocks among ``old_items`` (children of ``group``) read as ``specs``."""
        visible = [item for item in old_items if item.visible]
        matcher = difflib.SequenceMatcher(
            None, [item.key for item in visible], [spec_key(spec) for spec in specs], autojunk=False
        )
        for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
            after_previous = visible[i1 - 1].index + 1 if i1 > 0 else anchor
            if tag == "equal":
                for offset in range(i2 - i1):
                    self._keep(visible[i1 + offset], specs[j1 + offset], prepared[j1 + offset])
            elif tag == "insert":
                self._insert(group, after_previous, prepared[j1:j2])
            elif tag == "delete":
                for item in reversed(visible[i1:i2]):
                    self._delete(group, item)
            else:
                self._replace(group, visible[i1:i2], after_previous, specs[j1:j2], prepared[j1:j2])

    def _replace(
        self,
        group: XmlElement,
        olds: Sequence[_Old],
        after_previous: int,
        specs: Sequence[BlockSpec],
        prepared: Sequence[PreparedBlock],
    ) -> None:
        after_last_old = olds[-1].index + 1 if olds else after_previous
        if len(specs) > len(olds):
            self._insert(group, after_last_old, prepared[len(olds) :])
        for offset in reversed(range(len(olds))):
            item = olds[offset]
            if offset >= len(specs):
                self._delete(group, item)
            elif not self._update_in_place(item, specs[offset], prepared[offset]):
                self._delete(group, item)
                self._insert(group, item.index, prepared[offset : offset + 1])

    def _insert(self, group: XmlElement, index: int, blocks: Sequence[PreparedBlock]) -> None:
        write_blocks(self.writer, self.writer.node(group), index, blocks)
        self.change.inserted.extend(block_id for block in blocks for block_id in block.ids())

    def _delete(self, group: XmlElement, item: _Old) -> None:
        del group.children[item.index]
        if item.block is not None:
            self.change.deleted.extend(block.id for block in item.block.walk())

    def _keep(self, item: _Old, spec: BlockSpec, prepared: PreparedBlock) -> None:
        assert item.block is not None
        self.change.kept.append(item.block.id)
        self._sync_children(item, spec, prepared)

    def _update_in_place(self, item: _Old, spec: BlockSpec, prepared: PreparedBlock) -> bool:
        block = item.block
        if (
            block is None
            or block.opaque
            or block.type != spec.type
            or block.type not in WRITABLE_BLOCK_TYPES
            or block.id not in self.unique_ids
            or item.element.tag != "blockContainer"
            or (not spec.text.strip() and block.text != spec.text)
        ):
            return False
        content = _content_element(item.element)
        if content is None:
            return False
        for name in _IN_PLACE_PROPS:
            wanted = prepared.props.get(name)
            if block.props.get(name) != wanted:
                if wanted is None:
                    del content.attributes[name]
                else:
                    content.attributes[name] = wanted
        if spec.text != block.text:
            update_block_text(self.doc, block.id, spec.text, origin=self.origin)
        self.change.updated.append(block.id)
        self._sync_children(item, spec, prepared)
        return True

    def _sync_children(self, item: _Old, spec: BlockSpec, prepared: PreparedBlock) -> None:
        if item.block is None or item.element.tag != "blockContainer":
            return  # layout nodes (columns) are kept whole
        container = item.element
        nested = _nested_group(container)
        if nested is None:
            if spec.children:
                group_node = self.writer.element(
                    self.writer.node(container), len(container.children), "blockGroup", {}
                )
                write_blocks(self.writer, group_node, 0, prepared.children)
                self.change.inserted.extend(
                    block_id for block in prepared.children for block_id in block.ids()
                )
            return
        group_index, group = nested
        old_items = _aligned(group, item.block.children)
        for old in old_items:
            old.key = _old_key(old.block)
        self.sync(group, old_items, 0, spec.children, prepared.children)
        if len(group.children) == 0:
            del container.children[group_index]  # an empty blockGroup breaks BlockNote's schema


def _find_section(
    root: XmlElement, blocks: Sequence[Block], heading_id: str
) -> tuple[XmlElement, list[_Old], int]:
    """(group, its aligned children, position of the heading among them), in document order."""
    pending: list[tuple[XmlElement, Sequence[Block]]] = [(root, blocks)]
    while pending:
        group, group_blocks = pending.pop()
        items = _aligned(group, group_blocks)
        nested: list[tuple[XmlElement, Sequence[Block]]] = []
        for position, item in enumerate(items):
            if item.block is None or item.element.tag != "blockContainer":
                continue
            if item.block.id == heading_id:
                return group, items, position
            inner = _nested_group(item.element)
            if inner is not None:
                nested.append((inner[1], item.block.children))
        pending.extend(reversed(nested))
    locate_block(root, heading_id)  # raises BlockNotFound, or finds it where sections cannot be
    raise UnsupportedBlockType(
        "this heading is inside a layout block (columns): its section cannot be replaced",
        details={"block_id": heading_id},
    )


def replace_section(
    doc: Doc[Any], heading_id: str, markdown: str, *, origin: object | None = None
) -> SectionChange:
    """Make what follows the heading ``heading_id`` (up to the next heading of the same or a higher
    level) read as ``markdown``, keeping every block whose markdown is unchanged (see the module).

    The markdown may not hold a top-level heading of the same or a higher level (it would end the
    section): use ``insert_markdown`` for a new section. Everything is validated before any write.
    """
    if not isinstance(heading_id, str):
        raise InvalidInput("heading_id must be a block id")
    specs = parse_markdown(markdown)
    prepared = prepare_blocks(specs)
    blocks = read_blocks(doc)
    heading = find_block(blocks, heading_id)
    if heading.type != "heading":
        raise InvalidInput(
            f"block {heading_id!r} is a {heading.type}, not a heading", details={"block_id": heading_id}
        )
    level = _heading_level(heading)
    for spec in specs:
        if spec.type == "heading" and int(spec.props.get("level", 1)) <= level:
            raise InvalidInput(
                f"the markdown holds a level-{spec.props.get('level')} heading, which would end the section "
                f"of this level-{level} heading; write deeper headings, or add a section with insert_markdown",
                details={"block_id": heading_id},
            )
    ids = Counter(block.id for top in blocks for block in top.walk())
    unique_ids = {block_id for block_id, count in ids.items() if count == 1}
    with doc.transaction(origin=origin) as transaction:
        root = root_group(doc)
        if root is None:
            raise BlockNotFound(
                f"no block with id {heading_id!r} in this document", details={"block_id": heading_id}
            )
        group, items, position = _find_section(root, blocks, heading_id)
        end = position + 1
        while end < len(items):
            block = items[end].block
            if block is not None and block.type == "heading" and _heading_level(block) <= level:
                break
            end += 1
        section = items[position + 1 : end]
        for item in section:
            item.key = _old_key(item.block)
        writer = _SectionWriter(doc, writer_for(transaction), origin, unique_ids)
        writer.change = SectionChange(heading_id=heading_id)
        writer.sync(group, section, items[position].index + 1, specs, prepared)
    return writer.change
