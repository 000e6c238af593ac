"""The codex and gemini adapters of the process-per-turn runner: config home, turn commands, decoders.

Where it sits: between ``per_turn_runner`` (the conversation driver) and the pure layers in
``agents/cli`` (``codex_command`` / ``gemini_command`` build plans and command lines,
``codex_codec`` / ``gemini_codec`` decode stdout). This module does the little I/O those need: it
reads the workspace's ``.mcp.json``, writes the runner's config files (atomically), links the
user's CLI login into the runner's home, and looks for a conversation's file before resuming it.

How data flows::

    PerTurnSettings (from the runner) -> adapter.prepare(command, version): .mcp.json -> plan_*_runner
      -> config files written, login linked (adapter.planned_limitations(): the same plan, no I/O)
    adapter.turn_command(prompt, conversation_id, resuming) -> TurnCommand (spawned by the runner)
    adapter.new_decoder() -> one decoder per turn process; adapter.after_turn(decoder) keeps what
    the next turn needs (codex: the thread's usage totals)

Conversation ids: gemini takes ours (``--session-id`` on the first turn, ``--resume`` after), so a
gemini runner's ``session_id`` is known from the start. Codex names its threads itself: a codex
runner's id is empty until the first ``thread.started`` line, then ``exec resume <thread_id>``.

Homes: each runner gets its own ``CODEX_HOME`` or ``GEMINI_CLI_HOME`` (default
``~/.local/state/elynav/cli-homes/<workspace name>-<hash>/<cli>-<agent>``; ``ELYNAV_CLI_HOMES`` or
``XDG_STATE_HOME`` move the root), so its MCP servers, system prompt and sessions never touch the
user's own config, and a new runner on the same workspace and agent resumes the conversations of
an earlier one. Not inside the workspace: gemini shows the model the workspace's file tree. The user's login (codex ``auth.json``, gemini ``oauth_creds.json``
and its auth type) is linked in, so a logged-in CLI stays logged in.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from elynav_nb.agents.cli.codex_codec import CodexEventDecoder
from elynav_nb.agents.cli.codex_command import (
    CodexRunnerPlan,
    build_codex_turn,
    codex_config_arguments,
    plan_codex_runner,
)
from elynav_nb.agents.cli.gemini_codec import GeminiEventDecoder
from elynav_nb.agents.cli.gemini_command import GeminiRunnerPlan, build_gemini_turn, plan_gemini_runner
from elynav_nb.agents.cli.per_turn_codec import TurnVerdict
from elynav_nb.agents.cli.per_turn_command import ConfigFile, McpServer, TurnCommand, read_mcp_servers
from elynav_nb.agents.events import AgentEvent
from elynav_nb.agents.locate import CliCommand, CliName
from elynav_nb.errors import InvalidInput

__all__ = [
    "CodexAdapter",
    "GeminiAdapter",
    "PerTurnAdapter",
    "PerTurnDecoder",
    "PerTurnSettings",
    "adapter_for",
    "cli_homes_root",
    "default_home",
    "effective_permission_mode",
    "merged_limitations",
]

CODEX_BASE_URL_VARIABLE = "OPENAI_BASE_URL"  # codex 0.171.0 ignores it; the runner makes it a provider
GEMINI_BASE_URL_VARIABLE = "GOOGLE_GEMINI_BASE_URL"
_GEMINI_LOGIN_FILES = ("oauth_creds.json", "google_accounts.json")
_LOST_CONVERSATION_SIGNS = (
    "no rollout found for thread id",  # codex exec resume
    "No previous sessions found for this project",  # gemini --resume of a session with nothing to resume
    "Invalid session identifier",  # gemini --resume of an unknown id
    "already exists. Use --resume",  # gemini --session-id of an existing (unresumable) session
)


class PerTurnDecoder(Protocol):
    """What the runner needs of a per-turn codec (``CodexEventDecoder``, ``GeminiEventDecoder``)."""

    def decode_line(self, line: bytes | str) -> list[AgentEvent]: ...

    def verdict(self, exit_code: int | None, *, cancel_requested: bool = False) -> TurnVerdict: ...


@dataclass(frozen=True)
class PerTurnSettings:
    """What a runner hands its adapter: the agent, the workspace, the home, the environment."""

    workspace: Path
    home: Path
    system_prompt: str = ""
    tools: tuple[str, ...] = ()
    model: str | None = None
    permission_mode: str | None = None
    permission_prompts: bool = False
    parent_environment: Mapping[str, str] = field(default_factory=dict, repr=False)
    environment_overrides: Mapping[str, str] = field(default_factory=dict, repr=False)
    cli_config: Mapping[str, Any] = field(default_factory=dict)
    extra_arguments: tuple[str, ...] = ()

    @property
    def child_environment(self) -> dict[str, str]:
        """The parent's environment with the runner's overrides on top."""
        return {**self.parent_environment, **self.environment_overrides}


def cli_homes_root(environment: Mapping[str, str]) -> Path:
    """``$ELYNAV_CLI_HOMES``, else ``$XDG_STATE_HOME/elynav/cli-homes``, else ``~/.local/state/elynav/cli-homes``."""
    explicit = environment.get("ELYNAV_CLI_HOMES")
    if explicit:
        return Path(explicit)
    state = environment.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "elynav" / "cli-homes"


def default_home(
    workspace: Path, cli: CliName, agent_name: str | None, environment: Mapping[str, str] | None = None
) -> Path:
    """One config home per workspace, CLI and agent, under ``cli_homes_root``."""
    digest = hashlib.sha256(str(workspace).encode("utf-8")).hexdigest()[:12]
    root = cli_homes_root(os.environ if environment is None else environment)
    return root / f"{workspace.name or 'root'}-{digest}" / f"{cli}-{agent_name or 'default'}"


def effective_permission_mode(mode: str | None, permission_prompts: bool) -> tuple[str | None, str]:
    """The mode a per-turn CLI runs in, and a limitation note when prompts were asked for.

    Per-turn CLIs cannot ask anybody: with ``permission_prompts`` the runner falls back to the
    safest non-interactive mode, ``default`` (``plan`` is kept, it is safer still), which refuses
    whatever a prompt would have guarded.
    """
    if not permission_prompts:
        return mode, ""
    safest = "plan" if mode == "plan" else "default"
    note = (
        "no permission prompts (a process per turn cannot ask): permission_prompts=True runs in the "
        f"safest non-interactive mode ({safest!r} instead of {mode or 'default'!r}); tools a prompt would guard are refused"
    )
    return safest, note


def _read_workspace_mcp_servers(workspace: Path, environment: Mapping[str, str]) -> tuple[McpServer, ...]:
    path = workspace / ".mcp.json"
    if not path.is_file():
        return ()
    try:
        parsed = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InvalidInput(f"{path} is not valid JSON: {error}", details={"file": str(path)}) from None
    if not isinstance(parsed, dict):
        raise InvalidInput(f"{path} must hold a JSON object", details={"file": str(path)})
    return read_mcp_servers(parsed, environment)


def _write_atomically(config_file: ConfigFile) -> None:
    config_file.path.parent.mkdir(parents=True, exist_ok=True)
    if config_file.path.is_file() and config_file.path.read_text(encoding="utf-8") == config_file.text:
        return
    descriptor, temporary = tempfile.mkstemp(dir=config_file.path.parent, prefix=".elynav-", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(config_file.text)
        os.replace(temporary, config_file.path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _link_login_file(source: Path, target: Path) -> None:
    """Link the user's login file into the runner's home (once; never over a file already there)."""
    if not source.is_file() or target.exists() or target.is_symlink():
        return
    if source.resolve() == target.resolve():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        target.symlink_to(source)
    except OSError:
        pass  # a file system without symlinks: the CLI then asks for its own login


def _user_home(environment: Mapping[str, str]) -> Path:
    return Path(environment.get("HOME") or Path.home())


class PerTurnAdapter(ABC):
    """One CLI's way of running a turn in its own process (see the module docstring)."""

    name: CliName
    presets_conversation_id: bool

    def __init__(self, settings: PerTurnSettings) -> None:
        self.settings = settings
        self.command = CliCommand(argv=(self.name,), is_standin=False, name=self.name)
        self.version = ""
        self.limitations: tuple[str, ...] = ()
        self.mcp_server_names: tuple[str, ...] = ()

    def prepare(self, command: CliCommand, version: str) -> None:
        """Read ``.mcp.json``, plan, write the config home, link the login (idempotent)."""
        self.command = command
        self.version = version
        self._prepare(_read_workspace_mcp_servers(self.settings.workspace, self.settings.child_environment))

    def planned_limitations(self) -> tuple[str, ...]:
        """The limitations of the plan without its MCP servers (pure: for a repr before the start)."""
        return self._plan(())[1]

    @abstractmethod
    def _plan(self, mcp_servers: Sequence[McpServer]) -> tuple[Any, tuple[str, ...]]:
        """The plan and its limitations (pure)."""

    @abstractmethod
    def _prepare(self, mcp_servers: Sequence[McpServer]) -> None:
        """Plan with ``mcp_servers``, write the files, link the login."""

    @abstractmethod
    def turn_command(self, prompt: str, *, conversation_id: str, resuming: bool) -> TurnCommand:
        """The command of one turn."""

    @abstractmethod
    def new_decoder(self) -> PerTurnDecoder:
        """A decoder for one turn's stdout."""

    @abstractmethod
    def after_turn(self, decoder: PerTurnDecoder) -> str:
        """Keep what the next turn needs; return the conversation id the CLI used ("" if none)."""

    @abstractmethod
    def has_conversation(self, conversation_id: str) -> bool:
        """Whether the home holds the conversation (so that resuming it can work)."""

    @abstractmethod
    def new_conversation_id(self) -> str:
        """The id a new conversation starts with ("" when the CLI names it)."""

    @staticmethod
    def lost_conversation(stderr: str) -> bool:
        """Whether a turn's stderr says the CLI could not resume the conversation."""
        return any(sign in stderr for sign in _LOST_CONVERSATION_SIGNS)

    def _permission(self) -> tuple[str | None, list[str]]:
        mode, note = effective_permission_mode(
            self.settings.permission_mode, self.settings.permission_prompts
        )
        return mode, [note] if note else []


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
        )
        return plan, (*notes, *plan.limitations)

    def _prepare(self, mcp_servers: Sequence[McpServer]) -> None:
        settings = self.settings
        self.plan, self.limitations = self._plan(mcp_servers)
        for config_file in self.plan.config_files:
            _write_atomically(config_file)
        environment = settings.child_environment
        user_codex_home = Path(environment.get("CODEX_HOME") or _user_home(environment) / ".codex")
        if user_codex_home.resolve() != settings.home.resolve():
            _link_login_file(user_codex_home / "auth.json", settings.home / "auth.json")
        self.mcp_server_names = self.plan.mcp_server_names

    def turn_command(self, prompt: str, *, conversation_id: str, resuming: bool) -> TurnCommand:
        assert self.plan is not None, "prepare() first"
        return build_codex_turn(
            self.command.argv,
            self.plan,
            prompt,
            resume_thread_id=conversation_id if resuming and conversation_id else None,
            parent_environment=self.settings.parent_environment,
            environment=self.settings.environment_overrides,
        )

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
        return Path(environment.get("GEMINI_CLI_HOME") or _user_home(environment)) / ".gemini"

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
            _write_atomically(config_file)
        if user_folder.resolve() != own_folder.resolve():
            for name in _GEMINI_LOGIN_FILES:
                _link_login_file(user_folder / name, own_folder / name)
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

    def turn_command(self, prompt: str, *, conversation_id: str, resuming: bool) -> TurnCommand:
        assert self.plan is not None, "prepare() first"
        return build_gemini_turn(
            self.command.argv,
            self.plan,
            prompt,
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


def adapter_for(cli: CliName, settings: PerTurnSettings) -> PerTurnAdapter:
    """The adapter of ``cli`` (``codex`` or ``gemini``)."""
    if cli == "codex":
        return CodexAdapter(settings)
    if cli == "gemini":
        return GeminiAdapter(settings)
    raise InvalidInput(f"{cli} does not run a process per turn")


def merged_limitations(adapter: PerTurnAdapter | None, extra: Sequence[str]) -> tuple[str, ...]:
    """The adapter's limitations, then ``extra``, each once."""
    seen: list[str] = []
    for note in (*(adapter.limitations if adapter is not None else ()), *extra):
        if note and note not in seen:
            seen.append(note)
    return tuple(seen)
