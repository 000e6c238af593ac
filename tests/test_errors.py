"""The error tree: stable unique codes, one-line notebook rendering, pickling, secret redaction."""

from __future__ import annotations

import pickle

import pytest

from elynav_nb import errors
from elynav_nb.errors import AgentBusy, ElynavError, VersionConflict, error_for_code, redact_secrets


def all_error_classes() -> list[type[ElynavError]]:
    return [getattr(errors, name) for name in errors.__all__ if isinstance(getattr(errors, name), type)]


def test_every_error_has_its_own_upper_case_code():
    codes = [error_class.code for error_class in all_error_classes()]
    assert len(codes) == len(set(codes))
    assert all(code == code.upper() and " " not in code for code in codes)


def test_every_exported_error_is_drawn_in_the_module_docstring():
    for error_class in all_error_classes():
        assert f"{error_class.__name__} " in errors.__doc__, error_class.__name__
        assert error_class.code in errors.__doc__, error_class.code


def test_error_for_code_finds_the_class_and_falls_back_to_the_base():
    assert error_for_code("AGENT_BUSY") is AgentBusy
    assert error_for_code("NO_SUCH_CODE") is ElynavError


def test_notebook_traceback_is_one_line_with_the_code():
    error = VersionConflict("expected version 3, found 4", details={"current_version": 4})
    assert error._render_traceback_() == ["VERSION_CONFLICT: expected version 3, found 4"]
    assert error.to_dict() == {
        "code": "VERSION_CONFLICT",
        "message": "expected version 3, found 4",
        "current_version": 4,
    }
    assert isinstance(error, errors.Conflict)


def test_errors_survive_pickling_with_their_details():
    error = AgentBusy("busy", details={"agent": "elynav-sdr"})
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is AgentBusy and copy.code == "AGENT_BUSY" and copy.details == {"agent": "elynav-sdr"}


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer abc.def.ghi",
        "ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnop",
        "cookie docs_sessionid=s3cr3tvalue; csrftoken=t0k3n",
        "token: 'hunter2hunter2'",
    ],
)
def test_redaction_removes_secret_values(text):
    redacted = redact_secrets(text)
    for secret in ("abc.def.ghi", "sk-ant-api03-abcdefghijklmnop", "s3cr3tvalue", "t0k3n", "hunter2hunter2"):
        assert secret not in redacted
    assert "[redacted]" in redacted
