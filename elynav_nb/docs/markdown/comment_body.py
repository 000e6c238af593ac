"""A Docs comment's body: BlockNote block JSON <-> inline markdown.

Where it sits: pure, under the threads client (``rest.threads``). Docs stores a comment's ``body``
as the JSON the comment editor produced (BlockNote's ``CommentBody``: a list of blocks, each
``{id, type, props, content, children}``, ``content`` a list of ``{"type": "text", "text",
"styles"}`` and ``{"type": "link", "href", "content": [...]}`` items; Docs'
``doc-comments/api/DocsThreadStore.tsx`` posts it unchanged). Agents and notebooks read and write
comments as inline markdown (``**bold**``, ``*italic*``, ``~~strike~~``, `` `code` ``,
``[link](url)``), one paragraph per line.

How data flows: ``body_from_markdown(text)`` -> ``parse_inline`` -> runs -> one paragraph block
per line, styles ``{"bold": true, ...}`` as BlockNote writes them; ``markdown_from_body(body)`` ->
each block's content items -> runs -> ``render_inline``, blocks joined by newlines. A body of
another shape (a list of something else, unknown items) is read for the text it holds; nothing in
it raises.
"""

from __future__ import annotations

import uuid
from typing import Any, Final

from elynav_nb.docs.markdown.inline import InlineRun, parse_inline, render_inline

__all__ = ["body_from_markdown", "markdown_from_body"]

_PARAGRAPH_PROPS: Final = {"textColor": "default", "backgroundColor": "default", "textAlignment": "left"}
_STYLES: Final = ("bold", "italic", "strike", "code")


def _styles(run: InlineRun) -> dict[str, bool]:
    return {name: True for name in _STYLES if getattr(run, name)}


def _content(runs: list[InlineRun]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for run in runs:
        text_item = {"type": "text", "text": run.text, "styles": _styles(run)}
        if run.link is not None:
            items.append({"type": "link", "href": run.link, "content": [text_item]})
        else:
            items.append(text_item)
    return items


def body_from_markdown(text: str) -> list[dict[str, Any]]:
    """One BlockNote paragraph per line of ``text`` (inline markdown), as the comment editor writes."""
    blocks = []
    for line in text.split("\n"):
        blocks.append(
            {
                "id": str(uuid.uuid4()),
                "type": "paragraph",
                "props": dict(_PARAGRAPH_PROPS),
                "content": _content(parse_inline(line)) if line else [],
                "children": [],
            }
        )
    return blocks


def _runs(items: object, link: str | None = None) -> list[InlineRun]:
    runs: list[InlineRun] = []
    if not isinstance(items, list):
        return runs
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "link" and isinstance(item.get("href"), str):
            runs.extend(_runs(item.get("content"), item["href"]))
            continue
        text = item.get("text")
        if not isinstance(text, str) or not text:
            continue
        styles = item.get("styles") if isinstance(item.get("styles"), dict) else {}
        assert isinstance(styles, dict)
        runs.append(
            InlineRun(
                text,
                bool(styles.get("bold")),
                bool(styles.get("italic")),
                bool(styles.get("strike")),
                bool(styles.get("code")),
                link,
            )
        )
    return runs


def markdown_from_body(body: object) -> str:
    """The inline markdown of a comment body: its blocks' text, one line each (children after)."""
    lines: list[str] = []
    pending = list(body) if isinstance(body, list) else [body]
    while pending:
        block = pending.pop(0)
        if not isinstance(block, dict):
            if isinstance(block, str):
                lines.append(block)
            continue
        lines.append(render_inline(_runs(block.get("content"))))
        children = block.get("children")
        if isinstance(children, list):
            pending[0:0] = children
    return "\n".join(lines).strip("\n")
