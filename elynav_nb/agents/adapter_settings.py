"""What the codex and gemini runners hand their adapter: the agent definition and the runner's settings.

Where it sits: mixed into ``PerTurnRunner`` (codex exec, gemini) and ``CodexAppServerRunner``
(codex app-server); both turn the runner's arguments and the agent definition (given, found in
the workspace, or built in) into the ``PerTurnSettings`` an adapter of ``per_turn_clis`` plans
from. No process here; the definition is read from disk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from elynav_nb.agents.definitions import AgentDefinition, builtin_agents, find_agent_file
from elynav_nb.agents.locate import CliName
from elynav_nb.agents.per_turn_clis import PerTurnSettings, default_home
from elynav_nb.errors import AgentNotFound

__all__ = ["AdapterSettingsMixin"]


class AdapterSettingsMixin:
    """The definition and ``PerTurnSettings`` of a runner (its attributes are ``AgentRunner``'s)."""

    definition: AgentDefinition | None
    agent_name: str | None
    workspace: Path
    cli_name: CliName
    config_home: Path | None
    model: str | None
    permission_mode: str | None
    permission_prompts: bool
    environment_overrides: dict[str, str]
    cli_config: dict[str, Any]
    extra_arguments: tuple[str, ...]

    def _load_definition(self) -> AgentDefinition | None:
        """The given definition, else the agent file the workspace names, else a built-in agent."""
        if self.definition is not None or self.agent_name is None:
            return self.definition
        path = find_agent_file(self.workspace, self.agent_name)
        if path is not None:
            return AgentDefinition.load(path)
        builtin = builtin_agents().get(self.agent_name)
        if builtin is not None:
            return builtin
        raise AgentNotFound(
            f"agent {self.agent_name!r} is not defined in {self.workspace / '.claude' / 'agents'} "
            "nor in a parent folder, ~/.claude/agents or the built-in Elynav agents",
            details={"agent": self.agent_name},
        )

    def _settings(self, definition: AgentDefinition | None) -> PerTurnSettings:
        """The runner's settings for its adapter (the definition's prompt, tools and model)."""
        agent_identity = {"ELYNAV_AGENT_NAME": self.agent_name} if self.agent_name else {}
        return PerTurnSettings(
            workspace=self.workspace,
            home=self.config_home or default_home(self.workspace, self.cli_name, self.agent_name),
            system_prompt=definition.prompt if definition is not None else "",
            tools=definition.tools if definition is not None else (),
            model=self.model or (definition.model if definition is not None else None),
            permission_mode=self.permission_mode,
            permission_prompts=self.permission_prompts,
            parent_environment=dict(os.environ),
            environment_overrides={**agent_identity, **self.environment_overrides},
            cli_config=self.cli_config,
            extra_arguments=self.extra_arguments,
        )
