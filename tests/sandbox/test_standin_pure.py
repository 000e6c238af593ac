"""Pure parts of the stand-in, tested in-process: directives, permission policy, flags, config expansion, agents."""

from __future__ import annotations

from pathlib import Path

import pytest

from elynav_nb.sandbox.claude.agents import load_agent_catalogue, parse_tool_names
from elynav_nb.sandbox.claude.args import FlagError, parse_arguments
from elynav_nb.sandbox.claude.directives import parse_message
from elynav_nb.sandbox.claude.mcp_servers import expand_variables, load_mcp_configuration
from elynav_nb.sandbox.claude.tools import decide_permission, is_read_only_command, shell_subcommands


def test_directives_are_split_from_plain_text() -> None:
    parsed = parse_message(
        'hello\n@standin bash echo hi && ls\n@standin mcp crm search_accounts {"query": "acme"}\n@standin slow 2.5\nbye'
    )
    assert parsed.text == "hello\nbye"
    assert [d.name for d in parsed.directives] == ["bash", "mcp", "slow"]
    assert parsed.directives[0].argument == "echo hi && ls"
    assert (parsed.directives[1].server, parsed.directives[1].tool, parsed.directives[1].arguments) == (
        "crm",
        "search_accounts",
        {"query": "acme"},
    )
    assert parsed.directives[2].number == 2.5
    assert [d.name for d in parsed.tool_directives()] == ["bash", "mcp"]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("@standin flood many", "needs an integer"),
        ("@standin mcp onlyserver", "needs <server> <tool>"),
        ("@standin mcp s t [1]", "JSON object"),
        ("@standin dance", "unknown directive"),
        ("@standin ask", "@standin ask needs <agent> <text>"),
        ("@standin ask someone", "@standin ask needs <agent> <text>"),
        ("@standin ask someone   ", "@standin ask needs <agent> <text>"),
    ],
)
def test_bad_directives_carry_a_problem(line: str, problem: str) -> None:
    parsed = parse_message(line)
    assert problem in parsed.problems()[0]
    assert parsed.tool_directives() == []


def test_ask_directive_takes_an_agent_and_the_rest_of_the_line() -> None:
    parsed = parse_message("before\n@standin ask elynav-sdr  Find three leads, in 'Lyon'.  \nafter")
    assert parsed.problems() == [] and parsed.text == "before\nafter"
    [directive] = parsed.tool_directives()
    assert (directive.name, directive.agent, directive.argument) == (
        "ask",
        "elynav-sdr",
        "Find three leads, in 'Lyon'.",
    )


def test_nested_directive_in_ask_text_stays_text() -> None:
    parsed = parse_message("@standin ask B @standin ask C @standin sleep-tool 30")
    assert [(d.name, d.agent, d.argument) for d in parsed.directives] == [
        ("ask", "B", "@standin ask C @standin sleep-tool 30")
    ]
    assert parsed.text == ""


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("echo hi", True),
        ("ls -la | grep x", True),
        ("echo out; echo err >&2", True),
        ("ls 2>/dev/null", True),
        ("echo hi > file", False),
        ("touch x", False),
        ("rm -rf /tmp/x", False),
        ("echo $(rm x)", False),
        ("", False),
    ],
)
def test_read_only_commands(command: str, read_only: bool) -> None:
    assert is_read_only_command(command) is read_only


@pytest.mark.parametrize(
    ("mode", "command", "allowed", "prompt", "expected"),
    [
        ("default", "touch x", [], True, "ask"),
        ("default", "touch x", [], False, "deny"),
        ("default", "echo hi", [], False, "allow"),
        ("acceptEdits", "touch x", [], False, "allow"),
        ("bypassPermissions", "rm x", [], False, "allow"),
        ("plan", "echo hi", [], True, "deny"),
        ("dontAsk", "touch x", [], True, "deny"),
        ("default", "git status", ["Bash(git:*)"], False, "allow"),
        ("default", "git status", ["Bash(npm *)"], False, "deny"),
        ("default", "elynav ask x y", ["Bash(elynav ask:*)"], False, "allow"),
        ("default", "elynav ask x 'a b; c'", ["Read", "Bash(elynav ask:*)"], False, "allow"),
        ("default", "elynav ask x y", [], False, "deny"),
        ("default", "elynav ask x y", [], True, "ask"),
        ("default", "elynav run x", ["Bash(elynav ask:*)"], False, "deny"),
    ],
)
def test_bash_permission_policy(
    mode: str, command: str, allowed: list[str], prompt: bool, expected: str
) -> None:
    decision = decide_permission(
        "Bash",
        command,
        permission_mode=mode,
        allowed_rules=allowed,
        disallowed_rules=[],
        prompt_over_stdio=prompt,
    )
    assert decision.behavior == expected


@pytest.mark.parametrize(
    ("command", "behavior"),
    [
        ("elynav ask w-b 'une demande; avec un point-virgule'", "allow"),
        ("elynav ask w-b hello && echo done", "allow"),  # the other piece is read-only
        ("elynav ask w-b hello; rm -rf rapports", "deny"),  # a prefix rule does not cover a second command
        ("elynav ask w-b hello\ntouch x", "deny"),
        ("elynav ask w-b 'unbalanced", "deny"),
    ],
)
def test_a_prefix_rule_covers_each_simple_command_not_the_whole_line(command: str, behavior: str) -> None:
    decision = decide_permission(
        "Bash",
        command,
        permission_mode="default",
        allowed_rules=["Bash(elynav ask:*)"],
        disallowed_rules=[],
        prompt_over_stdio=False,
    )
    assert decision.behavior == behavior


def test_shell_subcommands_split_outside_quotes_only() -> None:
    assert shell_subcommands("a 'b; c' | d && e\nf") == ["a 'b; c'", "d", "e", "f"]
    assert shell_subcommands("echo 'open") is None


def test_mcp_tools_need_a_rule_or_an_answer() -> None:
    def decide(mode: str, allowed: list[str], prompt: bool) -> str:
        return decide_permission(
            "mcp__crm__search",
            None,
            permission_mode=mode,
            allowed_rules=allowed,
            disallowed_rules=[],
            prompt_over_stdio=prompt,
        ).behavior

    assert decide("acceptEdits", [], False) == "deny"
    assert decide("default", ["mcp__crm"], False) == "allow"
    assert decide("default", ["mcp__crm__*"], False) == "allow"
    assert decide("default", [], True) == "ask"
    assert (
        decide_permission(
            "Bash",
            "echo",
            permission_mode="bypassPermissions",
            allowed_rules=[],
            disallowed_rules=["Bash"],
            prompt_over_stdio=False,
        ).behavior
        == "deny"
    )


def test_flags_parse_like_commander() -> None:
    options = parse_arguments(
        [
            "-p",
            "--mcp-config",
            "a.json",
            '{"mcpServers":{}}',
            "--resume=abc",
            "--tools",
            "Bash,Read",
            "--max-turns",
            "3",
        ],
        modern=True,
    )
    assert options.print_mode and options.mcp_configs == ["a.json", '{"mcpServers":{}}']
    assert (options.resume, options.tools, options.max_turns) == ("abc", ["Bash", "Read"], 3)
    assert parse_arguments(["--resume"], modern=True).resume is True
    assert parse_arguments(["--tools", ""], modern=True).tools == []
    with pytest.raises(FlagError) as refused:
        parse_arguments(["--max-turns", "abc"], modern=True)
    assert (
        refused.value.stderr_line
        == "error: option '--max-turns <turns>' argument 'abc' is invalid. must be a number"
    )
    assert parse_arguments(["--permission-mode", "default"], modern=True).permission_mode == "default"
    assert parse_arguments(["--tools", "Bash,Read", "Edit"], modern=True).tools == ["Bash", "Read", "Edit"]
    with pytest.raises(FlagError):
        parse_arguments(["--permission-mode", "manual"], modern=False)


@pytest.mark.parametrize(
    ("values", "rules"),
    [
        (["Bash(elynav ask:*)"], ["Bash(elynav ask:*)"]),
        (["Bash(elynav ask:*)", "Read"], ["Bash(elynav ask:*)", "Read"]),
        (["Bash(elynav ask:*) Read,Edit"], ["Bash(elynav ask:*)", "Read", "Edit"]),
        (["Bash,Read", "Edit"], ["Bash", "Read", "Edit"]),
        ([" Bash , Read "], ["Bash", "Read"]),
        (["Agent(a, b),Bash(git diff:*)"], ["Agent(a, b)", "Bash(git diff:*)"]),
    ],
)
def test_rule_lists_split_outside_parentheses_only(values: list[str], rules: list[str]) -> None:
    options = parse_arguments(["--allowedTools", *values, "--disallowedTools", *values], modern=True)
    assert options.allowed_tools == rules and options.disallowed_tools == rules


def test_agent_tools_string_keeps_rules_with_spaces_and_commas() -> None:
    assert parse_tool_names("Read, Bash(elynav ask:*), Agent(a, b)") == [
        "Read",
        "Bash(elynav ask:*)",
        "Agent(a, b)",
    ]
    assert parse_tool_names(["Bash(elynav ask:*)", " Read "]) == ["Bash(elynav ask:*)", "Read"]
    assert parse_tool_names(None) is None


def test_variable_expansion() -> None:
    environment = {"SET": "value", "EMPTY": ""}
    assert (
        expand_variables("${SET}/${UNSET:-fallback}/${EMPTY:-dflt}/${UNSET}", environment)
        == "value/fallback/dflt/${UNSET}"
    )


def test_mcp_configuration_merges_files_strings_and_project_file(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"mcpServers": {"a": {"command": "${PY:-python3}", "args": ["x"]}}}')
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"project": {"command": "p"}}}')
    configs = load_mcp_configuration(
        ["a.json", '{"mcpServers": {"b": {"type": "http", "url": "http://h/${P:-9}"}}}'],
        cwd=tmp_path,
        strict=False,
        environment={},
    )
    assert [(c.name, c.source) for c in configs] == [
        ("a", "dynamic"),
        ("b", "dynamic"),
        ("project", "project"),
    ]
    assert configs[0].command == "python3" and configs[1].url == "http://h/9"
    strict = load_mcp_configuration(["a.json"], cwd=tmp_path, strict=True, environment={"PY": "py3"})
    assert [(c.name, c.command) for c in strict] == [("a", "py3")]
    with pytest.raises(FlagError) as refused:
        load_mcp_configuration(['{"servers": {}}'], cwd=tmp_path, strict=True, environment={})
    assert 'Missing "mcpServers"' in refused.value.stderr_line


def test_agent_precedence_and_invalid_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "project"
    for directory, description in ((home, "user one"), (project, "project one")):
        agents = directory / ".claude" / "agents"
        agents.mkdir(parents=True)
        (agents / "a.md").write_text(
            f"---\nname: shared\ndescription: {description}\ntools: [Read, Grep]\n---\nbody"
        )
    (project / ".claude" / "agents" / "bad.md").write_text("---\nname: -bad\ndescription: x\n---\n")
    (project / ".claude" / "agents" / "nodescription.md").write_text("---\nname: silent\n---\n")
    catalogue = load_agent_catalogue(
        project, home, '{"inline": {"description": "d", "prompt": "p", "tools": "Bash, Read"}}'
    )
    shared = catalogue.find("shared")
    assert shared is not None and shared.description == "project one" and shared.tools == ["Read", "Grep"]
    inline = catalogue.find("inline")
    assert inline is not None and inline.tools == ["Bash", "Read"]
    assert catalogue.find("-bad") is None and catalogue.find("silent") is None
