"""The ``@standin`` directive language of the ACP stand-in: which scripted behaviour a prompt asks for. Pure.

Where it sits: ``acp_turns`` calls ``parse_prompt`` on the text blocks of each ``session/prompt``. A
directive is one line ``@standin <name> <arguments>``; every other line is the user's words. With no
directive the turn streams ``Stand-in reply to: <first line of the user text>``; otherwise the directives
run in the order written and only they speak.

    @standin say <text>                     agent_message_chunk notifications (a few words each)
    @standin think <text>                   agent_thought_chunk notifications
    @standin delay <seconds>                pause before each following chunk (a cancel cuts it short)
    @standin plan                           one plan update with two entries
    @standin json <json text>               says the JSON text as is
    @standin shell <command>                execute tool call (permission, client terminal or sh -c here)
    @standin read <path>                    read tool call (client fs/read_text_file or the disk)
    @standin write <path> <text>            edit tool call (permission unless acceptEdits/bypass)
    @standin mcp <server> <tool> [json]     call a tool of a session MCP server, as a real MCP client
    @standin malformed                      a line that is not JSON, then {"hello": 1}, then goes on
    @standin unknown-update                 a session/update of kind elynav_unknown_kind
    @standin unknown-method                 sends the request elynav/unknown, says the error code
    @standin permission-unknown-tool        request_permission for a toolCallId never announced
    @standin ignore-cancel                  the rest of this turn ignores session/cancel (and stdin EOF)
    @standin hang                           writes nothing more, answers only once cancelled
    @standin crash                          exits with code 3 mid-turn
    @standin error <message>                answers session/prompt with error -32603 <message>
    @standin stop <reason>                  ends the turn at once with that stopReason (sent as is)

A line naming an unknown directive, or one whose arguments do not parse, becomes an ``invalid`` step:
the turn says what was wrong and goes on.

Data flow: prompt text -> ``parse_prompt`` -> ``Script`` (steps + the user's lines) -> ``acp_turns``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DIRECTIVE_NAMES", "DIRECTIVE_PREFIX", "Script", "Step", "parse_prompt", "split_chunks"]

DIRECTIVE_PREFIX = "@standin"
NO_ARGUMENT = frozenset(
    {
        "plan",
        "malformed",
        "unknown-update",
        "unknown-method",
        "permission-unknown-tool",
        "ignore-cancel",
        "hang",
        "crash",
    }
)
NEEDS_TEXT = frozenset({"say", "think", "json", "shell", "read", "error", "stop"})
DIRECTIVE_NAMES = NO_ARGUMENT | NEEDS_TEXT | frozenset({"delay", "write", "mcp"})
WORDS_PER_CHUNK = 3


@dataclass(frozen=True)
class Step:
    """One directive line, its arguments parsed. ``name`` is ``invalid`` for a line that did not parse."""

    name: str
    text: str = ""
    seconds: float = 0.0
    path: str = ""
    server: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    line: str = ""


@dataclass(frozen=True)
class Script:
    steps: tuple[Step, ...]
    user_lines: tuple[str, ...]

    @property
    def first_user_line(self) -> str:
        for line in self.user_lines:
            if line.strip():
                return line.strip()
        return ""


def _invalid(line: str, reason: str) -> Step:
    return Step("invalid", text=f"The stand-in could not read {line!r}: {reason}", line=line)


def parse_directive(line: str) -> Step:
    """One ``@standin`` line (already stripped) -> its ``Step``."""
    rest = line[len(DIRECTIVE_PREFIX) :].strip()
    name, _, argument = rest.partition(" ")
    argument = argument.strip()
    if name not in DIRECTIVE_NAMES:
        return _invalid(line, f"unknown directive {name!r}" if name else "no directive name")
    if name in NO_ARGUMENT:
        return Step(name, line=line)
    if name in NEEDS_TEXT:
        if not argument:
            return _invalid(line, f"{name} needs an argument")
        if name == "read":
            return Step(name, path=argument, line=line)
        return Step(name, text=argument, line=line)
    if name == "delay":
        try:
            seconds = float(argument)
        except ValueError:
            return _invalid(line, "delay needs a number of seconds")
        if not math.isfinite(seconds) or seconds < 0:
            return _invalid(line, "delay needs a finite number of seconds >= 0")
        return Step(name, seconds=seconds, line=line)
    if name == "write":
        path, _, text = argument.partition(" ")
        if not path:
            return _invalid(line, "write needs a path")
        return Step(name, path=path, text=text, line=line)
    # mcp <server> <tool> [json arguments]
    parts = argument.split(None, 2)
    if len(parts) < 2:
        return _invalid(line, "mcp needs a server and a tool")
    arguments: Any = {}
    if len(parts) == 3:
        try:
            arguments = json.loads(parts[2])
        except ValueError as error:
            return _invalid(line, f"the arguments are not JSON ({error})")
        if not isinstance(arguments, dict):
            return _invalid(line, "the arguments must be a JSON object")
    return Step(name, server=parts[0], tool=parts[1], arguments=arguments, line=line)


def parse_prompt(text: str) -> Script:
    steps: list[Step] = []
    user_lines: list[str] = []
    for raw_line in text.splitlines():
        stripped = raw_line.strip()
        if stripped == DIRECTIVE_PREFIX or stripped.startswith(DIRECTIVE_PREFIX + " "):
            steps.append(parse_directive(stripped))
        else:
            user_lines.append(raw_line)
    return Script(tuple(steps), tuple(user_lines))


def split_chunks(text: str, words: int = WORDS_PER_CHUNK) -> list[str]:
    """``text`` in pieces of a few words each; joined, they give ``text`` back exactly."""
    pieces: list[str] = []
    current = ""
    count = 0
    index = 0
    while index < len(text):
        start = index
        while index < len(text) and text[index].isspace():
            index += 1
        while index < len(text) and not text[index].isspace():
            index += 1
        current += text[start:index]
        count += 1
        if count == words:
            pieces.append(current)
            current, count = "", 0
    if current:
        pieces.append(current)
    return pieces or [text]
