"""Structured results through the runner: claude's stand-in (``--json-schema``), codex app-server and the
per-turn CLIs (fakes), valid and invalid answers, a schema changed between turns, bad schemas.

The stand-in honours ``--json-schema`` as claude 2.1.332 does (``standin_structured``): a
``StructuredOutput`` tool use, ``Structured output provided successfully``, ``structured_output`` on
the result line; ``@standin json <text>`` chooses the value. The fakes answer ``@json <text>``.
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel, field_validator

from elynav_nb.agents import AgentDefinition, AgentRunner, ToolResult, ToolUse
from elynav_nb.errors import InvalidInput

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
APP_SERVER = str(HERE / "fake_codex_app_server.py")
PER_TURN = str(HERE / "fake_per_turn_cli.py")
DEFINITION = AgentDefinition(name="elynav-tester", description="A test agent.", prompt="You are the tester.")


class Account(BaseModel):
    name: str
    score: int


class Contact(typing.TypedDict):
    email: str


class Picky(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def no_x(cls, value: str) -> str:
        if "x" in value:
            raise ValueError("no x allowed")
        return value


ROWS = '{"result": [{"name": "Acme", "score": 3}, {"name": "Globex", "score": 5}]}'


@pytest.fixture(autouse=True)
def cli_homes(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("ELYNAV_CLI_HOMES", str(tmp_path / "cli-homes"))
    monkeypatch.delenv("ELYNAV_CODEX_MODE", raising=False)
    return tmp_path / "cli-homes"


@pytest.fixture
def workspace(tmp_path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def standin(workspace: Path) -> AgentRunner:
    return AgentRunner(None, workspace, executable="standin")


# -- claude (the stand-in) -----------------------------------------------------------------------------


async def test_claude_a_structured_turn_gives_data_and_rows(workspace):
    async with standin(workspace) as runner:
        result = await runner.send(f"the top accounts\n@standin json {ROWS}", output_schema=list[Account])
        argv = list(runner.command_line)
    assert result.outcome == "completed", result.error
    assert result.data == [Account(name="Acme", score=3), Account(name="Globex", score=5)]
    frame = result.to_frame()
    assert list(frame["name"]) == ["Acme", "Globex"] and list(frame["score"]) == [3, 5]
    assert json.loads(argv[argv.index("--json-schema") + 1]) == result.output_schema.wire_schema
    [tool_use] = [event for event in result.events if isinstance(event, ToolUse)]
    [tool_result] = [event for event in result.events if isinstance(event, ToolResult)]
    assert tool_use.name == "StructuredOutput" and tool_use.input == json.loads(ROWS)
    assert tool_result.text == "Structured output provided successfully"
    assert result.ended is not None and result.ended.structured_output == json.loads(ROWS)
    assert "stand-in" in result.text  # it still says what it is
    assert "data=2 × Account" in repr(result)


async def test_claude_without_a_directive_the_standin_answers_a_minimal_instance(workspace):
    async with standin(workspace) as runner:
        result = await runner.send("who to call", output_schema=Contact)
    assert result.outcome == "completed" and result.data == {"email": "stand-in placeholder"}
    assert len(result.to_frame()) == 1
    assert "minimal instance of the schema" in result.text and "@standin json" in result.text  # said


async def test_claude_an_answer_the_cli_keeps_refusing_is_output_invalid(workspace):
    async with standin(workspace) as runner:
        result = await runner.send('@standin json {"name": 5}', output_schema=Account)
    assert result.outcome == "failed" and result.error_code == "OUTPUT_INVALID" and result.data is None
    assert "5 attempts" in result.error and "must be string" in result.error
    refusals = [event for event in result.events if isinstance(event, ToolResult) and event.is_error]
    assert len(refusals) == 5
    with pytest.raises(InvalidInput):
        result.to_frame()


async def test_claude_an_answer_our_validator_refuses_is_output_invalid_with_the_raw_text(workspace):
    async with standin(workspace) as runner:
        result = await runner.send('@standin json {"name": "xerxes"}', output_schema=Picky)
    assert result.outcome == "failed" and result.error_code == "OUTPUT_INVALID"
    assert "no x allowed" in result.error and result.data is None
    assert result.ended is not None and result.ended.result == '{"name":"xerxes"}'  # the raw answer, kept


async def test_claude_a_schema_change_restarts_with_resume_and_keeps_the_conversation(workspace):
    async with standin(workspace) as runner:
        first = await runner.send("plain")
        first_pid = runner.pid
        second = await runner.send("one", output_schema=Account)
        second_pid, second_argv = runner.pid, list(runner.command_line)
        third = await runner.send("same schema again", output_schema=Account)
        third_pid = runner.pid
        fourth = await runner.send("back to text")
        fourth_pid, fourth_argv = runner.pid, list(runner.command_line)
    assert [r.outcome for r in (first, second, third, fourth)] == ["completed"] * 4
    assert second_pid != first_pid and third_pid == second_pid and fourth_pid != third_pid
    assert f"--resume={first.session_id}" in second_argv and "--json-schema" in second_argv
    assert "--json-schema" not in fourth_argv
    assert {r.session_id for r in (first, second, third, fourth)} == {first.session_id}
    assert "I remember 3 earlier turns" in fourth.text  # the resumed process has the conversation
    assert second.data == Account(name="stand-in placeholder", score=0) and fourth.data is None


@pytest.mark.parametrize("bad", [{"type": "bogus"}, "not a schema", 3, {}])
async def test_a_bad_schema_is_refused_before_anything_runs(workspace, bad):
    runner = standin(workspace)
    with pytest.raises(InvalidInput):
        runner.send("hi", output_schema=bad)
    assert runner.process is None and runner.history == []


# -- codex app-server (fake) ----------------------------------------------------------------------------


def app_server(workspace: Path, log: Path) -> AgentRunner:
    return AgentRunner(
        DEFINITION,
        workspace,
        cli="codex",
        executable=[sys.executable, APP_SERVER],
        environment={"FAKE_MODE": "echo", "FAKE_LOG": str(log)},
    )


async def test_codex_app_server_sends_the_turns_schema_and_validates_the_final_message(workspace, tmp_path):
    log = tmp_path / "codex.log"
    async with app_server(workspace, log) as runner:
        good = await runner.send(
            f"rows please @json {json.dumps(json.loads(ROWS))}", output_schema=list[Account]
        )
        pid = runner.pid
        bad = await runner.send('again @json {"result": [{"name": "x"}]}', output_schema=list[Account])
        plain = await runner.send("no schema")
        same_process = runner.pid == pid
    assert good.outcome == "completed", good.error
    assert list(good.to_frame()["score"]) == [3, 5]
    assert bad.outcome == "failed" and bad.error_code == "OUTPUT_INVALID" and "score" in bad.error
    assert bad.text == '{"result": [{"name": "x"}]}'  # the raw answer kept
    assert plain.outcome == "completed" and plain.data is None
    assert same_process  # a schema per turn: no restart
    assert runner.capabilities.output_schema == "constrained"
    starts = [
        json.loads(line)["params"]
        for line in log.read_text().splitlines()
        if json.loads(line).get("method") == "turn/start"
    ]
    assert starts[0]["outputSchema"] == good.output_schema.wire_schema
    assert "outputSchema" not in starts[2]


# -- per-turn CLIs (fakes) ------------------------------------------------------------------------------


def per_turn(cli: str, workspace: Path, argv_log: Path) -> AgentRunner:
    return AgentRunner(
        DEFINITION,
        workspace,
        cli=cli,
        cli_mode="exec" if cli == "codex" else None,
        executable=[sys.executable, PER_TURN],
        environment={"FAKE_MODE": "echo", "FAKE_ARGV_LOG": str(argv_log)},
    )


async def test_codex_exec_gets_an_output_schema_file_in_its_home(workspace, tmp_path):
    argv_log = tmp_path / "argv.log"
    async with per_turn("codex", workspace, argv_log) as runner:
        result = await runner.send('@json {"email": "a@b.c"}', output_schema=Contact)
        home = runner.cli_home
    assert result.outcome == "completed" and result.data == {"email": "a@b.c"}
    argv = json.loads(argv_log.read_text().splitlines()[-1])
    path = Path(argv[argv.index("--output-schema") + 1])
    assert home is not None and path.is_relative_to(home) and path.stat().st_mode & 0o777 == 0o600
    assert json.loads(path.read_text()) == result.output_schema.wire_schema


async def test_gemini_gets_the_schema_in_the_prompt_and_we_validate(workspace, tmp_path):
    argv_log = tmp_path / "argv.log"
    async with per_turn("gemini", workspace, argv_log) as runner:
        good = await runner.send('@json {"email": "a@b.c"}', output_schema=Contact)
        bad = await runner.send("@json not json at all", output_schema=Contact)
        notes = " ".join(runner.limitations)
    assert good.outcome == "completed" and good.data == {"email": "a@b.c"}
    assert bad.outcome == "failed" and bad.error_code == "OUTPUT_INVALID" and bad.text == "not json at all"
    assert "no schema option" in notes
    assert runner.capabilities.output_schema == "prompt"
    argv = " ".join(json.loads(argv_log.read_text().splitlines()[0]))
    assert "--output-schema" not in argv


async def test_claude_a_schema_on_the_first_turn_after_start_restarts_with_its_session_id(workspace):
    # claude saves a session with its first message: a session with no turn cannot be --resume'd
    async with standin(workspace) as runner:
        session_id = runner.session_id
        result = await runner.send("first", output_schema=Contact)
        argv = list(runner.command_line)
        second = await runner.send("second")
    assert result.outcome == "completed", result.error
    assert ["--session-id", session_id] == argv[argv.index("--session-id") : argv.index("--session-id") + 2]
    assert not any(word.startswith("--resume") for word in argv)
    assert second.outcome == "completed" and second.session_id == session_id
    assert "I remember 1 earlier turn" in second.text


async def test_claude_an_agent_with_a_tools_list_gets_structured_output_inline(workspace):
    # claude 2.1.332 offers StructuredOutput to an --agent only when its tools list names it
    definition = AgentDefinition(
        name="elynav-lister", description="Lists.", prompt="You list.", tools=("Read",), model="sonnet"
    )
    async with AgentRunner(definition, workspace, executable="standin") as runner:
        plain = await runner.send("hello")
        plain_agents = dict(runner._driver.wire.agents)
        result = await runner.send("who", output_schema=Contact)
        inline = dict(runner._driver.wire.agents)  # sent with initialize: they win over the agent file
        started = runner.last_started
    assert plain_agents == {}
    assert inline["elynav-lister"]["tools"] == ["Read", "StructuredOutput"]
    assert inline["elynav-lister"]["prompt"] == "You list." and inline["elynav-lister"]["model"] == "sonnet"
    assert plain.outcome == "completed" and result.outcome == "completed", result.error
    assert result.data == {"email": "stand-in placeholder"}
    assert started is not None and "StructuredOutput" in started.tools


async def test_claude_kernel_tools_and_a_schema_in_one_turn(workspace):
    from elynav_nb.agents.tools import agent_tool, kernel_tools

    @agent_tool
    def score_of(name: str) -> int:
        """The score of an account."""
        return len(name)

    definition = AgentDefinition(
        name="elynav-scorer", description="Scores.", prompt="You score.", tools=("Read",)
    )
    runner = AgentRunner(definition, workspace, executable="standin", tools=kernel_tools(score_of))
    async with runner:
        result = await runner.send(
            '@standin mcp kernel score_of {"name": "Acme"}\n@standin json {"name": "Acme", "score": 4}',
            output_schema=Account,
        )
        agents = dict(runner._driver.wire.agents)
    assert result.outcome == "completed", result.error
    assert result.data == Account(name="Acme", score=4)
    assert [event.name for event in result.events if isinstance(event, ToolUse)] == [
        "mcp__kernel__score_of",
        "StructuredOutput",
    ]
    assert agents["elynav-scorer"]["tools"] == ["Read", "mcp__kernel", "StructuredOutput"]
