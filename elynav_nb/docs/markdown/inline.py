"""Inline markdown <-> BlockNote inline content (text runs with marks), both ways.

Where it sits: the pure layer between the text an agent reads or writes (``Block.text``) and the
styled runs stored in a BlockNote ``XmlText`` (design note §4.4). To read, ``blocknote.reader`` hands the
Yjs runs to ``markdown._inline_pieces.render_pieces``, which writes simple layouts itself and calls
``render_inline`` for the rest; to write, ``blocknote.py`` calls ``parse_inline`` and stores the runs.
No I/O, no pycrdt.

The dialect ("supported markdown")
----------------------------------
* ``**bold**``, ``*italic*`` (also ``__bold__`` and ``_italic_``, never inside a word), ``~~strike~~``
  (exactly two tildes), `` `code` `` (CommonMark code spans: any number of backticks, one padding
  space stripped on both sides), ``[text](url)`` and ``[text](<url with spaces>)`` (no titles).
* A backslash before an ASCII punctuation character makes it literal; any other backslash is text.
* Emphasis follows the CommonMark delimiter algorithm (the rule of 3 included) with one deliberate
  simplification: a run of ``*`` / ``~~`` can open when it is not followed by whitespace and close
  when it is not preceded by whitespace; punctuation does not matter. So ``**Note:**text`` is bold
  here, as people mean it, and every run whose marked text does not start or end with whitespace
  can be written. ``_`` additionally never opens or closes inside a word (``snake_case`` is text).
* No HTML, entities, autolinks or images: ``<``, ``&`` and ``![`` are plain text.
* Unbalanced markers are text, never an error. A newline is kept as a newline (a hard break) and
  never carries marks (BlockNote's hardBreak node has none).

Rendering (runs -> markdown) always writes ``**``, ``*``, ``~~``, backticks and brackets, escapes only
what would be misread, moves whitespace at the edges of bold/italic/strike outside the markers, and
checks its own output by parsing it back; when a layout would be misread it tries safer ones (more
escapes, ``_`` for italic). ``normalize(markdown)`` is ``render_inline(parse_inline(markdown))``.
Marks markdown cannot show (underline, colours, comments) are not part of ``InlineRun``; callers
that rewrite text keep them on the characters they do not change.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

__all__ = [
    "MARKDOWN_SPECIAL_CHARACTERS",
    "InlineRun",
    "clear_render_cache",
    "merge_runs",
    "normalize",
    "parse_inline",
    "plain_text",
    "render_inline",
]

_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_STYLE_MARKS = ("bold", "italic", "strike")


@dataclass(frozen=True)
class InlineRun:
    """One piece of text and the markdown-visible marks it carries."""

    text: str
    bold: bool = False
    italic: bool = False
    strike: bool = False
    code: bool = False
    link: str | None = None

    def same_marks(self, other: InlineRun) -> bool:
        return (
            self.bold == other.bold
            and self.italic == other.italic
            and self.strike == other.strike
            and self.code == other.code
            and self.link == other.link
        )

    def has_mark(self, mark: str) -> bool:
        return bool(getattr(self, mark))


def merge_runs(runs: Iterable[InlineRun]) -> list[InlineRun]:
    """Drop empty runs and join neighbours that carry the same marks (the canonical form)."""
    merged: list[InlineRun] = []
    pending_texts: list[str] = []
    for run in runs:
        if not run.text:
            continue
        if merged and merged[-1].same_marks(run):
            pending_texts.append(run.text)
            continue
        if merged and pending_texts:
            merged[-1] = replace(merged[-1], text=merged[-1].text + "".join(pending_texts))
        pending_texts = []
        merged.append(run)
    if merged and pending_texts:
        merged[-1] = replace(merged[-1], text=merged[-1].text + "".join(pending_texts))
    return merged


def plain_text(runs: Iterable[InlineRun]) -> str:
    """The characters of the runs, marks dropped."""
    return "".join(run.text for run in runs)


# =============================================================================================
# Parsing: markdown -> runs
# =============================================================================================


def _is_whitespace(character: str) -> bool:
    return character == "" or character.isspace()


def _is_punctuation(character: str) -> bool:
    if character in _ASCII_PUNCTUATION:
        return True
    return character != "" and unicodedata.category(character)[0] in ("P", "S")


def _is_word_character(character: str) -> bool:
    return character != "" and not _is_whitespace(character) and not _is_punctuation(character)


class _Node:
    """A piece of parsed text. Delimiter nodes hold the marker characters not used (yet)."""

    __slots__ = ("code", "delimiter", "link", "marks", "text")

    def __init__(self, text: str, *, code: bool = False) -> None:
        self.text = text
        self.marks: set[str] = set()
        self.code = code
        self.link: str | None = None
        self.delimiter: _Delimiter | None = None


class _Delimiter:
    """An entry of the CommonMark delimiter list (a doubly linked list)."""

    __slots__ = (
        "can_close",
        "can_open",
        "character",
        "count",
        "next",
        "node_index",
        "original_count",
        "previous",
    )

    def __init__(self, node_index: int, character: str, count: int, can_open: bool, can_close: bool) -> None:
        self.node_index = node_index
        self.character = character
        self.count = count
        self.original_count = count
        self.can_open = can_open
        self.can_close = can_close
        self.previous: _Delimiter | None = None
        self.next: _Delimiter | None = None


class _Bracket:
    __slots__ = ("active", "delimiter_below", "node_index")

    def __init__(self, node_index: int, delimiter_below: _Delimiter | None) -> None:
        self.node_index = node_index
        self.delimiter_below = delimiter_below
        self.active = True


_SPECIAL_CHARACTERS = frozenset("\\`*_~[]")
_CACHED_RENDER_MAX_CHARS = 2_000
"""Texts up to this size have their rendering remembered (8,192 of them at most, ~16 MB at worst)."""
MARKDOWN_SPECIAL_CHARACTERS = re.compile(r"[\\`*_~\[\]]")


class _InlineParser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.nodes: list[_Node] = []
        self.last_delimiter: _Delimiter | None = None
        self.brackets: list[_Bracket] = []

    # --- delimiter list ---------------------------------------------------------------------

    def _push_delimiter(self, delimiter: _Delimiter) -> None:
        delimiter.previous = self.last_delimiter
        if self.last_delimiter is not None:
            self.last_delimiter.next = delimiter
        self.last_delimiter = delimiter

    def _remove_delimiter(self, delimiter: _Delimiter) -> None:
        if delimiter.previous is not None:
            delimiter.previous.next = delimiter.next
        if delimiter.next is not None:
            delimiter.next.previous = delimiter.previous
        else:
            self.last_delimiter = delimiter.previous
        self.nodes[delimiter.node_index].delimiter = None

    # --- scanning ---------------------------------------------------------------------------

    def parse(self) -> list[InlineRun]:
        source = self.source
        position = 0
        length = len(source)
        while position < length:
            character = source[position]
            if character not in _SPECIAL_CHARACTERS:
                next_special = MARKDOWN_SPECIAL_CHARACTERS.search(source, position)
                end = length if next_special is None else next_special.start()
                self.nodes.append(_Node(source[position:end]))
                position = end
            elif character == "\\":
                position = self._scan_backslash(position)
            elif character == "`":
                position = self._scan_code_span(position)
            elif character in "*_~":
                position = self._scan_delimiter_run(position)
            elif character == "[":
                self.nodes.append(_Node("["))
                self.brackets.append(_Bracket(len(self.nodes) - 1, self.last_delimiter))
                position += 1
            else:  # "]"
                position = self._scan_close_bracket(position)
        self._process_emphasis(None)
        return self._runs()

    def _runs(self) -> list[InlineRun]:
        runs: list[InlineRun] = []
        for node in self.nodes:
            # a newline is a hard break in BlockNote, and a hard break carries no marks
            for index, piece in enumerate(node.text.split("\n")):
                if index > 0:
                    runs.append(InlineRun("\n"))
                runs.append(
                    InlineRun(
                        text=piece,
                        bold="bold" in node.marks,
                        italic="italic" in node.marks,
                        strike="strike" in node.marks,
                        code=node.code,
                        link=node.link,
                    )
                )
        return merge_runs(runs)

    def _scan_backslash(self, position: int) -> int:
        following = self.source[position + 1 : position + 2]
        if following and following in _ASCII_PUNCTUATION:
            self.nodes.append(_Node(following))
            return position + 2
        self.nodes.append(_Node("\\"))
        return position + 1

    def _backtick_run_length(self, position: int) -> int:
        end = position
        while end < len(self.source) and self.source[end] == "`":
            end += 1
        return end - position

    def _scan_code_span(self, position: int) -> int:
        fence_length = self._backtick_run_length(position)
        content_start = position + fence_length
        search = content_start
        while True:
            closing = self.source.find("`", search)
            if closing == -1:
                self.nodes.append(_Node("`" * fence_length))
                return content_start
            closing_length = self._backtick_run_length(closing)
            if closing_length == fence_length:
                content = self.source[content_start:closing]
                if len(content) >= 2 and content[0] == " " and content[-1] == " " and content.strip(" "):
                    content = content[1:-1]
                self.nodes.append(_Node(content, code=True))
                return closing + closing_length
            search = closing + closing_length

    def _scan_delimiter_run(self, position: int) -> int:
        source = self.source
        character = source[position]
        end = position
        while end < len(source) and source[end] == character:
            end += 1
        count = end - position
        before = source[position - 1] if position > 0 else ""
        after = source[end] if end < len(source) else ""
        self.nodes.append(_Node(character * count))
        if character == "~" and count != 2:
            return end  # only "~~" is strike; other tilde runs are text
        left_flanking = not _is_whitespace(after)
        right_flanking = not _is_whitespace(before)
        if character == "_":
            can_open = left_flanking and not _is_word_character(before)
            can_close = right_flanking and not _is_word_character(after)
        else:
            can_open = left_flanking
            can_close = right_flanking
        if can_open or can_close:
            delimiter = _Delimiter(len(self.nodes) - 1, character, count, can_open, can_close)
            self.nodes[-1].delimiter = delimiter
            self._push_delimiter(delimiter)
        return end

    def _scan_close_bracket(self, position: int) -> int:
        if not self.brackets:
            self.nodes.append(_Node("]"))
            return position + 1
        opener = self.brackets.pop()
        if not opener.active:
            self.nodes.append(_Node("]"))
            return position + 1
        destination = _read_link_destination(self.source, position + 1)
        if destination is None:
            self.nodes.append(_Node("]"))
            return position + 1
        href, end = destination
        self._process_emphasis(opener.delimiter_below)
        self.nodes[opener.node_index].text = ""
        for index in range(opener.node_index + 1, len(self.nodes)):
            node = self.nodes[index]
            if node.link is None:
                node.link = href
        for bracket in self.brackets:
            bracket.active = False  # no links inside links
        return end

    # --- emphasis ---------------------------------------------------------------------------

    def _first_delimiter_above(self, stack_bottom: _Delimiter | None) -> _Delimiter | None:
        if stack_bottom is not None:
            return stack_bottom.next
        delimiter = self.last_delimiter
        first = None
        while delimiter is not None:
            first = delimiter
            delimiter = delimiter.previous
        return first

    def _process_emphasis(self, stack_bottom: _Delimiter | None) -> None:
        openers_bottom: dict[tuple[str, bool, int], _Delimiter | None] = {}
        closer = self._first_delimiter_above(stack_bottom)
        while closer is not None:
            if not closer.can_close:
                closer = closer.next
                continue
            bottom_key = (closer.character, closer.can_open, closer.original_count % 3)
            bottom = openers_bottom.get(bottom_key, stack_bottom)
            opener = closer.previous
            found = False
            while opener is not None and opener is not stack_bottom and opener is not bottom:
                if (
                    opener.character == closer.character
                    and opener.can_open
                    and self._may_match(opener, closer)
                ):
                    found = True
                    break
                opener = opener.previous
            if found and opener is not None:
                closer = self._apply_emphasis(opener, closer)
                continue
            openers_bottom[bottom_key] = closer.previous
            following = closer.next
            if not closer.can_open:
                self._remove_delimiter(closer)
            closer = following
        while self.last_delimiter is not None and self.last_delimiter is not stack_bottom:
            self._remove_delimiter(self.last_delimiter)

    @staticmethod
    def _may_match(opener: _Delimiter, closer: _Delimiter) -> bool:
        if opener.character == "~":
            return opener.count == 2 and closer.count == 2
        both_flanking = opener.can_close or closer.can_open
        total = opener.original_count + closer.original_count
        if both_flanking and total % 3 == 0:
            return opener.original_count % 3 == 0 and closer.original_count % 3 == 0
        return True

    def _apply_emphasis(self, opener: _Delimiter, closer: _Delimiter) -> _Delimiter | None:
        if opener.character == "~":
            used, mark = 2, "strike"
        elif opener.count >= 2 and closer.count >= 2:
            used, mark = 2, "bold"
        else:
            used, mark = 1, "italic"
        for index in range(opener.node_index + 1, closer.node_index):
            self.nodes[index].marks.add(mark)
        opener.count -= used
        closer.count -= used
        self.nodes[opener.node_index].text = opener.character * opener.count
        self.nodes[closer.node_index].text = closer.character * closer.count
        between = opener.next
        while between is not None and between is not closer:
            following = between.next
            self._remove_delimiter(between)
            between = following
        if opener.count == 0:
            self._remove_delimiter(opener)
        if closer.count == 0:
            following = closer.next
            self._remove_delimiter(closer)
            return following
        return closer


def _read_link_destination(source: str, position: int) -> tuple[str, int] | None:
    """Read ``(destination)`` at ``position``; return (href, index after ")") or None."""
    length = len(source)
    if position >= length or source[position] != "(":
        return None
    index = position + 1
    while index < length and source[index] in " \t\n":
        index += 1
    href_characters: list[str] = []
    if index < length and source[index] == "<":
        index += 1
        while True:
            if index >= length or source[index] in "\n<":
                return None
            character = source[index]
            if character == ">":
                index += 1
                break
            if character == "\\" and index + 1 < length and source[index + 1] in _ASCII_PUNCTUATION:
                href_characters.append(source[index + 1])
                index += 2
                continue
            href_characters.append(character)
            index += 1
    else:
        depth = 0
        while index < length:
            character = source[index]
            if character == "\\" and index + 1 < length and source[index + 1] in _ASCII_PUNCTUATION:
                href_characters.append(source[index + 1])
                index += 2
                continue
            if character.isspace() or ord(character) < 0x20:
                break
            if character == "(":
                depth += 1
            elif character == ")":
                if depth == 0:
                    break
                depth -= 1
            href_characters.append(character)
            index += 1
        if depth != 0:
            return None
    while index < length and source[index] in " \t\n":
        index += 1
    if index >= length or source[index] != ")":
        return None
    return "".join(href_characters), index + 1


def parse_inline(markdown: str) -> list[InlineRun]:
    """Parse inline markdown into canonical runs. Never raises on unbalanced markers."""
    if "\n" not in markdown and MARKDOWN_SPECIAL_CHARACTERS.search(markdown) is None:
        return [InlineRun(markdown)] if markdown else []  # plain text: one unmarked run
    return _InlineParser(markdown).parse()


# =============================================================================================
# Rendering: runs -> markdown
# =============================================================================================

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
    for mark in _STYLE_MARKS:
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
            escape = escape_all or following == "" or following in _ASCII_PUNCTUATION
        elif character == "`":
            escape = True
        elif character in "*_":
            if escape_all or previous == "" or following == "":
                escape = True
            elif (
                _is_whitespace(previous)
                and _is_whitespace(following)
                or character == "_"
                and _is_word_character(previous)
                and _is_word_character(following)
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
    for mark in _STYLE_MARKS:
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


def normalize(markdown: str) -> str:
    """The canonical spelling of ``markdown``: ``render_inline(parse_inline(markdown))``."""
    return render_inline(parse_inline(markdown))
