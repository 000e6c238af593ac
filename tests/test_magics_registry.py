"""The magics read the protocol registry: ``--cli``'s choices, ``%elynav list``'s rows and the CLI a cell runs.

The tests' ``echo`` protocol (``tests/agents/echo_protocol``, unknown to the library) is registered
here: once it is, it is a ``--cli`` choice and a row of the catalogue with its own notes, and a cell
naming it plans an echo runner; once it is gone, ``--cli echo`` is refused again.
"""

from __future__ import annotations

import dataclasses

import pytest

from elynav_nb.agents import AgentDefinition
from elynav_nb.agents.protocols.registry import cli_names, register_protocol, unregister_protocol
from elynav_nb.errors import InvalidInput
from elynav_nb.magics.catalogue import cli_catalogue
from elynav_nb.magics.extension import ElynavMagics
from elynav_nb.magics.parsers import parser_for
from tests.agents.echo_protocol import ENTRY


@pytest.fixture
def echo_registered():
    register_protocol(dataclasses.replace(ENTRY, models_note="echo has no model"))
    try:
        yield
    finally:
        unregister_protocol("echo", "lines")


def test_the_cli_choices_are_the_registrys_names():
    assert cli_names() == ("claude", "codex", "gemini", "acp")
    for cell in (True, False):
        parser = parser_for("agent", cell=cell)
        assert "{claude,codex,gemini,acp}" in parser.format_usage()
        for name in cli_names():
            message = [] if cell else ["hi"]
            assert parser.parse_args(["sdr", "--cli", name, *message]).cli == name
    with pytest.raises(InvalidInput, match="invalid choice: 'echo'"):
        parser_for("agent", cell=True).parse_args(["sdr", "--cli", "echo"])


def test_a_registered_protocol_is_a_cli_choice_and_a_catalogue_row(echo_registered):
    assert parser_for("agent", cell=False).parse_args(["sdr", "--cli", "echo", "hi"]).cli == "echo"
    assert "echo" in parser_for("agent", cell=True).format_help()
    frame = cli_catalogue()
    assert list(frame["cli"]) == ["claude", "codex", "gemini", "acp", "echo"]
    echo = frame.set_index("cli").loc["echo"]
    assert (echo["modes"], echo["models"], echo["stand-in"]) == ("lines", "echo has no model", "none")


def test_the_catalogue_keeps_the_built_in_clis_notes():
    frame = cli_catalogue().set_index("cli")
    assert frame.loc["claude", "stand-in"] == (
        "executable='standin' (elynav-claude-standin; used when claude is not found)"
    )
    assert frame.loc["acp", "stand-in"] == "executable='standin' (elynav-acp-standin)"
    assert frame.loc["codex", "modes"] == "app-server, exec"
    assert frame.loc["gemini", "models"].startswith("gemini-2.5-pro, gemini-2.5-flash")


def test_a_cell_runs_the_cli_its_plan_chose(tmp_path, echo_registered, capsys):
    magics = ElynavMagics(shell=None)
    magics.workspace = str(tmp_path)
    echo_runner = magics._runner("sdr", "echo")
    assert echo_runner.plan.cli == "echo" and echo_runner.agent_name == "elynav-sdr"
    assert capsys.readouterr().out == ""  # echo reads no agent file: nothing is written for it
    claude_runner = magics._runner("sdr", None)
    assert claude_runner.plan.cli == "claude"
    assert "where claude reads agents" in capsys.readouterr().out
    assert set(magics.runners) == {("elynav-sdr", "echo"), ("elynav-sdr", "claude")}


def test_the_agents_table_shows_each_agents_planned_cli(tmp_path, echo_registered):
    magics = ElynavMagics(shell=None)
    magics.workspace = str(tmp_path)
    folder = tmp_path / ".claude" / "agents"
    folder.mkdir(parents=True)
    definition = AgentDefinition(name="coder", description="writes code", prompt="p", cli="codex")
    (folder / "coder.md").write_text(definition.to_markdown(), encoding="utf-8")
    clis = dict(zip(*(magics._agents_frame()[column] for column in ("agent", "cli")), strict=True))
    assert (clis["coder"], clis["elynav-sdr"]) == ("codex", "claude")
    magics.cli = "echo"  # %config ElynavMagics.cli: what a cell naming no CLI runs
    assert set(magics._agents_frame()["cli"]) == {"echo"}
