"""Who may call which template tool: reads are allowed by default, writes only when granted by name.

Where it sits: pure, next to the catalogue. The MCP server and the OpenAI-style invoker both
ask ``PolicyBook.for_agent(name)`` for an ``AgentPolicy`` and then ``policy.check(tool)`` before
anything else happens, so a refusal (``NOT_ALLOWED``) always comes before any effect.

Data flow: grants come from two places, both turned into a ``PolicyBook`` here:
the durable per-user file ``<ELYNAV_HOME>/templates/policy.json`` (read by ``store.py``, shape
``{"agents": {"<agent>": {"grant": ["idea_template_update"]}}}``) and the ephemeral
``--grant TOOL`` options of ``elynav mcp templates``. Granting ``idea_template_update`` grants
that tool only: never create, never delete.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from elynav_nb.errors import InvalidInput, NotAllowed

__all__ = [
    "READ_ONLY_TOOLS",
    "WRITE_ACTION_TOOLS",
    "AgentPolicy",
    "PolicyBook",
    "ToolAccess",
    "policy_book_from_mapping",
    "tool_access",
]

READ_ONLY_TOOLS: frozenset[str] = frozenset({"idea_template_list", "idea_template_read"})
WRITE_ACTION_TOOLS: frozenset[str] = frozenset(
    {"idea_template_create", "idea_template_update", "idea_template_delete"}
)


class ToolAccess(Enum):
    READ = "read"
    WRITE = "write"


def tool_access(tool_name: str) -> ToolAccess:
    """Whether ``tool_name`` reads or writes; ``InvalidInput`` for a tool in neither set."""
    if tool_name in READ_ONLY_TOOLS:
        return ToolAccess.READ
    if tool_name in WRITE_ACTION_TOOLS:
        return ToolAccess.WRITE
    raise InvalidInput(f"unknown tool {tool_name!r}", details={"tool": tool_name})


@dataclass(frozen=True)
class AgentPolicy:
    """The template tools one agent identity may call."""

    agent: str
    granted_write_tools: frozenset[str] = field(default_factory=frozenset)

    def allows(self, tool_name: str) -> bool:
        if tool_access(tool_name) is ToolAccess.READ:
            return True
        return tool_name in self.granted_write_tools

    def check(self, tool_name: str) -> None:
        """Raise ``NotAllowed`` (or ``InvalidInput`` for an unknown tool) unless the call is allowed."""
        if not self.allows(tool_name):
            raise NotAllowed(
                f"agent {self.agent!r} may not call {tool_name}: write tools are refused unless granted",
                details={"tool": tool_name, "agent": self.agent},
            )

    def allowed_tools(self, tool_names: Iterable[str]) -> list[str]:
        """The names among ``tool_names`` this agent may call, in the given order."""
        allowed: list[str] = []
        for tool_name in tool_names:
            if self.allows(tool_name):
                allowed.append(tool_name)
        return allowed


def _checked_grants(agent: str, grants: Iterable[object]) -> frozenset[str]:
    checked: set[str] = set()
    for tool_name in grants:
        if not isinstance(tool_name, str) or tool_name not in WRITE_ACTION_TOOLS:
            known = ", ".join(sorted(WRITE_ACTION_TOOLS))
            raise InvalidInput(
                f"cannot grant {tool_name!r} to agent {agent!r}: only write tools are granted ({known})",
                details={"agent": agent},
            )
        checked.add(tool_name)
    return frozenset(checked)


class PolicyBook:
    """Grants by agent identity. An agent without an entry may read and may not write."""

    def __init__(self, grants: Mapping[str, Iterable[object]] | None = None) -> None:
        self._grants: dict[str, frozenset[str]] = {}
        for agent, agent_grants in (grants or {}).items():
            self._grants[agent] = _checked_grants(agent, agent_grants)

    def for_agent(self, agent: str) -> AgentPolicy:
        if not isinstance(agent, str) or not agent.strip():
            raise InvalidInput("the agent identity is empty", details={"field": "agent"})
        return AgentPolicy(agent, self._grants.get(agent, frozenset()))

    def with_grants(self, agent: str, grants: Iterable[object]) -> PolicyBook:
        """A new book where ``agent`` also has ``grants`` (the ephemeral ``--grant`` options)."""
        merged: dict[str, Iterable[object]] = dict(self._grants)
        merged[agent] = set(self._grants.get(agent, frozenset())) | set(_checked_grants(agent, grants))
        return PolicyBook(merged)

    def to_dict(self) -> dict[str, list[str]]:
        return {agent: sorted(grants) for agent, grants in sorted(self._grants.items())}

    def __repr__(self) -> str:
        return f"PolicyBook({self.to_dict()!r})"


def policy_book_from_mapping(data: object) -> PolicyBook:
    """A ``PolicyBook`` from the decoded ``policy.json`` (``{"agents": {name: {"grant": [...]}}}``)."""
    if not isinstance(data, dict):
        raise InvalidInput("policy file: the top level must be an object")
    agents = data.get("agents", {})
    if not isinstance(agents, dict):
        raise InvalidInput("policy file: 'agents' must be an object")
    grants: dict[str, Iterable[object]] = {}
    for agent, entry in agents.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("grant", []), list):
            raise InvalidInput(f"policy file: agent {agent!r} needs {{'grant': [tool names]}}")
        grants[str(agent)] = entry.get("grant", [])
    return PolicyBook(grants)
