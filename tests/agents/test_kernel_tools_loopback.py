"""Kernel tools on codex and gemini runners: the loopback server's lifetime, the CLI files, the names refused.

The fake per-turn CLI (``fake_per_turn_cli.py``, ``FAKE_MODE=kernel-tool``) acts as the real CLIs
do: it reads the ``kernel`` server from the config the runner wrote (codex ``config.toml``, gemini
``settings.json``), takes the secret from its environment and calls the tool over MCP streamable
HTTP. The real binaries are driven in ``tests/real_cli/test_kernel_tools_real.py``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from elynav_nb.agents import AgentDefinition, AgentRunner
from elynav_nb.agents.protocols.codex.launch import render_toml
from elynav_nb.agents.protocols.gemini.launch import gemini_mcp_tool_name
from elynav_nb.agents.tools import agent_tool, kernel_tools
from elynav_nb.errors import InvalidInput

pytestmark = pytest.mark.anyio

FAKE = str(Path(__file__).with_name("fake_per_turn_cli.py"))
DEFINITION = AgentDefinition(
    name="elynav-tester", description="A test agent.", prompt="You test.", tools=("Read",)
)
CLIS = ("codex", "gemini")
ACCOUNTS = {"Girard": "gold"}


@agent_tool
def account_tier(name: str) -> str:
    """The tier of an account, as the kernel holds it now."""
    return ACCOUNTS.get(name, "unknown")


@agent_tool
def refuse_everything(reason: str) -> str:
    """Always fails."""
    raise PermissionError(f"kernel refuses: {reason}")


@pytest.fixture(autouse=True)
def cli_homes(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cli-homes"
    monkeypatch.setenv("ELYNAV_CLI_HOMES", str(root))
    monkeypatch.setenv("ELYNAV_CODEX_MODE", "exec")  # the fake speaks `codex exec --json`
    return root


@pytest.fixture
def workspace(tmp_path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def tool_runner(
    cli: str, workspace: Path, tools: object, tool: str, arguments: dict, **options: object
) -> AgentRunner:
    environment = {
        "FAKE_MODE": "kernel-tool",
        "FAKE_TOOL": tool,
        "FAKE_TOOL_ARGUMENTS": json.dumps(arguments),
    }
    return AgentRunner(
        DEFINITION,
        workspace,
        cli=cli,  # type: ignore[arg-type]
        executable=[sys.executable, FAKE],
        environment=environment,
        tools=tools,  # type: ignore[arg-type]
        **options,  # type: ignore[arg-type]
    )


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def files_holding(folder: Path, text: str) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file() and text.encode() in path.read_bytes()]


@pytest.mark.parametrize("cli", CLIS)
async def test_a_turn_calls_a_kernel_tool_through_the_loopback_server(cli, workspace) -> None:
    ACCOUNTS["Girard"] = "gold"
    runner = tool_runner(cli, workspace, [account_tier], "account_tier", {"name": "Girard"})
    assert runner.tool_server is None, "nothing listens before the start"
    await runner.start()
    server = runner.tool_server
    assert server is not None and server.is_serving and server.url.startswith("http://127.0.0.1:")
    ACCOUNTS["Girard"] = "platinum"  # changed after the start: the tool sees it as it is now
    result = await runner.send("which tier?")
    port, secret = server.port, server.secret
    assert result.outcome == "completed", result.error
    assert result.text == "tool said: platinum"
    assert runner.tool_endpoint is not None and runner.tool_endpoint.calls == 1
    [tool_use] = result.tool_uses
    assert tool_use.name == "mcp__kernel__account_tier"
    assert runner.cli_home is not None
    assert files_holding(runner.cli_home, secret) == [], "the secret is in no file of the CLI's home"
    assert files_holding(runner.cli_home, server.url)
    assert secret not in " ".join(runner.command_line)
    assert {"name": "kernel", "status": "configured"} in await runner.mcp_status()
    await runner.stop()
    assert not server.is_serving and refused(port)


@pytest.mark.parametrize("cli", CLIS)
async def test_a_tool_that_raises_reaches_the_model_as_a_tool_error(cli, workspace) -> None:
    runner = tool_runner(cli, workspace, [refuse_everything], "refuse_everything", {"reason": "test"})
    async with runner:
        result = await runner.send("try")
    assert result.outcome == "completed", result.error
    assert "PermissionError" in result.text and "kernel refuses: test" in result.text
    assert runner.tool_server is not None and runner.tool_server.secret not in result.text


async def test_two_runners_in_one_loop_each_with_its_own_tools_and_secret(workspace, tmp_path) -> None:
    @agent_tool(name="whoami")
    def first_tool() -> str:
        """Who answers."""
        return "first"

    @agent_tool(name="whoami")
    def second_tool() -> str:
        """Who answers."""
        return "second"

    other = tmp_path / "other"
    other.mkdir()
    first = tool_runner("gemini", workspace, [first_tool], "whoami", {})
    second = tool_runner("codex", other, [second_tool], "whoami", {})
    async with first, second:
        results = await asyncio.gather(first.send("a"), second.send("b"))
        assert first.tool_server is not None and second.tool_server is not None
        assert first.tool_server.port != second.tool_server.port
        assert first.tool_server.secret != second.tool_server.secret
    assert [result.text for result in results] == ["tool said: first", "tool said: second"]


@pytest.mark.parametrize("cli", CLIS)
async def test_a_restart_serves_on_a_new_port_with_a_new_secret(cli, workspace) -> None:
    runner = tool_runner(cli, workspace, [account_tier], "account_tier", {"name": "Girard"})
    await runner.start()
    assert runner.tool_server is not None
    before = runner.tool_server.port, runner.tool_server.secret
    await runner.restart()
    after = runner.tool_server.port, runner.tool_server.secret
    result = await runner.send("again")
    await runner.stop()
    assert before[0] != after[0] and before[1] != after[1]
    assert result.outcome == "completed" and result.text.startswith("tool said:"), result.text
    assert refused(before[0]) and refused(after[0])


async def test_the_codex_config_keeps_the_secret_out_of_commands_and_approves_the_tools(workspace) -> None:
    runner = tool_runner("codex", workspace, [account_tier], "account_tier", {"name": "x"})
    async with runner:
        assert runner.cli_home is not None
        config = tomllib.loads((runner.cli_home / "config.toml").read_text())
        server = runner.tool_server
        assert server is not None
        assert config["mcp_servers"]["kernel"] == {
            "url": server.url,
            "bearer_token_env_var": "ELYNAV_KERNEL_TOOLS_TOKEN",
            "required": True,
            "startup_timeout_sec": 30.0,
            "tool_timeout_sec": 75.0,
            "default_tools_approval_mode": "approve",
        }
        assert config["shell_environment_policy"] == {"exclude": ["ELYNAV_KERNEL_TOOLS_TOKEN"]}


async def test_the_gemini_settings_name_the_secret_by_its_variable_and_keep_the_tools_offered(
    workspace,
) -> None:
    runner = tool_runner("gemini", workspace, [account_tier], "account_tier", {"name": "x"})
    async with runner:
        assert runner.cli_home is not None
        settings = json.loads((runner.cli_home / ".gemini" / "settings.json").read_text())
        server = runner.tool_server
        assert server is not None
        assert settings["mcpServers"]["kernel"] == {
            "httpUrl": server.url,
            "headers": {"Authorization": "Bearer ${ELYNAV_KERNEL_TOOLS_TOKEN}"},
            "trust": True,
            "timeout": 75000,
        }
        # the definition lists its tools (tools.core): the kernel tools are named there too
        assert "mcp_kernel_account_tier" in settings["tools"]["core"]


@pytest.mark.parametrize("cli", CLIS)
async def test_a_workspace_server_named_kernel_is_refused_before_the_cli_starts(cli, workspace) -> None:
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"kernel": {"command": "true"}}}))
    runner = tool_runner(cli, workspace, [account_tier], "account_tier", {"name": "x"})
    with pytest.raises(InvalidInput, match="named 'kernel'"):
        await runner.start()
    assert runner.tool_server is not None and not runner.tool_server.is_serving, (
        "a failed start leaves no port"
    )
    result = await runner.send("hello")
    assert result.outcome == "failed" and result.error_code == "INVALID_INPUT"
    await runner.stop()


async def test_gemini_names_that_would_be_cut_or_shadowed_are_refused(workspace) -> None:
    long_name = "a" * 60
    tool_with_doc = agent_tool(name=long_name, description="A long one.")(lambda: "x")
    runner = tool_runner("gemini", workspace, [tool_with_doc], long_name, {})
    with pytest.raises(InvalidInput, match="over its 63-character limit") as caught:
        await runner.start()
    assert long_name in str(caught.value)
    await runner.stop()

    @agent_tool
    def crm_search(query: str) -> str:
        """Search."""
        return query

    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"kernel_crm": {"command": "true"}}}))
    assert gemini_mcp_tool_name("kernel_crm", "search") == gemini_mcp_tool_name("kernel", "crm_search")
    shadowed = tool_runner("gemini", workspace, [crm_search], "crm_search", {})
    with pytest.raises(InvalidInput, match="could collide") as caught:
        await shadowed.start()
    assert "crm_search" in str(caught.value) and caught.value.code == "INVALID_INPUT"
    await shadowed.stop()
    # codex keeps each server's tools in a namespace of its own: no such clash
    codex = tool_runner("codex", workspace, [crm_search], "crm_search", {"query": "q"})
    async with codex:
        assert (await codex.send("go")).text == "tool said: q"


async def test_a_claude_runner_opens_no_port(workspace) -> None:
    runner = AgentRunner(DEFINITION, workspace, executable="standin", tools=kernel_tools(account_tier))
    async with runner:
        assert runner.tool_server is None


def test_a_forgotten_stop_closes_the_server_when_asyncio_run_ends(tmp_path, workspace) -> None:
    script = tmp_path / "forgot.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, json, os, socket, sys
            os.environ["ELYNAV_CLI_HOMES"] = {str(tmp_path / "homes")!r}
            from elynav_nb.agents import AgentDefinition, AgentRunner
            from elynav_nb.agents.tools import agent_tool

            @agent_tool
            def ping() -> str:
                \"\"\"Ping.\"\"\"
                return "pong"

            runners = []

            async def main():
                runner = AgentRunner(
                    AgentDefinition(name="t", description="t", prompt="t"), {str(workspace)!r}, cli="gemini",
                    executable=[sys.executable, {FAKE!r}], tools=[ping],
                    environment={{"FAKE_MODE": "kernel-tool", "FAKE_TOOL": "ping"}},
                )
                runners.append(runner)
                print((await runner.send("go")).text, flush=True)   # and no runner.stop()

            asyncio.run(main())
            server = runners[0].tool_server
            try:
                socket.create_connection(("127.0.0.1", server.port), timeout=2).close()
                print("open")
            except ConnectionRefusedError:
                print("closed", server.is_serving)
            """
        )
    )
    finished = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.splitlines() == ["tool said: pong", "closed False"]
    assert "Event loop is closed" not in finished.stderr and "Traceback" not in finished.stderr


@pytest.mark.parametrize("cli", CLIS)
async def test_the_secret_is_never_logged(cli, workspace, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="elynav_nb")
    runner = tool_runner(cli, workspace, [account_tier], "account_tier", {"name": "Girard"})
    async with runner:
        result = await runner.send("which tier?")
        assert runner.tool_server is not None
        secret = runner.tool_server.secret
    assert result.outcome == "completed"
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "kernel tool server POST /mcp -> 200" in logged
    assert secret not in logged


def test_a_codex_table_of_values_and_sub_tables_renders_as_toml() -> None:
    text = render_toml({"model": "m", "policy": {"exclude": ["A"], "inner": {"x": 1}}})
    assert tomllib.loads(text) == {"model": "m", "policy": {"exclude": ["A"], "inner": {"x": 1}}}
