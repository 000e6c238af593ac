"""``elynav_nb._text_diff.common_ends``: the shared start and end that Docs and live notebooks keep."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from elynav_nb._text_diff import common_ends


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("", "", (0, 0)),
        ("same", "same", (4, 0)),
        ("hello world", "hello brave world", (6, 5)),
        ("aaa", "aa", (2, 0)),  # the suffix never counts a character the prefix already kept
        ("abc", "xyz", (0, 0)),
        ("café au lait", "café noir", (5, 0)),
        ("x = 1\ny = 2\n", "x = 1\ny = 3\n", (10, 1)),
    ],
)
def test_common_ends(old: str, new: str, expected: tuple[int, int]) -> None:
    prefix, suffix = common_ends(old, new)
    assert (prefix, suffix) == expected
    assert prefix + suffix <= min(len(old), len(new))
    assert old[:prefix] == new[:prefix]
    assert old[len(old) - suffix :] == new[len(new) - suffix :]


@given(st.text(alphabet="ab\né", max_size=40), st.text(alphabet="ab\né", max_size=40))
def test_common_ends_are_the_longest_shared_start_and_end(old: str, new: str) -> None:
    prefix, suffix = common_ends(old, new)
    assert old[:prefix] == new[:prefix] and prefix + suffix <= min(len(old), len(new))
    assert prefix == min(len(old), len(new)) or old[prefix] != new[prefix]
    assert old[len(old) - suffix :] == new[len(new) - suffix :]
    rest = min(len(old), len(new)) - prefix
    assert suffix == rest or old[len(old) - 1 - suffix] != new[len(new) - 1 - suffix]
