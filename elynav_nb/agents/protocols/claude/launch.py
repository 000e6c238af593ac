"""Pure builder of the claude command line for one runner.

Where it sits: the launcher (``claude/launcher.py``) calls ``build_claude_argv`` before it spawns the
process (its environment: the shared ``protocols/child_environment.py``); nothing here touches the
disk or the process table (the launcher tells us whether ``.mcp.json`` exists).

The command line is the seed's, plus what a live notebook needs::

    claude --print --agent NAME --input-format stream-json --output-format stream-json --verbose
           --include-partial-messages [--mcp-config <cwd>/.mcp.json] [--permission-mode MODE]
           [--permission-prompt-tool stdio] [--session-id UUID | --resume ID] [--model M]
           [--json-schema JSON] [--max-turns N] [--max-budget-usd X] [extra...]

``--json-schema`` belongs to the process (claude offers the model a ``StructuredOutput`` tool with
that schema for every turn): a runner whose turn asks for another schema starts a new process. An
agent whose ``tools:`` list lacks ``StructuredOutput`` does not get that tool (claude 2.1.332 then
answers "No such tool available" and ends the turn with no ``structured_output``), so the agent is
given again with ``initialize``'s ``agents`` (they win over the agent files, as ``--agents`` does),
with ``StructuredOutput`` added to its tools: ``agents_with_structured_output``.

``--max-turns`` counts per user message in a persistent process; ``--max-budget-usd`` counts the
whole process (both measured on 2.1.332; ``agents/limits.py`` says how the runner uses them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elynav_nb.agents.definitions.agent_definition import AgentDefinition

__all__ = [
    "STRUCTURED_OUTPUT_TOOL",
    "ClaudeLaunch",
    "agents_with_structured_output",
    "build_claude_argv",
]


@dataclass(frozen=True)
class ClaudeLaunch:
    """What one claude process is started with (everything but the executable)."""

    agent_name: str | None = None
    include_partial_messages: bool = True
    mcp_config_path: str | None = None
    permission_mode: str | None = None
    permission_prompts: bool = False
    session_id: str | None = None
    resume_session_id: str | None = None
    model: str | None = None
    json_schema: str | None = None  # the JSON text of the schema every turn of the process answers in
    max_turns: int | None = None
    max_budget_usd: float | None = None
    extra_arguments: tuple[str, ...] = field(default_factory=tuple)


def build_claude_argv(executable: Sequence[str], launch: ClaudeLaunch) -> list[str]:
    """The full argv: ``executable`` (one or more words) then the flags of ``launch``."""
    argv = list(executable)
    argv.append("--print")
    if launch.agent_name:
        argv += ["--agent", launch.agent_name]
    argv += ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    if launch.include_partial_messages:
        argv.append("--include-partial-messages")
    if launch.mcp_config_path:
        argv += ["--mcp-config", launch.mcp_config_path]
    if launch.permission_mode:
        argv += ["--permission-mode", launch.permission_mode]
    if launch.permission_prompts:
        argv += ["--permission-prompt-tool", "stdio"]
    if launch.resume_session_id:
        argv.append(f"--resume={launch.resume_session_id}")
    elif launch.session_id:
        argv += ["--session-id", launch.session_id]
    if launch.model:
        argv += ["--model", launch.model]
    if launch.json_schema is not None:
        argv += ["--json-schema", launch.json_schema]
    if launch.max_turns is not None:
        argv += ["--max-turns", str(launch.max_turns)]
    if launch.max_budget_usd is not None:
        argv += ["--max-budget-usd", f"{launch.max_budget_usd:g}"]
    argv += list(launch.extra_arguments)
    return argv


STRUCTURED_OUTPUT_TOOL = "StructuredOutput"


def agents_with_structured_output(
    agents: Mapping[str, dict[str, Any]], definition: AgentDefinition | None
) -> dict[str, dict[str, Any]]:
    """``initialize``'s ``agents`` with ``StructuredOutput`` in the tools of ``definition``'s agent.

    An agent with no ``tools:`` list inherits every tool, ``StructuredOutput`` included: nothing to add.
    The agent's entry already there (kernel tools add theirs) is kept and extended.
    """
    found = {name: dict(entry) for name, entry in agents.items()}
    if definition is None or not definition.tools:
        return found
    entry = found.get(definition.name) or definition.to_cli_agents_json()
    tools = list(entry.get("tools") or definition.tools)
    if STRUCTURED_OUTPUT_TOOL not in tools:
        tools.append(STRUCTURED_OUTPUT_TOOL)
    found[definition.name] = {**entry, "tools": tools}
    return found
