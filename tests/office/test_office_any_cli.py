"""An office whose employees run on different CLIs: claude (the stand-in), codex and gemini (a fake per-turn CLI).

The definition's ``cli`` picks each employee's CLI; the office's ``executable`` maps CLI names to
commands. A codex employee's thread id, known only after its first turn, becomes its canonical
session (``sessions.json``), so the next office resumes the same thread.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from elynav_nb.office import Office

from .conftest import FAST_STOP, worker

pytestmark = pytest.mark.anyio

FAKE = str(Path(__file__).parents[1] / "agents" / "fake_per_turn_cli.py")


@pytest.fixture(autouse=True)
def cli_homes(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ELYNAV_CLI_HOMES", str(tmp_path / "cli-homes"))
    monkeypatch.setenv("ELYNAV_CODEX_MODE", "exec")  # the fake speaks `codex exec --json`, not app-server
    return tmp_path / "cli-homes"


def staff(tmp_path: Path):
    return [
        worker("w-claude"),
        dataclasses.replace(worker("w-codex"), cli="codex"),
        dataclasses.replace(worker("w-gemini"), cli="gemini"),
    ]


def executables():
    return {"claude": "standin", "codex": [sys.executable, FAKE], "gemini": [sys.executable, FAKE]}


async def test_employees_on_three_clis_answer_and_keep_their_conversations(tmp_path):
    workspace = tmp_path / "workspace"
    office = Office(workspace, staff(tmp_path), executable=executables(), stop_bounds=FAST_STOP)
    async with office:
        codex_runner = office.employee("w-codex").runner
        assert codex_runner.plan.driver == "per-turn" and codex_runner.cli_name == "codex"
        # A process per turn has no prompt to surface on the board: the definition's mode rules,
        # and what it refuses is said; `elynav ask` runs through the exec-policy rule of its tools.
        assert not codex_runner.options.permissions.prompts and not codex_runner.options.process.cli_config
        assert "refuses writes and sockets" in " ".join(codex_runner.limitations)
        replies = {name: await office.ask(name, "Bonjour") for name in ("w-claude", "w-codex", "w-gemini")}
        assert "--allowedTools" not in codex_runner.command_line  # its tools are in its config home
        rules = (codex_runner.cli_home / "rules" / "elynav.rules").read_text()
        assert 'prefix_rule(pattern=["elynav", "ask"], decision="allow")' in rules
        thread = office.employee("w-codex").session_id
        sessions = json.loads((workspace / ".elynav" / "sessions.json").read_text())
    for name, reply in replies.items():
        assert reply.ok, (name, reply.error)
    assert "You said: Bonjour" in replies["w-claude"].text
    assert (
        replies["w-codex"].text == "echo: Bonjour (turn 1)"
        and replies["w-gemini"].text == "echo: Bonjour (turn 1)"
    )
    assert thread and sessions["w-codex"] == thread == replies["w-codex"].session_id

    # A new office on the same workspace resumes each canonical conversation.
    again = Office(workspace, staff(tmp_path), executable=executables(), stop_bounds=FAST_STOP)
    async with again:
        codex_reply = await again.ask("w-codex", "Encore")
        gemini_reply = await again.ask("w-gemini", "Encore")
    assert codex_reply.text == "echo: Encore (turn 2)" and codex_reply.session_id == thread
    assert gemini_reply.text == "echo: Encore (turn 2)"


async def test_a_lost_conversation_is_replaced_by_a_new_one(tmp_path, cli_homes):
    workspace = tmp_path / "workspace"
    office = Office(workspace, staff(tmp_path)[1:], executable=executables(), stop_bounds=FAST_STOP)
    async with office:
        old = await office.ask("w-codex", "one")
    for rollout in cli_homes.rglob("rollout-*.jsonl"):
        rollout.unlink()  # codex's saved thread is gone
    again = Office(workspace, staff(tmp_path)[1:], executable=executables(), stop_bounds=FAST_STOP)
    async with again:
        reply = await again.ask("w-codex", "two")
    history = (workspace / ".elynav" / "history.jsonl").read_text()
    assert reply.ok and reply.text == "echo: two (turn 1)"  # a new thread, not a failure
    assert reply.session_id != old.session_id and f"session {old.session_id} could not be resumed" in history
