"""The runner against the real claude binary, when one is installed (no account needed).

Without credentials every turn of the real CLI ends with its "Not logged in" answer, which still
exercises the whole real protocol: spawn, ``initialize`` (and its agent list), ``--session-id``,
per-turn ``system/init``, the synthetic error ``assistant`` line, ``result`` with ``is_error``, a
second turn in the same process, and the bounded stop. Set ELYNAV_CLAUDE_BIN or put ``claude`` on
PATH (``.ci/run`` points it at the binary bundled in the claude-agent-sdk wheel).
"""

from __future__ import annotations

import os
import shutil

import pytest

from elynav_nb.agents import AgentError, AgentRunner, builtin_agents
from tests.tiers import needs

from .helpers import process_alive

CLAUDE_BINARY = os.environ.get("ELYNAV_CLAUDE_BIN") or shutil.which("claude")

pytestmark = [
    pytest.mark.real_cli,
    needs(
        "ELYNAV_REQUIRE_REAL_CLI",
        None if CLAUDE_BINARY else "the claude CLI is not installed (set ELYNAV_CLAUDE_BIN)",
    ),
]


@pytest.fixture
def offline_environment(tmp_path, monkeypatch):
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}


@pytest.mark.anyio
async def test_real_cli_turns_without_an_account_end_as_errors_and_the_process_lives_on(
    tmp_path, offline_environment
):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    runner = AgentRunner(
        builtin_agents()["elynav-sdr"], workspace, executable=CLAUDE_BINARY, environment=offline_environment
    )
    async with runner:
        assert runner.cli is not None and not runner.uses_standin
        assert "claude (" in repr(runner)
        first = await runner.send("bonjour")
        second = await runner.send("encore")
        pid = runner.pid
    for result in (first, second):
        assert result.outcome == "error"
        assert "Not logged in" in result.text
        assert any(
            isinstance(event, AgentError) and "authentication_failed" in event.message
            for event in result.events
        )
        assert result.session_id == runner.session_id  # the id given with --session-id is the CLI's
    started = runner.last_started
    assert started is not None and not started.is_standin and started.cli_version.startswith("2.")
    assert "elynav-sdr" in started.agents
    assert not process_alive(pid)
