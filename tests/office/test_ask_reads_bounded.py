"""``elynav ask`` reads what a user points it at within a bound (issue 28, item 6c).

``--schema /dev/zero`` read 2.9 GB in 4 s; standard input (``-``) had no bound either. Each read
happens before the office is reached, so no office runs here; every process is a child with a timeout.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from elynav_nb.office.ask_command import MAX_READ_BYTES
from elynav_nb.office.wire import MAX_REQUEST_BYTES


def _ask(*arguments: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elynav_nb", "ask", "w-a", *arguments, "--socket", "/nonexistent/office.sock"],
        input=None if stdin is None else stdin.decode("latin-1"),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_bound_is_what_one_request_can_carry() -> None:
    assert MAX_READ_BYTES == MAX_REQUEST_BYTES


@pytest.mark.parametrize("source", ["/dev/zero", "/dev/urandom"])
def test_a_schema_file_without_end_is_refused_at_the_bound(source: str) -> None:
    completed = _ask("hi", "--schema", source)
    assert completed.returncode == 2, completed.stderr
    assert "INVALID_INPUT" in completed.stderr and str(MAX_READ_BYTES) in completed.stderr
    assert "Traceback" not in completed.stderr


def test_a_schema_nested_too_deep_is_a_typed_refusal(tmp_path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    completed = _ask("hi", "--schema", str(deep))
    assert completed.returncode == 2 and "INVALID_INPUT" in completed.stderr, completed.stderr
    assert "Traceback" not in completed.stderr


def test_standard_input_past_the_bound_is_refused() -> None:
    completed = _ask("-", stdin=b"x" * (MAX_READ_BYTES + 10))
    assert completed.returncode == 2 and "INVALID_INPUT" in completed.stderr, completed.stderr
    assert "standard input" in completed.stderr
