"""What two texts share at their ends: the first step of every in-place text edit.

Where it sits: a package-level private module, because capabilities do not import each other.
Docs (``docs/blocknote/_text_diff.py``, ``diff_opcodes``) and live notebooks
(``notebook/cells.py``, ``text_edits``) both keep a text's unchanged start and end as they are, and
diff only the middle, so that the characters a person is typing beside us are never rewritten.
Pure: strings in, numbers out; no I/O, no pycrdt.
"""

from __future__ import annotations

__all__ = ["common_ends"]


def common_ends(old: str, new: str) -> tuple[int, int]:
    """``(prefix, suffix)``: how many characters ``old`` and ``new`` share at their start, then how
    many they share at their end in what the prefix leaves (the two never overlap).

    So ``old[prefix:len(old) - suffix]`` became ``new[prefix:len(new) - suffix]``.
    """
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    return prefix, suffix
