"""Inline markdown -> ``InlineRun`` list: the CommonMark delimiter algorithm, as ``markdown.inline`` says.

Where it sits: internal to ``docs/markdown``, behind ``markdown.inline.parse_inline``. The dialect
(what is bold, italic, strike, code, a link, an escape) is documented in ``markdown.inline``; the
renderer (``_inline_render``) reads the same character classes to know what it must escape, and
parses its own output back with ``parse_inline`` to check it. Pure: a string in, runs out; never
raises on unbalanced markers (they are text).

How data flows::

    markdown -> plain text with no special character: one unmarked run, at once
             -> _InlineParser: text nodes + the delimiter list (``*``, ``_``, ``~~``) + brackets;
                code spans and escapes read as they come, ``](`` closes a link
                (``_read_link_destination``), each closer matched to its opener (the rule of 3)
             -> runs, merged (``merge_runs``)
"""

from __future__ import annotations

import re
import unicodedata

from elynav_nb.docs.markdown.inline_runs import InlineRun, merge_runs

__all__ = [
    "ASCII_PUNCTUATION",
    "MARKDOWN_SPECIAL_CHARACTERS",
    "is_whitespace",
    "is_word_character",
    "parse_inline",
]

ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def is_whitespace(character: str) -> bool:
    return character == "" or character.isspace()


def is_punctuation(character: str) -> bool:
    if character in ASCII_PUNCTUATION:
        return True
    return character != "" and unicodedata.category(character)[0] in ("P", "S")


def is_word_character(character: str) -> bool:
    return character != "" and not is_whitespace(character) and not is_punctuation(character)


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
        if following and following in ASCII_PUNCTUATION:
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
        left_flanking = not is_whitespace(after)
        right_flanking = not is_whitespace(before)
        if character == "_":
            can_open = left_flanking and not is_word_character(before)
            can_close = right_flanking and not is_word_character(after)
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
            if character == "\\" and index + 1 < length and source[index + 1] in ASCII_PUNCTUATION:
                href_characters.append(source[index + 1])
                index += 2
                continue
            href_characters.append(character)
            index += 1
    else:
        depth = 0
        while index < length:
            character = source[index]
            if character == "\\" and index + 1 < length and source[index + 1] in ASCII_PUNCTUATION:
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
