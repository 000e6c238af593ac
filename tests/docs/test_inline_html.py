"""``inline_markdown_to_html``: marks become tags, every character of text is escaped, unsafe links
stay text."""

from __future__ import annotations

import pytest

from elynav_nb.docs.markdown.inline_html import inline_markdown_to_html, safe_link_target


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("", ""),
        ("plain", "plain"),
        ("Ordre du **jour 1**", "Ordre du <strong>jour 1</strong>"),
        ("*italique* et ~~barré~~", "<em>italique</em> et <s>barré</s>"),
        ("`a < b`", "<code>a &lt; b</code>"),
        ("***both***", "<strong><em>both</em></strong>"),
        ("line one\nline two", "line one<br>line two"),
        ("2 * 3 = 6", "2 * 3 = 6"),
        (r"\*not italic\*", "*not italic*"),
    ],
)
def test_marks_become_tags(markdown: str, expected: str) -> None:
    assert inline_markdown_to_html(markdown) == expected


def test_text_is_escaped() -> None:
    rendered = inline_markdown_to_html('<b onclick="x">&amp;</b> **<i>**')
    assert rendered == "&lt;b onclick=&quot;x&quot;&gt;&amp;amp;&lt;/b&gt; <strong>&lt;i&gt;</strong>"


def test_links_are_kept_only_for_safe_schemes() -> None:
    assert inline_markdown_to_html("[site](https://example.org/?a=1&b=2)") == (
        '<a href="https://example.org/?a=1&amp;b=2" rel="noopener noreferrer" target="_blank">site</a>'
    )
    assert inline_markdown_to_html("[x](javascript:alert(1))") == "x"
    assert inline_markdown_to_html("[**x**](data:text/html,hi)") == "<strong>x</strong>"
    assert safe_link_target(" MAILTO:a@example.org ") == "MAILTO:a@example.org"
    assert safe_link_target("JavaScript:alert(1)") is None
    assert safe_link_target("/relative") is None
