"""codex's two launchers: ``CodexAppServerLauncher`` (one ``codex app-server`` per conversation) and
``CodexExecLauncher`` (``codex exec --json`` per turn).

Where it sits: the registry's launchers for (codex, app-server) and (codex, exec). Both write the
runner's own ``CODEX_HOME`` through the ``CodexAdapter`` (``protocols/codex/adapter.py``: config, exec-policy
rules, the linked login); app-server then builds the command and a new ``CodexAppServerWire``, exec
hands the adapter to the per-turn driver. Hooks: exec runs ``hooks=`` as its own command hooks
(``protocols/codex/hooks.py``: ``hooks.json`` in the home, ``--dangerously-bypass-hook-trust``); app-server
cannot skip its trust review, so there they apply to kernel tools only (the registry's notes say so).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from elynav_nb.agents.context import RunnerContext
from elynav_nb.agents.hooks.rules import HookSet
from elynav_nb.agents.protocols.adapter_settings import adapter_settings
from elynav_nb.agents.protocols.codex.adapter import CodexAdapter
from elynav_nb.agents.protocols.codex.app_wire import CodexAppServerWire
from elynav_nb.agents.protocols.codex.hooks import (
    CODEX_HOOK_ARGUMENTS,
    CODEX_HOOK_CONFIG,
    CODEX_HOOKS,
    codex_hooks_file,
    workspace_codex_hooks,
)
from elynav_nb.agents.protocols.codex.launch import build_codex_app_server
from elynav_nb.agents.protocols.command import CliCommand, CliLocation, cli_version
from elynav_nb.agents.protocols.launcher import Launch, LaunchRequest, PersistentLauncher, PerTurnLauncher
from elynav_nb.agents.protocols.per_turn import PerTurnSettings
from elynav_nb.errors import InvalidInput

__all__ = [
    "CODEX_APP_SERVER_HOOK_NOTES",
    "CODEX_APP_SERVER_NOTES",
    "CODEX_EXEC_HOOK_NOTES",
    "CODEX_EXEC_NOTES",
    "CODEX_LOCATION",
    "CodexAppServerLauncher",
    "CodexExecLauncher",
]

CODEX_LOCATION = CliLocation(
    name="codex",
    environment_variable="ELYNAV_CODEX_CLI",
    install_hint="install it with `npm install -g @openai/codex` (or set ELYNAV_CODEX_CLI, or pass executable=)",
    npm_package="@openai/codex",
)

CODEX_APP_SERVER_NOTES = (
    "codex answers permission prompts for commands only: allow(updated_input) runs the command as asked",
    "set_permission_mode restarts codex app-server on the same thread before the next turn",
)
CODEX_APP_SERVER_HOOK_NOTES = (
    "codex app-server cannot run hooks= on its own tools (its command hooks need a trust review it offers "
    "no way to skip; use cli_mode='exec' for them): they apply to kernel tools only"
)
CODEX_EXEC_NOTES = (
    "codex exec --json streams whole items: a message arrives in one piece, not token by token",
    "set_model and set_permission_mode take effect at the next turn (a process per turn)",
)
CODEX_EXEC_HOOK_NOTES = (
    "codex exec runs hooks= as command hooks with --dangerously-bypass-hook-trust (its own hooks only: "
    "a workspace with codex hooks of its own is refused); codex warns about that flag in each turn"
)


class CodexAppServerLauncher(PersistentLauncher):
    """``codex app-server`` with the runner's own ``CODEX_HOME``."""

    location = CODEX_LOCATION

    def __init__(self) -> None:
        self.adapter: CodexAdapter | None = None

    def launch_sync(self, context: RunnerContext, request: LaunchRequest, command: CliCommand) -> Launch:
        options, plan, conversation = context.options, context.plan, context.conversation
        version = cli_version(command, self.location)
        definition = plan.require_definition()
        adapter = CodexAdapter(adapter_settings(context, definition, request.kernel_tools), interactive=True)
        adapter.prepare(command, version)
        assert adapter.plan is not None
        self.adapter = adapter
        server = build_codex_app_server(
            command.argv,
            adapter.plan,
            parent_environment=adapter.settings.parent_environment,
            environment=adapter.settings.environment_overrides,
        )

        def set_thread_id(thread_id: str) -> None:
            conversation.session_id = thread_id

        wire = CodexAppServerWire(
            plan=adapter.plan,
            cli_version=version,
            workspace=plan.workspace,
            home=adapter.settings.home,
            thread_id=conversation.session_id if conversation.resume_next_start else "",
            resume_asked=conversation.resume_asked,
            set_thread_id=set_thread_id,
            start_timeout=options.bounds.start,
            interrupt_timeout=options.bounds.interrupt,
            retry_timeout=options.bounds.retry,
        )
        return Launch(
            argv=tuple(server.argv),
            cwd=server.cwd,
            environment=dict(server.environment),
            wire=wire,
            version=version,
        )

    def planned_limitations(self, context: RunnerContext) -> tuple[str, ...]:
        definition = context.plan.definition
        if definition is None:
            return ()
        return CodexAdapter(adapter_settings(context, definition), interactive=True).planned_limitations()


class CodexExecLauncher(PerTurnLauncher):
    """``codex exec --json [resume <thread_id>]``, a process per turn; ``hooks=`` as its command hooks."""

    location = CODEX_LOCATION
    hook_dialect = CODEX_HOOKS

    def adapter(self, settings: PerTurnSettings) -> CodexAdapter:
        return CodexAdapter(settings)

    def hook_settings(self, settings: PerTurnSettings, hooks: HookSet, command: list[str]) -> PerTurnSettings:
        """The flags and config that make codex exec run the runner's hooks (``protocols/codex/hooks.py``)."""
        brought = workspace_codex_hooks(settings.workspace)
        if brought:
            raise InvalidInput(
                f"the workspace brings codex hooks of its own ({', '.join(str(path) for path in brought)}): "
                "running the runner's hooks needs --dangerously-bypass-hook-trust, which would run those "
                "unreviewed too; remove them or give this runner no hooks"
            )
        return dataclasses.replace(
            settings,
            cli_config={**settings.cli_config, **CODEX_HOOK_CONFIG},
            extra_arguments=(*settings.extra_arguments, *CODEX_HOOK_ARGUMENTS),
        )

    def write_hooks(self, home: Path, hooks: HookSet, command: list[str]) -> None:
        content = codex_hooks_file(hooks, command)
        (home / "hooks.json").write_text(json.dumps(content, indent=2), encoding="utf-8")
