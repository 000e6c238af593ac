"""The README's main command: ``elynav demo`` runs one streamed turn offline, end to end: CRM read over
MCP, the answer written into a document of the embedded Docs sandbox over MCP, saved and shown; then
one delegation between two agents through the office."""

from __future__ import annotations

import os
import subprocess
import sys


def test_elynav_demo_streams_a_turn_with_a_real_mcp_call(tmp_path):
    environment = {**os.environ, "PATH": os.environ.get("PATH", "")}
    environment.pop("ELYNAV_AGENT_CLI", None)
    completed = subprocess.run(
        [sys.executable, "-m", "elynav_nb", "demo", "--workspace", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
        env=environment,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "elynav demo · agent elynav-sdr · CLI stand-in (elynav-claude-standin)"
    assert "MCP servers: crm (connected), docs (connected)" in completed.stdout
    assert '→ mcp__crm__search_accounts {"query": "Lyon", "limit": 3}' in completed.stdout
    assert "← ok (" in completed.stdout and "Lyon" in completed.stdout
    assert "→ mcp__docs__insert_block" in completed.stdout
    assert '← ok (51 characters): {"block_id":' in completed.stdout
    # a cut result says so (…), and who allowed each call is said
    search_result = next(line for line in lines if line.startswith("  ← ok (") and '"items"' in line)
    assert search_result.endswith("…") and len(search_result) < 140
    assert "  ? permission asked for mcp__crm__search_accounts: allowed by the permission handler" in lines
    assert "[elynav stand-in]" in completed.stdout
    docs_at = lines.index("Docs document 'Comptes à Lyon' on the local Docs sandbox, as saved:")
    assert lines[docs_at + 1] == "  ## Comptes à **Lyon** (démo)"
    summary = lines[docs_at - 1]
    assert summary.startswith("completed · agent elynav-sdr · session ")
    assert "2 tool calls" in summary and summary.endswith("stand-in CLI")
    assert "docs_sessionid" not in completed.stdout + completed.stderr
    assert (tmp_path / ".claude" / "agents" / "elynav-sdr.md").is_file()
    assert (tmp_path / ".mcp.json").is_file()
    # The office: the orchestrator delegates through a real `elynav ask` process; the history shows both asks.
    office_at = lines.index(
        "elynav office · elynav-orchestrator delegates to elynav-sdr with `elynav ask` (a real process)"
    )
    # its steps as they happen (the office works for seconds), then how the ask ended
    progress = lines[office_at + 1 : office_at + 5]
    assert all(line.startswith("  … ") for line in progress), progress
    assert progress[0].startswith("  … elynav-orchestrator works on ask ")
    assert progress[1].startswith("  … elynav-sdr works on ask ") and progress[1].endswith(
        " from elynav-orchestrator"
    )
    assert lines[office_at + 5].startswith("done · user -> elynav-orchestrator · ask ")
    # The SDR's answer to the orchestrator (the point of the delegation), then the orchestrator's to you.
    sdr_at = lines.index("Reply of elynav-sdr to elynav-orchestrator (through `elynav ask`, done):")
    assert lines[sdr_at + 1].endswith("You said: Quels comptes relancer cette semaine ?")
    reply_at = lines.index("Reply of elynav-orchestrator to you:")
    history_at = lines.index("History (.elynav/history.jsonl):")
    reply_lines = lines[reply_at + 1 : history_at]
    assert reply_lines and all(line.startswith("  ") for line in reply_lines)
    assert "You said: Demande à elynav-sdr, avec elynav ask" in "\n".join(reply_lines)
    assert lines[history_at + 1].startswith("  user -> elynav-orchestrator · done · waited ")
    assert lines[history_at + 2].startswith("  elynav-orchestrator -> elynav-sdr · done · waited ")
    assert (tmp_path / ".elynav" / "history.jsonl").is_file()


def test_the_office_step_ends_in_a_timeout_reply_not_a_traceback(tmp_path):
    """``--timeout`` bounds the office's ask too: past it, the ask is a ``timeout`` reply, printed."""
    import asyncio
    import io

    from elynav_nb.demo import prepare_workspace, run_office_step

    prepare_workspace(tmp_path)
    output = io.StringIO()
    reply = asyncio.run(run_office_step(tmp_path, real=False, timeout=0.3, environment={}, output=output))
    assert reply.outcome == "timeout" and reply.error_code == "AGENT_TIMEOUT"
    assert "timeout · user -> elynav-orchestrator" in output.getvalue()


def test_the_scratch_workspace_is_named_and_said_removed(monkeypatch, capsys):
    from pathlib import Path

    from elynav_nb import demo
    from elynav_nb.cli import main

    used: list[Path] = []

    async def fake_run_demo(workspace, **options):
        used.append(workspace)
        return FakeOutcome(), FakeOutcome()

    class FakeOutcome:
        ok = True

    monkeypatch.setattr(demo, "run_demo", fake_run_demo)
    assert main(["demo"]) == 0
    out = capsys.readouterr().out.splitlines()
    (scratch,) = used
    assert out[0].startswith(f"workspace: {scratch} (a scratch folder, removed at the end")
    assert out[-1] == f"scratch workspace {scratch} removed" and not scratch.exists()
