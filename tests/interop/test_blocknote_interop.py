"""Our BlockNote writer and reader against @blocknote/server-util 0.51.4 (the Docs v5.4.1 pin)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pycrdt import Doc, XmlElement, XmlFragment, XmlText

from elynav_nb.docs import blocknote
from elynav_nb.docs.markdown.inline import InlineRun, render_inline
from tests.interop.conftest import NodeRunner

pytestmark = pytest.mark.interop


def _update_of(doc: Doc) -> str:
    return base64.b64encode(doc.get_update()).decode()


def _doc_from(update_b64: str) -> Doc:
    doc = Doc()
    doc.apply_update(base64.b64decode(update_b64))
    return doc


def _every_writable_block() -> Doc:
    doc = Doc()
    last = blocknote.insert_block(doc, "Title with **bold**", "heading", level=2)
    entries: list[tuple[str, str, dict[str, Any]]] = [
        (
            "plain **bold** *italic* ~~strike~~ `code` and [a link](https://example.org/a?b=1)",
            "paragraph",
            {},
        ),
        ("first line\nsecond line", "paragraph", {}),
        ("Level one", "heading", {"level": 1}),
        ("Level three *it*", "heading", {"level": 3}),
        ("a bullet", "bulletListItem", {}),
        ("a number", "numberedListItem", {}),
        ("done", "checkListItem", {"checked": True}),
        ("to do", "checkListItem", {}),
        ("a quote", "quote", {}),
        ("print('hé')\nx = 1", "codeBlock", {"language": "python"}),
        ("accents: é 日本 😀 **gras é**", "paragraph", {}),
    ]
    for text, block_type, options in entries:
        last = blocknote.insert_block(doc, text, block_type, after=last, **options)
    return doc


EXPECTED_MARKDOWN = (
    "## Title with **bold**\n\n"
    "plain **bold** *italic* ~~strike~~ `code` and [a link](https://example.org/a?b=1)\n\n"
    "first line\\\nsecond line\n\n"
    "# Level one\n\n"
    "### Level three *it*\n\n"
    "* a bullet\n\n"
    "1. a number\n\n"
    "* [x] done\n"
    "* [ ] to do\n\n"
    "> a quote\n\n"
    "```python\nprint('hé')\nx = 1\n```\n\n"
    "accents: é 日本 😀 **gras é**\n"
)


def _edited_document() -> Doc:
    doc = Doc()
    first = blocknote.insert_block(doc, "one **two** three")
    second = blocknote.insert_block(doc, "keep\nthis", after=first)
    third = blocknote.insert_block(doc, "code", "codeBlock", after=second)
    blocknote.update_block_text(doc, first, "one *two* three [four](https://x.org)\nnew line")
    blocknote.update_block_text(doc, second, "keep this joined")
    blocknote.update_block_text(doc, third, "code\nmore")
    return doc


def _emptied_document() -> Doc:
    doc = Doc()
    first = blocknote.insert_block(doc, "only")
    blocknote.delete_block(doc, first)
    return doc


def _invalid_document() -> Doc:
    doc = Doc()
    fragment = doc.get(blocknote.DOCUMENT_FRAGMENT, type=XmlFragment)
    with doc.transaction():
        root = fragment.children.append(XmlElement("blockGroup"))
        container = root.children.append(
            XmlElement("blockContainer", {"id": "11111111-1111-4111-8111-111111111111"})
        )
        paragraph = container.children.append(XmlElement("paragraph", {}))
        text = paragraph.children.append(XmlText())
        text.insert(0, "bad mark", {"sparkle": {}})
        root.children.append(XmlElement("blockContainer", {"id": "22222222-2222-4222-8222-222222222222"}))
        odd = root.children.append(
            XmlElement("blockContainer", {"id": "33333333-3333-4333-8333-333333333333"})
        )
        odd.children.append(XmlElement("notABlock", {}))
    return doc


def test_python_writer_passes_the_validity_oracle(node_peer: NodeRunner) -> None:
    documents = [_every_writable_block(), _edited_document(), _emptied_document(), _invalid_document()]
    results = node_peer("oracle.mjs", {"updates": [_update_of(doc) for doc in documents]})["results"]
    written, edited, emptied, invalid = results

    assert written["ysync_transactions"] == 0
    assert written["markdown"] == EXPECTED_MARKDOWN
    heading = written["blocks"][0]
    assert heading["type"] == "heading" and heading["props"]["level"] == 2
    assert heading["content"][1] == {"type": "text", "text": "bold", "styles": {"bold": True}}
    link = [item for item in written["blocks"][1]["content"] if item["type"] == "link"][0]
    assert link["href"] == "https://example.org/a?b=1"
    assert written["blocks"][7]["props"]["checked"] is True
    assert written["blocks"][10]["props"]["language"] == "python"
    # the Python reader agrees with BlockNote on the very same state
    python_blocks = blocknote.read_blocks(_every_writable_block())
    assert [block.type for block in python_blocks] == [block["type"] for block in written["blocks"]]

    assert edited["ysync_transactions"] == 0
    assert edited["markdown"] == (
        "one *two* three [four](https://x.org)\\\nnew line\n\nkeep this joined\n\n```text\ncode\nmore\n```\n"
    )
    assert emptied["ysync_transactions"] == 0
    assert [block["type"] for block in emptied["blocks"]] == ["paragraph"]

    assert invalid["ysync_transactions"] > 0  # the oracle does catch invalid content


def _runs_from_blocknote_content(content: list[dict[str, Any]]) -> list[InlineRun]:
    runs: list[InlineRun] = []
    for item in content:
        if item["type"] == "text":
            styles = item.get("styles", {})
            runs.append(
                InlineRun(
                    item["text"],
                    bold=bool(styles.get("bold")),
                    italic=bool(styles.get("italic")),
                    strike=bool(styles.get("strike")),
                    code=bool(styles.get("code")),
                )
            )
        elif item["type"] == "link":
            for inner in _runs_from_blocknote_content(item["content"]):
                runs.append(
                    InlineRun(inner.text, inner.bold, inner.italic, inner.strike, inner.code, item["href"])
                )
    return runs


def _assert_same_blocks(python_blocks: list[blocknote.Block], node_blocks: list[dict[str, Any]]) -> None:
    assert len(python_blocks) == len(node_blocks)
    for ours, theirs in zip(python_blocks, node_blocks, strict=True):
        assert ours.id == theirs["id"]
        assert ours.type == theirs["type"]
        assert ours.props == theirs["props"], ours.type
        if isinstance(theirs.get("content"), list):
            if ours.type == "codeBlock":
                assert ours.text == "".join(item["text"] for item in theirs["content"])
            else:
                assert ours.text == render_inline(_runs_from_blocknote_content(theirs["content"]))
        _assert_same_blocks(list(ours.children), theirs["children"])


BLOCKNOTE_MARKDOWN = """# Heading one **bold**

## Heading two *italic*

### Heading three ~~strike~~

Paragraph with **bold**, *italic*, ~~strike~~, `code`, [a link](https://example.org/x) and ***both***.

Bold with trailing space: **bold **then text, and a hard\\
break.

- bullet
  - nested bullet
    - deeper
1. first
2. second
- [x] checked
- [ ] unchecked

> quoted *words*

```js
const a = "`x`";
```
"""


BLOCKNOTE_BLOCKS = [
    {
        "type": "heading",
        "props": {"level": 4},
        "content": [{"type": "text", "text": "Level four", "styles": {}}],
    },
    {
        "type": "paragraph",
        "props": {"textColor": "red", "textAlignment": "center"},
        "content": [
            {"type": "text", "text": "coloured ", "styles": {"textColor": "blue", "underline": True}},
            {"type": "text", "text": "bold code", "styles": {"bold": True, "code": True}},
            {"type": "text", "text": " end", "styles": {"backgroundColor": "yellow"}},
        ],
    },
    {"type": "paragraph", "content": []},
    {"type": "heading", "props": {"level": 3, "isToggleable": True}, "content": "Toggle heading"},
    {"type": "toggleListItem", "content": "toggle"},
    {"type": "divider"},
    {
        "type": "paragraph",
        "content": [
            {"type": "text", "text": "typed ", "styles": {}},
            {"type": "text", "text": "bold ", "styles": {"bold": True}},
            {"type": "text", "text": "then", "styles": {}},
        ],
    },
]


def test_blocknote_written_content_is_read_right(node_peer: NodeRunner) -> None:
    results = node_peer(
        "blocknote_writer.mjs",
        {"documents": [{"markdown": BLOCKNOTE_MARKDOWN}, {"blocks": BLOCKNOTE_BLOCKS}]},
    )["results"]
    from_markdown, from_blocks = results

    python_blocks = blocknote.read_blocks(_doc_from(from_markdown["update"]))
    _assert_same_blocks(python_blocks, from_markdown["blocks"])
    assert [block.props.get("level") for block in python_blocks[:3]] == [1, 2, 3]
    assert all(isinstance(block.props["level"], int) for block in python_blocks[:3])
    assert python_blocks[0].text == "Heading one **bold**"
    assert python_blocks[3].text == (
        "Paragraph with **bold**, *italic*, ~~strike~~, `code`, [a link](https://example.org/x) and ***both***."
    )
    # CommonMark (BlockNote's parser) keeps "**bold **then" literal, and keeps the space after the break
    assert (
        python_blocks[4].text == "Bold with trailing space: \\*\\*bold \\*\\*then text, and a hard\n break."
    )
    assert python_blocks[5].children[0].children[0].text == "deeper"
    assert python_blocks[-1].type == "codeBlock" and python_blocks[-1].text == 'const a = "`x`";'
    assert not any(block.opaque for top in python_blocks for block in top.walk())

    python_blocks = blocknote.read_blocks(_doc_from(from_blocks["update"]))
    _assert_same_blocks(python_blocks, from_blocks["blocks"])
    assert python_blocks[1].text == "coloured **`bold code`** end"
    assert python_blocks[1].props["textColor"] == "red"
    assert python_blocks[5].type == "divider" and python_blocks[5].opaque
    assert python_blocks[6].text == "typed **bold** then"  # a bold trailing space, as people type it


def test_python_edits_keep_marks_markdown_cannot_show(node_peer: NodeRunner) -> None:
    written = node_peer("blocknote_writer.mjs", {"documents": [{"blocks": BLOCKNOTE_BLOCKS}]})["results"][0]
    doc = _doc_from(written["update"])
    block_id = blocknote.read_blocks(doc)[1].id
    blocknote.update_block_text(doc, block_id, "coloured **`bold code`** end, edited")
    result = node_peer("oracle.mjs", {"updates": [_update_of(doc)]})["results"][0]
    assert result["ysync_transactions"] == 0
    content = result["blocks"][1]["content"]
    assert content[0]["styles"] == {"textColor": "blue", "underline": True}
    assert content[-1]["text"].endswith("end, edited")
    assert content[-1]["styles"] == {"backgroundColor": "yellow"}
