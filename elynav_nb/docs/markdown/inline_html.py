"""Inline markdown -> safe HTML, for showing a block's text in a notebook.

Where it sits: a pure layer beside ``markdown.inline`` (no I/O, no pycrdt). ``DocsSession._repr_html_``,
which the live view widget (``elynav_nb.widgets.docs_view``) renders, calls ``inline_markdown_to_html``
on each ``Block.text``, so ``Ordre du **jour**`` shows "jour" in bold instead of raw asterisks.

How data flows::

    Block.text (inline markdown, untrusted: anyone who can edit the document wrote it)
        -> parse_inline -> InlineRun(text, bold, italic, strike, code, link)
        -> each run's text html-escaped, wrapped in <a>, <strong>, <em>, <s>, <code> as marked

Everything a document holds is escaped: no tag, attribute or entity from the text reaches the page.
Links become ``<a>`` only for ``http``, ``https`` and ``mailto`` addresses (``javascript:`` and other
schemes stay plain text), with the address escaped as an attribute value. A newline becomes ``<br>``.
"""

from __future__ import annotations

import html
from typing import Final

from elynav_nb.docs.markdown.inline import InlineRun, parse_inline

__all__ = ["inline_markdown_to_html", "safe_link_target"]

_SAFE_LINK_SCHEMES: Final = ("http://", "https://", "mailto:")


def safe_link_target(href: str) -> str | None:
    """``href`` if a page may link to it (http, https, mailto), else ``None``."""
    candidate = href.strip()
    if candidate.lower().startswith(_SAFE_LINK_SCHEMES):
        return candidate
    return None


def _run_html(run: InlineRun) -> str:
    piece = html.escape(run.text, quote=True).replace("\n", "<br>")
    if run.code:
        piece = f"<code>{piece}</code>"
    if run.strike:
        piece = f"<s>{piece}</s>"
    if run.italic:
        piece = f"<em>{piece}</em>"
    if run.bold:
        piece = f"<strong>{piece}</strong>"
    target = safe_link_target(run.link) if run.link is not None else None
    if target is not None:
        piece = f'<a href="{html.escape(target, quote=True)}" rel="noopener noreferrer" target="_blank">{piece}</a>'
    return piece


def inline_markdown_to_html(markdown: str) -> str:
    """The HTML of one block's inline markdown: marks as tags, every character of text escaped."""
    return "".join(_run_html(run) for run in parse_inline(markdown))
