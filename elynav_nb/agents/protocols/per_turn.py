"""The CLI adapters' common part: a runner's settings, its private CLI home, and the adapter contract.

Where it sits: below the drivers. An adapter (``codex/adapter.CodexAdapter``,
``gemini/adapter.GeminiAdapter``) turns the runner's settings and the agent definition into a plan of
the pure layers in ``agents/protocols`` (``codex/launch.py`` / ``gemini/launch.py``), and does the little I/O
that needs: it reads the workspace's ``.mcp.json``, writes the runner's config files (atomically),
links the user's CLI login into the runner's home, and looks for a conversation's file before
resuming it. The per-turn driver uses an adapter for every turn (command, decoder); the codex
app-server driver uses the codex one for its ``CODEX_HOME`` alone.

How data flows::

    AdapterSettings (from the runner) -> adapter.prepare(command, version): .mcp.json -> plan
      -> config files written, login linked (adapter.planned_limitations(): the same plan, no I/O)
    adapter.turn_command(prompt, conversation_id, resuming, output_schema) -> TurnCommand (spawned by
      the driver; codex exec: ``--output-schema FILE`` written 0600 in the home; gemini: the schema
      in the prompt, since 0.61.0 has no schema option)
    adapter.new_decoder() -> one decoder per turn process; adapter.after_turn(decoder) keeps what
    the next turn needs (codex: the thread's usage totals)

Conversation ids: gemini takes ours (``--session-id`` on the first turn, ``--resume`` after), so a
gemini runner's ``session_id`` is known from the start. Codex names its threads itself: a codex
runner's id is empty until the first ``thread.started`` line, then ``exec resume <thread_id>``.

Homes: each runner gets its own ``CODEX_HOME`` or ``GEMINI_CLI_HOME`` (default
``~/.local/state/elynav/cli-homes/<workspace name>-<hash>/<cli>-<agent>``; ``ELYNAV_CLI_HOMES`` or
``XDG_STATE_HOME`` move the root), so its MCP servers, system prompt and sessions never touch the
user's own config, and a new runner on the same workspace and agent resumes the conversations of
an earlier one. Not inside the workspace: gemini shows the model the workspace's file tree. Every
folder from the ``cli-homes`` root down to a home is made private (0700): the folder names say
which workspaces and agents a user runs. The user's login (codex ``auth.json``, gemini
``oauth_creds.json`` and its auth type) is linked in, so a logged-in CLI stays logged in.
"""

from __future__ import annotations

import hashlib
import json
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from elynav_nb._files import write_atomically
from elynav_nb.agents.events import AgentEvent
from elynav_nb.agents.output_schema import OutputSchema
from elynav_nb.agents.protocols.codec import TurnVerdict
from elynav_nb.agents.protocols.command import CliCommand, CliName
from elynav_nb.agents.protocols.launch import (
    ConfigFile,
    KernelToolsServer,
    McpServer,
    TurnCommand,
    read_mcp_servers,
)
from elynav_nb.errors import InvalidInput

__all__ = [
    "PerTurnAdapter",
    "PerTurnDecoder",
    "PerTurnSettings",
    "cli_homes_root",
    "default_home",
    "effective_permission_mode",
    "link_login_file",
    "make_private_home",
    "merged_limitations",
    "read_workspace_mcp_servers",
    "user_home",
    "write_config_file",
]

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
    kernel_tools: KernelToolsServer | None = None  # the runner's loopback tool server, once it serves

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


def make_private_home(home: Path, environment: Mapping[str, str]) -> None:
    """Make ``home`` and, below the ``cli-homes`` root, every folder above it: each one 0700.

    The folder names say which workspaces and agents this user runs: other local users must not
    list them. Folders made earlier with a wider mode are narrowed (only ours, under the root).
    """
    root = cli_homes_root(environment)
    folders = [home]
    if home.is_relative_to(root):
        folders = [root, *(root / part for part in _parts_below(home, root))]
    else:
        home.parent.mkdir(parents=True, exist_ok=True)
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if folder.stat().st_mode & 0o077:
            folder.chmod(0o700)


def _parts_below(home: Path, root: Path) -> list[Path]:
    """``a``, ``a/b``, ``a/b/c`` for ``home`` = ``root/a/b/c``."""
    relative = home.relative_to(root)
    return [Path(*relative.parts[: count + 1]) for count in range(len(relative.parts))]


def read_workspace_mcp_servers(workspace: Path, environment: Mapping[str, str]) -> tuple[McpServer, ...]:
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


def write_config_file(config_file: ConfigFile) -> None:
    config_file.path.parent.mkdir(parents=True, exist_ok=True)
    if config_file.path.is_file() and config_file.path.read_text(encoding="utf-8") == config_file.text:
        return
    write_atomically(config_file.path, config_file.text, mode=0o600)  # the CLI's config may hold keys


def link_login_file(source: Path, target: Path) -> None:
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


def user_home(environment: Mapping[str, str]) -> Path:
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
        make_private_home(self.settings.home, self.settings.child_environment)
        self._prepare(read_workspace_mcp_servers(self.settings.workspace, self.settings.child_environment))

    def planned_limitations(self) -> tuple[str, ...]:
        """The limitations of the plan without its MCP servers (pure: for a repr before the start)."""
        return self._plan(())[1]

    @abstractmethod
    def _plan(self, mcp_servers: Sequence[McpServer]) -> tuple[Any, tuple[str, ...]]:
        """The plan and its limitations (pure)."""

    @abstractmethod
    def _prepare(self, mcp_servers: Sequence[McpServer]) -> None:
        """Plan with ``mcp_servers``, write the files, link the login."""

    def turn_command(
        self,
        prompt: str,
        *,
        conversation_id: str,
        resuming: bool,
        output_schema: OutputSchema | None = None,
    ) -> TurnCommand:
        """The command of one turn (``output_schema``: the answer's schema, as this CLI takes it); ``prepare`` first."""
        assert self.prepared, "prepare() first"
        return self._turn_command(prompt, conversation_id, resuming, output_schema)

    @property
    @abstractmethod
    def prepared(self) -> bool:
        """Whether ``prepare`` planned the CLI's home (a turn needs it)."""

    @abstractmethod
    def _turn_command(
        self, prompt: str, conversation_id: str, resuming: bool, output_schema: OutputSchema | None
    ) -> TurnCommand:
        """The command of one turn, from the plan ``prepare`` made (see ``turn_command``)."""

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


def merged_limitations(notes: Sequence[str]) -> tuple[str, ...]:
    """``notes`` without blanks and repeats, in order."""
    seen: list[str] = []
    for note in notes:
        if note and note not in seen:
            seen.append(note)
    return tuple(seen)
