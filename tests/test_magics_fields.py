"""``{field}`` in a magic's message: what a field may reach, the size bound, and typed failures (issue 28, item 8)."""

from __future__ import annotations

import os
import sys

import pytest

from elynav_nb.errors import InvalidInput
from elynav_nb.magics.interpolation import MAX_PROMPT_CHARS, interpolate


class Account:
    name = "Acme"
    _owner_token = "private-thing"


class FailsToFormat:
    def __format__(self, spec: str) -> str:
        raise RuntimeError("cannot format password=opensesame99")


class FailsToRepr:
    def __repr__(self) -> str:
        raise KeyError("broken repr")


NAMESPACE = {
    "os": os,
    "sys": sys,
    "account": Account(),
    "rows": {"a": 1, "__hidden": 2},
    "ratio": 0.12345,
    "width": 8,
    "_": "the last output",
    "_3": "output three",
    "_i3": "input three",
    "bad": FailsToFormat(),
    "bad_repr": FailsToRepr(),
    "big": "x" * 600_000,
}


def test_fields_fill_as_str_format_does():
    message = (
        "{account.name} {rows[a]} {ratio:.2f} {ratio:>{width}.1%} {_} {_3} {_i3} {{literal}} {account.name!r}"
    )
    text = interpolate(message, NAMESPACE)
    assert text == message.format_map(NAMESPACE)
    assert text.startswith("Acme 1 0.12    12.3% the last output output three input three {literal}")


@pytest.mark.parametrize(
    "field",
    [
        "{account.__class__}",
        "{account._owner_token}",
        "{os.sys.modules[os].__dict__[environ]}",
        "{rows[__hidden]}",
        "{__builtins__}",
        "{_oh}",
    ],
)
def test_dunder_and_private_names_are_refused(field):
    with pytest.raises(InvalidInput) as raised:
        interpolate(f"look: {field}", {**NAMESPACE, "__builtins__": __builtins__, "_oh": {}})
    assert raised.value.code == "INVALID_INPUT" and "start with _" in raised.value.message


def test_the_environment_reached_through_a_module_has_its_secrets_redacted(monkeypatch):
    monkeypatch.setenv("FIELDS_TEST_SERVICE_API_KEY", "field-secret-value-123")
    text = interpolate("{os.environ[FIELDS_TEST_SERVICE_API_KEY]} and {os.environ}", NAMESPACE)
    assert "field-secret-value-123" not in text
    assert text.startswith("[redacted] and ")


@pytest.mark.parametrize("message", ["{ratio:>300000000}", "{ratio:.999999999999}", "{big}{big}"])
def test_a_prompt_larger_than_the_bound_is_refused_naming_it(message):
    with pytest.raises(InvalidInput) as raised:
        interpolate(message, NAMESPACE)
    assert raised.value.details["limit"] == MAX_PROMPT_CHARS
    assert str(MAX_PROMPT_CHARS) in raised.value.message


def test_a_message_typed_longer_than_the_bound_is_refused_too():
    with pytest.raises(InvalidInput):
        interpolate("x" * (MAX_PROMPT_CHARS + 1), {})


@pytest.mark.parametrize("field", ["{bad}", "{bad_repr!r}"])
def test_a_value_that_cannot_be_written_gives_a_typed_error(field):
    with pytest.raises(InvalidInput) as raised:
        interpolate(field, NAMESPACE)
    assert "could not be written as text" in raised.value.message
    assert "opensesame99" not in raised.value.message  # the exception's text is redacted too


@pytest.mark.parametrize(
    "field", ["{missing}", "{}", "{0}", "{ratio!z}", "{account:zz}", "{account.nothing}"]
)
def test_other_bad_fields_are_typed(field):
    with pytest.raises(InvalidInput):
        interpolate(field, NAMESPACE)
