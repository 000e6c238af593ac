"""Read the BlockNote tree of a ``pycrdt.Doc`` into ``Block`` records, fast on first and later reads.

Where it sits: the read half of the document model (design note §4.6); ``blocknote.read_blocks`` is
this module's ``read_blocks``. No I/O.

How data flows: ``read_blocks(doc)`` opens one transaction, finds the first root ``blockGroup``
and walks it: each ``blockContainer`` becomes a ``Block`` (props = BlockNote's defaults overlaid
with the stored attributes, numbers cast back to ``int``, 0.22 colours read from the container;
text = inline markdown of the ``XmlText`` runs via ``markdown._inline_pieces``; a table's text is its pipe
table, ``markdown.syntax.render_table``); layout nodes (columns) and blocks we do not model come
back ``opaque``.

Two things make it fast:

* **Native calls.** pycrdt's wrappers open a nested transaction and build a wrapper object for
  every ``children``/``attributes``/``diff`` access, which was most of the time of a first read.
  ``_NativeTree`` makes the native calls those wrappers end in, inside the one open transaction
  (the same methods ``blocknote._yxml_writer`` uses to write). They are not pycrdt's public API: the module
  checks they exist and otherwise reads through the wrappers (``_PublicTree``), with the same
  result (a property test compares both on random documents).
* **Blocks remembered per unchanged subtree.** A session re-reads its document after every write
  and a live view on every change, and most blocks have not changed. Each document gets a
  ``_ReadCache`` (held weakly, dropped with the document): what every block container read last
  time, keyed by its Yjs node, and a deep observer on the ``document-store`` fragment that forgets,
  on every committed change, the changed node and all its ancestors. Invalidation is therefore
  exact: Yjs reports every change of a node (children, attributes, text, marks) on that node, and a
  block's record depends only on its own subtree. The cache is not used while a transaction is open
  around the read (its changes are reported only at commit), nor without the native calls. Every
  read returns new ``Block`` objects (the records are private), so callers may change ``props``.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pycrdt import Doc, Transaction, XmlElement, XmlFragment, XmlText
from pycrdt._pycrdt import XmlElement as _NativeElement  # the Rust classes behind the wrappers
from pycrdt._pycrdt import XmlFragment as _NativeFragment
from pycrdt._pycrdt import XmlText as _NativeText

from elynav_nb.docs.blocknote.schema import (
    DEFAULT_PROPS,
    DOCUMENT_FRAGMENT,
    HARD_BREAK,
    INLINE_TEXT_TYPES,
    WRITABLE_BLOCK_TYPES,
    Block,
    base_mark_name,
)
from elynav_nb.docs.markdown._inline_pieces import (
    MARK_BOLD,
    MARK_CODE,
    MARK_ITALIC,
    MARK_STRIKE,
    MarkedPiece,
    render_pieces,
)
from elynav_nb.docs.markdown.syntax import ALIGNMENTS, render_table

__all__ = ["read_blocks"]

_NATIVE_READ_METHODS_PRESENT: Final = all(
    callable(getattr(native_class, method, None))
    for native_class, method in (
        (_NativeFragment, "children"),
        (_NativeFragment, "observe_deep"),
        (_NativeElement, "children"),
        (_NativeElement, "attributes"),
        (_NativeElement, "tag"),
        (_NativeElement, "parent"),
        (_NativeText, "diff"),
        (_NativeText, "parent"),
    )
)
_MARK_BITS: Final = {"bold": MARK_BOLD, "italic": MARK_ITALIC, "strike": MARK_STRIKE, "code": MARK_CODE}
_COLOUR_KEYS: Final = ("backgroundColor", "textColor")

# A block as read, private to this module: (id, type, text, props, children, opaque). Blocks handed
# out are built from it, so a caller changing a Block's props never changes what is remembered.
_Record = tuple[str, str, str, dict[str, Any], tuple["_Record", ...], bool]
# What the cache keeps per container or layout node: its record (None: an empty container) and the
# nodes under it that have entries too (kept together, since they are valid together).
_Entry = tuple["_Record | None", tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class _Tree:
    """Read access to XML nodes, as five functions: native calls, or pycrdt's public wrappers."""

    children: Callable[[Any], list[Any]]
    element_tag: Callable[[Any], str | None]  # None for a node that is not an element
    is_text: Callable[[Any], bool]
    attributes: Callable[[Any], list[tuple[str, Any]]]
    diff: Callable[[Any], list[tuple[Any, Any]]]


def _native_element_tag(node: Any) -> str | None:
    if type(node) is _NativeElement:
        tag: str | None = node.tag()  # type: ignore[attr-defined]  # the stubs of the native class lack it
        return tag
    return None


def _native_is_text(node: Any) -> bool:
    return type(node) is _NativeText


def _native_tree(native_transaction: Any) -> _Tree:
    """pycrdt's native node methods, called inside the caller's open transaction (``methodcaller``
    calls them with no Python frame in between)."""
    return _Tree(
        children=operator.methodcaller("children", native_transaction),
        element_tag=_native_element_tag,
        is_text=_native_is_text,
        attributes=operator.methodcaller("attributes", native_transaction),
        diff=operator.methodcaller("diff", native_transaction),
    )


def _public_children(node: Any) -> list[Any]:
    return list(node.children)


def _public_element_tag(node: Any) -> str | None:
    return node.tag if isinstance(node, XmlElement) else None


def _public_is_text(node: Any) -> bool:
    return isinstance(node, XmlText)


def _public_attributes(node: Any) -> list[tuple[str, Any]]:
    return list(node.attributes)


def _public_diff(node: Any) -> list[tuple[Any, Any]]:
    chunks: list[tuple[Any, Any]] = node.diff()
    return chunks


_PUBLIC_TREE: Final = _Tree(
    children=_public_children,
    element_tag=_public_element_tag,
    is_text=_public_is_text,
    attributes=_public_attributes,
    diff=_public_diff,
)
"""The same reads through pycrdt's wrappers (slower, always available)."""


# =============================================================================================
# The cache of one document
# =============================================================================================


class _ReadCache:
    """What the last read found, per container node; forgotten node by node as the document changes."""

    def __init__(self) -> None:
        self.entries: dict[Any, _Entry] = {}
        self.subscription: Any = None

    def on_changes(self, events: list[Any]) -> None:
        """Deep observer of the fragment: forget every changed node and its ancestors (never raises:
        pycrdt would re-raise it from the writer's transaction)."""
        try:
            entries = self.entries
            for event in events:
                node = event.target
                while node is not None:
                    entries.pop(node, None)
                    node = node.parent()
        except Exception:  # noqa: BLE001  # unexpected event shape: forget everything, stay exact
            self.entries = {}


_CACHES: Final[weakref.WeakKeyDictionary[Doc[Any], _ReadCache]] = weakref.WeakKeyDictionary()


def _cache_for(doc: Doc[Any], fragment: Any) -> _ReadCache:
    cache = _CACHES.get(doc)
    if cache is None:
        cache = _ReadCache()
        cache.subscription = fragment.observe_deep(cache.on_changes)
        _CACHES[doc] = cache
    return cache


def forget_read_cache(doc: Doc[Any]) -> None:
    """Drop what was remembered for this document (the next read is a first read)."""
    cache = _CACHES.pop(doc, None)
    if cache is not None and cache.subscription is not None:
        cache.subscription.drop()


# =============================================================================================
# The walk
# =============================================================================================


def _marks(attributes: Mapping[str, Any]) -> tuple[int, str | None]:
    """Mark bits and link of a text chunk: marks found by key presence, ``--hash`` suffixes stripped."""
    bits = 0
    link: str | None = None
    for key, value in attributes.items():
        if value is None:
            continue
        name = base_mark_name(key) if "--" in key else key
        if name == "link":
            href = value.get("href") if isinstance(value, Mapping) else None
            if isinstance(href, str):
                link = href
        else:
            bits |= _MARK_BITS.get(name, 0)
    return bits, link


def _plain_attributes(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Attributes as a dict, JS numbers that are integral given back as ``int``."""
    attributes: dict[str, Any] = {}
    for key, value in pairs:
        if type(value) is float and value.is_integer():
            value = int(value)
        attributes[key] = value
    return attributes


def _to_block(record: _Record) -> Block:
    block_id, block_type, text, props, children, opaque = record
    return Block(
        block_id, block_type, text, dict(props), tuple([_to_block(child) for child in children]), opaque
    )


class _Walker:
    """One read of the tree. With ``previous`` (a cache's entries), unchanged nodes are not read again;
    ``entries`` collects what this read saw, for the next one."""

    def __init__(self, tree: _Tree, previous: dict[Any, _Entry] | None) -> None:
        self.tree = tree
        self.remember = previous is not None
        self.previous: dict[Any, _Entry] = previous if previous is not None else {}
        self.entries: dict[Any, _Entry] = {}
        self.visited: list[Any] = []  # nodes with an entry, each after the nodes under it

    def read_group(self, group: Any) -> list[_Record]:
        records: list[_Record] = []
        tree = self.tree
        for child in tree.children(group):
            tag = tree.element_tag(child)
            if tag is None:
                continue
            record = self.read_node(child, tag)
            if record is not None:
                records.append(record)
        return records

    def read_node(self, node: Any, tag: str) -> _Record | None:
        """A container (None when empty: BlockNote drops it too) or a layout node, remembered."""
        if not self.remember:
            return self.read_container(node) if tag == "blockContainer" else self.read_layout_node(node, tag)
        known = self.previous.get(node)
        if known is not None and all(descendant in self.previous for descendant in known[1]):
            for descendant in known[1]:
                self.entries[descendant] = self.previous[descendant]
            self.visited.extend(known[1])
            self.visited.append(node)
            self.entries[node] = known
            return known[0]
        first_below = len(self.visited)
        record = self.read_container(node) if tag == "blockContainer" else self.read_layout_node(node, tag)
        self.entries[node] = (record, tuple(self.visited[first_below:]))
        self.visited.append(node)
        return record

    def read_container(self, container: Any) -> _Record | None:
        tree = self.tree
        content: Any = None
        content_tag = ""
        children: tuple[_Record, ...] = ()
        extra_nodes = False
        for child in tree.children(container):
            tag = tree.element_tag(child)
            if tag == "blockGroup":
                children = tuple(self.read_group(child))
            elif tag is not None and content is None:
                content = child
                content_tag = tag
            else:
                extra_nodes = True
        if content is None:
            return None
        container_attributes = _plain_attributes(tree.attributes(container))
        block_id = str(container_attributes.get("id") or "")
        text, opaque = self.read_content(content, content_tag)
        if content_tag not in WRITABLE_BLOCK_TYPES or extra_nodes:
            opaque = True
        props = dict(DEFAULT_PROPS.get(content_tag, {}))
        stored = _plain_attributes(tree.attributes(content))
        for key in _COLOUR_KEYS:  # BlockNote 0.22 kept colours on the container
            if key in container_attributes and key not in stored and key in props:
                props[key] = container_attributes[key]
        for key, value in stored.items():
            if value is not None:  # BlockNote stores an unset optional prop (numberedListItem.start) as null
                props[key] = value
        return (block_id, content_tag, text, props, children, opaque)

    def read_content(self, content: Any, block_type: str) -> tuple[str, bool]:
        """(text, opaque) of a block-content element."""
        tree = self.tree
        if block_type == "table":
            return self.read_table(content), True
        if block_type == "codeBlock":
            characters: list[str] = []
            opaque = False
            for child in tree.children(content):
                if not tree.is_text(child):
                    opaque = True
                    continue
                for chunk, _attributes in tree.diff(child):
                    if isinstance(chunk, str):
                        characters.append(chunk)
                    else:
                        opaque = True
            return "".join(characters), opaque
        pieces: list[MarkedPiece] = []
        opaque = block_type not in INLINE_TEXT_TYPES
        for child in tree.children(content):
            if tree.is_text(child):
                opaque = self.append_text_pieces(child, pieces) or opaque
                continue
            tag = tree.element_tag(child)
            if tag == HARD_BREAK:
                pieces.append(("\n", 0, None))
            elif tag is not None:
                self.append_inline_node_pieces(child, tag, pieces)
                opaque = True
        return render_pieces(pieces), opaque

    def append_text_pieces(self, text_node: Any, pieces: list[MarkedPiece]) -> bool:
        """Append the node's text chunks with their marks; True when it also holds embeds."""
        has_embeds = False
        for chunk, attributes in self.tree.diff(text_node):
            if not isinstance(chunk, str):
                has_embeds = True
            elif attributes is None:
                pieces.append((chunk, 0, None))
            else:
                bits, link = _marks(attributes)
                pieces.append((chunk, bits, link))
        return has_embeds

    def append_inline_node_pieces(self, element: Any, tag: str, pieces: list[MarkedPiece]) -> None:
        """Best-effort text for an inline node we do not model (shown, never written)."""
        if tag == "interlinkingLinkInline":
            attributes = _plain_attributes(self.tree.attributes(element))
            title = str(attributes.get("title") or "")
            document_id = attributes.get("docId")
            if document_id:
                pieces.append((title or str(document_id), 0, f"/docs/{document_id}/"))
            else:
                pieces.append((title, 0, None))
            return
        for child in self.tree.children(element):
            if self.tree.is_text(child):
                self.append_text_pieces(child, pieces)

    def read_table(self, table: Any) -> str:
        """A table as a pipe table (``markdown.syntax.render_table``): cells as inline markdown, the
        first row a header row when all its cells are ``tableHeader``, a column's alignment when all
        its cells share it. What a pipe table cannot show (spans, widths, colours, breaks) is left out."""
        tree = self.tree
        rows: list[list[str]] = []
        alignments: list[set[str]] = []
        header = False
        for row_number, row in enumerate(tree.children(table)):
            if tree.element_tag(row) != "tableRow":
                continue
            cells: list[str] = []
            all_headers = True
            for cell in tree.children(row):
                tag = tree.element_tag(cell)
                if tag != "tableCell" and tag != "tableHeader":
                    continue
                all_headers = all_headers and tag == "tableHeader"
                attributes = _plain_attributes(tree.attributes(cell))
                if len(alignments) <= len(cells):
                    alignments.append(set())
                alignments[len(cells)].add(str(attributes.get("textAlignment") or "left"))
                pieces: list[MarkedPiece] = []
                for paragraph in tree.children(cell):
                    if pieces:
                        pieces.append((" ", 0, None))
                    for child in tree.children(paragraph):
                        if tree.is_text(child):
                            self.append_text_pieces(child, pieces)
                        elif tree.element_tag(child) == HARD_BREAK:
                            pieces.append((" ", 0, None))
                        elif (child_tag := tree.element_tag(child)) is not None:
                            self.append_inline_node_pieces(child, child_tag, pieces)
                cells.append(render_pieces(pieces))
            if row_number == 0:
                header = all_headers and bool(cells)
            rows.append(cells)
        columns = [
            next(iter(found)) if len(found) == 1 and next(iter(found)) in ALIGNMENTS else "left"
            for found in alignments
        ]
        if not columns:
            return ""
        return render_table(rows, columns, header=header)

    def read_layout_node(self, element: Any, tag: str) -> _Record:
        """columnList and other Docs layout nodes: one opaque block holding the blocks inside."""
        tree = self.tree
        nested: list[_Record] = []
        for child in tree.children(element):
            child_tag = tree.element_tag(child)
            if child_tag == "blockGroup" or child_tag == "column":
                nested.extend(self.read_group(child))
            elif child_tag == "blockContainer":
                record = self.read_node(child, child_tag)
                if record is not None:
                    nested.append(record)
        attributes = _plain_attributes(tree.attributes(element))
        return (str(attributes.get("id") or ""), tag, "", attributes, tuple(nested), True)


# =============================================================================================
# Entry point
# =============================================================================================

_NO_TRANSACTION: Final = object()


def _native_transaction(transaction: Transaction, fragment: XmlFragment) -> Any:
    """The native transaction to read with, or None when the native calls cannot be used."""
    native_transaction = getattr(transaction, "_txn", None)
    native_fragment = getattr(fragment, "_integrated", None)
    if _NATIVE_READ_METHODS_PRESENT and type(native_fragment) is _NativeFragment:
        return native_transaction
    return None


def read_blocks(doc: Doc[Any], *, remember: bool = True, native: bool = True) -> list[Block]:
    """The blocks of the document, in order, with nested children (the first root group only).

    ``remember=False`` reads every node again and leaves the document's cache as it is;
    ``native=False`` reads through pycrdt's public wrappers (and so without the cache)."""
    outer_transaction = getattr(doc, "_txn", _NO_TRANSACTION)
    with doc.transaction() as transaction:
        fragment: XmlFragment = doc.get(DOCUMENT_FRAGMENT, type=XmlFragment)
        native_transaction = _native_transaction(transaction, fragment) if native else None
        tree = _native_tree(native_transaction) if native_transaction is not None else _PUBLIC_TREE
        root_node = fragment._integrated if native_transaction is not None else fragment
        root_group = None
        for child in tree.children(root_node):
            if tree.element_tag(child) == "blockGroup":
                root_group = child
                break
        if root_group is None:
            return []
        cache = None
        if remember and native_transaction is not None and outer_transaction is None:
            cache = _cache_for(doc, root_node)
        walker = _Walker(tree, cache.entries if cache is not None else None)
        records = walker.read_group(root_group)
        if cache is not None:
            cache.entries = walker.entries
    return [_to_block(record) for record in records]
