"""``InlineRun`` list -> inline markdown that reads back to the same runs, as ``markdown.inline`` says.

Where it sits: internal to ``docs/markdown``, behind ``markdown.inline.render_inline``; the reader
(``blocknote.reader`` through ``_inline_pieces``) renders every block's runs with it, so what it
has rendered is remembered (``clear_render_cache`` forgets). Pure: runs in, a string out.

How data flows::

    runs -> merged; plain text with nothing to escape is returned as it is
         -> whitespace at the edges of bold/italic/strike moved outside the mark
         -> written with ``*`` italics, then with every special character escaped, then ``_``
            italics: the first layout that ``parse_inline`` reads back to the same runs wins
         -> none does: the marks that cannot be shown are dropped (text is never lost)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from elynav_nb.docs.markdown._inline_parse import (
    ASCII_PUNCTUATION,
    MARKDOWN_SPECIAL_CHARACTERS,
    is_whitespace,
    is_word_character,
    parse_inline,
)
from elynav_nb.docs.markdown.inline_runs import STYLE_MARKS, InlineRun, merge_runs

__all__ = ["clear_render_cache", "render_inline"]

_CACHED_RENDER_MAX_CHARS = 2_000
"""Texts up to this size have their rendering remembered (8,192 of them at most, ~16 MB at worst)."""
_ESCAPE_CANDIDATES = re.compile(r"[\\`*_~\[\]]")
_CLOSERS_BY_MARK = {"bold": "**", "strike": "~~"}
_MARK_ORDER = ("link", "bold", "italic", "strike")


def _without_mark(run: InlineRun, mark: str) -> InlineRun:
    return InlineRun(
        run.text,
        bold=run.bold and mark != "bold",
        italic=run.italic and mark != "italic",
        strike=run.strike and mark != "strike",
        code=run.code,
        link=run.link,
    )


def _split_run(run: InlineRun, at: int) -> tuple[InlineRun, InlineRun]:
    return replace(run, text=run.text[:at]), replace(run, text=run.text[at:])


def _move_edge_whitespace_out(runs: Sequence[InlineRun]) -> list[InlineRun]:
    """Bold/italic/strike never start or end with whitespace in markdown: move it outside the mark."""
    result = list(runs)
    for mark in STYLE_MARKS:
        index = 0
        while index < len(result):
            if not result[index].has_mark(mark):
                index += 1
                continue
            start = index
            end = index
            while end < len(result) and result[end].has_mark(mark):
                end += 1
            # leading whitespace of the segment [start, end)
            while start < end and not result[start].code:
                run = result[start]
                stripped = run.text.lstrip()
                if stripped == run.text:
                    break
                if not stripped:
                    result[start] = _without_mark(run, mark)
                    start += 1
                    continue
                head, tail = _split_run(run, len(run.text) - len(stripped))
                result[start : start + 1] = [_without_mark(head, mark), tail]
                start += 1
                end += 1
                break
            # trailing whitespace
            while end > start and not result[end - 1].code:
                run = result[end - 1]
                stripped = run.text.rstrip()
                if stripped == run.text:
                    break
                if not stripped:
                    result[end - 1] = _without_mark(run, mark)
                    end -= 1
                    continue
                head, tail = _split_run(run, len(stripped))
                result[end - 1 : end] = [head, _without_mark(tail, mark)]
                break
            index = end + 1
    return merge_runs(result)


def _escape_text(text: str, *, in_link: bool, escape_all: bool) -> str:
    if not _ESCAPE_CANDIDATES.search(text):
        return text
    pieces: list[str] = []
    last = len(text) - 1
    for index, character in enumerate(text):
        previous = text[index - 1] if index > 0 else ""
        following = text[index + 1] if index < last else ""
        escape = False
        if character == "\\":
            escape = escape_all or following == "" or following in ASCII_PUNCTUATION
        elif character == "`":
            escape = True
        elif character in "*_":
            if escape_all or previous == "" or following == "":
                escape = True
            elif (
                is_whitespace(previous)
                and is_whitespace(following)
                or character == "_"
                and is_word_character(previous)
                and is_word_character(following)
            ):
                escape = False
            else:
                escape = True
        elif character == "~":
            escape = escape_all or previous == "~" or following == "~"
        elif character == "[":
            escape = escape_all or in_link
        elif character == "]":
            escape = escape_all or in_link or following in ("(", "")
        if escape:
            pieces.append("\\")
        pieces.append(character)
    return "".join(pieces)


def _render_code_span(text: str) -> str:
    run_lengths: set[int] = set()
    for match in re.finditer(r"`+", text):
        run_lengths.add(len(match.group()))
    fence_length = 1
    while fence_length in run_lengths:
        fence_length += 1
    fence = "`" * fence_length
    needs_padding = text.startswith("`") or text.endswith("`")
    if text.startswith(" ") and text.endswith(" ") and text.strip(" "):
        needs_padding = True
    if needs_padding:
        return f"{fence} {text} {fence}"
    return f"{fence}{text}{fence}"


def _render_destination(href: str) -> str:
    cleaned = "".join(f"%{ord(c):02X}" if ord(c) < 0x20 or c == "\x7f" else c for c in href)
    if any(character.isspace() for character in cleaned) or "<" in cleaned or ">" in cleaned:
        inner = cleaned.replace("\\", "\\\\").replace("<", "\\<").replace(">", "\\>")
        return f"<{inner}>"
    return cleaned.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _mark_keys(run: InlineRun) -> list[str]:
    keys: list[str] = []
    if run.link is not None:
        keys.append("link")
    for mark in STYLE_MARKS:
        if run.has_mark(mark):
            keys.append(mark)
    return keys


def _lasting(runs: Sequence[InlineRun], start: int, key: str) -> int:
    """How many characters from ``runs[start]`` on keep the mark ``key`` without a break."""
    total = 0
    link = runs[start].link
    for run in runs[start:]:
        if key == "link":
            if run.link != link:
                break
        elif not run.has_mark(key):
            break
        total += len(run.text)
    return total


def _render_with(runs: Sequence[InlineRun], *, italic_marker: str, escape_all: bool) -> str:
    pieces: list[str] = []
    open_marks: list[str] = []
    open_link: str | None = None

    def close_from(depth: int) -> None:
        nonlocal open_link
        while len(open_marks) > depth:
            key = open_marks.pop()
            if key == "link":
                pieces.append("](" + _render_destination(open_link or "") + ")")
                open_link = None
            elif key == "italic":
                pieces.append(italic_marker)
            else:
                pieces.append(_CLOSERS_BY_MARK[key])

    for index, run in enumerate(runs):
        wanted = _mark_keys(run)
        keep = 0
        while keep < len(open_marks):
            key = open_marks[keep]
            if key not in wanted or (key == "link" and run.link != open_link):
                break
            keep += 1
        close_from(keep)
        to_open = [key for key in wanted if key not in open_marks]
        to_open.sort(key=lambda key: (-_lasting(runs, index, key), _MARK_ORDER.index(key)))
        for key in to_open:
            open_marks.append(key)
            if key == "link":
                open_link = run.link
                pieces.append("[")
            elif key == "italic":
                pieces.append(italic_marker)
            else:
                pieces.append(_CLOSERS_BY_MARK[key])
        if run.code:
            pieces.append(_render_code_span(run.text))
        else:
            pieces.append(_escape_text(run.text, in_link="link" in open_marks, escape_all=escape_all))
    close_from(0)
    return "".join(pieces)


def _without_marks(runs: Sequence[InlineRun], *, keep_code_and_links: bool) -> list[InlineRun]:
    stripped: list[InlineRun] = []
    for run in runs:
        if keep_code_and_links:
            stripped.append(InlineRun(run.text, code=run.code, link=run.link))
        else:
            stripped.append(InlineRun(run.text))
    return merge_runs(stripped)


def _has_any_mark(run: InlineRun) -> bool:
    return run.bold or run.italic or run.strike or run.code or run.link is not None


def render_inline(runs: Iterable[InlineRun]) -> str:
    """Write runs as inline markdown that ``parse_inline`` reads back to the same runs.

    Whitespace at the edges of bold/italic/strike is moved outside the mark first. If no layout
    reads back exactly, the marks that cannot be shown are dropped (text is never lost).
    """
    merged = merge_runs(runs)
    if len(merged) == 1 and not _has_any_mark(merged[0]):
        plain = merged[0].text
        if "\n" not in plain and MARKDOWN_SPECIAL_CHARACTERS.search(plain) is None:
            return plain  # plain text reads back as itself: nothing to mark, escape or check
    if sum(len(run.text) for run in merged) <= _CACHED_RENDER_MAX_CHARS:
        return _render_remembered(tuple(merged))
    return _render_merged(merged)


@functools.lru_cache(maxsize=8192)
def _render_remembered(merged: tuple[InlineRun, ...]) -> str:
    """``_render_merged`` remembered: a document is read again after every write and by every view,
    and most of its blocks have not changed (runs are immutable, so the answer cannot go stale)."""
    return _render_merged(merged)


def clear_render_cache() -> None:
    """Forget the remembered renderings (to measure a first read, or to free their memory)."""
    _render_remembered.cache_clear()


def _render_merged(merged: Sequence[InlineRun]) -> str:
    canonical = _move_edge_whitespace_out(merged)
    if not canonical:
        return ""
    attempts = [("*", False), ("*", True), ("_", False), ("_", True)]
    for italic_marker, escape_all in attempts:
        rendered = _render_with(canonical, italic_marker=italic_marker, escape_all=escape_all)
        if parse_inline(rendered) == canonical:
            return rendered
    for keep_code_and_links in (True, False):
        reduced = _without_marks(canonical, keep_code_and_links=keep_code_and_links)
        rendered = _render_with(reduced, italic_marker="*", escape_all=True)
        if parse_inline(rendered) == reduced:
            return rendered
    return _render_with(
        _without_marks(canonical, keep_code_and_links=False), italic_marker="*", escape_all=True
    )
