"""Agent discovery for the stand-in: built-ins, ``.claude/agents/*.md`` files and ``--agents`` JSON.

Where it sits: called once by ``claude_standin`` at start-up. It reads agent files (front matter parsed
with ``yaml.safe_load``) from the cwd and each parent directory, then ``~/.claude/agents``, then the
``--agents`` JSON (or file); an agent answers to its front-matter ``name``, never to its file name.
Invalid files are skipped silently, as the real CLI does in ``--print`` mode.
Precedence when two define the same name: ``--agents`` > project (nearest directory first) > user > built-in.

Data flow: directories + ``--agents`` text -> ``AgentCatalogue`` -> ``init.agents``, ``init.tools`` and
the ``initialize`` response.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from elynav_nb.sandbox.claude.tools import split_rules

__all__ = ["BUILTIN_AGENTS", "AgentCatalogue", "AgentDefinition", "load_agent_catalogue", "parse_tool_names"]


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    tools: list[str] | None = None
    model: str | None = None
    prompt: str = ""
    source: str = "built-in"


BUILTIN_AGENTS = [
    AgentDefinition("claude", "Catch-all agent for any task that does not fit a more specific one."),
    AgentDefinition("Explore", "Fast read-only search agent for locating code.", model="inherit"),
    AgentDefinition("general-purpose", "General-purpose agent for research and multi-step tasks."),
    AgentDefinition("Plan", "Software architect agent for designing implementation plans.", model="inherit"),
    AgentDefinition("statusline-setup", "Configures the user's status line setting.", model="sonnet"),
]


@dataclass
class AgentCatalogue:
    """Every agent the session can name, keyed by front-matter name."""

    agents: dict[str, AgentDefinition]

    def names(self) -> list[str]:
        """Sorted case-insensitively, as ``init.agents`` and the not-found error list them."""
        return sorted(self.agents, key=str.lower)

    def find(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)

    def describe(self) -> list[dict[str, Any]]:
        """The ``agents`` list of the ``initialize`` response."""
        described: list[dict[str, Any]] = []
        for name in self.names():
            agent = self.agents[name]
            entry: dict[str, Any] = {"name": agent.name, "description": agent.description}
            if agent.model is not None:
                entry["model"] = agent.model
            described.append(entry)
        return described


def parse_tool_names(value: object) -> list[str] | None:
    """``tools:`` as a YAML list or a comma string (commas inside parentheses kept) -> names; absent -> None."""
    if value is None:
        return None
    if isinstance(value, str):
        return split_rules(value, ",")
    if isinstance(value, list):
        return [str(item).strip() for item in value if str(item).strip()]
    return None


def _read_front_matter(text: str) -> tuple[dict[str, Any], str] | None:
    if not text.startswith("---"):
        return None
    lines = text.splitlines()
    for line_number in range(1, len(lines)):
        if lines[line_number].strip() == "---":
            header = "\n".join(lines[1:line_number])
            body = "\n".join(lines[line_number + 1 :]).strip()
            try:
                loaded = yaml.safe_load(header)
            except yaml.YAMLError:
                return None
            if not isinstance(loaded, dict):
                return None
            return loaded, body
    return None


def _agent_from_fields(fields: dict[str, Any], prompt: str, source: str) -> AgentDefinition | None:
    name = fields.get("name")
    description = fields.get("description")
    if not isinstance(name, str) or not name or name.startswith("-"):
        return None
    if not isinstance(description, str) or not description.strip():
        return None
    model = fields.get("model")
    return AgentDefinition(
        name=name,
        description=description,
        tools=parse_tool_names(fields.get("tools")),
        model=model if isinstance(model, str) else None,
        prompt=prompt,
        source=source,
    )


def _agents_in_directory(directory: Path, source: str) -> list[AgentDefinition]:
    found: list[AgentDefinition] = []
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.md")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        parsed = _read_front_matter(text)
        if parsed is None:
            continue
        fields, body = parsed
        agent = _agent_from_fields(fields, body, source)
        if agent is not None:
            found.append(agent)
    return found


def _agents_from_json(agents_argument: str) -> list[AgentDefinition]:
    """``--agents``: a JSON object, or (2.1.332 with --print) a path to a file holding one."""
    text = agents_argument
    if not agents_argument.lstrip().startswith("{") and os.path.isfile(agents_argument):
        text = Path(agents_argument).read_text(encoding="utf-8")
    try:
        loaded = json.loads(text)
    except ValueError:
        return []
    found: list[AgentDefinition] = []
    if not isinstance(loaded, dict):
        return found
    for name, fields in loaded.items():
        if not isinstance(fields, dict):
            continue
        prompt = fields.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            continue
        agent = _agent_from_fields({**fields, "name": name}, prompt, "flagSettings")
        if agent is not None:
            found.append(agent)
    return found


def load_agent_catalogue(cwd: Path, home: Path, agents_argument: str | None) -> AgentCatalogue:
    """Built-ins, then user, then project (farthest parent first, so the nearest wins), then ``--agents``."""
    agents: dict[str, AgentDefinition] = {agent.name: agent for agent in BUILTIN_AGENTS}
    for agent in _agents_in_directory(home / ".claude" / "agents", "userSettings"):
        agents[agent.name] = agent
    project_directories = [cwd, *cwd.parents]
    for directory in reversed(project_directories):
        for agent in _agents_in_directory(directory / ".claude" / "agents", "projectSettings"):
            agents[agent.name] = agent
    if agents_argument:
        for agent in _agents_from_json(agents_argument):
            agents[agent.name] = agent
    return AgentCatalogue(agents)
