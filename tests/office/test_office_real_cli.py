"""The office on the real claude binary, when one is installed (no account needed).

Without credentials each turn of the real CLI ends "Not logged in": the ask then ends ``failed`` with
that diagnostic, the office keeps serving, the canonical session id is the one the CLI reports, and
the CLI accepts the office's command line (``--allowedTools Read "Bash(elynav ask:*)"``, the socket and
token variables) with the delegation rule's tool listed as ``Bash``.
"""

from __future__ import annotations

import os
import shutil

import pytest

from elynav_nb.office import ASK_RULE, Office
from tests.tiers import needs

from .conftest import FAST_STOP, worker

CLAUDE_BINARY = os.environ.get("ELYNAV_CLAUDE_BIN") or shutil.which("claude")

pytestmark = [
    pytest.mark.real_cli,
    pytest.mark.anyio,
    needs(
        "ELYNAV_REQUIRE_REAL_CLI",
        None if CLAUDE_BINARY else "the claude CLI is not installed (set ELYNAV_CLAUDE_BIN)",
    ),
]


async def test_asks_to_the_real_cli_without_an_account_fail_with_its_diagnostic(tmp_path, monkeypatch):
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    environment = {
        "HOME": str(home),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    office = Office(
        tmp_path / "workspace",
        [worker("w-a")],
        executable=CLAUDE_BINARY,
        environment=environment,
        stop_bounds=FAST_STOP,
    )
    async with office:
        first = await office.ask("w-a", "bonjour")
        second = await office.ask("w-a", "encore")
        runner = office.employee("w-a").runner
        started = runner.last_started
        argv = runner.process.argv
    assert not runner.uses_standin
    for reply in (first, second):
        assert reply.outcome == "failed" and "Not logged in" in reply.text + reply.error
        assert reply.error_code == "AGENT_PROCESS_ERROR"
    assert first.session_id == second.session_id == started.session_id  # one canonical conversation
    assert argv[argv.index("--allowedTools") + 1 :][:2] == ["Read", ASK_RULE]  # the definition's tools
    assert started is not None and "Bash" in started.tools and "w-a" in started.agents
    history = office.history()
    assert list(history["outcome"]) == ["failed", "failed"]
