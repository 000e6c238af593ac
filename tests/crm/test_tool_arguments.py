"""The CRM's argument gate alone (``crm/tool_arguments.py``): plain schemas and values, no server."""

from __future__ import annotations

import math
from typing import Any

import pytest

from elynav_nb.crm.tool_arguments import SQLITE_INTEGER_MAX, ToolArguments
from elynav_nb.errors import InvalidInput

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "account_id": {"type": "integer", "minimum": 1},
        "name": {"type": "string"},
        "amount": {"type": "number", "minimum": 0},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
    },
    "required": ["account_id", "name"],
}
GATE = ToolArguments.from_input_schema("make_thing", SCHEMA)


def refusal(arguments: object) -> InvalidInput:
    with pytest.raises(InvalidInput) as caught:
        GATE.check(arguments)
    return caught.value


def test_good_arguments_pass_and_an_integer_amount_becomes_a_float() -> None:
    checked = GATE.check({"account_id": 3, "name": "Acme", "amount": 12, "note": None})
    assert checked == {"account_id": 3, "name": "Acme", "amount": 12.0, "note": None}
    assert isinstance(checked["amount"], float)
    assert GATE.check({"account_id": SQLITE_INTEGER_MAX, "name": ""})["account_id"] == SQLITE_INTEGER_MAX


def test_null_for_an_optional_argument_that_is_not_nullable_means_not_given() -> None:
    assert GATE.check({"account_id": 1, "name": "x", "limit": None}) == {"account_id": 1, "name": "x"}
    assert refusal({"account_id": None, "name": "x"}).message == "account_id must be an integer, got null"


@pytest.mark.parametrize(
    ("arguments", "field", "message"),
    [
        ({"name": "x"}, "account_id", "account_id is required (an integer)"),
        ({"account_id": 1, "name": "x", "colour": "red"}, "colour", "unknown argument 'colour'"),
        ({"account_id": 2**63, "name": "x"}, "account_id", "account_id must be an integer from 1 to"),
        ({"account_id": 1, "name": "x", "limit": 0}, "limit", "limit must be an integer from 1 to 100"),
        ({"account_id": 1.0, "name": "x"}, "account_id", "account_id must be an integer, got a number"),
        ({"account_id": 1, "name": b"x"}, "name", "name must be a string, got an object"),
        ({"account_id": 1, "name": "x", "amount": math.nan}, "amount", "amount must be a finite number"),
        ({"account_id": 1, "name": "x", "amount": math.inf}, "amount", "amount must be a finite number"),
        ({"account_id": 1, "name": "x", "amount": 10**400}, "amount", "amount must be a finite number"),
        ({"account_id": 1, "name": "x", "amount": False}, "amount", "amount must be a number, got a boolean"),
        ({"account_id": 1, "name": "x", "note": 3}, "note", "note must be a string or null, got an integer"),
        ({"account_id": 1, "name": "a\x00"}, "name", "name contains a NUL character"),
        ({"account_id": 1, "name": "a\ud800b"}, "name", "name is not valid Unicode text"),
    ],
)
def test_each_broken_rule_names_its_argument(arguments: dict[str, Any], field: str, message: str) -> None:
    error = refusal(arguments)
    assert error.code == "INVALID_INPUT"
    assert error.message.startswith(message)
    assert error.details == {"tool": "make_thing", "field": field}


def test_arguments_that_are_not_an_object_are_refused() -> None:
    assert refusal([1, 2]).details == {"tool": "make_thing"}


def test_a_schema_the_gate_cannot_check_fails_when_the_server_is_built() -> None:
    with pytest.raises(ValueError, match="tags"):
        ToolArguments.from_input_schema("t", {"properties": {"tags": {"type": "array"}}})
