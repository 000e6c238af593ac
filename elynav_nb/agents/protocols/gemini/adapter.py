"""``GeminiAdapter``: a gemini runner's settings home, its turn commands and its decoder.

Where it sits: used by the per-turn driver (``gemini -o stream-json [--session-id|--resume <id>]``
per turn). Structured turns: gemini 0.61.0 has no schema option (``gemini --help``), so the schema
goes in the prompt with a short instruction (``output_schema.prompt_with_schema``) and the answer is
validated on our side (``runner.limitations`` says so). The plan comes from the pure ``protocols/gemini/launch.py``; the files are written here
(``protocols/per_turn.py``'s helpers), and the user's login and auth type are carried over.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path

from elynav_nb.agents.output_schema import OutputSchema, prompt_with_schema
from elynav_nb.agents.protocols.command import CliName
from elynav_nb.agents.protocols.gemini.codec import GeminiEventDecoder
from elynav_nb.agents.protocols.gemini.launch import GeminiRunnerPlan, build_gemini_turn, plan_gemini_runner
from elynav_nb.agents.protocols.launch import McpServer, TurnCommand
from elynav_nb.agents.protocols.per_turn import (
    PerTurnAdapter,
    PerTurnDecoder,
    PerTurnSettings,
    link_login_file,
    user_home,
    write_config_file,
)

__all__ = ["GEMINI_BASE_URL_VARIABLE", "GeminiAdapter"]

GEMINI_BASE_URL_VARIABLE = "GOOGLE_GEMINI_BASE_URL"
_GEMINI_LOGIN_FILES = ("oauth_creds.json", "google_accounts.json")


class GeminiAdapter(PerTurnAdapter):
    """``gemini -o stream-json [--session-id|--resume <id>]``, its settings home and its codec."""

    name: CliName = "gemini"
    presets_conversation_id = True

    def __init__(self, settings: PerTurnSettings) -> None:
        super().__init__(settings)
        self.plan: GeminiRunnerPlan | None = None
        self._login_type = ""

    def _user_gemini_folder(self) -> Path:
        environment = self.settings.child_environment
        return Path(environment.get("GEMINI_CLI_HOME") or user_home(environment)) / ".gemini"

    def _plan(self, mcp_servers: Sequence[McpServer]) -> tuple[GeminiRunnerPlan, tuple[str, ...]]:
        settings = self.settings
        environment = settings.child_environment
        mode, notes = self._permission()
        base_url = environment.get(GEMINI_BASE_URL_VARIABLE) or None
        extra_settings = dict(settings.cli_config)
        if (
            self._login_type
            and not base_url
            and not environment.get("GEMINI_API_KEY")
            and "security" not in extra_settings
        ):
            extra_settings["security"] = {"auth": {"selectedType": self._login_type}}
        plan = plan_gemini_runner(
            workspace=settings.workspace,
            gemini_home=settings.home,
            system_prompt=settings.system_prompt,
            tools=settings.tools,
            mcp_servers=mcp_servers,
            model=settings.model,
            permission_mode=mode,
            base_url=base_url,
            parent_environment=environment,
            extra_settings=extra_settings,
            extra_arguments=settings.extra_arguments,
            kernel_tools=settings.kernel_tools,
        )
        return plan, (*notes, *plan.limitations)

    def _prepare(self, mcp_servers: Sequence[McpServer]) -> None:
        user_folder = self._user_gemini_folder()
        own_folder = self.settings.home / ".gemini"
        self._login_type = (
            self._user_auth_type(user_folder) if user_folder.resolve() != own_folder.resolve() else ""
        )
        self.plan, self.limitations = self._plan(mcp_servers)
        for config_file in self.plan.config_files:
            write_config_file(config_file)
        if user_folder.resolve() != own_folder.resolve():
            for name in _GEMINI_LOGIN_FILES:
                link_login_file(user_folder / name, own_folder / name)
        self.mcp_server_names = self.plan.mcp_server_names

    @staticmethod
    def _user_auth_type(folder: Path) -> str:
        try:
            settings = json.loads((folder / "settings.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return ""
        security = settings.get("security") if isinstance(settings, dict) else None
        auth = security.get("auth") if isinstance(security, dict) else None
        selected = auth.get("selectedType") if isinstance(auth, dict) else None
        return selected if isinstance(selected, str) else ""

    @property
    def prepared(self) -> bool:
        return self.plan is not None

    def _turn_command(
        self, prompt: str, conversation_id: str, resuming: bool, output_schema: OutputSchema | None
    ) -> TurnCommand:
        assert self.plan is not None
        return build_gemini_turn(
            self.command.argv,
            self.plan,
            prompt_with_schema(prompt, output_schema) if output_schema is not None else prompt,
            resume_session_id=conversation_id if resuming else None,
            session_id=None if resuming else conversation_id,
            parent_environment=self.settings.parent_environment,
            environment=self.settings.environment_overrides,
        )

    def new_decoder(self) -> GeminiEventDecoder:
        return GeminiEventDecoder(mcp_server_names=self.mcp_server_names, cli_version=self.version)

    def after_turn(self, decoder: PerTurnDecoder) -> str:
        assert isinstance(decoder, GeminiEventDecoder)
        return decoder.session_id

    def has_conversation(self, conversation_id: str) -> bool:
        chats = self.settings.home / ".gemini" / "tmp"
        return bool(conversation_id) and any(chats.glob(f"*/chats/session-*-{conversation_id[:8]}.jsonl"))

    def new_conversation_id(self) -> str:
        return str(uuid.uuid4())
