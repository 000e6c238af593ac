"""Start-up behaviour of the stand-in: flags, refusals and agents, checked against the real CLI's texts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.sandbox.standin_driver import BASE_FLAGS, run_once, user_message

NOTE_PREFIX = "elynav stand-in:"


def stderr_lines(completed: object) -> list[str]:
    text = completed.stderr.decode()  # type: ignore[attr-defined]
    return [line for line in text.splitlines() if line and not line.startswith(NOTE_PREFIX)]


def test_version_imitates_2_1_332_by_default(home: Path) -> None:
    completed = run_once(["--version"], home=home)
    assert completed.returncode == 0
    assert completed.stdout == b"2.1.332 (Claude Code)\n"


def test_version_imitates_2_1_197_on_request(home: Path) -> None:
    completed = run_once(["-v"], home=home, env={"ELYNAV_STANDIN_VERSION": "2.1.197"})
    assert completed.stdout == b"2.1.197 (Claude Code)\n"


def test_help_says_it_is_a_stand_in(home: Path) -> None:
    completed = run_once(["--help"], home=home)
    assert completed.returncode == 0
    assert b"not Claude" in completed.stdout and b"@standin" in completed.stdout


def test_stream_json_without_verbose_is_refused(home: Path) -> None:
    completed = run_once(["-p", "--output-format", "stream-json", "--input-format", "stream-json"], home=home)
    assert completed.returncode == 1
    assert completed.stdout == b""
    assert completed.stderr == b"Error: When using --print, --output-format=stream-json requires --verbose\n"


@pytest.mark.parametrize(
    ("version", "choices"),
    [
        (None, "acceptEdits, auto, bypassPermissions, manual, dontAsk, plan"),
        ("2.1.197", "acceptEdits, auto, bypassPermissions, default, dontAsk, plan"),
    ],
)
def test_invalid_permission_mode_uses_the_commander_message(
    home: Path, version: str | None, choices: str
) -> None:
    env = {"ELYNAV_STANDIN_VERSION": version} if version else None
    completed = run_once([*BASE_FLAGS, "--permission-mode", "bogus"], home=home, env=env)
    assert completed.returncode == 1
    expected = f"error: option '--permission-mode <mode>' argument 'bogus' is invalid. Allowed choices are {choices}.\n"
    assert completed.stderr.decode() == expected


def test_unknown_option_is_refused(home: Path) -> None:
    completed = run_once([*BASE_FLAGS, "--bogus"], home=home)
    assert (completed.returncode, completed.stderr) == (1, b"error: unknown option '--bogus'\n")


def test_input_stream_json_needs_output_stream_json(home: Path) -> None:
    completed = run_once(["-p", "--input-format", "stream-json"], home=home)
    assert completed.stderr == b"Error: --input-format=stream-json requires output-format=stream-json.\n"


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the refusal only applies to root"
)
@pytest.mark.parametrize(
    "flags", [["--permission-mode", "bypassPermissions"], ["--dangerously-skip-permissions"]]
)
def test_root_with_bypass_is_refused_unless_is_sandbox(home: Path, flags: list[str]) -> None:
    refused = run_once([*BASE_FLAGS, *flags], home=home)
    assert refused.returncode == 1 and refused.stdout == b""
    assert (
        refused.stderr
        == b"--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n"
    )
    allowed = run_once([*BASE_FLAGS, *flags], home=home, env={"IS_SANDBOX": "1"})
    assert allowed.returncode == 0


def test_session_id_must_be_a_uuid(home: Path) -> None:
    completed = run_once([*BASE_FLAGS, "--session-id", "not-a-uuid"], home=home)
    assert completed.stderr == b"Error: Invalid session ID. Must be a valid UUID.\n"


def test_session_id_with_resume_needs_fork_session(home: Path) -> None:
    arguments = [
        *BASE_FLAGS,
        "--resume",
        "00000000-0000-4000-8000-000000000000",
        "--session-id",
        "00000000-0000-4000-8000-000000000001",
    ]
    completed = run_once(arguments, home=home)
    assert completed.returncode == 1
    assert completed.stderr == b"Error: --session-id with --continue or --resume also needs --fork-session.\n"


def test_invalid_json_on_stdin_exits_1_with_nothing_on_stdout(home: Path) -> None:
    stdin = (json.dumps(user_message("hello")) + "\n{not json\n").encode()
    completed = run_once(BASE_FLAGS, home=home, stdin=stdin)
    assert completed.returncode == 1
    assert stderr_lines(completed) == [
        "Error parsing streaming input line (type=unknown, 9 chars): SyntaxError"
    ]


def test_invalid_json_message_names_the_type_it_saw(home: Path) -> None:
    completed = run_once(BASE_FLAGS, home=home, stdin=b'{"type":"user", broken\n')
    assert stderr_lines(completed) == [
        "Error parsing streaming input line (type=user, 22 chars): SyntaxError"
    ]
    assert completed.stdout == b""


def test_no_stdout_without_a_user_message(home: Path) -> None:
    completed = run_once(BASE_FLAGS, home=home, stdin=b"")
    assert (completed.returncode, completed.stdout) == (0, b"")
    assert completed.stderr.decode().startswith(NOTE_PREFIX)


def write_agent(directory: Path, file_name: str, front_matter: str) -> None:
    agents = directory / ".claude" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / file_name).write_text(f"---\n{front_matter}\n---\nYou are a test agent.\n")


def init_of(completed: object) -> dict[str, object]:
    for raw in completed.stdout.splitlines():  # type: ignore[attr-defined]
        message = json.loads(raw)
        if message.get("subtype") == "init":
            return message
    raise AssertionError("no init line")


def test_agent_resolves_by_front_matter_name_from_a_parent_directory(home: Path) -> None:
    project = home / "project"
    working = project / "sub" / "dir"
    working.mkdir(parents=True)
    write_agent(
        project,
        "weird-file-name.md",
        "name: named-differently\ndescription: Demo agent\ntools: Read, Bash\nmodel: opus",
    )
    write_agent(project, "nodesc.md", "name: nodesc")
    stdin = (json.dumps(user_message("hi")) + "\n").encode()
    completed = run_once([*BASE_FLAGS, "--agent", "named-differently"], home=home, cwd=working, stdin=stdin)
    init = init_of(completed)
    assert init["tools"] == ["Read", "Bash"]
    assert init["model"] == "elynav-standin"
    assert init["agents"] == [
        "claude",
        "Explore",
        "general-purpose",
        "named-differently",
        "Plan",
        "statusline-setup",
    ]


def test_unknown_agent_with_a_text_prompt_fails_listing_the_agents(home: Path) -> None:
    write_agent(home, "x.md", "name: named-differently\ndescription: Demo agent")
    completed = run_once(["-p", "--agent", "weird-file-name", "hello"], home=home)
    assert completed.returncode == 1
    expected = "--agent 'weird-file-name' not found. Available agents: claude, Explore, general-purpose, named-differently, Plan, statusline-setup\n"
    assert completed.stderr.decode() == expected


def test_unknown_agent_with_stream_json_runs_the_default_agent(home: Path) -> None:
    stdin = (json.dumps(user_message("hi")) + "\n").encode()
    completed = run_once([*BASE_FLAGS, "--agent", "nosuch"], home=home, stdin=stdin)
    assert completed.returncode == 0
    init = init_of(completed)
    assert "Bash" in init["tools"] and "Task" in init["tools"]  # type: ignore[operator]
    assert "nosuch" not in init["agents"]  # type: ignore[operator]


def test_agents_json_defines_an_agent(home: Path) -> None:
    agents = json.dumps(
        {
            "reviewer": {
                "description": "Reviews code",
                "prompt": "You review",
                "tools": ["Read"],
                "model": "haiku",
            }
        }
    )
    stdin = (json.dumps(user_message("hi")) + "\n").encode()
    completed = run_once([*BASE_FLAGS, "--agents", agents, "--agent", "reviewer"], home=home, stdin=stdin)
    init = init_of(completed)
    assert init["tools"] == ["Read"]
    assert "reviewer" in init["agents"]  # type: ignore[operator]


def test_text_prompt_with_text_output_prints_the_reply(home: Path) -> None:
    completed = run_once(["-p", "hello there"], home=home)
    assert completed.returncode == 0
    assert completed.stdout.decode().endswith("You said: hello there\n")


def test_bad_mcp_config_file_is_refused(home: Path) -> None:
    completed = run_once([*BASE_FLAGS, "--mcp-config", "/nonexistent.json"], home=home)
    assert completed.returncode == 1
    assert (
        completed.stderr
        == b"Error: Invalid MCP configuration:\nMCP config file not found: /nonexistent.json\n"
    )
