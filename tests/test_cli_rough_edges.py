"""The rough edges a new user hit on the ``elynav`` command line (issue 20), each pinned.

Every error here is one line ``CODE: message`` on stderr with exit status 2, naming the whole path,
the valid choices and the fix on the command line. Most cases run ``cli.main`` in-process (they fail
before anything starts); the ones about a traceback or the printed reply run the real command.
"""

from __future__ import annotations

import importlib.metadata
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.capture import CaptureResult

from elynav_nb import cli
from elynav_nb.cli import main
from elynav_nb.crm import Crm
from elynav_nb.crm.store import CrmStore
from elynav_nb.errors import InvalidInput, NotFound
from elynav_nb.office.ask_command import PARTIAL_REPLY_HEADER
from elynav_nb.office.wire import encode_accepted, encode_reply

ELYNAV = [sys.executable, "-m", "elynav_nb"]
SIX_AGENTS = (
    "elynav-cmo",
    "elynav-content",
    "elynav-dev-executor",
    "elynav-dev-proposer",
    "elynav-orchestrator",
    "elynav-sdr",
)


def one_error_line(captured: CaptureResult[str], code: str) -> str:
    """The single ``CODE: message`` line on stderr (nothing else there, nothing on stdout)."""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"{code}: "), captured.err
    assert captured.out == ""
    first_line: str = lines[0]
    return first_line


# --- 2, 3: elynav mcp crm --db, Crm.open, CrmStore.open ---------------------------------------


def test_mcp_crm_names_the_whole_path_of_a_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "no-such-dir" / "x.sqlite"
    assert main(["mcp", "crm", "--db", str(database)]) == 2
    line = one_error_line(capsys.readouterr(), "NOT_FOUND")
    assert str(database) in line and str(database.parent) in line
    assert f"mkdir -p {database.parent}" in line and "--db" in line
    assert not database.parent.exists()


def test_crm_open_and_store_open_name_the_whole_path(tmp_path: Path) -> None:
    missing = tmp_path / "x.sqlite"
    with pytest.raises(NotFound) as caught:
        Crm.open(missing)
    assert str(missing) in str(caught.value)
    assert f"elynav crm demo --db {missing}" in str(caught.value) and "create=True" in str(caught.value)
    deep = tmp_path / "no-such-dir" / "x.sqlite"
    with pytest.raises(NotFound) as caught:
        CrmStore.open(deep)
    assert str(deep) in str(caught.value) and str(deep.parent) in str(caught.value)


def test_mcp_crm_on_a_folder_is_one_typed_line_not_a_traceback(tmp_path: Path) -> None:
    completed = subprocess.run(
        [*ELYNAV, "mcp", "crm", "--db", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert completed.returncode == 2, completed.stderr
    assert completed.stdout == ""
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in completed.stderr, completed.stderr
    assert lines[0].startswith(f"INVALID_INPUT: --db {tmp_path} is a folder")
    assert f"--db {tmp_path / 'crm.sqlite'}" in lines[0]


def test_a_folder_is_refused_by_the_python_openers_too(tmp_path: Path) -> None:
    for open_database in (CrmStore.open, Crm.open):
        with pytest.raises(InvalidInput) as caught:
            open_database(tmp_path)
        assert f"{tmp_path} is a folder" in str(caught.value)
    assert list(tmp_path.iterdir()) == []


# --- 4, 5: elynav demo's arguments, checked before anything starts ------------------------------


def test_demo_on_a_workspace_that_cannot_be_made_is_a_typed_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    workspace = blocker / "workspace"  # under a file: cannot be created
    assert main(["demo", "--workspace", str(workspace)]) == 2
    line = one_error_line(capsys.readouterr(), "INVALID_INPUT")
    assert str(workspace) in line and "--workspace" in line
    assert main(["demo", "--workspace", str(blocker)]) == 2
    line = one_error_line(capsys.readouterr(), "INVALID_INPUT")
    assert f"{blocker} is a file, not a folder" in line


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux's /proc")
def test_demo_workspace_in_proc_is_not_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--workspace", "/proc/nope"]) == 2
    line = one_error_line(capsys.readouterr(), "INVALID_INPUT")
    assert "/proc/nope" in line


def test_demo_with_an_unknown_agent_lists_the_six(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--agent", "nope"]) == 2
    line = one_error_line(capsys.readouterr(), "AGENT_NOT_FOUND")
    assert "'nope'" in line and "--agent" in line
    assert all(name in line for name in SIX_AGENTS)
    assert "elynav-demo-" not in line and "install_agents" not in line  # no deleted scratch folder


def test_demo_accepts_an_agent_defined_in_its_workspace(tmp_path: Path) -> None:
    from elynav_nb.demo import check_demo_agent

    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "mine.md").write_text("---\nname: mine\ndescription: my agent\n---\nYou are mine.\n")
    check_demo_agent("mine", tmp_path)  # no error
    with pytest.raises(NotFound) as caught:
        check_demo_agent("other", tmp_path)
    assert f"{tmp_path}/.claude/agents" in str(caught.value)


def test_demo_refuses_an_empty_prompt_and_a_timeout_that_is_not_positive(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--prompt", "  "]) == 2
    assert "--prompt is empty" in one_error_line(capsys.readouterr(), "INVALID_INPUT")
    for bad in ("-1", "0", "nan"):
        with pytest.raises(SystemExit) as exited:
            main(["demo", "--timeout", bad])
        assert exited.value.code == 2
        assert "give a positive, finite number of seconds" in capsys.readouterr().err


def test_demo_creates_its_workspace_folder_but_not_a_whole_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = tmp_path / "missing" / "xyz"
    assert main(["demo", "--workspace", str(deep)]) == 2
    line = one_error_line(capsys.readouterr(), "INVALID_INPUT")
    assert f"its parent folder {tmp_path / 'missing'} does not exist" in line
    assert not (tmp_path / "missing").exists()  # nothing made


def test_demo_and_crm_demo_help_show_their_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["demo", "--help"], ["crm", "demo", "--help"]):
        with pytest.raises(SystemExit):
            main(command)
    shown = " ".join(capsys.readouterr().out.split())
    assert "(default: 'Bonjour ! Quels comptes avons-nous à Lyon dans le CRM ?')" in shown  # --prompt
    assert "created if missing" in shown and "the office's ask" in shown  # --workspace, --timeout
    assert "same seed, same data (default: 0)" in shown  # crm demo --seed


@pytest.mark.parametrize(
    ("arguments", "flags"),
    [(["--real"], "--real"), (["--cli", "codex"], "--cli codex"), (["--cli", "gemini", "--real"], None)],
)
def test_demo_without_the_real_cli_says_what_to_change_on_the_command_line(
    arguments: list[str],
    flags: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no claude, codex or gemini here
    for variable in ("ELYNAV_AGENT_CLI", "ELYNAV_CODEX_CLI", "ELYNAV_GEMINI_CLI"):
        monkeypatch.delenv(variable, raising=False)
    assert main(["demo", *arguments]) == 2
    line = one_error_line(capsys.readouterr(), "CLI_NOT_FOUND")
    assert "executable=" not in line and "'standin'" not in line
    assert f"drop {flags or '--cli gemini and --real'} to run the demo on the embedded stand-in" in line
    assert "npm install -g" in line


# --- 1: elynav demo prints the office's reply ----------------------------------------------------
# (tests/test_demo.py runs the whole demo and checks the "Reply of elynav-orchestrator:" block.)


# --- 6: help, usage and version of the command tree --------------------------------------------


@pytest.mark.parametrize("group", ["mcp", "crm"])
def test_a_group_alone_prints_its_own_help(group: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([group]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith(f"usage: elynav {group} [-h] COMMAND ...")
    assert "Elynav agent platform from Python." not in captured.out


def test_an_unknown_option_shows_the_usage_of_its_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["demo", "--bogus"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: elynav demo ")
    assert "elynav demo: error: unrecognized arguments: --bogus" in err
    with pytest.raises(SystemExit):
        main(["mcp", "crm", "--db", "x", "--bogus"])
    assert "elynav mcp crm: error: unrecognized arguments: --bogus" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"elynav-nb {importlib.metadata.version('elynav-nb')}"


def test_version_falls_back_to_the_package_attribute(monkeypatch: pytest.MonkeyPatch) -> None:
    import elynav_nb

    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert cli.package_version() == elynav_nb.__version__


def test_cancel_without_an_office_says_what_cancel_needs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ELYNAV_OFFICE_SOCKET", raising=False)
    assert main(["cancel", "abc"]) == 2
    line = one_error_line(capsys.readouterr(), "OFFICE_UNREACHABLE")
    assert "elynav cancel needs the office's socket" in line
    assert "$ELYNAV_OFFICE_SOCKET" in line and "--socket PATH" in line and "agent" in line
    assert "elynav ask runs inside" not in line


@pytest.mark.parametrize("value", ["-5", "0", "-0.0", "nan", "inf", "-inf", "soon"])
def test_ask_refuses_a_timeout_that_is_not_positive_and_finite(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["ask", "elynav-sdr", "hi", f"--timeout={value}", "--socket", "/nonexistent.sock"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: elynav ask ") and "argument --timeout" in err


# --- 7: a reply that did not end done never reaches stdout ---------------------------------------


@pytest.fixture
def scripted_office() -> Iterator[tuple[str, list[bytes]]]:
    """A one-connection office socket that accepts the ask, then sends the reply put in the list."""
    folder = tempfile.mkdtemp(prefix="elynav-test-")  # short: a Unix socket path is limited to ~100 bytes
    path = os.path.join(folder, "office.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    replies: list[bytes] = []

    def serve() -> None:
        connection, _ = server.accept()
        with connection, connection.makefile("rb") as stream:
            stream.readline()
            connection.sendall(encode_accepted("a1", "elynav-sdr", 0) + replies[0])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, replies
    thread.join(timeout=10)
    server.close()
    os.unlink(path)
    os.rmdir(folder)


@pytest.mark.parametrize(
    ("outcome", "exit_code", "error_code"),
    [("timeout", 4, "AGENT_TIMEOUT"), ("cancelled", 3, "CANCELLED"), ("failed", 1, "CLI_EXITED")],
)
def test_a_cut_off_reply_goes_to_stderr_after_a_marker_and_stdout_stays_empty(
    outcome: str,
    exit_code: int,
    error_code: str,
    scripted_office: tuple[str, list[bytes]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, replies = scripted_office
    replies.append(
        encode_reply("a1", outcome, "Les comptes à relancer sont", error_code=error_code, error="cut")
    )
    assert main(["ask", "elynav-sdr", "hi", "--timeout", "1", "--socket", path]) == exit_code
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0] == "elynav ask: ask a1 to elynav-sdr"
    assert lines[1] == f"elynav ask: {outcome}: {error_code}: cut"
    assert lines[2] == PARTIAL_REPLY_HEADER.format(outcome=outcome)
    assert lines[2] == f"elynav ask: partial reply ({outcome}), not an answer:"
    assert lines[3:] == ["Les comptes à relancer sont"]


def test_a_done_reply_is_on_stdout_whole(
    scripted_office: tuple[str, list[bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, replies = scripted_office
    replies.append(encode_reply("a1", "done", "Trois comptes : A, B et C."))
    assert main(["ask", "elynav-sdr", "hi", "--socket", path]) == 0
    captured = capsys.readouterr()
    assert captured.out == "Trois comptes : A, B et C.\n"
    assert captured.err == "elynav ask: ask a1 to elynav-sdr\n"


def test_ask_help_and_docstring_say_where_a_partial_reply_goes(capsys: pytest.CaptureFixture[str]) -> None:
    from elynav_nb.office import ask_command

    with pytest.raises(SystemExit):
        main(["ask", "--help"])
    help_text = capsys.readouterr().out
    assert "elynav ask: partial reply (<outcome>), not an answer:" in help_text
    assert "stdout stays empty" in help_text
    assert ask_command.__doc__ is not None and "stdout stays empty" in ask_command.__doc__


# --- issue 32, item 14: the command tree says what its groups are; `elynav agents list` ---------


def test_the_top_level_help_says_what_each_group_is_for(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    assert " commands\n" not in shown  # not "agents commands", "mcp commands"...
    for group, purpose in cli.GROUPS.items():
        assert group in shown and purpose.split(":")[0] in " ".join(shown.split())


def test_agents_list_shows_the_built_in_agents_and_the_workspaces_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "mine.md").write_text("---\nname: mine\ndescription: my agent\n---\nYou are mine.\n")
    assert main(["agents", "list", "--workspace", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["mine", *SIX_AGENTS]
    assert lines[0].endswith(str(agents / "mine.md")) and "(built-in" in lines[1]
    assert not (agents / "elynav-sdr.md").exists()  # listing installs nothing
