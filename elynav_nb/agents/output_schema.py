"""Structured results: a turn's ``output_schema`` made into the JSON Schema a CLI gets and a validator.

Where it sits: pure (no I/O), below the runner. ``AgentRunner.send(text, output_schema=...)`` calls
``output_schema_of`` before anything runs (a bad schema is ``INVALID_INPUT`` there); the wires send
``OutputSchema.wire_schema`` (claude ``--json-schema``, codex app-server ``outputSchema``, codex exec
``--output-schema FILE``, gemini: ``prompt_with_schema``); the driver settles the turn with
``settle_structured`` (the validated ``data``, or ``OUTPUT_INVALID``).

What a schema may be: a JSON Schema ``dict``, a pydantic model class, a ``TypedDict`` class, or a
type pydantic can adapt built from those (``list[Account]``). Validated values: pydantic model
instances for a model, plain dicts and lists for a dict schema or a ``TypedDict``.

The wrapper: claude offers the schema as a tool's ``input_schema`` and OpenAI's structured outputs
want an object at the root, so a schema whose root is not an object (an array of rows, say) is sent
wrapped as ``{"type": "object", "properties": {"result": <schema>}, "required": ["result"]}`` (its
``$defs`` moved to the wrapper's root) and unwrapped before validation. An object schema is sent as
it is.

Per CLI (checked on the real binaries): claude 2.1.332 validates the ``StructuredOutput`` call
against the schema itself and asks the model again (5 attempts, then
``error_max_structured_output_retries``, which we report as ``OUTPUT_INVALID``); codex 0.171.0 (both
modes) sends the schema to the Responses API as ``text.format`` ``{"type": "json_schema", "strict":
true, "name": "codex_output_schema"}``, so the real OpenAI API wants a strict-mode schema (every
object ``additionalProperties: false``, every property required): the schema is sent as given;
gemini 0.61.0 has no schema option (the schema goes in the prompt, validated here only).

How data flows::

    spec -> output_schema_of -> OutputSchema(wire_schema, wrapped, validator)
    the CLI's answer: claude's ``structured_output`` (a value), else the answer text
      -> parse_answer_json (the whole text, else the last fenced ```json block, else the last
         top-level JSON object or array; nothing else is guessed) -> unwrap -> validate -> data
"""

from __future__ import annotations

import json
import re
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from elynav_nb.errors import InvalidInput, OutputInvalid

__all__ = [
    "WRAPPER_KEY",
    "OutputSchema",
    "OutputSchemaSpec",
    "output_schema_of",
    "parse_answer_json",
    "prompt_with_schema",
    "settle_structured",
]

OutputSchemaSpec = Mapping[str, Any] | type | Any
"""A JSON Schema dict, a pydantic model class, a TypedDict class, or a type built from them."""

WRAPPER_KEY = "result"
_MESSAGE_CHARS = 300
_FENCED_JSON = re.compile(r"```json[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)

SchemaKind = Literal["json-schema", "pydantic", "typeddict", "type"]


@dataclass(frozen=True)
class OutputSchema:
    """One turn's output schema: what is sent (``wire_schema``) and how the answer is validated."""

    kind: SchemaKind
    schema: dict[str, Any]  # the schema as the user gave it (or as pydantic wrote it)
    wire_schema: dict[str, Any]  # what the CLI gets (wrapped when the root is not an object)
    wrapped: bool
    source: Any = field(repr=False, compare=False)
    _adapter: Any = field(default=None, repr=False, compare=False)  # pydantic TypeAdapter, or None
    _validator: Any = field(default=None, repr=False, compare=False)  # jsonschema validator, or None

    @property
    def key(self) -> str:
        """The canonical JSON text of the wire schema: two turns with the same key ask the same."""
        return json.dumps(self.wire_schema, sort_keys=True, separators=(",", ":"))

    @property
    def label(self) -> str:
        """A short name for reprs: the model's class name, or the schema's title or type."""
        if self.kind != "json-schema":
            return getattr(self.source, "__name__", None) or str(self.source)
        title = self.schema.get("title")
        return str(title) if title else f"schema({self.schema.get('type', 'any')})"

    def unwrap(self, value: Any) -> Any:
        """The answer inside the wrapper (``OUTPUT_INVALID`` when the wrapper is not there)."""
        if not self.wrapped:
            return value
        if not isinstance(value, dict) or WRAPPER_KEY not in value:
            raise OutputInvalid(
                f"the answer should be an object with the key {WRAPPER_KEY!r} (the wrapper of a schema "
                f"whose root is not an object): got {_excerpt(value)}"
            )
        return value[WRAPPER_KEY]

    def validate(self, value: Any) -> Any:
        """The validated Python value of ``value`` (already unwrapped), or ``OUTPUT_INVALID``."""
        if self._adapter is not None:
            import pydantic

            try:
                return self._adapter.validate_python(value)
            except pydantic.ValidationError as error:
                raise OutputInvalid(
                    f"the answer does not match {self.label}: {_pydantic_problems(error)}",
                    details={"errors": error.error_count()},
                ) from None
        errors = sorted(self._validator.iter_errors(value), key=lambda error: list(error.absolute_path))
        if errors:
            first = errors[0]
            where = "/".join(str(part) for part in first.absolute_path) or "(root)"
            raise OutputInvalid(
                f"the answer does not match the schema at {where}: {first.message[:_MESSAGE_CHARS]}"
                + (f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""),
                details={"errors": len(errors)},
            )
        return value


def output_schema_of(spec: OutputSchemaSpec | None) -> OutputSchema | None:
    """Normalise ``spec`` (None: no schema); ``INVALID_INPUT`` for anything that is not a usable schema."""
    if spec is None:
        return None
    if isinstance(spec, OutputSchema):
        return spec
    if isinstance(spec, Mapping):
        return _from_json_schema(spec)
    if isinstance(spec, str | bytes | int | float | bool | list | tuple):
        raise InvalidInput(
            f"output_schema must be a JSON Schema dict, a pydantic model or a TypedDict, not {type(spec).__name__}"
        )
    return _from_type(spec)


def _from_json_schema(spec: Mapping[str, Any]) -> OutputSchema:
    import jsonschema

    try:
        schema = json.loads(json.dumps(dict(spec)))
    except (TypeError, ValueError) as error:
        raise InvalidInput(f"output_schema is not JSON: {error}") from None
    if not schema:
        raise InvalidInput("output_schema is an empty dict: give a JSON Schema (at least a 'type')")
    validator_class = jsonschema.validators.validator_for(schema)
    try:
        validator_class.check_schema(schema)
    except jsonschema.SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "(root)"
        raise InvalidInput(
            f"output_schema is not a valid JSON Schema at {where}: {error.message[:_MESSAGE_CHARS]}"
        ) from None
    wire_schema, wrapped = _wire_form(schema)
    return OutputSchema(
        kind="json-schema",
        schema=schema,
        wire_schema=wire_schema,
        wrapped=wrapped,
        source=spec,
        _validator=validator_class(schema),
    )


def _from_type(spec: Any) -> OutputSchema:
    import pydantic

    kind: SchemaKind
    if isinstance(spec, type) and issubclass(spec, pydantic.BaseModel):
        kind = "pydantic"
    elif typing.is_typeddict(spec):
        kind = "typeddict"
    elif typing.get_origin(spec) is not None:
        kind = "type"
    else:
        raise InvalidInput(
            f"output_schema must be a JSON Schema dict, a pydantic model or a TypedDict, not {spec!r}"
        )
    try:
        adapter = pydantic.TypeAdapter(_adaptable(spec))
        schema = adapter.json_schema()
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError) as error:
        raise InvalidInput(f"output_schema {spec!r} has no JSON Schema: {error}") from None
    wire_schema, wrapped = _wire_form(schema)
    return OutputSchema(
        kind=kind, schema=schema, wire_schema=wire_schema, wrapped=wrapped, source=spec, _adapter=adapter
    )


def _adaptable(spec: Any) -> Any:
    """``spec`` with each ``typing.TypedDict`` remade as a ``typing_extensions`` one (pydantic needs that
    before Python 3.12), inside ``list[...]``, ``dict[...]`` and unions too."""
    if sys.version_info >= (3, 12):
        return spec
    import typing_extensions

    if typing.is_typeddict(spec) and type(spec).__module__ == "typing":  # typing's, not typing_extensions'
        required: frozenset[str] = getattr(spec, "__required_keys__", frozenset())
        fields: dict[str, Any] = {}
        for name, hint in typing.get_type_hints(spec, include_extras=True).items():
            converted = _adaptable(hint)
            fields[name] = converted if name in required else typing_extensions.NotRequired[converted]
        make_typed_dict: Any = typing_extensions.TypedDict
        remade: Any = make_typed_dict(spec.__name__, fields)
        remade.__doc__ = spec.__doc__
        return remade
    origin = typing.get_origin(spec)
    arguments = typing.get_args(spec)
    if origin is None or not arguments:
        return spec
    converted_arguments = tuple(_adaptable(argument) for argument in arguments)
    if converted_arguments == arguments:
        return spec
    if origin in (list, dict, tuple, set, frozenset):
        return types.GenericAlias(origin, converted_arguments)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[converted_arguments]  # noqa: UP007
    return spec


def _wire_form(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The schema a CLI gets, and whether it is wrapped (see the module docstring)."""
    if schema.get("type") == "object":
        return schema, False
    inner = dict(schema)
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {WRAPPER_KEY: inner},
        "required": [WRAPPER_KEY],
        "additionalProperties": False,
    }
    for definitions in ("$defs", "definitions"):  # "#/$defs/X" refers to the root: move them there
        if definitions in inner:
            wrapper[definitions] = inner.pop(definitions)
    if "$schema" in inner:
        wrapper["$schema"] = inner.pop("$schema")
    return wrapper, True


# -- the answer ---------------------------------------------------------------------------------------


def parse_answer_json(text: str) -> Any:
    """The JSON value of an answer given as text (``OUTPUT_INVALID`` when there is none).

    The whole text when it is JSON; else the last fenced ```json block (which must parse); else the
    last top-level JSON object or array written in the text. Nothing else is guessed.
    """
    stripped = text.strip()
    if not stripped:
        raise OutputInvalid("the answer is empty: no JSON to validate")
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    fenced = _FENCED_JSON.findall(stripped)
    if fenced:
        try:
            return json.loads(fenced[-1])
        except ValueError as error:
            raise OutputInvalid(f"the last ```json block of the answer is not JSON: {error}") from None
    last = _last_top_level_value(stripped)
    if last is None:
        raise OutputInvalid(f"the answer holds no JSON object or array: {stripped[:120]!r}")
    return last


def _last_top_level_value(text: str) -> Any:
    decoder = json.JSONDecoder()
    found: Any = None
    index = 0
    while True:
        starts = [position for position in (text.find("{", index), text.find("[", index)) if position >= 0]
        if not starts:
            return found
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            index = start + 1
            continue
        found = value
        index = end


def settle_structured(schema: OutputSchema, structured_output: Any, text: str) -> Any:
    """The validated data of a turn: the CLI's own structured value when it gave one, else its text."""
    value = structured_output if structured_output is not None else parse_answer_json(text)
    return schema.validate(schema.unwrap(value))


def prompt_with_schema(prompt: str, schema: OutputSchema) -> str:
    """The prompt with the schema and a short instruction (for a CLI with no schema option: gemini)."""
    schema_text = json.dumps(schema.wire_schema, ensure_ascii=False, indent=1)
    return (
        f"{prompt}\n\n"
        "Answer with one JSON value only, matching this JSON Schema (no prose, no code fence):\n"
        f"{schema_text}"
    )


def _excerpt(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 120 else text[:119] + "…"


def _pydantic_problems(error: Any) -> str:
    problems = []
    for item in error.errors()[:3]:
        where = ".".join(str(part) for part in item.get("loc", ())) or "(root)"
        problems.append(f"{where}: {item.get('msg', '')}")
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")
