"""A tool function's parameters as a pydantic model: the input JSON Schema and strict argument checks.

Where it sits: ``kernel_tool`` builds one ``ArgumentSpec`` per tool when ``@agent_tool`` runs, publishes
``spec.schema`` as the tool's ``parameters`` and calls ``spec.validate(arguments)`` before every call.
Pure: no I/O.

How a signature becomes a schema: each parameter is one property, typed by its hint (no hint: any JSON
value), described by the docstring's text for it, required when it has no default. ``*args`` and
``**kwargs`` cannot be given by name in a JSON object and are refused. The model's fields carry the
parameter names as aliases, so a name like ``json`` or ``_private`` never clashes with pydantic's own.

How arguments are checked: strictly (``"3"`` is not an int, ``1`` is not a bool, an unknown key is
refused), through pydantic's JSON mode so that a date or an enum may arrive as its JSON string. A
failure is one ``InvalidInput`` whose message names each wrong argument in plain words. Only the
arguments given are passed on: an omitted one takes the function's own default.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import typing
from collections.abc import Callable, Mapping
from typing import Any

import pydantic
from pydantic import ConfigDict, Field
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaWarningKind

from elynav_nb.errors import InvalidInput, redact_secrets

__all__ = ["ArgumentSpec", "build_argument_spec", "underlying_function"]

_MAX_SHOWN_INPUT_CHARS = 80


class _RaisingJsonSchema(GenerateJsonSchema):
    """Schema generation that fails loudly on a type JSON Schema cannot express (instead of a warning)."""

    def emit_warning(self, kind: JsonSchemaWarningKind, detail: str) -> None:
        raise ValueError(detail)


class ArgumentSpec:
    """The parameters of one tool: ``schema`` (JSON Schema of the arguments object) and ``validate``."""

    def __init__(
        self,
        tool_name: str,
        model: type[pydantic.BaseModel],
        field_names: dict[str, str],
        positional_defaults: dict[str, Any],
        schema: dict[str, Any],
    ) -> None:
        self.tool_name = tool_name
        self.schema = schema
        self._model = model
        self._field_names = field_names  # parameter name -> model field name
        self._positional_defaults = positional_defaults  # positional-only name -> its default (or empty)

    @property
    def parameter_names(self) -> list[str]:
        return list(self._field_names)

    def validate(self, arguments: Mapping[str, Any] | None) -> tuple[list[Any], dict[str, Any]]:
        """``(positional, keyword)`` values to call the function with; ``InvalidInput`` naming what is wrong."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            raise InvalidInput(
                f"tool {self.tool_name!r}: the arguments must be a JSON object, not {type(arguments).__name__}"
            )
        try:
            text = json.dumps(dict(arguments), allow_nan=False)
        except (TypeError, ValueError) as error:
            raise InvalidInput(
                f"tool {self.tool_name!r}: the arguments are not plain JSON ({error})"
            ) from None
        try:
            validated = self._model.model_validate_json(text)
        except pydantic.ValidationError as error:
            raise InvalidInput(
                f"tool {self.tool_name!r}: {_describe_problems(error, self.parameter_names, arguments)}",
                details={"arguments": sorted({_argument_of(problem) for problem in error.errors()})},
            ) from None
        given = validated.model_fields_set
        positional: list[Any] = []
        omitted_positional: list[Any] = []  # defaults of skipped positional-only parameters, pending
        keyword: dict[str, Any] = {}
        for parameter_name, field_name in self._field_names.items():
            if parameter_name in self._positional_defaults:
                if field_name in given:
                    positional.extend(omitted_positional)
                    omitted_positional.clear()
                    positional.append(getattr(validated, field_name))
                else:
                    omitted_positional.append(self._positional_defaults[parameter_name])
            elif field_name in given:
                keyword[parameter_name] = getattr(validated, field_name)
        return positional, keyword


def build_argument_spec(
    tool_name: str, function: Callable[..., Any], descriptions: Mapping[str, str]
) -> ArgumentSpec:
    """The ``ArgumentSpec`` of ``function``; ``InvalidInput`` when a parameter cannot be a JSON argument."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError) as error:
        raise InvalidInput(f"tool {tool_name!r}: its signature cannot be read ({error})") from None
    try:
        hints = typing.get_type_hints(underlying_function(function), include_extras=True)
    except Exception as error:  # a hint naming something undefined, a bad forward reference...
        raise InvalidInput(
            f"tool {tool_name!r}: its type hints cannot be resolved ({type(error).__name__}: {error})"
        ) from None
    fields: dict[str, Any] = {}
    field_names: dict[str, str] = {}
    positional_defaults: dict[str, Any] = {}
    for index, parameter in enumerate(signature.parameters.values()):
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise InvalidInput(
                f"tool {tool_name!r}: *{parameter.name} / **{parameter.name} cannot be given as named JSON "
                "arguments; list the parameters one by one"
            )
        if parameter.kind is parameter.POSITIONAL_ONLY:
            positional_defaults[parameter.name] = parameter.default
        field_name = f"argument_{index}"
        field_names[parameter.name] = field_name
        annotation = hints.get(parameter.name, Any)
        fields[field_name] = (annotation, _field(parameter, descriptions.get(parameter.name, "")))
    try:
        model = pydantic.create_model(
            f"{_identifier(tool_name)}_arguments",
            __config__=ConfigDict(strict=True, extra="forbid", populate_by_name=False),
            **fields,
        )
        schema = model.model_json_schema(by_alias=True, schema_generator=_RaisingJsonSchema)
    except Exception as error:  # pydantic's schema errors have several types
        raise InvalidInput(
            f"tool {tool_name!r}: a parameter's type cannot be a JSON argument ({type(error).__name__}: "
            f"{_first_line(str(error))})"
        ) from None
    return ArgumentSpec(tool_name, model, field_names, positional_defaults, _clean_schema(schema))


def underlying_function(function: Callable[..., Any]) -> Any:
    """What holds the hints and the docstring: the function inside ``functools.partial`` layers, or
    the ``__call__`` method of a callable object."""
    target: Any = function
    while isinstance(target, functools.partial):
        target = target.func
    if not (inspect.isfunction(target) or inspect.ismethod(target) or inspect.isbuiltin(target)):
        call_method = getattr(type(target), "__call__", None)
        if call_method is not None:
            return call_method
    return target


def _field(parameter: inspect.Parameter, description: str) -> Any:
    extra: dict[str, Any] = {"alias": parameter.name}
    if description:
        extra["description"] = description
    if parameter.default is parameter.empty:
        return Field(**extra)
    default = parameter.default
    if _is_plain_json(default):
        return Field(default=default, **extra)
    # Not JSON (a sentinel, an object): the parameter is optional, its default stays out of the schema.
    # The factory's value is never used: an omitted argument is not passed, the function's default applies.
    return Field(default_factory=lambda: default, **extra)


def _is_plain_json(value: Any) -> bool:
    if value is None or isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(_is_plain_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_plain_json(item) for key, item in value.items())
    return False


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's generated ``title`` keys (noise for a model), keep everything else."""
    cleaned = _without_titles(schema)
    assert isinstance(cleaned, dict)
    cleaned.setdefault("properties", {})
    return cleaned


def _without_titles(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            result[key] = {name: _without_titles(item) for name, item in value.items()}
        else:
            result[key] = _without_titles(value)
    return result


def _argument_of(problem: Mapping[str, Any]) -> str:
    location = problem.get("loc") or ()
    return str(location[0]) if location else "(arguments)"


def _describe_problems(
    error: pydantic.ValidationError, known: list[str], arguments: Mapping[str, Any]
) -> str:
    by_path: dict[str, list[str]] = {}
    shown_inputs: dict[str, str] = {}
    for problem in error.errors(include_url=False):
        location = _input_path(tuple(problem.get("loc") or ()), arguments)
        name = str(location[0]) if location else "(arguments)"
        path = name + "".join(
            f"[{part!r}]" if isinstance(part, str) else f"[{part}]" for part in location[1:]
        )
        kind = problem.get("type", "")
        if kind == "missing":
            by_path.setdefault(path, []).append("is required")
        elif kind == "extra_forbidden":
            expected = ", ".join(known) if known else "none"
            by_path.setdefault(path, []).append(f"is not a parameter of this tool (parameters: {expected})")
        else:
            message = str(problem.get("msg", "is not valid"))
            message = message[0].lower() + message[1:] if message else message
            by_path.setdefault(path, []).append(message)
            shown_inputs[path] = _shown(problem.get("input"))
    sentences: list[str] = []
    for path, messages in by_path.items():
        unique = list(dict.fromkeys(messages))
        if path in shown_inputs:
            sentences.append(f"argument {path!r}: {', or '.join(unique)} (got {shown_inputs[path]})")
        else:
            sentences.append(f"argument {path!r} {', and '.join(unique)}")
    return "; ".join(sentences)


def _input_path(location: tuple[Any, ...], arguments: Mapping[str, Any]) -> tuple[Any, ...]:
    """``location`` without pydantic's union-branch tags (``('b', 'int')`` -> ``('b',)``): only the
    parts that step into the arguments as given are kept."""
    kept: list[Any] = []
    current: Any = arguments
    for part in location:
        if isinstance(current, Mapping) and part in current:
            kept.append(part)
            current = current[part]
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            kept.append(part)
            current = current[part]
        elif not kept:
            kept.append(part)  # a missing or unknown argument: its name
            current = None
    return tuple(kept)


def _shown(value: Any) -> str:
    text = redact_secrets(json.dumps(value) if _is_plain_json(value) else repr(value))
    if len(text) > _MAX_SHOWN_INPUT_CHARS:
        text = text[:_MAX_SHOWN_INPUT_CHARS] + "…"
    return text


def _identifier(name: str) -> str:
    return "".join(character if character.isalnum() else "_" for character in name) or "tool"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
