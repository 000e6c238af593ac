"""The ``@standin`` directive language: which scripted behaviour a user message asks for. Pure.

Where it sits: ``turns`` calls ``parse_message`` on the text of each user message. A directive is
one line ``@standin <name> <args>``; every other line is ordinary text, answered with the deterministic
echo reply. Directives run in the order written, so one message can chain several tool uses.

    @standin bash <command>                   Bash tool (permission rules apply), really run in its own session
    @standin ask <agent> <text...>            Bash ``elynav ask <agent> <text>`` (text shell-quoted, may hold a
                                              nested ``@standin`` line, kept as text), otherwise like bash
    @standin mcp <server> <tool> [json-args]  call a tool of an --mcp-config server, as a real MCP client
    @standin sleep-tool <seconds>             Bash ``sleep <seconds>`` (read-only: never needs approval)
    @standin big-result <bytes>               Bash tool whose tool_result line is larger than <bytes>
    @standin subagent [prompt]                Task tool running a subagent (prompt line with parent_tool_use_id)
    @standin slow <seconds>                   stream the final reply over <seconds>
    @standin think                            a thinking block before the text
    @standin flood <count>                    the final reply is <count> text deltas, written as fast as possible
    @standin api-error [status]               API error turn (429/5xx: two system/api_retry lines first)
    @standin no-login                         the real no-login turn ("Not logged in · Please run /login")
    @standin max-turns                        one Bash tool use, then the error_max_turns result
    @standin json <json text>                 with --json-schema: the StructuredOutput input, verbatim
                                              (without it the stand-in builds a minimal instance)
    @standin cost <usd>                       each API response of this turn costs <usd> (the result's
                                              total_cost_usd; with --max-budget-usd, the budget stop)

Data flow: user text -> ``parse_message`` -> ``ParsedMessage`` (directives + remaining text) -> turn script.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DIRECTIVE_NAMES", "TOOL_DIRECTIVES", "Directive", "ParsedMessage", "parse_message"]

DIRECTIVE_PREFIX = "@standin"
TOOL_DIRECTIVES = frozenset({"bash", "ask", "mcp", "sleep-tool", "big-result", "subagent"})
DIRECTIVE_NAMES = frozenset(
    {
        "bash",
        "ask",
        "mcp",
        "sleep-tool",
        "big-result",
        "subagent",
        "slow",
        "think",
        "flood",
        "api-error",
        "no-login",
        "max-turns",
        "json",
        "cost",
    }
)


@dataclass(frozen=True)
class Directive:
    """One ``@standin`` line. ``problem`` is set when the arguments are unusable (reported in the reply)."""

    name: str
    argument: str = ""
    number: float = 0.0
    agent: str = ""
    server: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    value: Any = None  # @standin json: the parsed JSON value
    problem: str = ""


@dataclass(frozen=True)
class ParsedMessage:
    directives: list[Directive]
    text: str

    def has(self, name: str) -> bool:
        return any(directive.name == name for directive in self.directives)

    def first(self, name: str) -> Directive | None:
        for directive in self.directives:
            if directive.name == name:
                return directive
        return None

    def tool_directives(self) -> list[Directive]:
        return [
            directive
            for directive in self.directives
            if directive.name in TOOL_DIRECTIVES and not directive.problem
        ]

    def problems(self) -> list[str]:
        return [directive.problem for directive in self.directives if directive.problem]


def _number(name: str, argument: str, *, minimum: float, integer: bool) -> Directive:
    try:
        value = float(argument.split()[0]) if argument.strip() else float("nan")
    except ValueError:
        value = float("nan")
    if math.isnan(value) or value < minimum:
        kind = "an integer" if integer else "a number"
        return Directive(
            name, argument, problem=f"@standin {name} needs {kind} >= {minimum:g}, got {argument!r}"
        )
    return Directive(name, argument, number=float(int(value)) if integer else value)


def _parse_directive(name: str, argument: str) -> Directive:
    if name not in DIRECTIVE_NAMES:
        known = ", ".join(sorted(DIRECTIVE_NAMES))
        return Directive(name, argument, problem=f"unknown directive @standin {name} (known: {known})")
    if name == "bash":
        if not argument.strip():
            return Directive(name, argument, problem="@standin bash needs a command")
        return Directive(name, argument.strip())
    if name == "ask":
        parts = argument.split(None, 1)
        if len(parts) < 2:
            return Directive(name, argument, problem="@standin ask needs <agent> <text>")
        return Directive(name, parts[1].strip(), agent=parts[0])
    if name == "mcp":
        parts = argument.split(None, 2)
        if len(parts) < 2:
            return Directive(name, argument, problem="@standin mcp needs <server> <tool> [json-arguments]")
        arguments: dict[str, Any] = {}
        if len(parts) == 3:
            try:
                loaded = json.loads(parts[2])
            except ValueError as error:
                return Directive(name, argument, problem=f"@standin mcp arguments are not JSON: {error}")
            if not isinstance(loaded, dict):
                return Directive(name, argument, problem="@standin mcp arguments must be a JSON object")
            arguments = loaded
        return Directive(name, argument, server=parts[0], tool=parts[1], arguments=arguments)
    if name == "json":
        try:
            return Directive(name, argument.strip(), value=json.loads(argument))
        except ValueError as error:
            return Directive(name, argument, problem=f"@standin json needs JSON text: {error}")
    if name in ("slow", "sleep-tool", "cost"):
        return _number(name, argument, minimum=0, integer=False)
    if name in ("flood", "big-result"):
        return _number(name, argument, minimum=1, integer=True)
    if name == "api-error":
        if not argument.strip():
            return Directive(name, "", number=400)
        return _number(name, argument, minimum=100, integer=True)
    return Directive(name, argument.strip())


def parse_message(text: str) -> ParsedMessage:
    """Split a user message into its ``@standin`` lines and the remaining ordinary text."""
    directives: list[Directive] = []
    plain_lines: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == DIRECTIVE_PREFIX or stripped.startswith(DIRECTIVE_PREFIX + " "):
            remainder = stripped[len(DIRECTIVE_PREFIX) :].strip()
            name, _, argument = remainder.partition(" ")
            directives.append(_parse_directive(name.lower(), argument))
        else:
            plain_lines.append(line)
    return ParsedMessage(directives, "\n".join(plain_lines).strip())
