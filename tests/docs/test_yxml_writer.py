"""The native node writer makes the same document, with the same Yjs operations, as pycrdt's public
wrappers, and falls back to the wrappers wherever the native calls would be unsafe."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pycrdt import Doc, TransactionEvent, XmlFragment, XmlText

from elynav_nb.docs.blocknote import _yxml_writer as yxml_writer
from elynav_nb.docs.blocknote import document_fragment, insert_block, read_blocks, update_block_text, writers

Edit = Callable[[Doc[Any], list[str]], None]

EDITS: list[Edit] = [
    lambda doc, ids: ids.append(insert_block(doc, "plain text")),
    lambda doc, ids: ids.append(
        insert_block(doc, "**bold** and [a link](https://example.org) é", after=ids[0])
    ),
    lambda doc, ids: ids.append(insert_block(doc, "line one\nline *two*\n\nline four", type="quote")),
    lambda doc, ids: ids.append(
        insert_block(doc, "def f():\n    return 1", type="codeBlock", language="python")
    ),
    lambda doc, ids: ids.append(insert_block(doc, "Title", type="heading", level=2)),
    lambda doc, ids: ids.append(insert_block(doc, "done", type="checkListItem", checked=True)),
    lambda doc, ids: update_block_text(doc, ids[0], "plain **text** grows\nover two lines"),
    lambda doc, ids: update_block_text(doc, ids[1], "**bold** and more ~~struck~~"),
    lambda doc, ids: update_block_text(doc, ids[3], "def f():\n    return 2\n"),
]


def _counting_uuids() -> Iterator[str]:
    for number in range(1, 1000):
        yield str(uuid.UUID(int=number, version=4))


def _run_edits(monkeypatch: pytest.MonkeyPatch, *, native: bool) -> Doc[Any]:
    uuids = _counting_uuids()
    monkeypatch.setattr(writers, "new_block_id", lambda: next(uuids))
    monkeypatch.setattr(writers, "writer_for", functools.partial(yxml_writer.writer_for, native=native))
    doc: Doc[Any] = Doc(client_id=4242)
    ids: list[str] = []
    for edit in EDITS:
        edit(doc, ids)
    return doc


def test_the_native_writer_is_available_with_the_installed_pycrdt() -> None:
    # If a pycrdt release renames the native methods, inserts silently get ~2x slower: say so here.
    assert yxml_writer._NATIVE_METHODS_PRESENT


def _tree(node: Any) -> Any:
    """A canonical dump: yrs keeps attributes and marks in hash maps, so their order (and the
    update's bytes) changes from one run to the next even for the same calls."""
    if isinstance(node, XmlText):
        return [(chunk, sorted((attributes or {}).items())) for chunk, attributes in node.diff()]
    children = [_tree(child) for child in node.children]
    if isinstance(node, XmlFragment):
        return children
    return (node.tag, sorted((str(key), repr(value)) for key, value in node.attributes), children)


def test_native_and_public_writers_make_the_same_document(monkeypatch: pytest.MonkeyPatch) -> None:
    native = _run_edits(monkeypatch, native=True)
    public = _run_edits(monkeypatch, native=False)
    assert _tree(document_fragment(native)) == _tree(document_fragment(public))
    assert native.get_state() == public.get_state()  # the same number of Yjs operations
    assert len(native.get_update()) == len(public.get_update())
    texts = {block.text for block in read_blocks(native)}
    assert {"plain **text** grows\nover two lines", "**bold** and more ~~struck~~"} <= texts


def test_writing_inside_an_observer_raises_and_changes_nothing() -> None:
    doc: Doc[Any] = Doc()
    insert_block(doc, "first")
    errors: list[BaseException] = []

    def write_back(event: TransactionEvent) -> None:
        try:
            insert_block(doc, "written from an observer")
        except Exception as error:
            errors.append(error)

    subscription = doc.observe(write_back)
    insert_block(doc, "second")
    doc.unobserve(subscription)
    assert len(errors) == 1 and isinstance(errors[0], RuntimeError)
    assert [block.text for block in read_blocks(doc)] == ["second", "first"]
