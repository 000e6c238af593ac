"""A runner's settings as one frozen object: ``RunnerOptions``, with value objects where settings belong together.

Where it sits: built once, from ``AgentRunner``'s arguments (``RunnerOptions.of``, the same keywords), or
by a caller that makes runners for others (``Office(..., runner_options=...)``). Nobody writes it
afterwards: what changes while a conversation runs (its session, its status, ``set_model``) is the
conversation's (``conversation.py``), written by the driver. Pure: no I/O, no process.

What is inside::

    RunnerOptions
      cli, cli_mode                  which protocol (None: the definition's, else claude; the plan decides)
      model, include_partial_messages, keep_deltas, history_limit
      bounds: Bounds                 turn, idle, tool idle, start, interrupt, settle, retry, permission (s)
      process: ProcessSettings       the CLI's command, environment, flags, homes, stop steps, line caps
      permissions: PermissionSettings  mode, prompts, handler
      turn: TurnOptions              each turn's defaults: output schema (none), max_turns, max_budget_usd
      hooks: HookSet                 hooks= normalised, hook_timeout applied
      tools: KernelToolSet | None    tools= gathered into one set

A caller that makes runners for others takes either a ``RunnerOptions`` or ``AgentRunner``'s keywords, never
both (``options_or_keywords``: the office, the ``RunnerManager``).

``TurnOptions`` is also what one ``send`` / ``ask`` / ``send_sync`` asks for (``TurnOptions.of``), laid over
the runner's (``over``).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from elynav_nb.agents.drivers.process import StopBounds
from elynav_nb.agents.events import PermissionRequest
from elynav_nb.agents.hooks.rules import DEFAULT_HOOK_TIMEOUT, Hooks, HookSet, normalise_hooks
from elynav_nb.agents.limits import TurnLimits, check_limits
from elynav_nb.agents.output_schema import OutputSchema, OutputSchemaSpec, output_schema_of
from elynav_nb.errors import InvalidInput

if TYPE_CHECKING:
    from elynav_nb.agents.tools.tool_set import KernelToolSet

__all__ = [
    "Bounds",
    "PermissionHandler",
    "PermissionSettings",
    "ProcessSettings",
    "RunnerOptions",
    "TurnOptions",
    "options_or_keywords",
]

PermissionHandler = Callable[[PermissionRequest], "bool | None | Awaitable[bool | None]"]


def _frozen_mapping(values: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(values or {}))


@dataclass(frozen=True)
class Bounds:
    """Every wait of a runner, in seconds (see ``AgentRunner``'s docstring for what each one ends)."""

    turn: float = 1800.0
    idle: float = 300.0
    tool_idle: float = 1800.0
    start: float = 60.0
    interrupt: float = 5.0
    settle: float = 1.0
    retry: float = 60.0
    permission: float = 120.0


@dataclass(frozen=True)
class ProcessSettings:
    """How the CLI's process is found, started, read and stopped."""

    executable: str | tuple[str, ...] | None = None
    fallback_to_standin: bool = True
    environment: Mapping[str, str] = field(default_factory=lambda: _frozen_mapping(None))
    extra_arguments: tuple[str, ...] = ()
    cli_config: Mapping[str, Any] = field(default_factory=lambda: _frozen_mapping(None))
    config_home: Path | None = None
    stop_bounds: StopBounds = StopBounds()
    max_line_bytes: int = 64 * 1024 * 1024
    stderr_tail_bytes: int = 64 * 1024

    def __post_init__(self) -> None:
        # a caller may hand plain dicts and lists: the settings keep copies nobody can change
        object.__setattr__(self, "environment", _frozen_mapping(self.environment))
        object.__setattr__(self, "cli_config", _frozen_mapping(self.cli_config))
        object.__setattr__(self, "extra_arguments", tuple(self.extra_arguments))
        if isinstance(self.executable, list):
            object.__setattr__(self, "executable", tuple(self.executable))


@dataclass(frozen=True)
class PermissionSettings:
    """The permission mode a conversation starts in, and who answers the CLI's prompts."""

    mode: str | None = None  # None: the definition's
    prompts: bool = False  # surface PermissionRequest events (a handler implies it)
    handler: PermissionHandler | None = None


@dataclass(frozen=True)
class TurnOptions:
    """What one turn asks for: a structured answer, and its bounds (``max_turns``, ``max_budget_usd``)."""

    output_schema: OutputSchema | None = None
    limits: TurnLimits = TurnLimits()

    @classmethod
    def of(
        cls,
        *,
        output_schema: OutputSchemaSpec | None = None,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
    ) -> TurnOptions:
        """The options of ``send(..., output_schema=, max_turns=, max_budget_usd=)`` (``INVALID_INPUT`` when bad)."""
        return cls(output_schema_of(output_schema), check_limits(max_turns, max_budget_usd))

    def over(self, defaults: TurnOptions) -> TurnOptions:
        """These options where given, ``defaults`` (the runner's) elsewhere."""
        limits = self.limits
        if limits.max_turns is None or limits.max_budget_usd is None:
            limits = TurnLimits(
                limits.max_turns if limits.max_turns is not None else defaults.limits.max_turns,
                limits.max_budget_usd
                if limits.max_budget_usd is not None
                else defaults.limits.max_budget_usd,
            )
        schema = self.output_schema if self.output_schema is not None else defaults.output_schema
        return TurnOptions(schema, limits)


@dataclass(frozen=True)
class RunnerOptions:
    """Every setting of a runner but its agent and workspace (see the module docstring)."""

    cli: str | None = None
    cli_mode: str | None = None
    model: str | None = None
    include_partial_messages: bool = True
    keep_deltas: bool = False
    history_limit: int | None = None
    bounds: Bounds = Bounds()
    process: ProcessSettings = ProcessSettings()
    permissions: PermissionSettings = PermissionSettings()
    turn: TurnOptions = TurnOptions()
    hooks: HookSet = HookSet()
    tools: KernelToolSet | None = None

    @classmethod
    def of(
        cls,
        *,
        executable: str | Sequence[str] | None = None,
        fallback_to_standin: bool = True,
        model: str | None = None,
        permission_mode: str | None = None,
        permission_prompts: bool = False,
        permission_handler: PermissionHandler | None = None,
        permission_timeout: float = 120.0,
        include_partial_messages: bool = True,
        turn_timeout: float = 1800.0,
        idle_timeout: float = 300.0,
        tool_idle_timeout: float = 1800.0,
        start_timeout: float = 60.0,
        interrupt_timeout: float = 5.0,
        settle_timeout: float = 1.0,
        stop_bounds: StopBounds = StopBounds(),
        max_line_bytes: int = 64 * 1024 * 1024,
        stderr_tail_bytes: int = 64 * 1024,
        environment: Mapping[str, str] | None = None,
        extra_arguments: Sequence[str] = (),
        history_limit: int | None = None,
        keep_deltas: bool = False,
        cli: str | None = None,
        cli_mode: str | None = None,
        cli_config: Mapping[str, Any] | None = None,
        config_home: str | os.PathLike[str] | None = None,
        retry_timeout: float = 60.0,
        tools: KernelToolSet | Sequence[Any] | Callable[..., Any] | None = None,
        hooks: Hooks | HookSet | None = None,
        hook_timeout: float = DEFAULT_HOOK_TIMEOUT,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
    ) -> RunnerOptions:
        """The options of these ``AgentRunner`` keywords (``INVALID_INPUT`` for a bad hook, tool or bound)."""
        if isinstance(executable, str) or executable is None:
            command: str | tuple[str, ...] | None = executable
        else:
            command = tuple(executable)
        return cls(
            cli=cli,
            cli_mode=cli_mode,
            model=model,
            include_partial_messages=include_partial_messages,
            keep_deltas=keep_deltas,
            history_limit=history_limit,
            bounds=Bounds(
                turn=turn_timeout,
                idle=idle_timeout,
                tool_idle=tool_idle_timeout,
                start=start_timeout,
                interrupt=interrupt_timeout,
                settle=settle_timeout,
                retry=retry_timeout,
                permission=permission_timeout,
            ),
            process=ProcessSettings(
                executable=command,
                fallback_to_standin=fallback_to_standin,
                environment=dict(environment or {}),
                extra_arguments=tuple(extra_arguments),
                cli_config=dict(cli_config or {}),
                config_home=Path(config_home).resolve() if config_home is not None else None,
                stop_bounds=stop_bounds,
                max_line_bytes=max_line_bytes,
                stderr_tail_bytes=stderr_tail_bytes,
            ),
            permissions=PermissionSettings(
                mode=permission_mode,
                prompts=permission_prompts or permission_handler is not None,
                handler=permission_handler,
            ),
            turn=TurnOptions(limits=check_limits(max_turns, max_budget_usd)),
            hooks=normalise_hooks(hooks, default_timeout=hook_timeout),
            tools=_tool_set_of(tools),
        )


def options_or_keywords(
    options: RunnerOptions | None,
    keywords: Mapping[str, Any],
    *,
    whose: str,
    defaults: Mapping[str, Any] | None = None,
) -> RunnerOptions:
    """``options`` as given, else ``RunnerOptions.of`` the keywords laid over ``defaults``.

    ``INVALID_INPUT`` when both are given (``whose``: the runners the settings are for, in the message).
    """
    if options is not None and keywords:
        raise InvalidInput(f"give {whose} settings as runner_options or as keywords, not both")
    if options is not None:
        return options
    return RunnerOptions.of(**{**(defaults or {}), **keywords})


def _tool_set_of(tools: KernelToolSet | Sequence[Any] | Callable[..., Any] | None) -> KernelToolSet | None:
    """``tools=`` as one set (imported on use: a runner without kernel tools does not load them)."""
    if tools is None:
        return None
    from elynav_nb.agents.tools.tool_set import tool_set_of

    return tool_set_of(tools)
