"""``elynav_nb._text_diff.common_ends``: the shared start and end that Docs and live notebooks keep."""

from __future__ import annotations

import pytest

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
