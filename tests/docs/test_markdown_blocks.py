"""The block-level markdown parser: each construct, the dialect's rules, and hostile input (a typed
``INVALID_INPUT`` naming the limit, or faithful text; never an exception of another kind)."""

from __future__ import annotations

import pytest

from elynav_nb.docs.markdown import syntax as markdown_syntax
from elynav_nb.docs.markdown.blocks import (
    MAX_BLOCKS,
    MAX_MARKDOWN_BYTES,
    MAX_NESTING_DEPTH,
    BlockSpec,
    TableSpec,
    parse_markdown,
    spec_key,
)
from elynav_nb.errors import InvalidInput


def shape(specs: tuple[BlockSpec, ...] | list[BlockSpec]) -> list[tuple[object, ...]]:
    return [(spec.type, spec.text, dict(spec.props), shape(spec.children)) for spec in specs]


def test_every_block_type() -> None:
    markdown = (
        "# One\n\n###### Six\n\nA *paragraph*\non two lines\n\n- bullet\n+ plus\n* star\n\n"
        "1. first\n2) second\n\n- [ ] open\n- [x] done\n\n> a quote\n> going on\n\n"
        '```python\nprint(1)\n\n```\n\n---\n\n![A cat](https://example.org/cat.png "The cat")\n'
    )
    assert shape(parse_markdown(markdown)) == [
        ("heading", "One", {"level": 1}, []),
        ("heading", "Six", {"level": 6}, []),
        ("paragraph", "A *paragraph*\non two lines", {}, []),
        ("bulletListItem", "bullet", {}, []),
        ("bulletListItem", "plus", {}, []),
        ("bulletListItem", "star", {}, []),
        ("numberedListItem", "first", {}, []),
        ("numberedListItem", "second", {}, []),
        ("checkListItem", "open", {"checked": False}, []),
        ("checkListItem", "done", {"checked": True}, []),
        ("quote", "a quote\ngoing on", {}, []),
        ("codeBlock", "print(1)\n", {"language": "python"}, []),
        ("divider", "", {}, []),
        ("image", "", {"name": "A cat", "url": "https://example.org/cat.png", "caption": "The cat"}, []),
    ]


def test_nesting_follows_indentation_for_every_block_type() -> None:
    markdown = "- a\n  - b\n    1. c\n- d\n\nParagraph\n\n  child paragraph\n\n  ```\n  code\n  ```\n"
    assert shape(parse_markdown(markdown)) == [
        (
            "bulletListItem",
            "a",
            {},
            [("bulletListItem", "b", {}, [("numberedListItem", "c", {}, [])])],
        ),
        ("bulletListItem", "d", {}, []),
        (
            "paragraph",
            "Paragraph",
            {},
            [("paragraph", "child paragraph", {}, []), ("codeBlock", "code", {"language": "text"}, [])],
        ),
    ]


def test_a_numbered_list_starting_past_one_gets_start_on_its_first_item_only() -> None:
    specs = parse_markdown("3. c\n4. d\n\ntext\n\n1. again\n")
    assert [(spec.type, dict(spec.props)) for spec in specs] == [
        ("numberedListItem", {"start": 3}),
        ("numberedListItem", {}),
        ("paragraph", {}),
        ("numberedListItem", {}),
    ]


def test_line_breaks_are_kept_and_a_backslash_always_continues_the_block() -> None:
    specs = parse_markdown("one\\\n# not a heading\\\n- not an item  \nlast\n")
    assert shape(specs) == [("paragraph", "one\n# not a heading\n- not an item\nlast", {}, [])]
    assert shape(parse_markdown("# Title\\\nsecond line\nparagraph\n")) == [
        ("heading", "Title\nsecond line", {"level": 1}, []),
        ("paragraph", "paragraph", {}, []),
    ]
    assert parse_markdown("ends with a break\\\n\nnext\n")[0].text == "ends with a break\n"


def test_what_interrupts_a_paragraph_follows_commonmark() -> None:
    assert [spec.type for spec in parse_markdown("text\n2. not a list\n- a list\n")] == [
        "paragraph",
        "bulletListItem",
    ]
    assert parse_markdown("text\n2. not a list\n")[0].text == "text\n2. not a list"
    assert [spec.type for spec in parse_markdown("text\n1. a list\n")] == ["paragraph", "numberedListItem"]
    assert shape(parse_markdown("Title\n===\n\nSub\n---\n")) == [
        ("heading", "Title", {"level": 1}, []),
        ("heading", "Sub", {"level": 2}, []),
    ]


def test_quotes_keep_their_text_and_split_on_empty_quote_lines() -> None:
    assert shape(parse_markdown("> - not a list\n> # nor a heading\n>\n> second quote\n>> nested\n")) == [
        ("quote", "- not a list\n# nor a heading", {}, []),
        ("quote", "second quote\nnested", {}, []),
    ]
    assert shape(parse_markdown(">\n")) == [("quote", "", {}, [])]
    assert shape(parse_markdown("> lazy\ncontinuation\n")) == [("quote", "lazy\ncontinuation", {}, [])]


def test_code_fences() -> None:
    assert parse_markdown("````md\n```\ninside\n```\n````\n")[0].text == "```\ninside\n```"
    assert parse_markdown("~~~\nx\n~~~\n")[0].props == {"language": "text"}
    assert parse_markdown("- item\n  ```js\n    indented\n  ```\n")[0].children[0].text == "  indented"
    assert shape(parse_markdown("```\nunclosed\n\n# still code\n")) == [
        ("codeBlock", "unclosed\n\n# still code\n", {"language": "text"}, [])
    ]
    assert shape(parse_markdown("- item\n  ```\n  code\nleaves the item\n")) == [
        ("bulletListItem", "item", {}, [("codeBlock", "code", {"language": "text"}, [])]),
        ("paragraph", "leaves the item", {}, []),
    ]


def test_tables() -> None:
    [table] = parse_markdown("| a | **b** | c \\| d |\n|:--|:-:|--:|\n| 1 | 2 |\n| 3 | 4 | 5 | 6 |\n")
    assert table.type == "table" and table.text == ""
    assert table.table == TableSpec(
        rows=(("a", "**b**", "c | d"), ("1", "2", ""), ("3", "4", "5")),
        alignments=("left", "center", "right"),
        header=True,
    )
    [headless] = parse_markdown("| | |\n|---|---|\n| x | y |\n")
    assert headless.table == TableSpec(rows=(("x", "y"),), alignments=("left", "left"), header=False)
    assert [spec.type for spec in parse_markdown("a | b\n---\n")] == ["heading"]  # 2 cells vs 1: setext
    assert [spec.type for spec in parse_markdown("|\n|\n")] == ["paragraph"]


def test_images_need_a_line_of_their_own_and_an_http_url() -> None:
    assert parse_markdown("![a](<https://e.org/a b.png>)\n")[0].props == {
        "name": "a",
        "url": "https://e.org/a b.png",
        "caption": "",
    }
    for text in ("![x](javascript:alert(1))", "![x](/relative.png)", "see ![x](https://e.org/x.png) here"):
        assert [spec.type for spec in parse_markdown(text)] == ["paragraph"]


def test_html_entities_and_reference_definitions_are_text() -> None:
    markdown = "<div><b>bold?</b></div>\n\n&amp; &#42;\n\n[ref]: https://example.org\n"
    assert [spec.text for spec in parse_markdown(markdown)] == [
        "<div><b>bold?</b></div>",
        "&amp; &#42;",
        "[ref]: https://example.org",
    ]


def test_control_characters_are_kept_nul_replaced_line_endings_normalized() -> None:
    [paragraph] = parse_markdown("a\x00b\x01\x07\x1b[31m\x0b\x0c\u2028c\r\nd\re")
    assert paragraph.text == "a\ufffdb\x01\x07\x1b[31m\x0b\x0c\u2028c\nd\ne"


@pytest.mark.parametrize(
    ("markdown", "limit"),
    [
        ("- " * 10_000 + "deep", "levels deep"),
        ("1. " * 10_000 + "deep", "levels deep"),
        ("\n".join("  " * level + "- x" for level in range(1_000)), "levels deep"),
        ("a" * (5 * 1024 * 1024), "bytes at once"),
        ("x\n\n" * (MAX_BLOCKS + 1), "more than"),
    ],
    ids=["bullets-on-one-line", "numbers-on-one-line", "indented-lines", "5MB-paste", "too-many-blocks"],
)
def test_hostile_input_gets_a_typed_error_naming_the_limit(markdown: str, limit: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        parse_markdown(markdown)
    assert raised.value.code == "INVALID_INPUT" and limit in str(raised.value)
    assert raised.value.details["limit"] in (MAX_NESTING_DEPTH, MAX_MARKDOWN_BYTES, MAX_BLOCKS)


def test_nesting_up_to_the_limit_is_accepted() -> None:
    with pytest.raises(InvalidInput):
        parse_markdown("- " * (MAX_NESTING_DEPTH + 1) + "too deep")
    specs = parse_markdown("- " * MAX_NESTING_DEPTH + "deepest")
    depth = 1
    spec = specs[0]
    while spec.children:
        spec = spec.children[0]
        depth += 1
    assert depth == MAX_NESTING_DEPTH and spec.text == "deepest"


def test_deep_quotes_are_read_as_one_quote() -> None:
    assert shape(parse_markdown(">" * 100_000 + " deep")) == [("quote", "deep", {}, [])]


def test_bad_types_and_surrogates_are_refused() -> None:
    with pytest.raises(InvalidInput):
        parse_markdown(b"# bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        parse_markdown("unpaired \ud800 surrogate")


def test_empty_markdown_has_no_block() -> None:
    assert parse_markdown("") == [] and parse_markdown("\n \n\t\n") == []


def test_spec_keys_compare_what_markdown_shows() -> None:
    [one, two, three] = parse_markdown("__bold__ text\n\n**bold** text\n\n**bold**  text\n")
    assert spec_key(one) == spec_key(two) != spec_key(three)
    [left, explicit] = parse_markdown("| a |\n|---|\n\n| a |\n|:--|\n")
    assert spec_key(left) == spec_key(explicit)


@pytest.mark.parametrize(
    "text",
    [
        "# not a heading",
        "> not a quote",
        "- not an item",
        "+ not an item",
        "2020. not an item",
        "1) not an item",
        "---",
        "* * *",
        "```not a fence",
        "~~~ nor this",
        "![not](https://an.image/x.png)",
    ],
)
def test_escape_block_start_makes_a_paragraph_read_as_itself(text: str) -> None:
    escaped = markdown_syntax.escape_block_start(text)
    assert escaped != text and not markdown_syntax.line_starts_block(escaped)
    [paragraph] = parse_markdown(escaped)
    assert paragraph.type == "paragraph"


def test_escape_of_a_checkbox_in_a_bullet_item() -> None:
    [item] = parse_markdown("- " + markdown_syntax.escape_block_start("[x] not checked", bullet=True))
    assert item.type == "bulletListItem" and item.text == "\\[x] not checked"


def test_image_and_table_lines_render_back_to_what_they_read() -> None:
    for name, url, caption in [
        ("a [b] \\", "https://e.org/(x) y.png", 'say "hi"'),
        ("", "https://e.org/x", ""),
    ]:
        image = markdown_syntax.match_image_line(markdown_syntax.render_image(name, url, caption))
        assert image == markdown_syntax.ImageLine(name, url, caption)
    rows = [["a|b", "c\\\\|d"], ["", "x"]]  # canonical: an escaped backslash, then a pipe
    rendered = markdown_syntax.render_table(rows, ["center", "right"], header=True)
    [table] = parse_markdown(rendered)
    assert table.table is not None and table.table.rows == (("a|b", "c\\\\|d"), ("", "x"))
    assert table.table.alignments == ("center", "right")
