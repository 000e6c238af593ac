"""``elynav demo --cli codex|gemini``: the same demo on another CLI, and an exit code that tells whether it completed.

The CLI is the fault-injecting fake per-turn CLI (``ELYNAV_CODEX_CLI`` / ``ELYNAV_GEMINI_CLI``):
``FAKE_MODE=echo`` completes the turn and the office's ask (exit 0); ``FAKE_MODE=api-error`` ends
both with the CLI's error line (exit 1), as a real CLI without a login or model access does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FAKE = str(Path(__file__).with_name("fake_per_turn_cli.py"))


@pytest.mark.parametrize("cli", ["codex", "gemini"])
@pytest.mark.parametrize(("mode", "exit_code"), [("echo", 0), ("api-error", 1)])
def test_the_demo_runs_on_codex_and_gemini_and_exits_non_zero_when_its_turn_did_not_complete(
    cli, mode, exit_code, tmp_path
):
    environment = {
        **os.environ,
        f"ELYNAV_{cli.upper()}_CLI": f"{sys.executable} {FAKE}",
        "FAKE_MODE": mode,
        "ELYNAV_CODEX_MODE": "exec",  # the fake speaks `codex exec --json`, not app-server
        "ELYNAV_CLI_HOMES": str(tmp_path / "cli-homes"),
        "ELYNAV_STANDIN_HOME": str(tmp_path / "standin-home"),
    }
    completed = subprocess.run(
        [sys.executable, "-m", "elynav_nb", "demo", "--cli", cli, "--workspace", str(tmp_path / "workspace")],
        capture_output=True,
        text=True,
        timeout=240,
        env=environment,
        check=False,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == exit_code, output
    assert f"CLI {cli} (" in completed.stdout.splitlines()[0]
    if mode == "echo":
        assert "(turn 1)" in completed.stdout and "done · user -> elynav-orchestrator" in completed.stdout
    else:
        assert "error · agent elynav-sdr" in completed.stdout
