"""What a protocol's launcher is: the step before its CLI runs (locate it, write its files, build its command).

Where it sits: between the drivers and the protocols. The registry (``protocols/registry.py``) builds
one launcher per runner from the entry of its (CLI, mode); the driver calls it and never asks which
CLI it is. Every protocol has one, in one vocabulary:

- a persistent protocol (one process per conversation: claude stream-json, codex app-server, ACP)
  has a ``PersistentLauncher``: ``launch`` returns a ``Launch``, the command and a new wire for that
  process (``protocols/wire.py``: the protocol as an object, no I/O);
- a per-turn protocol (a process per turn: codex exec, gemini) has a ``PerTurnLauncher``: its
  ``adapter`` writes the runner's CLI home and gives each turn's command and decoder
  (``protocols/per_turn.py``); its hook methods say how the CLI runs ``hooks=`` as commands.

Both locate the CLI by the entry's ``CliLocation`` (``locate``); the driver writes what was found
into the conversation. Launchers take the runner's ``RunnerContext`` (options, plan, conversation,
hooks, kernel tools), never the runner, and what the driver asks of the next process
(``LaunchRequest``: its turn bounds, its output schema, the kernel tool server it reaches).

How data flows::

    driver -> launcher.locate(context) -> CliCommand -> conversation.cli
      persistent: launcher.launch(context, request, command) -> files -> Launch(argv, cwd, env, wire)
                  -> the driver spawns argv and opens the wire
      per turn:   launcher.adapter(settings) -> adapter.prepare -> per turn: adapter.turn_command
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from elynav_nb.agents.context import RunnerContext
from elynav_nb.agents.hooks.rules import HookDialect, HookSet
from elynav_nb.agents.limits import TurnLimits
from elynav_nb.agents.output_schema import OutputSchema
from elynav_nb.agents.protocols.adapter_settings import adapter_settings
from elynav_nb.agents.protocols.command import CliCommand, CliLocation, locate_command
from elynav_nb.agents.protocols.launch import KernelToolsServer
from elynav_nb.agents.protocols.per_turn import PerTurnAdapter, PerTurnSettings
from elynav_nb.agents.protocols.wire import PersistentWire

__all__ = ["Launch", "LaunchRequest", "Launcher", "PerTurnLauncher", "PersistentLauncher"]


@dataclass(frozen=True)
class Launch:
    """One process to spawn, and the wire that speaks to it."""

    argv: tuple[str, ...]
    cwd: Path
    environment: dict[str, str]
    wire: PersistentWire
    version: str = ""


@dataclass(frozen=True)
class LaunchRequest:
    """What the driver asks of the next process: the bounds and schema it starts with, the tools it reaches."""

    limits: TurnLimits = TurnLimits()  # claude: --max-turns / --max-budget-usd of the process
    output_schema: OutputSchema | None = None  # claude: --json-schema of the process
    kernel_tools: KernelToolsServer | None = None  # the runner's loopback tool server, once it serves


class _Locating(ABC):
    location: CliLocation

    def locate(self, context: RunnerContext) -> CliCommand:
        """The CLI to start (``CLI_NOT_FOUND`` with the location's hint); off the event loop."""
        process = context.options.process
        return locate_command(
            process.executable, self.location, fallback_to_standin=process.fallback_to_standin
        )

    def planned_limitations(self, context: RunnerContext) -> tuple[str, ...]:
        """What the CLI cannot honour of the settings and the definition, known before it starts (pure)."""
        return ()


class PersistentLauncher(_Locating):
    """The launch step of one persistent protocol (see the module docstring)."""

    adapter: PerTurnAdapter | None = None  # the adapter that wrote the CLI's home, where there is one
    schema_per_process = False  # True: a turn's output schema is a flag of the process (claude)

    @abstractmethod
    def launch_sync(self, context: RunnerContext, request: LaunchRequest, command: CliCommand) -> Launch:
        """Write the CLI's files, build its command and a new wire (off the event loop)."""

    async def launch(self, context: RunnerContext, request: LaunchRequest, command: CliCommand) -> Launch:
        return await asyncio.to_thread(self.launch_sync, context, request, command)

    def restart_for_limits(self, running: TurnLimits, limits: TurnLimits, spent_usd: float) -> bool:
        """Whether a process started with ``running`` must restart before a turn bounded by ``limits``."""
        return False


class PerTurnLauncher(_Locating):
    """The launch step of one per-turn protocol (see the module docstring)."""

    hook_dialect: HookDialect | None = None  # how its hook commands ask and read (None: it runs none)

    @abstractmethod
    def adapter(self, settings: PerTurnSettings) -> PerTurnAdapter:
        """The adapter that writes the CLI's home from ``settings`` and builds its turns."""

    def planned_limitations(self, context: RunnerContext) -> tuple[str, ...]:
        definition = context.plan.definition
        if definition is None:
            return ()
        return self.adapter(adapter_settings(context, definition)).planned_limitations()

    def hook_settings(self, settings: PerTurnSettings, hooks: HookSet, command: list[str]) -> PerTurnSettings:
        """``settings`` that make the CLI run ``hooks`` through the hook ``command`` (before its home is written)."""
        return settings

    def write_hooks(self, home: Path, hooks: HookSet, command: list[str]) -> None:
        """Write what the CLI reads its hooks from into its ``home`` (after its home is written)."""


Launcher = PersistentLauncher | PerTurnLauncher
