"""The pure command builders of codex and gemini: config files, environment, per-turn argv."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from elynav_nb.agents.protocols.codex.launch import build_codex_turn, plan_codex_runner, render_toml
from elynav_nb.agents.protocols.gemini.launch import build_gemini_turn, gemini_tool_names, plan_gemini_runner
from elynav_nb.agents.protocols.launch import (
    McpServer,
    expand_placeholders,
    read_mcp_servers,
    split_definition_tools,
)
from elynav_nb.errors import InvalidInput

WORKSPACE = Path("/work/space")
MCP_JSON = {
    "mcpServers": {
        "crm": {
            "type": "stdio",
            "command": "/usr/bin/python3",
            "args": ["-m", "elynav_nb.crm.server", "--db", "/d/crm.sqlite"],
            "env": {},
        },
        "templates": {
            "command": "python3",
            "args": ["-m", "elynav_nb", "mcp", "templates", "--agent", "${ELYNAV_AGENT_NAME:-workspace}"],
        },
        "remote": {
            "type": "http",
            "url": "https://mcp.example/${REGION}/mcp",
            "headers": {"Authorization": "Bearer ${TOKEN}"},
        },
        "legacy": {"type": "sse", "url": "https://old.example/sse"},
    }
}


def servers(environment: dict[str, str] | None = None) -> tuple[McpServer, ...]:
    default = {"ELYNAV_AGENT_NAME": "elynav-sdr", "REGION": "eu", "TOKEN": "t0k"}
    return read_mcp_servers(MCP_JSON, default if environment is None else environment)


# -- shared pieces ------------------------------------------------------------------------------


def test_placeholders_expand_from_the_environment_with_defaults():
    assert expand_placeholders("a ${X} b ${Y:-dflt} c ${Z}", {"X": "1"}) == "a 1 b dflt c "
    crm, templates, remote, legacy = servers()
    assert templates.args[-1] == "elynav-sdr" and crm.transport == "stdio"
    assert remote.url == "https://mcp.example/eu/mcp" and remote.headers == {"Authorization": "Bearer t0k"}
    assert legacy.transport == "sse"
    assert servers({})[1].args[-1] == "workspace"


def test_an_mcp_entry_without_command_or_url_is_refused():
    with pytest.raises(InvalidInput):
        read_mcp_servers({"mcpServers": {"bad": {"type": "stdio"}}}, {})
    with pytest.raises(InvalidInput):
        read_mcp_servers({"mcpServers": {"bad": {"type": "http"}}}, {})


def test_definition_tools_split_into_builtin_and_mcp_per_server():
    split = split_definition_tools(
        [
            "Read",
            "Bash(elynav ask:*)",
            "mcp__crm__get_account",
            "mcp__crm__search_accounts",
            "mcp__my_docs__read",
            "mcp__templates",
        ]
    )
    assert split.restricted and split.builtin == ("Read", "Bash(elynav ask:*)")
    assert split.mcp == {"crm": ("get_account", "search_accounts"), "my_docs": ("read",), "templates": ()}
    assert split.allows_server("templates") and not split.allows_server("remote")
    unrestricted = split_definition_tools([])
    assert not unrestricted.restricted and unrestricted.allows_server("anything")


# -- codex ----------------------------------------------------------------------------------------


def test_codex_config_holds_model_sandbox_prompt_provider_and_mcp_servers(tmp_path):
    plan = plan_codex_runner(
        workspace=WORKSPACE,
        codex_home=tmp_path / "codex",
        system_prompt='You are "the" agent.\nLine two.',
        tools=("Read", "mcp__crm__search_accounts"),
        mcp_servers=servers(),
        model="gpt-5.5",
        permission_mode="acceptEdits",
        provider_base_url="http://127.0.0.1:9/v1",
        request_max_retries=0,
        stream_max_retries=0,
    )
    config_file, rules_file = plan.config_files
    assert config_file.path == tmp_path / "codex" / "config.toml"
    assert rules_file.path == tmp_path / "codex" / "rules" / "elynav.rules"
    assert "prefix_rule" not in rules_file.text  # no Bash(...) rule in the definition
    config = tomllib.loads(config_file.text)
    assert config["model"] == "gpt-5.5" and config["sandbox_mode"] == "workspace-write"
    assert config["developer_instructions"] == 'You are "the" agent.\nLine two.'
    assert config["model_provider"] == "elynav"
    assert config["model_providers"]["elynav"] == {
        "name": "elynav",
        "base_url": "http://127.0.0.1:9/v1",
        "wire_api": "responses",
        "env_key": "CODEX_API_KEY",
        "request_max_retries": 0,
        "stream_max_retries": 0,
    }
    assert list(config["mcp_servers"]) == ["crm"]  # the definition names no tool of the others
    crm = config["mcp_servers"]["crm"]
    assert crm["command"] == "/usr/bin/python3" and crm["args"][-1] == "/d/crm.sqlite"
    assert crm["required"] is True and crm["default_tools_approval_mode"] == "approve"
    assert crm["enabled_tools"] == ["search_accounts"]
    assert plan.mcp_server_names == ("crm",) and not plan.bypass_sandbox
    assert any("Read" in note for note in plan.limitations)  # built-in filters cannot be enforced
    assert plan.environment_overrides == {"CODEX_HOME": str(tmp_path / "codex")}


def test_the_definition_s_bash_rules_become_codex_exec_policy_rules(tmp_path):
    tools = ("Read", "Bash(elynav ask:*)", "Bash(git status)", "Bash(npm run test *)", "Bash")
    plan = plan_codex_runner(workspace=WORKSPACE, codex_home=tmp_path, tools=tools)
    rules = plan.config_files[1].text.splitlines()
    assert rules[1:] == [
        'prefix_rule(pattern=["elynav", "ask"], decision="allow")',
        'prefix_rule(pattern=["git", "status"], decision="allow")',
        'prefix_rule(pattern=["npm", "run", "test"], decision="allow")',
    ]
    [not_enforced] = [note for note in plan.limitations if "not enforced" in note]
    assert not_enforced.endswith("Read, Bash not enforced")  # a bare Bash (every command) has no rule
    assert any("without asking and outside the sandbox" in note for note in plan.limitations)


def test_codex_without_a_tool_list_gets_every_server_but_sse_and_keeps_env_and_headers(tmp_path):
    plan = plan_codex_runner(workspace=WORKSPACE, codex_home=tmp_path, mcp_servers=servers(), model="opus")
    config = tomllib.loads(plan.config_files[0].text)
    assert sorted(config["mcp_servers"]) == ["crm", "remote", "templates"]
    assert config["mcp_servers"]["remote"] == {
        "url": "https://mcp.example/eu/mcp",
        "http_headers": {"Authorization": "Bearer t0k"},
        "required": True,
        "startup_timeout_sec": 30.0,
        "default_tools_approval_mode": "approve",
    }
    assert "enabled_tools" not in config["mcp_servers"]["crm"]
    assert "model" not in config and "model_provider" not in config and config["sandbox_mode"] == "read-only"
    assert any("'opus'" in note for note in plan.limitations) and any(
        "'legacy'" in note for note in plan.limitations
    )


def test_codex_turns_new_resumed_and_bypassing(tmp_path):
    plan = plan_codex_runner(workspace=WORKSPACE, codex_home=tmp_path, permission_mode="bypassPermissions")
    assert "sandbox_mode" not in tomllib.loads(plan.config_files[0].text)
    new = build_codex_turn(
        ["node", "codex.js"],
        plan,
        "-starts with a dash",
        parent_environment={"PATH": "/bin", "CODEX_HOME": "/elsewhere"},
    )
    assert new.argv == (
        "node",
        "codex.js",
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "--",
        "-starts with a dash",
    )
    assert new.environment["CODEX_HOME"] == str(tmp_path) and new.environment["PATH"] == "/bin"
    assert new.stdin_devnull and new.new_session and new.cwd == WORKSPACE
    resumed = build_codex_turn(
        ["codex"], plan, "next", resume_thread_id="0199-abc", environment={"HOME": "/h"}
    )
    assert resumed.argv[-4:] == ("resume", "0199-abc", "--", "next") and resumed.environment["HOME"] == "/h"


def test_codex_reads_codex_api_key_so_an_openai_key_is_copied_into_it(tmp_path):
    copied = plan_codex_runner(
        workspace=WORKSPACE, codex_home=tmp_path, parent_environment={"OPENAI_API_KEY": "sk-1"}
    )
    assert copied.environment_overrides["CODEX_API_KEY"] == "sk-1"
    kept = plan_codex_runner(
        workspace=WORKSPACE,
        codex_home=tmp_path,
        parent_environment={"OPENAI_API_KEY": "sk-1", "CODEX_API_KEY": "sk-2"},
    )
    assert "CODEX_API_KEY" not in kept.environment_overrides  # the parent's own CODEX_API_KEY is inherited
    assert "sk-1" not in repr(copied)


def test_toml_rendering_quotes_keys_and_escapes_strings():
    text = render_toml(
        {"a": 'x"\\\n\ty', "list": [1, True, "s"], "tables": {"odd name": {"env": {"K-1": "v"}, "n": 2.5}}}
    )
    assert tomllib.loads(text) == {
        "a": 'x"\\\n\ty',
        "list": [1, True, "s"],
        "tables": {"odd name": {"env": {"K-1": "v"}, "n": 2.5}},
    }
    with pytest.raises(TypeError):
        render_toml({"bad": object()})


# -- gemini ---------------------------------------------------------------------------------------


def test_gemini_settings_hold_auth_mcp_servers_tool_filters_and_the_prompt(tmp_path):
    plan = plan_gemini_runner(
        workspace=WORKSPACE,
        gemini_home=tmp_path,
        system_prompt="You are the agent.",
        tools=("Read", "Bash(elynav ask:*)", "NotebookEdit", "mcp__crm__search_accounts", "mcp__templates"),
        mcp_servers=servers(),
        model="gemini-2.5-flash",
        permission_mode="acceptEdits",
        base_url="http://127.0.0.1:9",
        api_key="k",
    )
    settings_file, prompt_file = plan.config_files
    assert settings_file.path == tmp_path / ".gemini" / "settings.json"
    assert (
        prompt_file.path == tmp_path / ".gemini" / "GEMINI.md" and prompt_file.text == "You are the agent.\n"
    )
    settings = json.loads(settings_file.text)
    assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}}
    assert settings["tools"]["core"] == [
        "read_file",
        "run_shell_command",
        "mcp_crm_search_accounts",
        "mcp_templates_*",
    ]
    assert settings["tools"]["allowed"] == ["read_file", "run_shell_command(elynav ask)"]
    assert sorted(settings["mcpServers"]) == ["crm", "templates"]
    assert settings["mcpServers"]["crm"]["trust"] is True and settings["mcpServers"]["crm"][
        "includeTools"
    ] == ["search_accounts"]
    assert "includeTools" not in settings["mcpServers"]["templates"]
    assert settings["mcpServers"]["templates"]["args"][-1] == "elynav-sdr"
    assert plan.approval_mode == "auto_edit" and plan.model == "gemini-2.5-flash"
    assert plan.environment_overrides == {
        "GEMINI_CLI_HOME": str(tmp_path),
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9",
        "GEMINI_API_KEY": "k",
    }
    assert any("NotebookEdit" in note for note in plan.limitations)
    assert "'k'" not in repr(plan)


def test_gemini_http_and_sse_servers_and_no_auth_setting_without_a_key(tmp_path):
    plan = plan_gemini_runner(
        workspace=WORKSPACE, gemini_home=tmp_path, mcp_servers=servers(), model="sonnet"
    )
    settings = json.loads(plan.config_files[0].text)
    assert "security" not in settings and "tools" not in settings
    assert settings["mcpServers"]["remote"]["httpUrl"] == "https://mcp.example/eu/mcp"
    assert settings["mcpServers"]["legacy"]["url"] == "https://old.example/sse"
    assert plan.model is None and any("'sonnet'" in note for note in plan.limitations)
    assert len(plan.config_files) == 1  # no prompt, no GEMINI.md


@pytest.mark.parametrize(
    ("permission_mode", "approval_mode"),
    [
        ("bypassPermissions", "yolo"),
        ("acceptEdits", "auto_edit"),
        ("plan", "plan"),
        ("default", "default"),
        (None, "default"),
    ],
)
def test_gemini_approval_modes(tmp_path, permission_mode, approval_mode):
    assert (
        plan_gemini_runner(
            workspace=WORKSPACE, gemini_home=tmp_path, permission_mode=permission_mode
        ).approval_mode
        == approval_mode
    )


def test_gemini_turns_new_and_resumed(tmp_path):
    plan = plan_gemini_runner(
        workspace=WORKSPACE, gemini_home=tmp_path, model="gemini-2.5-flash", api_key="k"
    )
    new = build_gemini_turn(["gemini"], plan, "-dash first", parent_environment={"PATH": "/bin"})
    assert new.argv == (
        "gemini",
        "--output-format",
        "stream-json",
        "--approval-mode",
        "default",
        "--model",
        "gemini-2.5-flash",
        "--prompt=-dash first",
    )
    assert (
        new.environment["GEMINI_API_KEY"] == "k" and new.environment["PATH"] == "/bin" and new.stdin_devnull
    )
    resumed = build_gemini_turn(
        ["gemini"], plan, "next", resume_session_id="s-1", environment={"TMPDIR": "/t"}
    )
    assert resumed.argv[-3:] == ("--resume", "s-1", "--prompt=next") and resumed.environment["TMPDIR"] == "/t"


def test_claude_tool_names_map_to_gemini_ones():
    mapped, unknown = gemini_tool_names(
        ["Read", "Write", "Edit", "MultiEdit", "Bash", "Bash(git status)", "WebSearch", "Task"]
    )
    assert mapped == (
        "read_file",
        "write_file",
        "replace",
        "run_shell_command",
        "run_shell_command(git status)",
        "google_web_search",
    )
    assert unknown == ("Task",)


def test_a_preset_gemini_session_id_and_long_prompts_through_stdin(tmp_path):
    from elynav_nb.agents.protocols.launch import PROMPT_ARGUMENT_LIMIT

    plan = plan_gemini_runner(workspace=WORKSPACE, gemini_home=tmp_path)
    new = build_gemini_turn(["gemini"], plan, "hi", session_id="s-0")
    assert new.argv[-3:] == ("--session-id", "s-0", "--prompt=hi") and new.stdin_data == b""
    resumed = build_gemini_turn(["gemini"], plan, "hi", session_id="s-0", resume_session_id="s-0")
    assert "--session-id" not in resumed.argv and resumed.argv[-3:] == ("--resume", "s-0", "--prompt=hi")
    long_prompt = "é" * (PROMPT_ARGUMENT_LIMIT // 2 + 1)  # two bytes each: over the limit
    piped = build_gemini_turn(["gemini"], plan, long_prompt)
    assert not any(word.startswith("--prompt") for word in piped.argv)
    assert piped.stdin_data == long_prompt.encode() and not piped.stdin_devnull
    codex_plan = plan_codex_runner(workspace=WORKSPACE, codex_home=tmp_path)
    codex_piped = build_codex_turn(["codex"], codex_plan, long_prompt, resume_thread_id="t-1")
    assert codex_piped.argv[-3:] == ("resume", "t-1", "-") and codex_piped.stdin_data == long_prompt.encode()
    assert build_codex_turn(["codex"], codex_plan, "short").stdin_devnull


def test_codex_config_arguments_are_toml_values():
    from elynav_nb.agents.protocols.codex.launch import codex_config_arguments

    assert codex_config_arguments(
        {"model_providers.elynav.request_max_retries": 0, "model": "gpt-5.5", "features.x": True}
    ) == (
        "-c",
        "model_providers.elynav.request_max_retries=0",
        "-c",
        'model="gpt-5.5"',
        "-c",
        "features.x=true",
    )
