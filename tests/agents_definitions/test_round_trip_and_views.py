"""Round trip to markdown, the --agents JSON entry, and the displays (repr, HTML, row)."""

from __future__ import annotations

import json
from pathlib import Path

from elynav_nb.agents.definitions import AgentDefinition

RICH_TEXT = """---
name: rich-agent
description: "Quand utiliser: toujours, même avec des accents et des « guillemets »."
tools:
  - Read
  - mcp__crm__search_accounts
  - Agent(elynav-sdr, elynav-cmo)
model: haiku
permissionMode: dontAsk
maxTurns: 7
color: blue
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{type: command, command: echo hi}]
---
Première ligne du prompt.

## Section
- une règle
"""


def test_round_trip_keeps_every_field() -> None:
    original = AgentDefinition.parse(RICH_TEXT, source_path="rich.md")
    again = AgentDefinition.parse(original.to_markdown())
    assert again == original
    assert again.tools == ("Read", "mcp__crm__search_accounts", "Agent(elynav-sdr, elynav-cmo)")
    assert again.description.startswith("Quand utiliser: toujours")
    assert again.extra["hooks"]["PreToolUse"][0]["matcher"] == "Bash"
    assert list(again.extra) == ["maxTurns", "color", "hooks"]


def test_to_markdown_is_stable_after_one_pass() -> None:
    once = AgentDefinition.parse(RICH_TEXT).to_markdown()
    twice = AgentDefinition.parse(once).to_markdown()
    assert once == twice
    assert once.startswith("---\nname: rich-agent\n")
    assert "tools: Read, mcp__crm__search_accounts, Agent(elynav-sdr, elynav-cmo)\n" in once
    assert "« guillemets »" in once  # accents and French quotes are written as is, not escaped


def test_round_trip_of_values_yaml_would_misread() -> None:
    definition = AgentDefinition(
        name="x1",
        description="yes",
        model="1.5",
        prompt="---\nstill the prompt",
        extra={"effort": "high"},
    )
    again = AgentDefinition.parse(definition.to_markdown())
    assert again == definition
    assert again.description == "yes" and again.model == "1.5"


def test_source_path_takes_no_part_in_equality_and_objects_hash() -> None:
    first = AgentDefinition.parse(RICH_TEXT, source_path="a.md")
    second = AgentDefinition.parse(RICH_TEXT, source_path="b.md")
    assert first == second
    assert hash(first) == hash(second)
    assert first.source_path == Path("a.md")


def test_cli_agents_json_entry_shape() -> None:
    entry = AgentDefinition.parse(RICH_TEXT).to_cli_agents_json()
    assert entry["description"].startswith("Quand utiliser")
    assert entry["prompt"].startswith("Première ligne du prompt.")
    assert entry["tools"] == ["Read", "mcp__crm__search_accounts", "Agent(elynav-sdr, elynav-cmo)"]
    assert entry["model"] == "haiku"
    assert entry["permissionMode"] == "dontAsk"
    assert entry["maxTurns"] == 7
    assert "hooks" in entry
    assert "color" not in entry, "only keys the --agents JSON accepts are passed inline"
    assert "name" not in entry, "the name is the key of the entry, not inside it"
    json.dumps({"rich-agent": entry})  # serialisable as is


def test_cli_agents_json_leaves_out_unset_fields() -> None:
    entry = AgentDefinition.parse("---\nname: x\ndescription: y\n---\nbody\n").to_cli_agents_json()
    assert entry == {"description": "y", "prompt": "body"}


def test_repr_is_one_line_and_short() -> None:
    text = repr(AgentDefinition.parse(RICH_TEXT, source_path="rich.md"))
    assert "\n" not in text
    assert text == (
        "AgentDefinition(name='rich-agent', tools=3, model='haiku', permission_mode='dontAsk', source='rich.md')"
    )
    assert "tools=all" in repr(AgentDefinition.parse("---\nname: x\ndescription: y\n---\nbody\n"))


def test_html_escapes_and_shows_prompt_preview() -> None:
    text = (
        "---\nname: x\ndescription: <b>bold</b> & co\n---\n"
        + "\n".join(f"line {i}" for i in range(30))
        + "\n"
    )
    page = AgentDefinition.parse(text)._repr_html_()
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in page
    assert "<b>bold</b>" not in page
    assert "line 0" in page and "line 29" not in page
    assert "18 more lines" in page
    assert "system prompt (30 lines)" in page


def test_to_row_flat_values() -> None:
    row = AgentDefinition.parse(RICH_TEXT, source_path="rich.md").to_row()
    assert row == {
        "name": "rich-agent",
        "description": "Quand utiliser: toujours, même avec des accents et des « guillemets ».",
        "tools": "Read, mcp__crm__search_accounts, Agent(elynav-sdr, elynav-cmo)",
        "tool_count": 3,
        "model": "haiku",
        "permission_mode": "dontAsk",
        "cli": "claude",
        "prompt_lines": 4,
        "source_path": "rich.md",
    }
