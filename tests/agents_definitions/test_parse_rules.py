"""Every loader rule of elynav_nb.agents.definitions, each with a bad file that breaks it."""

from __future__ import annotations

from pathlib import Path

import pytest

from elynav_nb.agents.definitions import AgentDefinition, load_agents
from elynav_nb.errors import AgentDefinitionInvalid, AgentNotFound, InvalidInput

GOOD_TEXT = """---
name: reviewer
description: Reviews code.
tools: Read, Grep
model: sonnet
permissionMode: plan
---

You review code. Answer in French.
"""


def _write(folder: Path, file_name: str, text: str) -> Path:
    path = folder / file_name
    path.write_text(text, encoding="utf-8")
    return path


def _load_error(tmp_path: Path, text: str) -> AgentDefinitionInvalid:
    path = _write(tmp_path, "bad-agent.md", text)
    with pytest.raises(AgentDefinitionInvalid) as caught:
        AgentDefinition.load(path)
    error = caught.value
    assert str(path) in str(error), "the message must name the file"
    assert error.code == "AGENT_DEFINITION_INVALID"
    assert isinstance(error, InvalidInput)
    return error


def test_good_file_loads_every_field(tmp_path: Path) -> None:
    path = _write(tmp_path, "reviewer.md", GOOD_TEXT)
    definition = AgentDefinition.load(path)
    assert definition.name == "reviewer"
    assert definition.description == "Reviews code."
    assert definition.tools == ("Read", "Grep")
    assert definition.model == "sonnet"
    assert definition.permission_mode == "plan"
    assert definition.prompt == "You review code. Answer in French."
    assert dict(definition.extra) == {}
    assert definition.source_path == path


@pytest.mark.parametrize(
    ("text", "rule", "words"),
    [
        ("name: x\ndescription: y\n---\nprompt\n", "front_matter", "no front matter"),
        ("\n---\nname: x\ndescription: y\n---\nprompt\n", "front_matter", "no front matter"),
        ("---\nname: x\ndescription: y\nprompt without closing fence\n", "front_matter", "unterminated"),
        ("---\n- just\n- a list\n---\nprompt\n", "front_matter", "must be YAML keys"),
        ("---\ndescription: y\n---\nprompt\n", "name", 'missing required "name"'),
        ("---\nname: 42\ndescription: y\n---\nprompt\n", "name", '"name" must be a string'),
        ("---\nname: [a, b]\ndescription: y\n---\nprompt\n", "name", '"name" must be a string'),
        ("---\nname: -dash\ndescription: y\n---\nprompt\n", "name", 'must not start with "-"'),
        ("---\nname: two words\ndescription: y\n---\nprompt\n", "name", "letters, digits"),
        ("---\nname: café\ndescription: y\n---\nprompt\n", "name", "letters, digits"),
        ("---\nname: _under\ndescription: y\n---\nprompt\n", "name", "letters, digits"),
        ("---\nname: x\n---\nprompt\n", "description", 'missing required "description"'),
        ("---\nname: x\ndescription: '   '\n---\nprompt\n", "description", "is empty"),
        ("---\nname: x\ndescription:\n---\nprompt\n", "description", 'missing required "description"'),
        ("---\nname: x\ndescription: [a]\n---\nprompt\n", "description", "must be a string"),
        ("---\nname: x\ndescription: y\ntools: 3\n---\nprompt\n", "tools", "list or a comma string"),
        (
            "---\nname: x\ndescription: y\ntools: {Read: true}\n---\nprompt\n",
            "tools",
            "list or a comma string",
        ),
        ("---\nname: x\ndescription: y\ntools: [Read, 7]\n---\nprompt\n", "tools", "must be a tool name"),
        ("---\nname: x\ndescription: y\ntools: ' , '\n---\nprompt\n", "tools", '"tools" is empty'),
        ("---\nname: x\ndescription: y\ntools: []\n---\nprompt\n", "tools", '"tools" is empty'),
        (
            "---\nname: x\ndescription: y\npermissionMode: yolo\n---\nprompt\n",
            "permissionMode",
            "acceptEdits",
        ),
        ("---\nname: x\ndescription: y\npermissionMode: Plan\n---\nprompt\n", "permissionMode", "unknown"),
        ("---\nname: x\ndescription: y\nmodel: 4\n---\nprompt\n", "model", '"model" must be'),
        ("---\nname: x\ndescription: y\nmodel: [sonnet]\n---\nprompt\n", "model", '"model" must be'),
        ("---\nname: x\ndescription: y\n---\n", "prompt", "prompt is empty"),
        ("---\nname: x\ndescription: y\n---\n\n   \n\n", "prompt", "prompt is empty"),
    ],
)
def test_each_rule_names_file_and_rule(tmp_path: Path, text: str, rule: str, words: str) -> None:
    error = _load_error(tmp_path, text)
    assert error.details["rule"] == rule
    assert words in str(error)


def test_yaml_error_gives_the_file_line(tmp_path: Path) -> None:
    text = "---\nname: x\ndescription: y\ntools: [Read, Grep\nmodel: sonnet\n---\nprompt\n"
    error = _load_error(tmp_path, text)
    assert error.details["rule"] == "yaml"
    assert "not valid YAML" in str(error)
    # The unclosed flow list is reported on the 'model' line or after it, never on the fence line 1.
    assert error.details["line"] >= 4
    assert f"line {error.details['line']}" in str(error)


def test_yaml_error_line_is_counted_in_the_file(tmp_path: Path) -> None:
    text = "---\nname: x\ndescription: y\nbroken: 'unclosed\n---\nprompt\n"
    # An unclosed quote runs to the end of the front matter; the mark stays inside it.
    error = _load_error(tmp_path, text)
    assert error.details["rule"] == "yaml"
    text_mapping_error = "---\nname: x\ndescription: a: b: c\n---\nprompt\n"
    error = _load_error(tmp_path, text_mapping_error)
    assert error.details["line"] == 3
    assert "line 3" in str(error)


def test_not_utf8_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes("---\nname: x\ndescription: créé\n---\nprompt\n".encode("latin-1"))
    with pytest.raises(AgentDefinitionInvalid) as caught:
        AgentDefinition.load(path)
    assert caught.value.details["rule"] == "encoding"
    assert "not UTF-8" in str(caught.value)
    assert str(path) in str(caught.value)


def test_missing_file_is_agent_not_found(tmp_path: Path) -> None:
    with pytest.raises(AgentNotFound):
        AgentDefinition.load(tmp_path / "nothing.md")


def test_parse_without_path_names_the_text() -> None:
    with pytest.raises(AgentDefinitionInvalid, match="<agent text>"):
        AgentDefinition.parse("no front matter at all")


def test_tools_as_yaml_list_and_parenthesised_commas() -> None:
    text = "---\nname: x\ndescription: y\ntools:\n  - Read\n  - ' Grep '\n---\nbody\n"
    assert AgentDefinition.parse(text).tools == ("Read", "Grep")
    text = "---\nname: x\ndescription: y\ntools: Read, Agent(elynav-sdr, elynav-cmo), Bash(git diff:*)\n---\nbody\n"
    assert AgentDefinition.parse(text).tools == ("Read", "Agent(elynav-sdr, elynav-cmo)", "Bash(git diff:*)")


def test_no_tools_key_means_every_tool() -> None:
    definition = AgentDefinition.parse("---\nname: x\ndescription: y\n---\nbody\n")
    assert definition.tools == ()
    assert definition.inherits_all_tools
    assert "tools" not in definition.to_cli_agents_json()


def test_crlf_and_bom_are_accepted() -> None:
    text = "\ufeff---\r\nname: x\r\ndescription: y\r\ntools: Read\r\n---\r\n\r\nline one\r\nline two\r\n"
    definition = AgentDefinition.parse(text)
    assert definition.name == "x"
    assert definition.tools == ("Read",)
    assert definition.prompt.splitlines() == ["line one", "line two"]


def test_fence_inside_the_prompt_stays_in_the_prompt() -> None:
    text = "---\nname: x\ndescription: y\n---\nbefore\n---\nafter\n"
    assert AgentDefinition.parse(text).prompt == "before\n---\nafter"


def test_all_permission_modes_of_the_design_note_are_accepted() -> None:
    for mode in ["default", "acceptEdits", "auto", "bypassPermissions", "dontAsk", "plan", "manual"]:
        text = f"---\nname: x\ndescription: y\npermissionMode: {mode}\n---\nbody\n"
        assert AgentDefinition.parse(text).permission_mode == mode


def test_unknown_keys_are_kept_in_extra_in_order() -> None:
    text = "---\nname: x\ndescription: y\nmaxTurns: 5\ncolor: blue\nfoo: bar\n---\nbody\n"
    definition = AgentDefinition.parse(text)
    assert list(definition.extra.items()) == [("maxTurns", 5), ("color", "blue"), ("foo", "bar")]
    with pytest.raises(TypeError):
        definition.extra["foo"] = "changed"  # type: ignore[index]


def test_load_agents_keys_by_front_matter_name(tmp_path: Path) -> None:
    _write(tmp_path, "weird-file-name.md", GOOD_TEXT.replace("name: reviewer", "name: named-differently"))
    _write(tmp_path, "notes.txt", "not an agent")
    agents = load_agents(tmp_path)
    assert list(agents) == ["named-differently"]
    assert agents["named-differently"].source_path == tmp_path / "weird-file-name.md"


def test_load_agents_refuses_two_files_with_one_name(tmp_path: Path) -> None:
    first = _write(tmp_path, "a.md", GOOD_TEXT)
    second = _write(tmp_path, "b.md", GOOD_TEXT.replace("Reviews code.", "Another reviewer."))
    with pytest.raises(AgentDefinitionInvalid) as caught:
        load_agents(tmp_path)
    message = str(caught.value)
    assert str(first) in message and str(second) in message
    assert "'reviewer'" in message
    assert caught.value.details["rule"] == "duplicate_name"


def test_load_agents_is_strict_about_a_bad_file(tmp_path: Path) -> None:
    _write(tmp_path, "good.md", GOOD_TEXT)
    bad = _write(tmp_path, "bad.md", "---\nname: x\n---\nbody\n")
    with pytest.raises(AgentDefinitionInvalid, match=str(bad)):
        load_agents(tmp_path)


def test_load_agents_on_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(AgentNotFound):
        load_agents(tmp_path / "absent")
