"""Logging: silent by default, ``ELYNAV_LOG`` turns it on from outside, and no secret ever reaches a log.

The runner and the office log to ``elynav_nb.*`` loggers: process spawn, exit and stop, every CLI line
in and out (``elynav_nb.agents.wire``, DEBUG), each step of an office ask and each office socket line.
These tests run a real turn on the stand-in CLI and a real office ask with secrets in the environment
and in the CLI's own output (its Bash tool echoes them), and grep the DEBUG output for them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from elynav_nb._logging import LOGGED_LINE_CHARS, Redactor, configure_from_environment, is_secret_name, redact
from elynav_nb.agents import AgentDefinition
from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.office import Office

REPOSITORY = Path(__file__).resolve().parents[1]
API_KEY = "sk-secret-4f9c2d7e1a8b3c6d5e0f9a7b"
SERVICE_TOKEN = "tok_f00dcafe1234beef"  # looks like nothing: only its variable's name marks it secret
DATABASE_PASSWORD = "hunter2-correct-horse"
BASIC_CREDENTIALS = "dXNlcjpodW50ZXIy"
SESSION_COOKIE = "9f8e7d6c5b4a3921"
SECRETS = (API_KEY, SERVICE_TOKEN, DATABASE_PASSWORD, BASIC_CREDENTIALS, SESSION_COOKIE)
ECHO_COMMAND = (
    'echo "$ANTHROPIC_API_KEY $MY_SERVICE_TOKEN $DATABASE_PASSWORD" '
    f"'Authorization: Basic {BASIC_CREDENTIALS}' 'Cookie: sessionid={SESSION_COOKIE}'"
)
ECHO_SECRETS = f"@standin bash {ECHO_COMMAND}"
FAST_STOP = StopBounds(close_stdin=2.0, sigint=2.0, sigterm=1.0, sigkill=1.0, orphans=1.0)


def python_with(
    environment: dict[str, str], code: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    child_environment = {key: value for key, value in os.environ.items() if key != "ELYNAV_LOG"}
    child_environment["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(REPOSITORY), os.environ.get("PYTHONPATH", "")) if part
    )
    child_environment.update(environment)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child_environment,
        cwd=REPOSITORY,
    )


# -- the switch ------------------------------------------------------------------------------------


def test_without_elynav_log_importing_the_package_configures_no_logging() -> None:
    completed = python_with(
        {},
        """
        import logging, elynav_nb, elynav_nb.agents, elynav_nb.office
        package = logging.getLogger("elynav_nb")
        print(len(package.handlers), package.level, len(logging.getLogger().handlers))
        """,
    )
    assert completed.stdout.split() == ["0", "0", "0"], completed.stderr
    assert completed.stderr == ""


@pytest.mark.parametrize(("value", "level"), [("debug", 10), ("INFO", 20), ("warning", 30), ("error", 40)])
def test_elynav_log_installs_one_stderr_handler_at_its_level(value: str, level: int) -> None:
    completed = python_with(
        {"ELYNAV_LOG": value},
        """
        import importlib, logging, elynav_nb
        importlib.reload(elynav_nb)  # imported again (a notebook's autoreload): still one handler
        package = logging.getLogger("elynav_nb")
        print(len(package.handlers), package.level, len(logging.getLogger().handlers))
        logging.getLogger("elynav_nb.agents.process").error("an error line")
        """,
    )
    assert completed.stdout.split() == ["1", str(level), "0"], completed.stderr
    assert "ERROR elynav_nb.agents.process: an error line" in completed.stderr


def test_an_unknown_level_logs_at_warning_and_says_so() -> None:
    handler = configure_from_environment({"ELYNAV_LOG": "verbose"})
    package = logging.getLogger("elynav_nb")
    try:
        assert handler is not None and package.level == logging.WARNING
        assert configure_from_environment({"ELYNAV_LOG": "verbose"}) is handler  # never a second one
        assert configure_from_environment({"ELYNAV_LOG": "off"}) is None
    finally:
        if handler is not None:
            package.removeHandler(handler)
        package.setLevel(logging.NOTSET)


# -- redaction -------------------------------------------------------------------------------------


def test_the_redactor_replaces_secret_values_and_secret_looking_text() -> None:
    environment = {"ANTHROPIC_API_KEY": API_KEY, "MY_SERVICE_TOKEN": SERVICE_TOKEN, "HOME": "/home/someone"}
    redactor = Redactor.for_environment(environment)
    line = (
        f'{{"type":"user","content":"{SERVICE_TOKEN} and {API_KEY}","authorization":"Bearer abc.def",'
        f'"x_api_key":"plain-{DATABASE_PASSWORD}","input_tokens":12}}'
    )
    shown = redactor.line(line)
    assert SERVICE_TOKEN not in shown and API_KEY not in shown and DATABASE_PASSWORD not in shown
    assert '"input_tokens":12' in shown and "abc.def" not in shown
    assert redact(f"Authorization: Basic {BASIC_CREDENTIALS}") == "Authorization: [redacted]"
    assert SESSION_COOKIE not in redact(f"Cookie: sessionid={SESSION_COOKIE}; theme=dark")
    assert redact(f"DATABASE_PASSWORD={DATABASE_PASSWORD} ls") == "DATABASE_PASSWORD=[redacted] ls"
    assert (
        is_secret_name("ELYNAV_OFFICE_TOKEN")
        and is_secret_name("DOCS_CSRF_TOKEN")
        and not is_secret_name("HOME")
    )
    assert "HOME=/home/someone" in redactor.environment(environment)
    assert f"MY_SERVICE_TOKEN={SERVICE_TOKEN}" not in redactor.environment(environment)


def test_a_long_line_is_cut_without_leaking_a_secret_across_the_cut() -> None:
    redactor = Redactor([SERVICE_TOKEN])
    line = "x" * (LOGGED_LINE_CHARS - 5) + SERVICE_TOKEN + "y" * 100_000
    shown = redactor.line(line.encode())
    assert "tok_f" not in shown and len(shown) < LOGGED_LINE_CHARS + 100 and "more characters" in shown


# -- a real turn, traced from outside --------------------------------------------------------------


def test_a_standin_turn_at_debug_logs_every_cli_line_and_no_secret(tmp_path: Path) -> None:
    completed = python_with(
        {"ELYNAV_LOG": "debug", "ELYNAV_STANDIN_HOME": str(tmp_path / "standin-home")},
        f"""
        import asyncio
        from elynav_nb.agents import AgentDefinition, AgentRunner

        definition = AgentDefinition(name="w-log", description="logs", tools=("Bash",), prompt="You log.")

        async def main():
            runner = AgentRunner(
                definition,
                {str(tmp_path)!r},
                executable="standin",
                permission_mode="acceptEdits",
                environment={{
                    "ANTHROPIC_API_KEY": {API_KEY!r},
                    "MY_SERVICE_TOKEN": {SERVICE_TOKEN!r},
                    "DATABASE_PASSWORD": {DATABASE_PASSWORD!r},
                }},
            )
            async with runner:
                result = await runner.send({ECHO_SECRETS!r})
            print(result.outcome)
            print(" ".join(str(getattr(event, "content", "")) for event in result.events))

        asyncio.run(main())
        """,
    )
    outcome, tool_output = completed.stdout.split("\n", 1)
    assert outcome == "completed", completed.stderr[-3000:]
    assert API_KEY in tool_output and SERVICE_TOKEN in tool_output  # the CLI really wrote them out
    log = completed.stderr
    assert "INFO elynav_nb.agents.process: started " in log and "exited with code 0" in log
    wire = [line for line in log.splitlines() if " DEBUG elynav_nb.agents.wire: w-log " in line]
    assert any(" > " in line and '"control_request"' in line for line in wire)  # the handshake out
    assert any(" > " in line and re.search(r'"type": ?"user"', line) for line in wire)  # the prompt out
    assert any(" < " in line and '"type":"result"' in line for line in wire)  # the end of the turn in
    assert any(" < " in line and '"tool_result"' in line for line in wire)  # the echo came back
    assert "[redacted]" in log
    assert [secret for secret in SECRETS if secret in log] == []


# -- an office ask ---------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_an_office_ask_at_debug_logs_its_lifecycle_and_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    monkeypatch.delenv("ELYNAV_OFFICE_SOCKET", raising=False)
    monkeypatch.delenv("ELYNAV_OFFICE_TOKEN", raising=False)
    caplog.set_level(logging.DEBUG, logger="elynav_nb")
    echoer = AgentDefinition(name="w-a", description="echoes", tools=("Bash",), prompt="You are a.")
    helper = AgentDefinition(name="w-b", description="helps", tools=("Read",), prompt="You are b.")
    office = Office(
        tmp_path / "workspace",
        [echoer, helper],
        executable="standin",
        permission_mode="acceptEdits",
        stop_bounds=FAST_STOP,
        environment={"ANTHROPIC_API_KEY": API_KEY, "MY_SERVICE_TOKEN": SERVICE_TOKEN},
    )
    async with office:
        tokens = [employee.token for employee in office.employees.values()]
        echoed = await asyncio.wait_for(
            office.ask("w-a", f'@standin bash echo "$ELYNAV_OFFICE_TOKEN"; {ECHO_COMMAND}'), 60
        )
        delegated = await asyncio.wait_for(office.ask("w-a", "@standin ask w-b Bonjour"), 60)
        refused = await asyncio.wait_for(office.ask("w-a", "@standin ask w-nobody Bonjour"), 60)
    shown = " ".join(str(getattr(event, "content", "")) for event in echoed.events)
    assert echoed.outcome == "done" and tokens[0] in shown and API_KEY in shown  # the CLI wrote them out
    assert delegated.outcome == "done" and refused.outcome == "done"
    log = caplog.text
    messages = [record.getMessage() for record in caplog.records]
    assert any(f"ask {echoed.ask_id} user -> w-a queued" in message for message in messages)
    assert any(f"ask {echoed.ask_id} user -> w-a ended done" in message for message in messages)
    assert any("w-a -> w-b queued (sent from ask" in message for message in messages)
    assert any(
        message.startswith("office socket: w-a < ") and '"op":"ask"' in message for message in messages
    )
    assert any(
        message.startswith("office socket: > ") and '"type":"reply"' in message for message in messages
    )
    assert any("refused ask from w-a to w-nobody: AGENT_NOT_FOUND" in message for message in messages)
    assert any(
        record.name == "elynav_nb.agents.wire" and '"tool_result"' in record.getMessage()
        for record in caplog.records
    )
    assert "[redacted]" in log
    assert [secret for secret in (*SECRETS, *tokens) if secret in log] == []
