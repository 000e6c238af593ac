"""``replace_section``: the section's bounds, the smallest change (unchanged blocks untouched, same-type
blocks changed in place), concurrent edits by a person kept, Docs-only blocks kept when their markdown
is, refusals before any write."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from pycrdt import Doc, XmlElement, XmlFragment, XmlText

from elynav_nb.docs import blocknote
from elynav_nb.docs.blocknote import locate_block, root_group
from elynav_nb.docs.blocknote.builder import insert_markdown
from elynav_nb.docs.blocknote.schema import DOCUMENT_FRAGMENT, Block
from elynav_nb.docs.blocknote.section_diff import replace_section
from elynav_nb.docs.markdown.blocks import BlockSpec
from elynav_nb.errors import BlockNotFound, InvalidInput, UnsupportedBlockType
from tests.docs.markdown_strategies import block_specs, written_document

DOCUMENT = """# Title

intro

## Plan

first step

- one
- two
  - two.a

### Detail

detail text

## Next

after
"""


def _doc(markdown: str = DOCUMENT) -> Doc[Any]:
    doc: Doc[Any] = Doc()
    insert_markdown(doc, markdown)
    return doc


def _by_text(doc: Doc[Any], text: str) -> Block:
    for top in blocknote.read_blocks(doc):
        for block in top.walk():
            if block.text == text:
                return block
    raise AssertionError(f"no block {text!r}")


def _ids(doc: Doc[Any]) -> dict[str, str]:
    return {block.text: block.id for top in blocknote.read_blocks(doc) for block in top.walk()}


def _container(doc: Doc[Any], block_id: str) -> XmlElement:
    root = root_group(doc)
    assert root is not None
    return locate_block(root, block_id)[2]


def _updates_during(doc: Doc[Any], action: Any) -> list[bytes]:
    updates: list[bytes] = []
    subscription = doc.observe(lambda event: updates.append(bytes(event.update)))
    try:
        action()
    finally:
        doc.unobserve(subscription)
    return [update for update in updates if update != b"\x00\x00"]


def test_the_same_markdown_changes_nothing() -> None:
    doc = _doc()
    plan = _by_text(doc, "Plan").id
    section = "first step\n\n- one\n- two\n  - two.a\n\n### Detail\n\ndetail text\n"
    updates = _updates_during(doc, lambda: replace_section(doc, plan, section))
    assert updates == []
    change = replace_section(doc, plan, section.replace("- ", "* "))  # another spelling, same markdown
    assert not change.changed and len(change.kept) == 6


def test_a_section_ends_at_the_next_heading_of_its_level_or_higher() -> None:
    doc = _doc()
    ids = _ids(doc)
    change = replace_section(doc, ids["Plan"], "new plan\n")
    assert blocknote.blocks_to_markdown(blocknote.read_blocks(doc)) == (
        "# Title\n\nintro\n\n## Plan\n\nnew plan\n\n## Next\n\nafter\n"
    )
    assert change.updated == [ids["first step"]]  # a paragraph facing a paragraph: edited in place
    assert set(change.deleted) == {ids["one"], ids["two"], ids["two.a"], ids["Detail"], ids["detail text"]}
    assert _ids(doc)["Next"] == ids["Next"] and _ids(doc)["after"] == ids["after"]
    detail_doc = _doc()
    detail = _by_text(detail_doc, "Detail").id
    replace_section(detail_doc, detail, "new detail\n")
    assert "### Detail\n\nnew detail\n\n## Next\n" in blocknote.blocks_to_markdown(
        blocknote.read_blocks(detail_doc)
    )


def test_changed_text_is_edited_in_place_and_untouched_blocks_keep_what_markdown_cannot_show() -> None:
    doc = _doc()
    ids = _ids(doc)
    first_step = _container(doc, ids["first step"])
    first_step.children[0].attributes["textColor"] = "red"  # a person coloured it
    text_node = _container(doc, ids["one"]).children[0].children[0]
    text_node.format(0, 3, {"underline": {}})  # and underlined "one"
    change = replace_section(
        doc, ids["Plan"], "first step\n\n- one, edited\n- two\n  - two.a\n\n### Detail\n\ndetail text\n"
    )
    assert change.updated == [ids["one"]] and not change.inserted and not change.deleted
    assert _ids(doc)["one, edited"] == ids["one"]
    assert _container(doc, ids["first step"]).children[0].attributes["textColor"] == "red"
    chunk, marks = _container(doc, ids["one"]).children[0].children[0].diff()[0]
    assert chunk.startswith("one") and marks == {"underline": {}}  # typed after it: carried, as in BlockNote


def test_props_markdown_shows_change_in_place() -> None:
    doc = _doc("## S\n\n- [ ] task\n\n### Sub\n\n```\ncode\n```\n")
    ids = _ids(doc)
    change = replace_section(doc, ids["S"], "- [x] task\n\n#### Sub\n\n```python\ncode\n```\n")
    assert sorted(change.updated) == sorted([ids["task"], ids["Sub"], ids["code"]]) and not change.inserted
    blocks = blocknote.read_blocks(doc)
    assert [(block.type, block.props.get("checked"), block.props.get("level")) for block in blocks[1:3]] == [
        ("checkListItem", True, None),
        ("heading", None, 4),
    ]
    assert blocks[3].props["language"] == "python"


def test_a_person_typing_in_a_block_keeps_their_edit() -> None:
    ours = _doc()
    theirs: Doc[Any] = Doc()
    theirs.apply_update(ours.get_update())
    ids = _ids(ours)
    # the person types in "first step" (unchanged by us) and at the end of "two" (changed by us)
    _container(theirs, ids["first step"]).children[0].children[0].insert(len("first step"), " (typed)")
    _container(theirs, ids["two"]).children[0].children[0].insert(len("two"), "!")
    their_update = theirs.get_update(ours.get_state())
    replace_section(
        ours, ids["Plan"], "first step\n\n- one\n- two too\n  - two.a\n\n### Detail\n\ndetail text\n"
    )
    ours.apply_update(their_update)
    theirs.apply_update(ours.get_update(theirs.get_state()))
    for replica in (ours, theirs):
        texts = [block.text for top in blocknote.read_blocks(replica) for block in top.walk()]
        assert "first step (typed)" in texts
        assert "two too!" in texts or "two! too" in texts  # both typed at "two|": Yjs orders them by client


def test_nested_children_are_compared_too() -> None:
    doc = _doc()
    ids = _ids(doc)
    replace_section(doc, ids["Plan"], "first step\n\n- one\n  - one.a\n- two\n\n### Detail\n\ndetail text\n")
    after = _ids(doc)
    assert after["one"] == ids["one"] and after["two"] == ids["two"] and "two.a" not in after
    two = _container(doc, ids["two"])
    assert [child.tag for child in two.children if isinstance(child, XmlElement)] == ["bulletListItem"]
    one = _container(doc, ids["one"])
    assert [child.tag for child in one.children if isinstance(child, XmlElement)] == [
        "bulletListItem",
        "blockGroup",
    ]


def test_tables_untouched_stay_intact_and_changed_ones_are_replaced() -> None:
    doc = _doc("## T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nend\n")
    ids = _ids(doc)
    table = next(block for block in blocknote.read_blocks(doc) if block.type == "table")
    assert table.text == "| a | b |\n| --- | --- |\n| 1 | 2 |"
    cell = _container(doc, table.id).children[0].children[0].children[0]
    cell.attributes["colwidth"] = [120]  # a person widened the column
    change = replace_section(doc, ids["T"], "| a | b |\n|:--|---|\n| 1 | 2 |\n\nend, edited\n")
    assert table.id in change.kept
    assert _container(doc, table.id).children[0].children[0].children[0].attributes["colwidth"] == [120.0]
    change = replace_section(doc, ids["T"], "| a | b |\n|---|---|\n| 1 | 3 |\n\nend, edited\n")
    assert table.id in change.deleted and len(change.inserted) == 1


def _docs_only_document() -> tuple[Doc[Any], dict[str, str]]:
    doc = _doc("## S\n\nbefore\n\nafter\n")
    ids = _ids(doc)
    root = root_group(doc)
    assert root is not None
    _, index, _ = locate_block(root, ids["before"])
    callout = root.children.insert(index + 1, XmlElement("blockContainer", {"id": "callout-1"}))
    callout.children.append(
        XmlElement("callout", {"emoji": "💡", "backgroundColor": "default"})
    ).children.append(XmlText("Careful"))
    link = root.children.insert(index + 2, XmlElement("blockContainer", {"id": "link-1"}))
    paragraph = link.children.append(XmlElement("paragraph", {}))
    paragraph.children.append(XmlText("see "))
    paragraph.children.append(XmlElement("interlinkingLinkInline", {"docId": "d-1", "title": "Other"}))
    root.children.insert(index + 3, XmlElement("blockContainer", {"id": "empty-1"})).children.append(
        XmlElement("paragraph", {})
    )
    return doc, ids


def test_docs_only_blocks_and_empty_paragraphs_are_kept_when_their_markdown_is() -> None:
    doc, ids = _docs_only_document()
    section = blocknote.blocks_to_markdown(blocknote.read_blocks(doc)[1:])
    assert section == "before\n\nCareful\n\nsee [Other](/docs/d-1/)\n\nafter\n"
    change = replace_section(doc, ids["S"], section.replace("after", "after, edited"))
    assert change.updated == [ids["after"]] and "callout-1" in change.kept and "link-1" in change.kept
    fragment = doc.get(DOCUMENT_FRAGMENT, type=XmlFragment)
    assert "interlinkingLinkInline" in str(fragment) and "callout" in str(fragment)
    change = replace_section(doc, ids["S"], "before\n\nafter, edited\n")
    assert sorted(change.deleted) == ["callout-1", "link-1"]
    assert [block.id for block in blocknote.read_blocks(doc)][1:] == [ids["before"], "empty-1", ids["after"]]


def test_refusals_write_nothing() -> None:
    doc = _doc()
    ids = _ids(doc)
    before = doc.get_update()
    for heading_id, markdown, error in [
        (ids["intro"], "x", InvalidInput),  # not a heading
        ("no-such-block", "x", BlockNotFound),
        (ids["Plan"], "## Another section\n", InvalidInput),  # would end the section
        (ids["Plan"], "# Higher\n", InvalidInput),
        (ids["Plan"], "- " * 40 + "x", InvalidInput),
        (42, "x", InvalidInput),
    ]:
        with pytest.raises(error):
            replace_section(doc, heading_id, markdown)  # type: ignore[arg-type]
    assert doc.get_update() == before
    replace_section(doc, ids["Plan"], "### A deeper heading is fine\n")


def test_a_heading_inside_columns_is_refused() -> None:
    doc = _doc("intro\n")
    root = root_group(doc)
    assert root is not None
    column = root.children.append(XmlElement("columnList", {"id": "c"})).children.append(
        XmlElement("column", {})
    )
    column.children.append(XmlElement("blockContainer", {"id": "h"})).children.append(
        XmlElement("heading", {"level": 2})
    ).children.append(XmlText("In a column"))
    with pytest.raises(UnsupportedBlockType):
        replace_section(doc, "h", "x")


def _below_level_one(specs: list[BlockSpec]) -> list[BlockSpec]:
    return [
        replace(spec, props={"level": 2}) if spec.type == "heading" and spec.props["level"] == 1 else spec
        for spec in specs
    ]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(block_specs(), block_specs())
def test_after_a_replacement_the_section_reads_as_the_markdown(
    old: list[BlockSpec], new: list[BlockSpec]
) -> None:
    heading = BlockSpec("heading", "Section", {"level": 1})
    doc = written_document([heading, *_below_level_one(old), BlockSpec("heading", "End", {"level": 1})])
    before = blocknote.read_blocks(doc)
    markdown = blocknote.blocks_to_markdown(blocknote.read_blocks(written_document(_below_level_one(new))))
    change = replace_section(doc, before[0].id, markdown)
    after = blocknote.read_blocks(doc)
    assert (after[0].id, after[-1].id) == (before[0].id, before[-1].id)
    assert blocknote.blocks_to_markdown(after[1:-1]) == markdown
    ids_after = {block.id for top in after for block in top.walk()}
    assert set(change.kept) | set(change.updated) | set(change.inserted) <= ids_after
    assert not set(change.deleted) & ids_after
    if markdown == blocknote.blocks_to_markdown(before[1:-1]):
        assert not change.changed
