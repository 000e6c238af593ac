"""The real `claude` binary loads the installed agents with exactly their tools (skipped without the binary).

Set ELYNAV_CLAUDE_BIN to the binary, or put `claude` on PATH. No account is needed: the `system/init` line
comes before the first API call, which fails fast against a closed local port.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from elynav_nb.agents.definitions import builtin_agents, install_agents
from tests.tiers import needs

CLAUDE_BINARY = os.environ.get("ELYNAV_CLAUDE_BIN") or shutil.which("claude")

pytestmark = [
    pytest.mark.real_cli,
    needs(
        "ELYNAV_REQUIRE_REAL_CLI",
        None if CLAUDE_BINARY else "the claude CLI is not installed (set ELYNAV_CLAUDE_BIN)",
    ),
]


def _init_message(binary: str, workspace: Path, home: Path, agent_name: str) -> dict[str, object]:
    environment = dict(os.environ)
    environment.pop("CLAUDECODE", None)
    environment.update(
        HOME=str(home),
        ANTHROPIC_API_KEY="sk-placeholder-not-a-key",
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",
        CLAUDE_CODE_MAX_RETRIES="0",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    completed = subprocess.run(
        [binary, "-p", "--agent", agent_name, "--output-format", "stream-json", "--verbose", "bonjour"],
        cwd=workspace,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    for line in completed.stdout.splitlines():
        message = json.loads(line)
        if message.get("type") == "system" and message.get("subtype") == "init":
            assert isinstance(message, dict)
            return message
    raise AssertionError(f"no init line for {agent_name}; stderr: {completed.stderr[-500:]}")


def test_cli_sees_each_agent_with_its_tools_and_model(tmp_path: Path) -> None:
    assert CLAUDE_BINARY is not None
    workspace = tmp_path / "workspace"
    home = tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    install_agents(workspace)
    for name, definition in builtin_agents().items():
        init = _init_message(CLAUDE_BINARY, workspace, home, name)
        agents_seen = init["agents"]
        assert isinstance(agents_seen, list)
        assert set(builtin_agents()) <= set(agents_seen), "an invalid file would be skipped silently"
        # No .mcp.json here, so the CRM tools are absent: compare the built-in tools only.
        # A rule such as Bash(elynav ask:*) makes its tool available: the CLI lists it as "Bash".
        expected_tools = {tool.split("(")[0] for tool in definition.tools if not tool.startswith("mcp__")}
        tools_seen = init["tools"]
        assert isinstance(tools_seen, list)
        assert set(tools_seen) == expected_tools, name
        assert definition.model is not None
        assert definition.model in str(init["model"]), name
