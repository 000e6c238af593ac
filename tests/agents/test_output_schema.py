"""``output_schema``: the schema a CLI gets, the validator, the answer parser, the stand-in's instances (pure)."""

from __future__ import annotations

import typing

import pytest
from pydantic import BaseModel, field_validator

from elynav_nb.agents.output_schema import (
    WRAPPER_KEY,
    output_schema_of,
    parse_answer_json,
    prompt_with_schema,
    settle_structured,
)
from elynav_nb.agents.results import TurnResult
from elynav_nb.errors import InvalidInput, OutputInvalid
from elynav_nb.sandbox.claude.structured import (
    SchemaFlagError,
    load_schema,
    minimal_instance,
    schema_problems,
    with_structured_output_tool,
)


class Account(BaseModel):
    name: str
    score: int


class Contact(typing.TypedDict):
    email: str
    phone: typing.NotRequired[str]


class Picky(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def no_x(cls, value: str) -> str:
        if "x" in value:
            raise ValueError("no x allowed")
        return value


PERSON = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def test_a_dict_schema_is_sent_as_given_and_validates_into_plain_values():
    schema = output_schema_of(PERSON)
    assert schema is not None and schema.kind == "json-schema" and not schema.wrapped
    assert schema.wire_schema == PERSON
    assert settle_structured(schema, {"name": "Ada"}, "") == {"name": "Ada"}
    with pytest.raises(OutputInvalid, match="name"):
        settle_structured(schema, {"name": 3}, "")


def test_a_pydantic_model_gives_model_instances_and_its_own_validators_run():
    schema = output_schema_of(Account)
    assert schema is not None and schema.kind == "pydantic" and schema.label == "Account"
    assert schema.wire_schema["required"] == ["name", "score"]
    assert settle_structured(schema, {"name": "a", "score": 2}, "") == Account(name="a", score=2)
    picky = output_schema_of(Picky)
    assert picky is not None
    with pytest.raises(OutputInvalid, match="no x allowed"):  # JSON Schema cannot say it; pydantic does
        settle_structured(picky, {"name": "xyz"}, "")


def test_a_typeddict_gives_dicts_and_keeps_optional_keys_optional():
    schema = output_schema_of(Contact)
    assert schema is not None and schema.kind == "typeddict"
    assert schema.wire_schema["required"] == ["email"]
    assert settle_structured(schema, {"email": "a@b.c"}, "") == {"email": "a@b.c"}
    with pytest.raises(OutputInvalid):
        settle_structured(schema, {"phone": "1"}, "")


def test_a_list_schema_is_wrapped_for_the_cli_and_unwrapped_before_validation():
    schema = output_schema_of(list[Account])
    assert schema is not None and schema.wrapped
    wire = schema.wire_schema
    assert wire["type"] == "object" and wire["required"] == [WRAPPER_KEY]
    assert "$defs" in wire and "$defs" not in wire["properties"][WRAPPER_KEY]  # refs resolve from the root
    rows = settle_structured(schema, {WRAPPER_KEY: [{"name": "a", "score": 1}]}, "")
    assert rows == [Account(name="a", score=1)]
    with pytest.raises(OutputInvalid, match="wrapper"):
        settle_structured(schema, [{"name": "a", "score": 1}], "")


@pytest.mark.parametrize(
    "bad",
    [
        "a string",
        ["a", "list"],
        42,
        {},
        {"type": "bogus"},
        {"type": "object", "properties": {"x": {"type": 3}}},
        {"type": "object", "default": {1, 2}},
        int,
        object(),
    ],
)
def test_a_bad_schema_is_refused_as_invalid_input(bad):
    with pytest.raises(InvalidInput):
        output_schema_of(bad)


def test_no_schema_is_none_and_the_same_schema_has_the_same_key():
    assert output_schema_of(None) is None
    first, second = output_schema_of(dict(PERSON)), output_schema_of(dict(reversed(list(PERSON.items()))))
    assert first is not None and second is not None and first.key == second.key
    other = output_schema_of(Account)
    assert other is not None and other.key != first.key


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ("  [1, 2]\n", [1, 2]),
        ('Here you go:\n```json\n{"a": 1}\n```\nand\n```json\n{"a": 2}\n```', {"a": 2}),
        ('The answer is {"a": 1} and finally {"a": [3, {"b": 4}]}.', {"a": [3, {"b": 4}]}),
        ("Rows: [1, 2] then {broken then [3]", [3]),
    ],
)
def test_answer_text_gives_the_whole_text_the_last_json_block_or_the_last_json_value(text, value):
    assert parse_answer_json(text) == value


@pytest.mark.parametrize("text", ["", "   ", "no json here", "```json\n{not json}\n```", "42 is the answer"])
def test_answer_text_without_json_is_output_invalid_never_a_guess(text):
    with pytest.raises(OutputInvalid):
        parse_answer_json(text)


def test_the_prompt_carries_the_schema_and_an_instruction():
    schema = output_schema_of(PERSON)
    assert schema is not None
    prompt = prompt_with_schema("List them.", schema)
    assert prompt.startswith("List them.\n\n") and '"required": [' in prompt and "JSON" in prompt


def test_a_structured_result_gives_rows_one_row_or_a_typed_error():
    schema = output_schema_of(list[Account])
    common = {"text": "", "events": (), "session_id": "s", "output_schema": schema}
    rows = TurnResult(
        outcome="completed", data=[Account(name="a", score=1), Account(name="b", score=2)], **common
    )
    frame = rows.to_frame()
    assert list(frame.columns) == ["name", "score"] and list(frame["name"]) == ["a", "b"]
    assert "data=2 × Account" in repr(rows) and "Account" in rows._repr_html_()
    one = TurnResult(outcome="completed", data={"name": "a"}, **common)
    assert len(one.to_frame()) == 1
    with pytest.raises(InvalidInput):
        TurnResult(outcome="completed", data=[1, 2], **common).to_frame()
    with pytest.raises(InvalidInput, match="OUTPUT_INVALID"):
        TurnResult(outcome="failed", error_code="OUTPUT_INVALID", **common).to_frame()
    plain = TurnResult(outcome="completed", text="hi", events=(), session_id="s")
    assert list(plain.to_frame().columns) == [
        "at",
        "kind",
        "summary",
        "parent_tool_use_id",
    ]  # no schema: events


def test_the_standin_builds_a_minimal_instance_that_matches_the_schema():
    for spec in (PERSON, Account, list[Account], Contact):
        schema = output_schema_of(spec)
        assert schema is not None
        instance = minimal_instance(schema.wire_schema)
        assert schema_problems(schema.wire_schema, instance) == "", spec
        settle_structured(schema, instance, "")
    rich = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "kind": {"enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "n": {"type": "integer", "minimum": 5},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "string"}]},
        },
        "required": ["when", "kind", "tags", "n", "maybe"],
    }
    assert minimal_instance({"type": "string", "maxLength": 3}) == ""  # where the placeholder cannot fit
    assert minimal_instance({"type": "string", "minLength": 2, "pattern": "^[a-z]+$"}) == "xx"
    assert minimal_instance(rich) == {
        "when": "1970-01-01T00:00:00Z",
        "kind": "a",
        "tags": ["stand-in placeholder", "stand-in placeholder"],  # whose value it is, not a blank
        "n": 5,
        "maybe": None,
    }


def test_the_standin_checks_like_the_real_cli():
    assert (
        schema_problems(
            {
                "type": "object",
                "properties": {"name": {"type": "string"}, "n": {}},
                "required": ["name", "n"],
            },
            {"name": 5},
        )
        == "root: must have required property 'n', /name: must be string"
    )
    assert with_structured_output_tool(["Task", "Bash", "Read", "Write"]) == [
        "Task",
        "Bash",
        "Read",
        "StructuredOutput",
        "Write",
    ]
    with pytest.raises(SchemaFlagError, match="is not valid JSON"):
        load_schema("not json")
    with pytest.raises(SchemaFlagError, match="is not a valid JSON Schema"):
        load_schema('{"type": "bogus"}')
