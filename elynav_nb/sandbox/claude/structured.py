"""The stand-in's ``--json-schema``: the schema checked at start-up, the value its "model" answers, the checks.

Where it sits: ``start.plan_start`` calls ``load_schema`` (the real CLI's start-up errors);
``turns`` ends a turn of a process started with ``--json-schema`` with a ``StructuredOutput``
tool use (``turns._structured_ending``). Pure: no I/O.

What the real claude 2.1.332 does (checked against the fake model API), and so the stand-in:

- ``StructuredOutput`` is one more tool (in ``system/init`` ``tools``, in sorted place), except for an
  ``--agent`` whose ``tools:`` list does not name it: that agent never gets it (the turn then ends as
  a plain one, with no ``structured_output``); ``--agents`` inline definitions win over the files;
- the model's call is validated against the schema: a good one gets the tool result
  ``Structured output provided successfully`` and the turn ends at once (``result`` holds the value
  as compact JSON, ``structured_output`` the value, ``stop_reason`` ``tool_use``); a bad one gets an
  error tool result ``Output does not match required schema: <problems>`` and the model is asked
  again, 5 attempts in all, then the result ``error_max_structured_output_retries``
  (``terminal_reason`` ``structured_output_retry_exhausted``).

Which value the stand-in's model answers: the ``@standin json <json text>`` directive's value,
verbatim (so a test can make an invalid one); without it, ``minimal_instance(schema)``: built
deterministically from the schema (an object's required properties, the first ``enum``/``const``
value, ``default`` where given, ``0`` / ``false`` / ``null``, arrays of ``max(minItems, 1)`` items, a few
string formats, other strings ``PLACEHOLDER`` where the schema allows it (so a row of it reads as the
stand-in's, not as a blank failure); ``$ref`` to ``#/$defs``, the first branch of ``anyOf``/``oneOf``).
The turn's text then says that its answer is such a minimal instance, and how to script another.
Problem texts follow the real CLI's ajv style (``root: must have required property 'n'``,
``/name: must be string``) for the common keywords, jsonschema's own message otherwise.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = [
    "MAX_ATTEMPTS",
    "MINIMAL_NOTE",
    "PLACEHOLDER",
    "SchemaFlagError",
    "STRUCTURED_OUTPUT_OK",
    "STRUCTURED_OUTPUT_TOOL",
    "load_schema",
    "minimal_instance",
    "schema_problems",
    "with_structured_output_tool",
]

STRUCTURED_OUTPUT_TOOL = "StructuredOutput"
STRUCTURED_OUTPUT_OK = "Structured output provided successfully"
MAX_ATTEMPTS = 5
PLACEHOLDER = "stand-in placeholder"  # a string of a minimal instance: says whose it is
MINIMAL_NOTE = (
    "No model here: the structured answer is a minimal instance of the schema (one item, placeholder "
    "values); `@standin json <value>` scripts another."
)

_FORMATS = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00Z",
    "email": "standin@example.com",
    "uri": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


def _jsonschema() -> Any:
    """``jsonschema``, imported without its optional ``iri`` format checker.

    ``rfc3987_syntax`` (pulled in by jupyter's ``jsonschema[format]``) builds a grammar at import:
    about 1.4 s of every stand-in start with ``--json-schema`` on a slow machine. The stand-in checks
    no formats (neither does claude's ajv by default), and this is the stand-in's own process.
    """
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # None: "not importable"
    import jsonschema

    return jsonschema


class SchemaFlagError(ValueError):
    """``--json-schema`` is refused at start-up; the message is the real CLI's stderr line."""


def load_schema(text: str) -> dict[str, Any]:
    """The schema of ``--json-schema <text>`` (``SchemaFlagError`` with the real CLI's message)."""
    jsonschema = _jsonschema()

    try:
        schema = json.loads(text)
    except ValueError as error:
        raise SchemaFlagError(f"Error: --json-schema is not valid JSON: JSON Parse error: {error}") from None
    if not isinstance(schema, dict):
        raise SchemaFlagError("Error: --json-schema is not a valid JSON Schema: data must be object,boolean")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as error:
        raise SchemaFlagError(f"Error: --json-schema is not a valid JSON Schema: {error.message}") from None
    return schema


def with_structured_output_tool(tools: list[str]) -> list[str]:
    """The init line's tools with ``StructuredOutput`` in its sorted place (after a leading ``Task``)."""
    if STRUCTURED_OUTPUT_TOOL in tools:
        return list(tools)
    for index, name in enumerate(tools):
        if index == 0 and name == "Task":
            continue
        if name > STRUCTURED_OUTPUT_TOOL:
            return [*tools[:index], STRUCTURED_OUTPUT_TOOL, *tools[index:]]
    return [*tools, STRUCTURED_OUTPUT_TOOL]


def schema_problems(schema: dict[str, Any], value: Any) -> str:
    """The real CLI's problem text for ``value`` ("" when it matches ``schema``)."""
    jsonschema = _jsonschema()

    validator = jsonschema.validators.validator_for(schema)(schema)
    problems = []
    for error in sorted(validator.iter_errors(value), key=lambda error: list(error.absolute_path)):
        path = "".join(f"/{part}" for part in error.absolute_path) or "root"
        problems.append(f"{path}: {_ajv_message(error)}")
    return ", ".join(problems)


def _ajv_message(error: Any) -> str:
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in (error.instance or {})]
        return f"must have required property '{missing[0] if missing else error.validator_value[0]}'"
    if error.validator == "type":
        wanted = error.validator_value
        return f"must be {','.join(wanted) if isinstance(wanted, list) else wanted}"
    if error.validator == "enum":
        return "must be equal to one of the allowed values"
    if error.validator == "additionalProperties":
        return "must NOT have additional properties"
    return str(error.message)


def minimal_instance(schema: Any, root: dict[str, Any] | None = None) -> Any:
    """A deterministic small value matching ``schema`` (see the module docstring)."""
    root = schema if root is None and isinstance(schema, dict) else (root or {})
    if not isinstance(schema, dict):
        return None
    reference = schema.get("$ref")
    if isinstance(reference, str) and reference.startswith("#/"):
        target: Any = root
        for part in reference[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return minimal_instance(target, root)
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for branches in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(branches), list) and schema[branches]:
            return minimal_instance(schema[branches][0], root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((name for name in kind if name != "null"), kind[0] if kind else None)
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") or {}
        required = schema.get("required") or []
        return {name: minimal_instance(properties.get(name, {}), root) for name in required}
    if kind == "array":
        count = max(int(schema.get("minItems", 0)), 1)
        if "maxItems" in schema:
            count = min(count, int(schema["maxItems"]))
        return [minimal_instance(schema.get("items", {}), root) for _ in range(count)]
    if kind == "string":
        text = _FORMATS.get(str(schema.get("format", "")), "")
        if text:
            return text
        shortest, longest = int(schema.get("minLength", 0)), schema.get("maxLength")
        if "pattern" not in schema and (longest is None or len(PLACEHOLDER) <= int(longest)):
            return PLACEHOLDER.ljust(shortest, "x")
        return "x" * shortest
    if kind in ("integer", "number"):
        minimum = schema.get("minimum", schema.get("exclusiveMinimum"))
        value = 0 if minimum is None else minimum + (1 if "exclusiveMinimum" in schema else 0)
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return False
    return None
