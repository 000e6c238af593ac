"""Which CLI a runner starts: the real claude when on PATH, the stand-in otherwise or when asked."""

from __future__ import annotations

import sys

import pytest

from elynav_nb.agents.locate import locate_cli
from elynav_nb.errors import CliNotFound


@pytest.fixture
def fake_claude_on_path(tmp_path, monkeypatch):
    binary = tmp_path / "claude"
    binary.write_text("#!/bin/sh\nexit 0\n")
    binary.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    return binary


def test_the_real_claude_on_path_wins(fake_claude_on_path):
    command = locate_cli(environment={})
    assert command.argv == (str(fake_claude_on_path),) and not command.is_standin
    assert command.label.startswith("claude (")


def test_the_stand_in_when_claude_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    command = locate_cli(environment={})
    assert command.is_standin and command.argv == (sys.executable, "-m", "elynav_nb.sandbox.claude_standin")
    with pytest.raises(CliNotFound) as caught:
        locate_cli(environment={}, fallback_to_standin=False)
    assert "npm install -g @anthropic-ai/claude-code" in str(caught.value)


def test_asking_for_the_stand_in_overrides_path(fake_claude_on_path):
    assert locate_cli("standin").is_standin
    assert locate_cli(environment={"ELYNAV_AGENT_CLI": "standin"}).is_standin


def test_an_explicit_command_keeps_its_arguments(fake_claude_on_path):
    command = locate_cli(["claude", "--debug"])
    assert command.argv == (str(fake_claude_on_path), "--debug")
    with pytest.raises(CliNotFound):
        locate_cli("/no/such/claude")
