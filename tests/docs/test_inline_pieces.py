"""The reader's inline path (``render_pieces``) writes simple layouts directly and must give exactly
what ``render_inline`` gives, for any pieces: the property tests draw adversarial characters
(markdown markers, ``<&"'>``, emoji, newlines, odd hrefs) and check that the direct path is taken often."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elynav_nb.docs.markdown._inline_pieces import (
    MARK_BOLD,
    MARK_CODE,
    MARK_ITALIC,
    MARK_STRIKE,
    MarkedPiece,
    _render_simple,
    render_pieces,
)
from elynav_nb.docs.markdown.inline import InlineRun, parse_inline, render_inline


def _runs(pieces: list[MarkedPiece]) -> list[InlineRun]:
    return [
        InlineRun(
            text,
            bold=bool(bits & MARK_BOLD),
            italic=bool(bits & MARK_ITALIC),
            strike=bool(bits & MARK_STRIKE),
            code=bool(bits & MARK_CODE),
            link=link,
        )
        for text, bits, link in pieces
    ]


@pytest.mark.parametrize(
    ("pieces", "markdown"),
    [
        (
            [("plain, ", 0, None), ("bold", MARK_BOLD, None), (" and ", 0, None), ("it", MARK_ITALIC, None)],
            "plain, **bold** and *it*",
        ),
        (
            [("a ", 0, None), ("x*y", MARK_CODE, None), (" ", 0, None), ("gone", MARK_STRIKE, None)],
            "a `x*y` ~~gone~~",
        ),
        (
            [("see ", 0, None), ("the site", 0, "https://example.org/a?b=1&c=<")],
            "see [the site](<https://example.org/a?b=1&c=\\<>)",
        ),
        (
            [("see ", 0, None), ("the site", 0, "https://example.org/a?b=1")],
            "see [the site](https://example.org/a?b=1)",
        ),
        (
            [("bo", MARK_BOLD, None), ("ld", MARK_BOLD, None)],
            "**bold**",
        ),  # neighbours with the same marks join
        ([("", MARK_BOLD, None), ("x", 0, None)], "x"),
        ([], ""),
    ],
)
def test_examples(pieces: list[MarkedPiece], markdown: str) -> None:
    assert render_pieces(pieces) == markdown == render_inline(_runs(pieces))


@pytest.mark.parametrize(
    "pieces",
    [
        [("a", MARK_BOLD, None), ("b", MARK_ITALIC, None)],  # two marked runs side by side
        [("a", MARK_BOLD | MARK_ITALIC, None)],  # two marks on one run
        [("a ", MARK_BOLD, None)],  # whitespace at a mark's edge moves out
        [("2 * 3", 0, None)],  # a markdown character
        [("line\nbreak", 0, None)],
        [("x", 0, "u v")],  # an href that needs brackets
        [("x", MARK_BOLD, "https://x.org")],
        [("a`b", MARK_CODE, None)],
        [(" padded ", MARK_CODE, None)],
        [('<b> & "q"', 0, None), ("😀", MARK_BOLD, None)],
    ],
)
def test_layouts_outside_the_direct_path_give_render_inline(pieces: list[MarkedPiece]) -> None:
    simple = _render_simple(pieces)
    if simple is not None:  # only "<b> & ..." is simple: those characters are not markdown
        assert pieces[0][0].startswith("<b>")
    assert render_pieces(pieces) == render_inline(_runs(pieces))
    assert parse_inline(render_pieces(pieces)) == parse_inline(render_inline(_runs(pieces)))


_ADVERSARIAL_TEXT = st.text(
    alphabet=st.sampled_from(list("ab é日😀 \t\u00a0*_~`[]\\()!<>&\"':#\n-")), max_size=6
)
_MOSTLY_SIMPLE_TEXT = st.text(alphabet=st.sampled_from(list("abé日😀 \u00a0.,:!?#<>&\"'-+1)(/")), max_size=6)
_HREF = st.text(alphabet=st.sampled_from(list("h:/.é😀?=#&+-_*~[]`!() <>\\\n")), max_size=6)
_BITS = st.sampled_from(
    [
        0,
        0,
        0,
        MARK_BOLD,
        MARK_ITALIC,
        MARK_STRIKE,
        MARK_CODE,
        MARK_BOLD | MARK_ITALIC,
        MARK_CODE | MARK_STRIKE,
    ]
)


def _pieces(text: st.SearchStrategy[str]) -> st.SearchStrategy[list[MarkedPiece]]:
    piece = st.tuples(text, _BITS, st.one_of(st.none(), st.none(), st.none(), _HREF))
    return st.lists(piece, max_size=7)


@settings(max_examples=800, deadline=None)
@given(_pieces(_ADVERSARIAL_TEXT))
def test_adversarial_pieces_render_as_render_inline(pieces: list[MarkedPiece]) -> None:
    assert render_pieces(pieces) == render_inline(_runs(pieces))


@settings(max_examples=800, deadline=None)
@given(_pieces(_MOSTLY_SIMPLE_TEXT))
def test_simple_pieces_render_as_render_inline(pieces: list[MarkedPiece]) -> None:
    assert render_pieces(pieces) == render_inline(_runs(pieces))


def test_the_direct_path_is_taken_for_most_simple_pieces() -> None:
    """Guards the property above against testing only the fallback."""
    taken = 0

    @settings(max_examples=400, deadline=None, database=None, derandomize=True)
    @given(_pieces(_MOSTLY_SIMPLE_TEXT))
    def count(pieces: list[MarkedPiece]) -> None:
        nonlocal taken
        if _render_simple(pieces) is not None:
            taken += 1

    count()
    assert taken >= 40  # 64 of 400 when written
