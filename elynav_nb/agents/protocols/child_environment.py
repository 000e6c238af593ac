"""The environment an agent CLI's process starts with: the parent's, less what makes a child CLI misbehave.

Where it sits: shared by the protocols' launchers (``claude/launcher.py``, ``acp/launcher.py``: an ACP
agent is often a Claude Code adapter, bothered by the same variables), so no protocol's folder imports
another's. Pure: the caller hands in ``os.environ`` and its overrides, and gets a new dict.

How data flows: parent environment -> without ``STRIPPED_ENVIRONMENT_VARIABLES`` -> the overrides on
top (the runner's identity and ``process.environment``) -> the child's environment.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["STRIPPED_ENVIRONMENT_VARIABLES", "build_child_environment"]

STRIPPED_ENVIRONMENT_VARIABLES = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")


def build_child_environment(
    parent_environment: Mapping[str, str], overrides: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The parent's environment without the variables that make claude refuse or misbehave.

    ``CLAUDECODE`` and ``CLAUDE_CODE_ENTRYPOINT`` are set inside a Claude Code session; inherited,
    they make a child CLI refuse to start or believe it is nested.
    """
    environment = {
        name: value
        for name, value in parent_environment.items()
        if name not in STRIPPED_ENVIRONMENT_VARIABLES
    }
    environment.update(overrides or {})
    return environment
