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
    assert "← ok:" in completed.stdout and "Lyon" in completed.stdout
    assert "→ mcp__docs__insert_block" in completed.stdout
    assert '← ok: {"block_id":' in completed.stdout
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
    assert lines[office_at + 1].startswith("done · user -> elynav-orchestrator · ask ")
    # The reply itself is printed (README: "the reply and the office's history are printed"), indented.
    assert lines[office_at + 2] == "Reply of elynav-orchestrator:"
    history_at = lines.index("History (.elynav/history.jsonl):")
    reply_lines = lines[office_at + 3 : history_at]
    assert reply_lines and all(line.startswith("  ") for line in reply_lines)
    assert "You said: Demande à elynav-sdr, avec elynav ask" in "\n".join(reply_lines)
    assert lines[history_at + 1].startswith("  user -> elynav-orchestrator · done · waited ")
    assert lines[history_at + 2].startswith("  elynav-orchestrator -> elynav-sdr · done · waited ")
    assert (tmp_path / ".elynav" / "history.jsonl").is_file()
