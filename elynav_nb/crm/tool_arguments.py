"""The strict check every CRM tool call goes through before its tool runs: one gate, the same rules.

Where it sits: pure, between the CRM MCP server (``server.py``, whose ``call_tool`` calls
``ToolArguments.check``) and the store. Each tool's rules are read once, when the server is built,
from the input schema the SDK derives from the tool's signature (``ToolArguments.from_input_schema``),
so a tool cannot be added without them.

The rules (each refusal is ``INVALID_INPUT`` naming the argument, ``details = {"tool", "field"}``):

* the arguments are a JSON object whose keys are the tool's arguments: an unknown one is refused;
* types are JSON's, strictly: an integer is a JSON integer (not ``"5"``, not ``true``, not ``5.0``),
  a number is a JSON integer or a finite float (not a boolean), a string is a string (not a number);
* an integer lies within SQLite's signed 64-bit range and the bounds the schema declares
  (``minimum``/``maximum``, e.g. a page ``limit`` of 1 to 100, ids from 1); a number is finite
  (an integer too large for a float is not);
* a string holds no NUL character (C strings, terminals and many readers cut the text there) and
  no lone surrogate (it cannot be encoded as UTF-8, so SQLite cannot store it);
* ``null`` is a value where the schema allows it; for another optional argument it means "not
  given" (models often send it), for a required one it is refused; a missing required argument too.

What values mean (allowed stages, e-mail shape, text lengths in bytes, dates, an amount's bounds
in euros) stays with ``domain``, which every store method calls; this gate only makes sure each
value has the JSON shape its tool declares, so no wrong type, overflow or NUL reaches the store.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from elynav_nb.errors import InvalidInput

__all__ = ["SQLITE_INTEGER_MAX", "SQLITE_INTEGER_MIN", "ArgumentRule", "ToolArguments"]

SQLITE_INTEGER_MIN = -(2**63)
SQLITE_INTEGER_MAX = 2**63 - 1

_CHECKABLE_TYPES = frozenset({"string", "integer", "number", "boolean", "null"})
_TYPE_PHRASES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def _json_type_of(value: object) -> str:
    """The JSON type a decoded value came from."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"


@dataclass(frozen=True)
class ArgumentRule:
    """What one argument accepts: its JSON types, whether it is required, its integer bounds."""

    name: str
    json_types: frozenset[str]
    required: bool
    minimum: float | None = None
    maximum: float | None = None

    def expected(self) -> str:
        """``an integer``, ``a string or null``..."""
        phrases = [_TYPE_PHRASES[json_type] for json_type in sorted(self.json_types - {"null"})]
        if "null" in self.json_types:
            phrases.append("null")
        return " or ".join(phrases)

    def integer_range(self) -> tuple[int, int]:
        """The integers this argument accepts: its declared bounds within SQLite's 64-bit range."""
        low = SQLITE_INTEGER_MIN if self.minimum is None else max(math.ceil(self.minimum), SQLITE_INTEGER_MIN)
        high = (
            SQLITE_INTEGER_MAX if self.maximum is None else min(math.floor(self.maximum), SQLITE_INTEGER_MAX)
        )
        return low, high


def _rule_from_schema(tool_name: str, name: str, schema: Mapping[str, Any], required: bool) -> ArgumentRule:
    branches: list[Mapping[str, Any]] = list(schema.get("anyOf", [schema]))
    json_types: set[str] = set()
    minimum = schema.get("minimum")
    maximum = schema.get("maximum")
    for branch in branches:
        json_type = branch.get("type")
        if not isinstance(json_type, str) or json_type not in _CHECKABLE_TYPES:
            raise ValueError(
                f"{tool_name}: argument {name!r} has a schema this gate cannot check: {schema!r}"
            )
        json_types.add(json_type)
        minimum = branch.get("minimum", minimum)
        maximum = branch.get("maximum", maximum)
    return ArgumentRule(name, frozenset(json_types), required, minimum, maximum)


@dataclass(frozen=True)
class ToolArguments:
    """The argument rules of one tool; ``check`` applies them to one call's arguments."""

    tool_name: str
    rules: Mapping[str, ArgumentRule]

    @classmethod
    def from_input_schema(cls, tool_name: str, input_schema: Mapping[str, Any]) -> ToolArguments:
        """The rules of a tool from its JSON input schema (``ValueError`` for a shape it cannot check)."""
        properties: Mapping[str, Mapping[str, Any]] = input_schema.get("properties", {})
        required = set(input_schema.get("required", []))
        rules = {
            name: _rule_from_schema(tool_name, name, schema, name in required)
            for name, schema in properties.items()
        }
        return cls(tool_name, rules)

    def _refuse(self, field: str, message: str) -> InvalidInput:
        return InvalidInput(message, details={"tool": self.tool_name, "field": field})

    def check(self, arguments: object) -> dict[str, Any]:
        """The arguments to call the tool with, once every rule holds; ``InvalidInput`` naming the first
        argument that breaks one otherwise. Optional arguments sent as ``null`` where the schema does not
        allow it are left out, so the tool's default applies."""
        if not isinstance(arguments, Mapping):
            raise InvalidInput(
                f"the arguments of {self.tool_name} must be a JSON object", details={"tool": self.tool_name}
            )
        checked: dict[str, Any] = {}
        for name, value in arguments.items():
            rule = self.rules.get(name)
            if rule is None:
                known = ", ".join(self.rules) or "none"
                raise self._refuse(
                    str(name), f"unknown argument {str(name)!r}; {self.tool_name} takes: {known}"
                )
            if value is None and "null" not in rule.json_types and not rule.required:
                continue  # "not given": the tool's default applies
            checked[name] = self._checked_value(rule, value)
        for name, rule in self.rules.items():
            if rule.required and name not in checked:
                raise self._refuse(name, f"{name} is required ({rule.expected()})")
        return checked

    def _checked_value(self, rule: ArgumentRule, value: object) -> object:
        """``value`` once it fits ``rule``; a JSON integer given for a number becomes a float."""
        given = _json_type_of(value)
        accepted = given in rule.json_types or (given == "integer" and "number" in rule.json_types)
        if not accepted:
            raise self._refuse(
                rule.name,
                f"{rule.name} must be {rule.expected()}, got {_TYPE_PHRASES.get(given, 'an ' + given)}",
            )
        if given == "integer" and "integer" in rule.json_types:
            assert isinstance(value, int)
            low, high = rule.integer_range()
            if not low <= value <= high:
                raise self._refuse(rule.name, f"{rule.name} must be an integer from {low} to {high}")
        elif given in ("integer", "number"):
            assert isinstance(value, int | float)
            return self._finite_number(rule, value)
        elif given == "string":
            assert isinstance(value, str)
            self._check_text(rule, value)
        return value

    def _finite_number(self, rule: ArgumentRule, value: float) -> float:
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float
            number = math.inf
        if not math.isfinite(number):
            raise self._refuse(rule.name, f"{rule.name} must be a finite number")
        return number

    def _check_text(self, rule: ArgumentRule, value: str) -> None:
        if "\x00" in value:
            raise self._refuse(
                rule.name, f"{rule.name} contains a NUL character (U+0000), which the CRM does not store"
            )
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise self._refuse(
                rule.name, f"{rule.name} is not valid Unicode text (it holds a lone surrogate)"
            ) from None
