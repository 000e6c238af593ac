"""Which CLI a runner starts: the real claude when on PATH, the stand-in otherwise or when asked."""

from __future__ import annotations

import sys
from pathlib import Path

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
    assert command.is_standin and command.argv == (
        sys.executable,
        "-m",
        "elynav_nb.sandbox.claude.claude_standin",
    )
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


def _fake_npm_cli(tmp_path, package: str, version: str, script: str):
    """A fake npm layout: node_modules/<package>/{package.json,<script>} and .bin/<name> -> script."""
    package_folder = tmp_path / "node_modules" / package
    (package_folder / script).parent.mkdir(parents=True)
    (package_folder / "package.json").write_text(f'{{"name": "{package}", "version": "{version}"}}')
    target = package_folder / script
    target.write_text("#!/bin/sh\nexit 0\n")
    target.chmod(0o755)
    bin_folder = tmp_path / "node_modules" / ".bin"
    bin_folder.mkdir(exist_ok=True)
    link = bin_folder / Path(script).stem
    link.symlink_to(target)
    return link


def test_codex_and_gemini_are_found_by_variable_then_path(tmp_path, monkeypatch):
    from elynav_nb.agents.locate import cli_version
    from elynav_nb.errors import InvalidInput

    codex = _fake_npm_cli(tmp_path, "@openai/codex", "0.171.0", "bin/codex.js")
    gemini = _fake_npm_cli(tmp_path, "@google/gemini-cli", "0.61.0", "bundle/gemini.js")
    monkeypatch.setenv("PATH", str(codex.parent))
    command = locate_cli(cli="codex", environment={})
    assert command.name == "codex" and command.argv == (str(codex),)
    found = locate_cli(cli="gemini", environment={"ELYNAV_GEMINI_CLI": str(gemini)})
    assert found.name == "gemini" and found.label.startswith("gemini (") and not found.is_standin
    assert cli_version(found) == "0.61.0"  # from the npm package, no process started
    assert cli_version(locate_cli(str(codex), cli="codex")) == "0.171.0"
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(CliNotFound, match="npm install -g @google/gemini-cli"):
        locate_cli(cli="gemini", environment={})
    with pytest.raises(InvalidInput, match="no stand-in for codex"):
        locate_cli("standin", cli="codex")


def test_a_relative_executable_becomes_absolute(fake_claude_on_path, monkeypatch):
    monkeypatch.chdir(fake_claude_on_path.parent)
    command = locate_cli("./claude")
    assert command.argv == (str(fake_claude_on_path),)
