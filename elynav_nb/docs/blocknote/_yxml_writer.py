"""Create new XML nodes inside an open pycrdt transaction, as cheaply as pycrdt allows.

Where it sits: a pure helper of the document model (``blocknote.py`` builds new blocks with it). No
I/O, no BlockNote knowledge: elements with attributes, text nodes, formatted text, and the first
child of a node (where a writer starts).

Why it exists: pycrdt's wrappers (``XmlElement.children.insert``, ``attributes[...] = ...``,
``XmlText.insert``) each open and close a nested transaction and re-check lengths, which is 17
transaction entries and most of the CPU of inserting one block, on the path of every acknowledged
write. ``NativeWriter`` makes the same native calls the wrappers end in (``insert_element_prelim``,
``insert_attribute``, ``insert_str``, ``insert``), in the same order and inside the caller's one
transaction, so the document and its Yjs operations are those the wrappers make (a test compares
them). Those native methods are not pycrdt's public API: ``writer_for`` checks they are there and
otherwise returns ``PublicWriter``, which goes through the wrappers.

How data flows::

    with doc.transaction() as transaction:
        writer = writer_for(transaction)
        node = writer.node(group)                              # a wrapper -> the writer's handle
        container = writer.element(node, 0, "blockContainer", {"id": ...})
        text = writer.text(writer.element(container, 0, "paragraph", props), 0)
        writer.insert_text(text, 0, "hello", {"bold": {}})     # offsets in UTF-8 bytes
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pycrdt import Doc, Transaction, XmlElement, XmlFragment, XmlText
from pycrdt._pycrdt import Doc as _NativeDoc  # the Rust classes behind the wrappers
from pycrdt._pycrdt import XmlElement as _NativeElement
from pycrdt._pycrdt import XmlFragment as _NativeFragment
from pycrdt._pycrdt import XmlText as _NativeText
from pycrdt._transaction import ReadTransaction

__all__ = ["NativeWriter", "NodeWriter", "PublicWriter", "writer_for"]

_NATIVE_METHODS_PRESENT = all(
    callable(getattr(native_class, method, None))
    for native_class, method in (
        (_NativeDoc, "get_or_insert_xml_fragment"),
        (_NativeFragment, "insert_element_prelim"),
        (_NativeFragment, "len"),
        (_NativeFragment, "get"),
        (_NativeElement, "insert_element_prelim"),
        (_NativeElement, "insert_attribute"),
        (_NativeElement, "insert_str"),
        (_NativeElement, "tag"),
        (_NativeText, "insert"),
    )
)


class NodeWriter(Protocol):
    """Creates nodes under a parent handle; handles are whatever ``node()`` and the writer return.

    ``fragment`` gives the handle of a root ``XmlFragment`` (created if missing); ``first_element``
    the tag and handle of a node's first child when it is an element."""

    def node(self, wrapper: XmlElement | XmlFragment | XmlText) -> Any: ...

    def fragment(self, doc: Doc[Any], name: str) -> Any: ...

    def first_element(self, parent: Any) -> tuple[str, Any] | None: ...

    def element(self, parent: Any, index: int, tag: str, attributes: Mapping[str, Any]) -> Any: ...

    def text(self, parent: Any, index: int) -> Any: ...

    def insert_text(self, text: Any, offset: int, value: str, attributes: Mapping[str, Any]) -> None: ...


class NativeWriter:
    """Calls pycrdt's native methods directly, inside one open read-write transaction."""

    def __init__(self, native_transaction: Any) -> None:
        self._transaction = native_transaction

    def node(self, wrapper: XmlElement | XmlFragment | XmlText) -> Any:
        return wrapper.integrated

    def fragment(self, doc: Doc[Any], name: str) -> Any:
        return doc._doc.get_or_insert_xml_fragment(self._transaction, name)

    def first_element(self, parent: Any) -> tuple[str, Any] | None:
        if parent.len(self._transaction) == 0:
            return None
        child: Any = parent.get(self._transaction, 0)
        if not isinstance(child, _NativeElement):
            return None
        tag: Any = child.tag()  # type: ignore[attr-defined]  # the stubs of the native class lack it
        return str(tag), child

    def element(self, parent: Any, index: int, tag: str, attributes: Mapping[str, Any]) -> Any:
        element = parent.insert_element_prelim(self._transaction, index, tag)
        for name, value in attributes.items():
            element.insert_attribute(self._transaction, name, value)
        return element

    def text(self, parent: Any, index: int) -> Any:
        return parent.insert_str(self._transaction, index, "")

    def insert_text(self, text: Any, offset: int, value: str, attributes: Mapping[str, Any]) -> None:
        text.insert(self._transaction, offset, value, iter(attributes.items()))


class PublicWriter:
    """The same operations through pycrdt's public wrappers (slower, always available)."""

    def node(self, wrapper: XmlElement | XmlFragment | XmlText) -> Any:
        return wrapper

    def fragment(self, doc: Doc[Any], name: str) -> Any:
        return doc.get(name, type=XmlFragment)

    def first_element(self, parent: Any) -> tuple[str, Any] | None:
        for child in parent.children:
            return (str(child.tag), child) if isinstance(child, XmlElement) else None
        return None

    def element(self, parent: Any, index: int, tag: str, attributes: Mapping[str, Any]) -> Any:
        return parent.children.insert(index, XmlElement(tag, dict(attributes)))

    def text(self, parent: Any, index: int) -> Any:
        return parent.children.insert(index, XmlText())

    def insert_text(self, text: Any, offset: int, value: str, attributes: Mapping[str, Any]) -> None:
        text.insert(offset, value, dict(attributes))


def writer_for(transaction: Transaction, *, native: bool = True) -> NodeWriter:
    """The fastest writer that is safe for this transaction.

    The public writer is used for read-only transactions (its wrappers raise pycrdt's own error),
    when pycrdt lacks the native methods, or when ``native=False``.
    """
    native_transaction = getattr(transaction, "_txn", None)
    if (
        native
        and _NATIVE_METHODS_PRESENT
        and native_transaction is not None
        and isinstance(getattr(transaction, "_doc", None), Doc)
        and isinstance(getattr(transaction._doc, "_doc", None), _NativeDoc)
        and not isinstance(transaction, ReadTransaction)
    ):
        return NativeWriter(native_transaction)
    return PublicWriter()
