"""`elynav agents install` through the real CLI entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from elynav_nb.cli import main

SIX_NAMES = [
    "elynav-cmo",
    "elynav-content",
    "elynav-dev-executor",
    "elynav-dev-proposer",
    "elynav-orchestrator",
    "elynav-sdr",
]


def test_install_all_prints_one_line_per_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["agents", "install", "--workspace", str(tmp_path)])
    assert status == 0
    output = capsys.readouterr()
    lines = output.out.splitlines()
    assert len(lines) == 7
    folder = tmp_path / ".claude" / "agents"
    for name, line in zip(SIX_NAMES, lines[:6], strict=True):
        assert line.split()[0] == name
        assert line.endswith(str(folder / f"{name}.md"))
        assert (folder / f"{name}.md").is_file()
    assert "tools=11" in lines[5] and "permission=default" in lines[5]
    assert "permission=bypassPermissions" in lines[2]
    assert lines[6] == f"6 agent(s) installed in {folder}"
    assert "mcp__crm__" in output.err, "no .mcp.json: the user is told the CRM server is needed"


def test_install_chosen_agents_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")
    status = main(
        [
            "agents",
            "install",
            "--workspace",
            str(tmp_path),
            "--agent",
            "elynav-dev-proposer",
            "--agent",
            "elynav-sdr",
        ]
    )
    assert status == 0
    output = capsys.readouterr()
    assert [line.split()[0] for line in output.out.splitlines()[:2]] == ["elynav-dev-proposer", "elynav-sdr"]
    assert sorted(path.name for path in (tmp_path / ".claude" / "agents").iterdir()) == [
        "elynav-dev-proposer.md",
        "elynav-sdr.md",
    ]
    assert output.err == ""


def test_list_installs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    status = main(["agents", "install", "--list"])
    assert status == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == SIX_NAMES
    assert not (tmp_path / ".claude").exists()


def test_default_workspace_is_the_current_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["agents", "install", "--agent", "elynav-cmo"]) == 0
    assert (tmp_path / ".claude" / "agents" / "elynav-cmo.md").is_file()


def test_unknown_agent_is_a_typed_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["agents", "install", "--workspace", str(tmp_path), "--agent", "nobody"])
    assert status == 2
    error_output = capsys.readouterr().err
    assert error_output.startswith("AGENT_NOT_FOUND: no built-in agent named 'nobody'")
    assert not (tmp_path / ".claude" / "agents" / "nobody.md").exists()
