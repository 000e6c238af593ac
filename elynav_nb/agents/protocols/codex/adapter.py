"""``CodexAdapter``: a codex runner's ``CODEX_HOME``, its turn commands and its decoder.

Where it sits: used by the per-turn driver (``cli_mode="exec"``: ``codex exec --json [resume
<thread_id>]`` per turn, ``--output-schema FILE`` for a structured turn) and by the codex app-server driver (``CODEX_HOME`` alone: the config, the
exec-policy rules from the definition's ``Bash(...)`` tools, the linked login). The plan comes from
the pure ``protocols/codex/launch.py``; the files are written here (``protocols/per_turn.py``'s helpers).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from elynav_nb._files import write_atomically
from elynav_nb.agents.output_schema import OutputSchema
from elynav_nb.agents.protocols.codex.exec_codec import CodexEventDecoder
from elynav_nb.agents.protocols.codex.launch import (
    CodexRunnerPlan,
    build_codex_turn,
    codex_config_arguments,
    plan_codex_runner,
)
from elynav_nb.agents.protocols.command import CliName
from elynav_nb.agents.protocols.launch import McpServer, TurnCommand
from elynav_nb.agents.protocols.per_turn import (
    PerTurnAdapter,
    PerTurnDecoder,
    PerTurnSettings,
    link_login_file,
    user_home,
    write_config_file,
)

__all__ = ["CODEX_BASE_URL_VARIABLE", "CodexAdapter"]

CODEX_BASE_URL_VARIABLE = "OPENAI_BASE_URL"  # codex 0.171.0 ignores it; the runner makes it a provider


class CodexAdapter(PerTurnAdapter):
    """``codex exec --json [resume <thread_id>]``, its ``CODEX_HOME/config.toml`` and its codec."""

    name: CliName = "codex"
    presets_conversation_id = False

    def __init__(self, settings: PerTurnSettings, *, interactive: bool = False) -> None:
        super().__init__(settings)
        self.plan: CodexRunnerPlan | None = None
        self.thread_usage: dict[str, int] = {}
        self.interactive = interactive  # app-server: permission prompts reach the runner

    @property
    def asks_for_approval(self) -> bool:
        """Whether codex asks the runner before commands (app-server with permission prompts)."""
        return self.interactive and self.settings.permission_prompts

    def _plan(self, mcp_servers: Sequence[McpServer]) -> tuple[CodexRunnerPlan, tuple[str, ...]]:
        settings = self.settings
        environment = settings.child_environment
        mode, notes = (settings.permission_mode, []) if self.interactive else self._permission()
        plan = plan_codex_runner(
            workspace=settings.workspace,
            codex_home=settings.home,
            system_prompt=settings.system_prompt,
            tools=settings.tools,
            mcp_servers=mcp_servers,
            model=settings.model,
            permission_mode=mode,
            provider_base_url=environment.get(CODEX_BASE_URL_VARIABLE) or None,
            parent_environment=environment,
            extra_arguments=(*codex_config_arguments(settings.cli_config), *settings.extra_arguments),
            asks_for_approval=self.asks_for_approval,
            kernel_tools=settings.kernel_tools,
        )
        return plan, (*notes, *plan.limitations)

    def _prepare(self, mcp_servers: Sequence[McpServer]) -> None:
        settings = self.settings
        self.plan, self.limitations = self._plan(mcp_servers)
        for config_file in self.plan.config_files:
            write_config_file(config_file)
        environment = settings.child_environment
        user_codex_home = Path(environment.get("CODEX_HOME") or user_home(environment) / ".codex")
        if user_codex_home.resolve() != settings.home.resolve():
            link_login_file(user_codex_home / "auth.json", settings.home / "auth.json")
        self.mcp_server_names = self.plan.mcp_server_names

    @property
    def prepared(self) -> bool:
        return self.plan is not None

    def _turn_command(
        self, prompt: str, conversation_id: str, resuming: bool, output_schema: OutputSchema | None
    ) -> TurnCommand:
        assert self.plan is not None
        return build_codex_turn(
            self.command.argv,
            self.plan,
            prompt,
            resume_thread_id=conversation_id if resuming and conversation_id else None,
            output_schema_path=self._schema_file(output_schema) if output_schema is not None else None,
            parent_environment=self.settings.parent_environment,
            environment=self.settings.environment_overrides,
        )

    def _schema_file(self, output_schema: OutputSchema) -> Path:
        """``--output-schema``'s file: ``<home>/output-schemas/<sha256 of the schema>.json``, 0600."""
        digest = hashlib.sha256(output_schema.key.encode("utf-8")).hexdigest()[:16]
        path = self.settings.home / "output-schemas" / f"{digest}.json"
        if not path.is_file():
            write_atomically(path, output_schema.key, mode=0o600)
        return path

    def new_decoder(self) -> CodexEventDecoder:
        model = self.plan.model if self.plan is not None and self.plan.model else ""
        return CodexEventDecoder(
            model=model, cli_version=self.version, previous_thread_usage=self.thread_usage
        )

    def after_turn(self, decoder: PerTurnDecoder) -> str:
        assert isinstance(decoder, CodexEventDecoder)
        if decoder.ended is not None and not decoder.ended.is_error:
            self.thread_usage = dict(decoder.thread_usage)
        return decoder.thread_id

    def has_conversation(self, conversation_id: str) -> bool:
        sessions = self.settings.home / "sessions"
        return bool(conversation_id) and any(sessions.rglob(f"rollout-*-{conversation_id}.jsonl"))

    def new_conversation_id(self) -> str:
        return ""
