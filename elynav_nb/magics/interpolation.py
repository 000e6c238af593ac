"""``{field}`` in a magic's cell body, filled from the user's namespace (pure: no I/O, no IPython).

Where it sits: used by ``elynav_nb.magics.extension`` before a cell's text goes to an agent. The rule
is jupyter-ai's (``str.format`` fields over the user namespace, never an expression: nothing is
evaluated): ``{name}``, ``{name.attribute}``, ``{name[key]}``, ``{In[3]}``, ``{Out[2]}`` and ``{_}``
are replaced by their ``str()``, ``{{`` and ``}}`` stay literal braces, and ``{name!r}`` /
``{value:.2f}`` work as in ``str.format``.

What a field may reach, and the bounds (each refusal an ``INVALID_INPUT`` naming the field):

- a name that is not defined is refused (never a silent empty string);
- no part of a field may start with ``_`` (``{x.__class__}``, ``{m._secret}``, ``{d[__builtins__]}``,
  ``{_private}``), except IPython's own history names (``{_}``, ``{__}``, ``{___}``, ``{_3}``,
  ``{_i3}``): dunders walk from any object to the whole interpreter;
- a width or precision in a format spec is at most ``MAX_PROMPT_CHARS``, each field's text and the
  whole message too (``{x:>300000000}`` is refused before anything is built);
- a value whose ``__format__``, ``__str__`` or ``__repr__`` raises is refused with its type and
  message;
- each field's text passes ``_redaction.redact_for_model``: the values of the kernel's secret
  variables (``{os.environ}`` holds ``ANTHROPIC_API_KEY``) and key or token shapes become
  ``[redacted]``, as in tool errors and hook reasons. The text the user typed is left as written.
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]  # str.format's own field parser (CPython)
import re
import string
from collections.abc import Iterable, Mapping
from typing import Any

from elynav_nb._redaction import describe_exception, redact_for_model
from elynav_nb.errors import InvalidInput

__all__ = ["MAX_PROMPT_CHARS", "interpolate"]

MAX_PROMPT_CHARS = 1_000_000
"""The longest message a magic sends (about 250,000 tokens: more than a model's context)."""

_IPYTHON_HISTORY_NAME = re.compile(r"_{1,3}|_i{1,3}|_i?\d+")
_NUMBERS_IN_SPEC = re.compile(r"\d+")
_BRACES = "write {{ and }} for literal braces"


class _Namespace(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        raise InvalidInput(
            f"{{{key}}} in the cell names nothing defined in this kernel: define {key} first, or {_BRACES}",
            details={"name": key},
        )


class _FieldFormatter(string.Formatter):
    """``str.format`` fields with the rules of the module docstring."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.total = 0

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        first, rest = _field_name_split(field_name)
        if isinstance(first, int):
            raise InvalidInput(
                f"a field names a variable ({{name}}), not a position ({{}} or {{0}}); {_BRACES}"
            )
        if first.startswith("_") and not _IPYTHON_HISTORY_NAME.fullmatch(first):
            _refuse_private(field_name, first)
        for _is_attribute, key in rest:
            if isinstance(key, str) and key.startswith("_"):
                _refuse_private(field_name, key)
        return super().get_field(field_name, args, kwargs)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        try:
            return super().convert_field(value, conversion)
        except ValueError:
            raise
        except Exception as error:
            raise _field_failed(value, error) from None

    def format_field(self, value: Any, format_spec: str) -> str:
        for number in _NUMBERS_IN_SPEC.findall(format_spec):
            if len(number) > 12 or int(number) > self.max_chars:
                raise InvalidInput(
                    f"the format spec {format_spec[:40]!r} asks for more than the {self.max_chars} "
                    "characters a message may hold",
                    details={"limit": self.max_chars},
                )
        try:
            text = format(value, format_spec)
        except ValueError as error:  # a spec the value does not take ({name:.2f} on a str)
            raise InvalidInput(
                f"the format spec {format_spec[:40]!r} does not apply to a {type(value).__name__} "
                f"({describe_exception(error, max_chars=200)}); {_BRACES}"
            ) from None
        except Exception as error:
            raise _field_failed(value, error) from None
        self.total += len(text)
        if len(text) > self.max_chars or self.total > self.max_chars:
            raise _too_long(self.max_chars)
        return redact_for_model(text)


def interpolate(text: str, namespace: Mapping[str, Any], *, max_chars: int = MAX_PROMPT_CHARS) -> str:
    """``text`` with each ``{field}`` replaced from ``namespace`` (see the module docstring)."""
    if len(text) > max_chars:
        raise _too_long(max_chars)
    formatter = _FieldFormatter(max_chars)
    try:
        filled = formatter.vformat(text, (), _Namespace(namespace))
    except InvalidInput:
        raise
    except (ValueError, IndexError, KeyError, AttributeError, TypeError) as error:
        raise InvalidInput(
            f"the cell's {{...}} fields could not be filled ({describe_exception(error, max_chars=200)}); "
            f"{_BRACES}",
        ) from None
    if len(filled) > max_chars:
        raise _too_long(max_chars)
    return filled


def _field_name_split(field_name: str) -> tuple[int | str, Iterable[tuple[bool, int | str]]]:
    """The parts of a field name, as ``str.format`` itself splits them."""
    first, rest = _string.formatter_field_name_split(field_name)
    return first, list(rest)


def _refuse_private(field_name: str, part: str) -> None:
    raise InvalidInput(
        f"{{{field_name[:80]}}} reaches {part[:40]!r}: a field may not use names that start with _ "
        f"(dunders and private attributes); put the value in a variable first, or {_BRACES}",
        details={"field": field_name[:80]},
    )


def _field_failed(value: Any, error: Exception) -> InvalidInput:
    return InvalidInput(
        f"a {type(value).__name__} in the cell's {{...}} fields could not be written as text: "
        f"{describe_exception(error, max_chars=200)}",
        details={"type": type(value).__name__},
    )


def _too_long(limit: int) -> InvalidInput:
    return InvalidInput(
        f"the message with its {{...}} fields filled would be longer than {limit} characters: "
        "send a summary (df.head(), len(x)) rather than the whole value",
        details={"limit": limit},
    )
