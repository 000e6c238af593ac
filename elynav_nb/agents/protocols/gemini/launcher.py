"""``GeminiLauncher``: ``gemini -o stream-json`` per turn, its own settings home, ``hooks=`` as its command hooks.

Where it sits: the registry's launcher for (gemini, print), called by the per-turn driver. Its
adapter (``protocols/gemini/adapter.py``) writes the runner's gemini home and builds each turn; its hooks are
gemini's own command hooks (``protocols/gemini/hooks.py``: the ``hooks`` key of ``settings.json``, beside the
user's own from ``cli_config``), each one reaching the runner's hook socket.
"""

from __future__ import annotations

import dataclasses

from elynav_nb.agents.hooks.rules import HookSet
from elynav_nb.agents.protocols.command import CliLocation
from elynav_nb.agents.protocols.gemini.adapter import GeminiAdapter
from elynav_nb.agents.protocols.gemini.hooks import GEMINI_HOOKS, gemini_hook_settings
from elynav_nb.agents.protocols.launcher import PerTurnLauncher
from elynav_nb.agents.protocols.per_turn import PerTurnSettings

__all__ = ["GEMINI_HOOK_NOTES", "GEMINI_LOCATION", "GEMINI_NOTES", "GeminiLauncher"]

GEMINI_LOCATION = CliLocation(
    name="gemini",
    environment_variable="ELYNAV_GEMINI_CLI",
    install_hint=(
        "install it with `npm install -g @google/gemini-cli` (or set ELYNAV_GEMINI_CLI, or pass executable=)"
    ),
    npm_package="@google/gemini-cli",
)

GEMINI_NOTES = (
    "gemini's stream-json carries no thinking",
    "set_model and set_permission_mode take effect at the next turn (a process per turn)",
    "output_schema: gemini 0.61.0 has no schema option; the schema goes in the prompt and the answer "
    "is validated here",
)
GEMINI_HOOK_NOTES = (
    "gemini runs hooks= as command hooks: HookCall.tool_use_id is empty and tool names are gemini's "
    "(run_shell_command...)"
)


class GeminiLauncher(PerTurnLauncher):
    """``gemini -o stream-json [--session-id|--resume <id>]`` per turn."""

    location = GEMINI_LOCATION
    hook_dialect = GEMINI_HOOKS

    def adapter(self, settings: PerTurnSettings) -> GeminiAdapter:
        return GeminiAdapter(settings)

    def hook_settings(self, settings: PerTurnSettings, hooks: HookSet, command: list[str]) -> PerTurnSettings:
        """The settings with the runner's hooks as gemini command hooks, after the user's own."""
        user_hooks = settings.cli_config.get("hooks")
        merged = gemini_hook_settings(hooks, command, user_hooks if isinstance(user_hooks, dict) else None)
        return dataclasses.replace(settings, cli_config={**settings.cli_config, "hooks": merged})
