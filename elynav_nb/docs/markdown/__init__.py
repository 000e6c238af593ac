"""Markdown for Docs: inline markdown for a block's text, block markdown for whole documents.

Where it sits: the pure markdown layer of ``elynav_nb.docs`` (no I/O, no pycrdt). ``inline``
parses and renders inline markdown (``**bold**``, ``*italic*``, ``~~strike~~``, `` `code` ``,
``[link](url)``) as ``InlineRun`` s; ``blocks`` parses block markdown into ``BlockSpec`` trees;
``render`` writes ``Block`` records back as markdown (same dialect); ``syntax`` holds the shared
rules (escapes, tables, images); ``inline_html`` shows inline markdown as HTML;
``_inline_pieces`` is the reader's fast path.
"""

from elynav_nb.docs.markdown.blocks import BlockSpec, parse_markdown
from elynav_nb.docs.markdown.inline import InlineRun, normalize, parse_inline, render_inline
from elynav_nb.docs.markdown.render import blocks_to_markdown

__all__ = [
    "BlockSpec",
    "InlineRun",
    "blocks_to_markdown",
    "normalize",
    "parse_inline",
    "parse_markdown",
    "render_inline",
]
