"""Hypothesis strategies for whole-markdown tests: random block specs of every supported type (text
made of markdown markers, escapes, emoji and line breaks; tables, images, code, nesting), and a
document written from them with ``blocknote.builder``."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from pycrdt import Doc

from elynav_nb.docs.blocknote._yxml_writer import writer_for
from elynav_nb.docs.blocknote.builder import prepare_blocks, write_blocks
from elynav_nb.docs.blocknote.schema import DOCUMENT_FRAGMENT
from elynav_nb.docs.markdown.blocks import BlockSpec, TableSpec
from elynav_nb.docs.markdown.inline import InlineRun, render_inline

_CHARACTERS = list("ab Z é日😀<>&\"'*_`[]~\\|#>-+.!():=\t") + ["1.", "- ", "# ", "> ", "```", "|-|", "\\\n"]
_RUN_TEXT = st.lists(st.sampled_from(_CHARACTERS), min_size=1, max_size=5).map("".join)
_HREF = st.sampled_from(["https://example.org/a", "https://e.org/x?y=1&z=(2)", "mailto:a@b.c", "/docs/x/"])


@st.composite
def _runs(draw: st.DrawFn, *, newlines: bool) -> list[InlineRun]:
    runs: list[InlineRun] = []
    for _ in range(draw(st.integers(1, 4))):
        text = draw(_RUN_TEXT)
        if not newlines:  # a table cell: one line, and no backslash that could end up before a pipe
            text = text.replace("\n", " ").replace("\\", "/")  # (a pipe table cannot write it in code)
        link = draw(st.none() | _HREF)
        bold, italic, strike, code = (draw(st.booleans()) for _ in range(4))
        runs.append(InlineRun(text, bold, italic, strike, code and "\n" not in text, link))
    return runs


def _tidy(text: str, *, keep_empty: bool) -> str:
    """What markdown keeps: no whitespace at the start of a line nor at the end of the text."""
    lines = [line.lstrip(" \t") for line in text.split("\n")]
    tidy = "\n".join(lines).rstrip(" \t")
    return tidy if tidy or keep_empty else "x"


@st.composite
def _inline_text(draw: st.DrawFn, *, newlines: bool = True, keep_empty: bool = True) -> str:
    runs = draw(_runs(newlines=newlines))
    plain = _tidy("".join(run.text for run in runs), keep_empty=keep_empty)
    # re-cut the tidied characters into runs with the drawn marks, then canonical markdown
    tidied: list[InlineRun] = []
    position = 0
    for run in runs:
        piece = plain[position : position + len(run.text)]
        position += len(run.text)
        tidied.append(
            InlineRun(piece, run.bold, run.italic, run.strike, run.code and "\n" not in piece, run.link)
        )
    if position < len(plain):
        tidied.append(InlineRun(plain[position:]))
    return render_inline(tidied)


_LANGUAGE = st.sampled_from(["text", "python", "js", "c++"])
_CODE = st.lists(
    st.sampled_from(["x = 1", "  indented", "", "```", "````x", "~~~", "\t#", "\\", "| a |"]), max_size=4
).map("\n".join)


@st.composite
def _table(draw: st.DrawFn) -> TableSpec:
    columns = draw(st.integers(1, 3))
    rows = draw(
        st.lists(
            st.lists(_inline_text(newlines=False), min_size=columns, max_size=columns).map(
                lambda cells: tuple(cell.strip(" \t") for cell in cells)
            ),
            min_size=1,
            max_size=3,
        )
    )
    header = draw(st.booleans()) and any(rows[0])
    alignments = tuple(
        draw(st.lists(st.sampled_from(["left", "center", "right"]), min_size=columns, max_size=columns))
    )
    return TableSpec(rows=tuple(rows), alignments=alignments, header=header)


_IMAGE_PROPS = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["", "a cat", "[x] \\ y", "é😀"]),
        "url": st.sampled_from(["https://e.org/a.png", "http://e.org/a (1).png", "https://e.org/<x>"]),
        "caption": st.sampled_from(["", 'say "hi"', "(c) 2024"]),
    }
)


@st.composite
def _spec(draw: st.DrawFn, depth: int, previous: str | None) -> BlockSpec:
    block_type = draw(
        st.sampled_from(
            [
                "paragraph",
                "heading",
                "bulletListItem",
                "numberedListItem",
                "checkListItem",
                "quote",
                "codeBlock",
                "divider",
                "image",
                "table",
            ]
        )
    )
    props: dict[str, Any] = {}
    text = ""
    table = None
    if block_type == "paragraph":
        text = draw(_inline_text(keep_empty=False))
    elif block_type in ("heading", "bulletListItem", "numberedListItem", "checkListItem", "quote"):
        text = draw(_inline_text())
    if block_type == "heading":
        props["level"] = draw(st.integers(1, 6))
    elif block_type == "checkListItem":
        props["checked"] = draw(st.booleans())
    elif block_type == "numberedListItem" and previous != "numberedListItem" and draw(st.booleans()):
        props["start"] = draw(st.integers(2, 12))
    elif block_type == "codeBlock":
        props["language"] = draw(_LANGUAGE)
        text = draw(_CODE)
    elif block_type == "image":
        props = draw(_IMAGE_PROPS)
    elif block_type == "table":
        table = draw(_table())
    children: tuple[BlockSpec, ...] = ()
    if depth < 2 and draw(st.integers(0, 3)) == 0:
        children = tuple(draw(block_specs(depth + 1)))
    return BlockSpec(block_type, text, props, children, table)


@st.composite
def block_specs(draw: st.DrawFn, depth: int = 0) -> list[BlockSpec]:
    specs: list[BlockSpec] = []
    previous: str | None = None
    for _ in range(draw(st.integers(1, 5))):
        spec = draw(_spec(depth, previous))
        specs.append(spec)
        previous = spec.type
    return specs


def written_document(specs: list[BlockSpec]) -> Doc[Any]:
    doc: Doc[Any] = Doc()
    with doc.transaction() as transaction:
        writer = writer_for(transaction)
        root = writer.element(writer.fragment(doc, DOCUMENT_FRAGMENT), 0, "blockGroup", {})
        write_blocks(writer, root, 0, prepare_blocks(specs))
    return doc
