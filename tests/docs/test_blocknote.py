from __future__ import annotations

import time

import pytest
from pycrdt import Doc, XmlElement, XmlFragment, XmlText

from elynav_nb.docs import blocknote
from elynav_nb.errors import BlockNotFound, InvalidInput, ProtocolError, UnsupportedBlockType


def _fragment(doc: Doc) -> XmlFragment:
    return doc.get(blocknote.DOCUMENT_FRAGMENT, type=XmlFragment)


def test_insert_read_and_types() -> None:
    doc = Doc()
    heading = blocknote.insert_block(doc, "Title **b**", "heading", level=2)
    paragraph = blocknote.insert_block(doc, "text", after=heading)
    top = blocknote.insert_block(doc, "top")
    blocks = blocknote.read_blocks(doc)
    assert [block.id for block in blocks] == [top, heading, paragraph]
    assert blocks[1].props["level"] == 2 and isinstance(blocks[1].props["level"], int)
    assert blocks[1].text == "Title **b**"
    content = list(list(list(_fragment(doc).children)[0].children)[1].children)[0]
    text_node = list(content.children)[0]
    assert isinstance(text_node, XmlText)
    assert text_node.diff() == [("Title ", None), ("b", {"bold": {}})]
    assert len(list(_fragment(doc).children)) == 1  # one root blockGroup


def test_root_group_only_created_when_empty() -> None:
    doc = Doc()
    assert len(list(_fragment(doc).children)) == 0
    blocknote.insert_block(doc, "a")  # an empty fragment: the root blockGroup is created
    assert [child.tag for child in _fragment(doc).children] == ["blockGroup"]
    blocknote.insert_block(doc, "b")
    assert [child.tag for child in _fragment(doc).children] == ["blockGroup"]

    hydrated = Doc()  # a document loaded from the server: its root is used, never a second one
    hydrated.apply_update(doc.get_update())
    blocknote.insert_block(hydrated, "c")
    assert [child.tag for child in _fragment(hydrated).children] == ["blockGroup"]
    assert [block.text for block in blocknote.read_blocks(hydrated)] == ["c", "b", "a"]

    odd = Doc()  # content but no root blockGroup: refused rather than a second root
    _fragment(odd).children.append(XmlElement("paragraph"))
    with pytest.raises(ProtocolError):
        blocknote.insert_block(odd, "x")


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"text": "x", "type": "callout"}, UnsupportedBlockType),
        ({"text": "x", "type": "heading", "level": 4}, InvalidInput),
        ({"text": "x", "type": "heading", "level": True}, InvalidInput),
        ({"text": "x", "type": "paragraph", "level": 2}, InvalidInput),
        ({"text": "   "}, InvalidInput),
        ({"text": ""}, InvalidInput),
        ({"text": "x" * (blocknote.MAX_BLOCK_TEXT_BYTES + 1)}, InvalidInput),
        ({"text": "x", "after": "5b3c1f0e-8a2d-4c6b-9f1e-2d3c4b5a6978"}, BlockNotFound),
    ],
)
def test_bad_input_changes_nothing(kwargs: dict, error: type[Exception]) -> None:
    doc = Doc()
    blocknote.insert_block(doc, "existing")
    before = doc.get_update()
    with pytest.raises(error):
        blocknote.insert_block(doc, **kwargs)
    assert doc.get_update() == before


def test_five_megabyte_paragraph_is_refused_fast() -> None:
    doc = Doc()
    started = time.monotonic()
    with pytest.raises(InvalidInput) as caught:
        blocknote.insert_block(doc, "é" * 2_500_000)
    assert caught.value.details["limit"] == blocknote.MAX_BLOCK_TEXT_BYTES
    assert time.monotonic() - started < 30  # guard only
    assert blocknote.read_blocks(doc) == []


def test_update_is_a_minimal_diff_that_keeps_concurrent_typing() -> None:
    ours = Doc()
    block_id = blocknote.insert_block(ours, "Hello world, see you")
    theirs = Doc()
    theirs.apply_update(ours.get_update())
    # a person types at the end while we rewrite the start
    content = list(list(list(_fragment(theirs).children)[0].children)[0].children)[0]
    text_node = list(content.children)[0]
    text_node.insert(len(b"Hello world, see you"), " soon", {})
    blocknote.update_block_text(ours, block_id, "Hi world, see you")
    ours.apply_update(theirs.get_update())
    theirs.apply_update(ours.get_update())
    assert blocknote.read_blocks(ours)[0].text == "Hi world, see you soon"
    assert blocknote.read_blocks(theirs)[0].text == "Hi world, see you soon"


def test_update_keeps_type_props_and_unknown_marks() -> None:
    doc = Doc()
    block_id = blocknote.insert_block(doc, "to do", "checkListItem", checked=True)
    content = list(list(list(_fragment(doc).children)[0].children)[0].children)[0]
    text_node = list(content.children)[0]
    text_node.format(0, 2, {"textColor": {"stringValue": "red"}, "comment--abcd1234": {"threadId": "t"}})
    blocknote.update_block_text(doc, block_id, "to do **now** é😀")
    block = blocknote.read_blocks(doc)[0]
    assert block.type == "checkListItem" and block.props["checked"] is True
    assert block.text == "to do **now** é😀"
    assert text_node.diff()[0] == (
        "to",
        {"textColor": {"stringValue": "red"}, "comment--abcd1234": {"threadId": "t"}},
    )


def test_update_with_hard_breaks_and_multibyte() -> None:
    doc = Doc()
    block_id = blocknote.insert_block(doc, "é😀 one\ntwo")
    for text in ["é😀 one\nmiddle\ntwo", "é😀 one two", "x\n\ny", "😀😀 *it* [l](https://x.org)\nz"]:
        blocknote.update_block_text(doc, block_id, text)
        assert blocknote.read_blocks(doc)[0].text == text


def test_code_block_text_is_literal() -> None:
    doc = Doc()
    block_id = blocknote.insert_block(doc, "a **not bold**\nb", "codeBlock", language="python")
    block = blocknote.read_blocks(doc)[0]
    assert block.text == "a **not bold**\nb" and block.props["language"] == "python"
    blocknote.update_block_text(doc, block_id, "a **not bold**\nb\nc")
    assert blocknote.read_blocks(doc)[0].text == "a **not bold**\nb\nc"


def test_unknown_block_ids() -> None:
    doc = Doc()
    blocknote.insert_block(doc, "x")
    for call in (
        lambda: blocknote.update_block_text(doc, "nope", "y"),
        lambda: blocknote.delete_block(doc, "nope"),
        lambda: blocknote.find_block(blocknote.read_blocks(doc), "nope"),
    ):
        with pytest.raises(BlockNotFound) as caught:
            call()
        assert caught.value.code == "BLOCK_NOT_FOUND"


def test_delete_keeps_one_block() -> None:
    doc = Doc()
    first = blocknote.insert_block(doc, "a")
    second = blocknote.insert_block(doc, "b", after=first)
    blocknote.delete_block(doc, first)
    assert [block.id for block in blocknote.read_blocks(doc)] == [second]
    blocknote.delete_block(doc, second)
    remaining = blocknote.read_blocks(doc)
    assert len(remaining) == 1 and remaining[0].type == "paragraph" and remaining[0].text == ""


def _custom_document() -> tuple[Doc, dict[str, str]]:
    doc = Doc()
    with doc.transaction():
        root = _fragment(doc).children.append(XmlElement("blockGroup"))
        callout = root.children.append(
            XmlElement("blockContainer", {"id": "c"}, [XmlElement("callout", {"emoji": "💡"})])
        )
        callout.children[0].children.append(XmlText()).insert(0, "note", {})
        linked = root.children.append(
            XmlElement("blockContainer", {"id": "l"}, [XmlElement("paragraph", {})])
        )
        paragraph = linked.children[0]
        paragraph.children.append(XmlText()).insert(0, "see ", {})
        paragraph.children.append(XmlElement("interlinkingLinkInline", {"docId": "d1", "title": "Other"}))
        old = root.children.append(
            XmlElement(
                "blockContainer", {"id": "o", "textColor": "red"}, [XmlElement("paragraph", {"level": 2.0})]
            )
        )
        old.children[0].children.append(XmlText()).insert(0, "old", {"bold--abcdefgh": True})
    return doc, {"callout": "c", "linked": "l", "old": "o"}


def test_custom_blocks_are_opaque_and_never_rewritten() -> None:
    doc, ids = _custom_document()
    blocks = {block.id: block for block in blocknote.read_blocks(doc)}
    assert blocks["c"].opaque and blocks["c"].type == "callout" and blocks["c"].text == "note"
    assert blocks["l"].opaque and blocks["l"].text == "see [Other](/docs/d1/)"
    assert not blocks["o"].opaque
    assert blocks["o"].props["textColor"] == "red"  # BlockNote 0.22 colours on the container
    assert blocks["o"].text == "**old**"  # hashed key, True value: still bold
    before = doc.get_update()
    for block_id in (ids["callout"], ids["linked"]):
        with pytest.raises(UnsupportedBlockType):
            blocknote.update_block_text(doc, block_id, "rewrite")
    assert doc.get_update() == before


def test_blocks_to_markdown() -> None:
    doc = Doc()
    last = blocknote.insert_block(doc, "T", "heading", level=1)
    for text, block_type in [
        ("# not a heading", "paragraph"),
        ("one", "numberedListItem"),
        ("two", "numberedListItem"),
    ]:
        last = blocknote.insert_block(doc, text, block_type, after=last)
    assert (
        blocknote.blocks_to_markdown(blocknote.read_blocks(doc))
        == "# T\n\n\\# not a heading\n\n1. one\n2. two\n"
    )


def test_page_breaks_pdfs_and_columns_are_read_as_opaque_blocks_and_kept() -> None:
    doc: Doc = Doc()
    fragment = doc.get(blocknote.DOCUMENT_FRAGMENT, type=XmlFragment)
    with doc.transaction():
        root = fragment.children.append(XmlElement("blockGroup"))
        root.children.append(XmlElement("blockContainer", {"id": "pb"}, [XmlElement("pageBreak")]))
        root.children.append(
            XmlElement(
                "blockContainer", {"id": "pdf"}, [XmlElement("pdf", {"url": "/media/a.pdf", "name": "a.pdf"})]
            )
        )
        columns = root.children.append(XmlElement("columnList", {"id": "cols"}))
        for column_id, word in (("left", "gauche"), ("right", "droite")):
            column = columns.children.append(XmlElement("column", {"id": column_id, "width": 1}))
            container = column.children.append(XmlElement("blockContainer", {"id": f"p-{word}"}))
            paragraph = container.children.append(XmlElement("paragraph"))
            paragraph.children.append(XmlText(word))
    blocks = {block.id: block for block in blocknote.read_blocks(doc)}
    assert blocks["pb"].type == "pageBreak" and blocks["pb"].opaque
    assert blocks["pdf"].type == "pdf" and blocks["pdf"].opaque and blocks["pdf"].props["name"] == "a.pdf"
    layout = blocks["cols"]
    assert layout.type == "columnList" and layout.opaque
    assert [child.text for child in layout.children] == ["gauche", "droite"]
    before = doc.get_update()
    for block_id in ("pb", "pdf"):
        with pytest.raises(UnsupportedBlockType):
            blocknote.update_block_text(doc, block_id, "rewrite")
    assert doc.get_update() == before
    new_id = blocknote.insert_block(doc, "after the PDF", after="pdf")
    assert [block.id for block in blocknote.read_blocks(doc)] == ["pb", "pdf", new_id, "cols"]
