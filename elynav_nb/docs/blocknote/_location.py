"""Where a block sits in the BlockNote tree: the fragment, the root group, a block by id.

Where it sits: internal to the pure document model (``elynav_nb.docs.blocknote``), beside ``schema``
and ``reader``. The writers (``writers``, ``builder``, ``section_diff``, ``comments``) locate blocks
with it, and ``insertion_point`` is the one place that decides where new blocks go; the package
re-exports its public names. No I/O here.

How data flows::

    pycrdt Doc -> document_fragment ("document-store") -> root_group (the first root blockGroup,
      the only one BlockNote shows) -> locate_block(root, id) -> BlockLocation(group, position,
      container) -> content_element(container) (paragraph, heading, ...)
    a writer (``_yxml_writer.NodeWriter``) -> root_for_writing: its handle on the root group,
      created only when the fragment is empty
    insertion_point(doc, writer, after) -> (group handle, index): at the top for ``after=None``,
      else right after that block, at its depth
    read ``Block`` records -> find_block(blocks, id)

Layout nodes (``columnList``/``column``) are looked through; an unknown id is ``BlockNotFound``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from pycrdt import Doc, XmlElement, XmlFragment

from elynav_nb.docs.blocknote._yxml_writer import NodeWriter
from elynav_nb.docs.blocknote.schema import DOCUMENT_FRAGMENT, Block
from elynav_nb.errors import BlockNotFound, ProtocolError, UnsupportedBlockType

__all__ = [
    "BlockLocation",
    "content_element",
    "document_fragment",
    "find_block",
    "insertion_point",
    "is_element",
    "locate_block",
    "root_for_writing",
    "root_group",
]


def is_element(node: object, tag: str) -> bool:
    return isinstance(node, XmlElement) and node.tag == tag


def document_fragment(doc: Doc[Any]) -> XmlFragment:
    """The ``document-store`` fragment BlockNote binds to (created empty if missing)."""
    fragment: XmlFragment = doc.get(DOCUMENT_FRAGMENT, type=XmlFragment)
    return fragment


def _root_group(fragment: XmlFragment) -> XmlElement | None:
    for child in fragment.children:
        if is_element(child, "blockGroup"):
            assert isinstance(child, XmlElement)
            return child
    return None


def find_block(blocks: Sequence[Block], block_id: str) -> Block:
    """The block with this id among ``blocks`` and their descendants; ``BlockNotFound`` otherwise."""
    for top_block in blocks:
        for block in top_block.walk():
            if block.id == block_id:
                return block
    raise BlockNotFound(f"no block with id {block_id!r} in this document", details={"block_id": block_id})


class BlockLocation(NamedTuple):
    """Where a block sits: its group, its position in that group, and its ``blockContainer``."""

    group: XmlElement
    position: int
    container: XmlElement


def root_group(doc: Doc[Any]) -> XmlElement | None:
    """The root ``blockGroup`` (the first one: the only one BlockNote shows), None if there is none."""
    return _root_group(document_fragment(doc))


def locate_block(root: XmlElement, block_id: str) -> BlockLocation:
    """The location of the block with this id under ``root`` (layout nodes included); ``BlockNotFound``."""
    pending: list[XmlElement] = [root]
    while pending:
        group = pending.pop()
        for index, child in enumerate(group.children):
            if not isinstance(child, XmlElement):
                continue
            if child.tag == "blockContainer":
                if child.attributes.get("id") == block_id:
                    return BlockLocation(group=group, position=index, container=child)
                for grandchild in child.children:
                    if is_element(grandchild, "blockGroup"):
                        assert isinstance(grandchild, XmlElement)
                        pending.append(grandchild)
            else:  # layout nodes (columnList/column) may hold groups of blocks
                pending.append(child)
    raise BlockNotFound(f"no block with id {block_id!r} in this document", details={"block_id": block_id})


def content_element(container: XmlElement) -> XmlElement:
    for child in container.children:
        if isinstance(child, XmlElement) and child.tag != "blockGroup":
            return child
    raise UnsupportedBlockType(
        "this block has no content element", details={"block_id": container.attributes.get("id")}
    )


def root_for_writing(doc: Doc[Any], writer: NodeWriter) -> Any:
    """The writer's handle on the root ``blockGroup``, created only in an empty fragment."""
    fragment_handle = writer.fragment(doc, DOCUMENT_FRAGMENT)
    first = writer.first_element(fragment_handle)
    if first is not None and first[0] == "blockGroup":  # the usual layout: checked without a scan
        return first[1]
    fragment = document_fragment(doc)
    root = _root_group(fragment)
    if root is not None:
        return writer.node(root)
    if len(fragment.children) > 0:
        raise ProtocolError("the document-store fragment has content but no root blockGroup")
    return writer.element(fragment_handle, 0, "blockGroup", {})


def insertion_point(doc: Doc[Any], writer: NodeWriter, after: str | None) -> tuple[Any, int]:
    """Where new blocks go, as ``(the writer's handle on a group, index in it)``.

    ``after=None``: at the top of the document (the root group, created in an empty fragment);
    otherwise right after the block with that id, at its depth (``BlockNotFound`` if none).
    """
    if after is None:
        return root_for_writing(doc, writer), 0
    root = root_group(doc)
    if root is None:
        raise BlockNotFound(f"no block with id {after!r} in this document", details={"block_id": after})
    location = locate_block(root, after)
    return writer.node(location.group), location.position + 1
