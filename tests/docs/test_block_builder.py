"""Whole-markdown writing into a pycrdt document: BlockNote's exact node layout, one transaction per
insert, validation before any write, and the round trip (read to markdown, write into an empty
document, the same blocks) as a property over documents made of every supported block type."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from pycrdt import Doc, XmlElement, XmlFragment, XmlText

from elynav_nb.docs import blocknote
from elynav_nb.docs.blocknote.builder import insert_markdown
from elynav_nb.docs.blocknote.schema import DOCUMENT_FRAGMENT, Block
from elynav_nb.docs.markdown.blocks import BlockSpec
from elynav_nb.errors import BlockNotFound, InvalidInput
from tests.docs.markdown_strategies import block_specs, written_document


def _tree(node: XmlElement | XmlFragment) -> list[Any]:
    """The XML as nested lists: (tag, attributes, children) and text deltas."""
    shape: list[Any] = []
    for child in node.children:
        if isinstance(child, XmlText):
            shape.append(child.diff())
        else:
            shape.append((child.tag, dict(child.attributes), _tree(child)))
    return shape


def _without_ids(shape: list[Any]) -> list[Any]:
    cleaned: list[Any] = []
    for item in shape:
        if isinstance(item, tuple):
            tag, attributes, children = item
            cleaned.append((tag, {k: v for k, v in attributes.items() if k != "id"}, _without_ids(children)))
        else:
            cleaned.append(item)
    return cleaned


TEXT = {"backgroundColor": "default", "textColor": "default", "textAlignment": "left"}


def test_the_nodes_are_those_blocknote_writes() -> None:
    doc = Doc()
    insert_markdown(
        doc,
        "## A **b**\n\n- [x] done\n  1. sub\n\n```py\nx = 1\n```\n\n---\n\n"
        '![cat](https://e.org/c.png "Cat")\n\n| h | **i** |\n|---|--:|\n| 1 |  |\n\nline\\\nbreak\n',
    )
    [root] = _tree(doc.get(DOCUMENT_FRAGMENT, type=XmlFragment))
    cell = {"textColor": "default", "backgroundColor": "default", "colspan": 1.0, "rowspan": 1.0}
    assert _without_ids(root[2]) == [
        (
            "blockContainer",
            {},
            [
                (
                    "heading",
                    {**TEXT, "level": 2.0, "isToggleable": False},
                    [[("A ", None), ("b", {"bold": {}})]],
                )
            ],
        ),
        (
            "blockContainer",
            {},
            [
                ("checkListItem", {**TEXT, "checked": True}, [[("done", None)]]),
                ("blockGroup", {}, [("blockContainer", {}, [("numberedListItem", TEXT, [[("sub", None)]])])]),
            ],
        ),
        ("blockContainer", {}, [("codeBlock", {"language": "py"}, [[("x = 1", None)]])]),
        ("blockContainer", {}, [("divider", {}, [])]),
        (
            "blockContainer",
            {},
            [
                (
                    "image",
                    {
                        "textAlignment": "left",
                        "backgroundColor": "default",
                        "name": "cat",
                        "url": "https://e.org/c.png",
                        "caption": "Cat",
                        "showPreview": True,
                    },
                    [],
                )
            ],
        ),
        (
            "blockContainer",
            {},
            [
                (
                    "table",
                    {"textColor": "default"},
                    [
                        (
                            "tableRow",
                            {},
                            [
                                (
                                    "tableHeader",
                                    {**cell, "textAlignment": "left"},
                                    [("tableParagraph", {}, [[("h", None)]])],
                                ),
                                (
                                    "tableHeader",
                                    {**cell, "textAlignment": "right"},
                                    [("tableParagraph", {}, [[("i", {"bold": {}})]])],
                                ),
                            ],
                        ),
                        (
                            "tableRow",
                            {},
                            [
                                (
                                    "tableCell",
                                    {**cell, "textAlignment": "left"},
                                    [("tableParagraph", {}, [[("1", None)]])],
                                ),
                                (
                                    "tableCell",
                                    {**cell, "textAlignment": "right"},
                                    [("tableParagraph", {}, [])],
                                ),
                            ],
                        ),
                    ],
                )
            ],
        ),
        (
            "blockContainer",
            {},
            [("paragraph", TEXT, [[("line", None)], ("hardBreak", {}, []), [("break", None)]])],
        ),
    ]


def test_one_insert_is_one_transaction_and_returns_every_new_id_depth_first() -> None:
    doc = Doc()
    updates: list[bytes] = []
    subscription = doc.observe(lambda event: updates.append(event.update))
    ids = insert_markdown(doc, "# T\n\n- a\n  - b\n- c\n")
    doc.unobserve(subscription)
    assert len(updates) == 1
    read = [block.id for top in blocknote.read_blocks(doc) for block in top.walk()]
    assert ids == read and all(uuid.UUID(block_id).version == 4 for block_id in ids)


def test_after_a_nested_block_and_at_the_top() -> None:
    doc = Doc()
    insert_markdown(doc, "- a\n  - b\n- c\n")
    nested = blocknote.read_blocks(doc)[0].children[0]
    insert_markdown(doc, "- b2\n- b3\n", after=nested.id)
    insert_markdown(doc, "top", after=None)
    assert (
        blocknote.blocks_to_markdown(blocknote.read_blocks(doc)) == "top\n\n* a\n  * b\n  * b2\n  * b3\n* c\n"
    )


def test_bad_input_writes_nothing() -> None:
    doc = Doc()
    insert_markdown(doc, "kept")
    before = doc.get_update()
    updates: list[bytes] = []
    subscription = doc.observe(lambda event: updates.append(event.update))
    for markdown, after, error in [
        ("", None, InvalidInput),
        ("  \n", None, InvalidInput),
        ("- " * 40 + "deep", None, InvalidInput),
        ("x", "no-such-block", BlockNotFound),
        ("x", 42, InvalidInput),
        ("a" * 1_500_000, None, InvalidInput),  # one block over MAX_BLOCK_TEXT_BYTES
    ]:
        with pytest.raises(error):
            insert_markdown(doc, markdown, after=after)  # type: ignore[arg-type]
    doc.unobserve(subscription)
    assert updates == [] and doc.get_update() == before


# =============================================================================================
# The round trip, as a property
# =============================================================================================


def _comparable(blocks: list[Block] | tuple[Block, ...]) -> list[Any]:
    return [(block.type, block.text, block.props, _comparable(block.children)) for block in blocks]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block_specs())
def test_reading_to_markdown_and_writing_back_gives_the_same_blocks(specs: list[BlockSpec]) -> None:
    original = blocknote.read_blocks(written_document(specs))
    markdown = blocknote.blocks_to_markdown(original)
    again: Doc[Any] = Doc()
    insert_markdown(again, markdown)
    assert _comparable(blocknote.read_blocks(again)) == _comparable(original), markdown
