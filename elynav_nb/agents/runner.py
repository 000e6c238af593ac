"""``AgentRunner``: one agent conversation as awaitable, streaming turns, whichever CLI runs it.

Which CLI: ``AgentRunner(..., cli="claude" | "codex" | "gemini" | "acp")`` (or the definition's ``cli``
field; claude by default), and for codex ``cli_mode="app-server"`` (the default) or ``"exec"``.
``cli="acp"`` runs any Agent Client Protocol agent, its command given as ``executable``
(``["gemini", "--acp"]``, ``["npx", "@zed-industries/codex-acp"]``, ``"standin"``).
The choice is made once, by the protocol registry's ``plan_runner`` (``protocols/registry.py``), which
also reads the agent definition once; nothing here branches on a CLI name.

Where it sits: the facade of ``elynav_nb.agents``. It builds the settings once (``RunnerOptions``,
frozen: ``options.py``) and the conversation (``Conversation``: ``conversation.py``), keeps the turn
listeners, the blocking wrappers and the display; a driver runs the conversation and is its only
writer (``drivers/persistent.py``: one process, claude stream-json, codex app-server or ACP, each
spoken to through a wire under ``agents/protocols``; ``drivers/per_turn.py``: a process per turn, gemini and
codex exec). The driver gets a ``RunnerContext`` and the protocol's launcher, never the runner.
Widgets and the office subscribe to turns; nothing here imports them.

How data flows::

    runner.send(text) -> Turn (``turn.py``; the driver drives it in a task, the call returns at once)
      -> the driver writes the prompt -> stdout lines -> the wire's decoder -> events -> turn
      -> the end of the turn -> TurnResult (``runner.history``); ``await turn`` returns it

Bounds: every wait is bounded (``RunnerOptions.bounds``). ``turn.cancel()`` and the timeouts ask the CLI
to stop and wait ``settle_timeout``; a CLI that does not stop gets its turn settled while a background
stop runs (status ``stopping``), and the next turn starts a new process on the same conversation.
What a CLI cannot do is data: ``runner.capabilities`` and ``runner.limitations``.

Hooks and budgets: ``hooks={"PreToolUse": ..., "PostToolUse": ...}`` (``hooks/rules.py``, run by each
protocol's hook style, ``runner.hooks``); ``max_turns`` and ``max_budget_usd`` bound each turn, a turn
reaching one ends ``limit`` (``limits.py`` says who counts what on each CLI).

Cells and loops: a runner belongs to the event loop it was started on; every cell of a kernel
runs on that loop, so a runner started in one cell is used and stopped in others (no cancel
scope crosses tasks). The ``*_sync`` methods run the runner on a private loop instead. Used off its
loop, it raises ``NO_RUNNING_LOOP``, ``LOOP_MISMATCH`` or ``LOOP_ENDED`` (``_sync.py`` says when).
"""

from __future__ import annotations

import asyncio
import html
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elynav_nb._display import rich_bundle
from elynav_nb._sync import await_on_owner_loop, private_loop, require_loop, run_sync
from elynav_nb.agents.context import RunnerContext
from elynav_nb.agents.conversation import Conversation, RunnerStatus
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.drivers.base import Driver
from elynav_nb.agents.drivers.per_turn import PerTurnDriver
from elynav_nb.agents.drivers.persistent import PersistentDriver
from elynav_nb.agents.drivers.process import CliProcess, StopBounds
from elynav_nb.agents.events import AgentEvent, AgentStarted, PermissionRequest
from elynav_nb.agents.hooks.rules import DEFAULT_HOOK_TIMEOUT, Hooks, HookSet
from elynav_nb.agents.hooks.runner import HookRunner
from elynav_nb.agents.options import PermissionHandler, RunnerOptions, TurnOptions
from elynav_nb.agents.output_schema import OutputSchemaSpec
from elynav_nb.agents.plan import Capabilities, RunnerPlan
from elynav_nb.agents.protocols.command import CliCommand, CliName
from elynav_nb.agents.protocols.launcher import PersistentLauncher
from elynav_nb.agents.protocols.registry import launcher_for, plan_runner
from elynav_nb.agents.results import Outcome, TurnResult, history_frame
from elynav_nb.agents.turn import Turn, prompt_text_of
from elynav_nb.errors import AgentBusy, InvalidInput, RunnerClosed

if TYPE_CHECKING:
    import pandas

    from elynav_nb.agents.tools.loopback_server import LoopbackMcpServer
    from elynav_nb.agents.tools.mcp_endpoint import McpToolEndpoint
    from elynav_nb.agents.tools.tool_set import KernelToolSet

__all__ = ["AgentRunner", "PermissionHandler", "Turn"]


class AgentRunner:
    """One agent's conversation on claude, codex, gemini or any ACP agent (see the module docstring).

    ``definition`` is an ``AgentDefinition`` (installed into ``workspace/.claude/agents`` when
    missing there) or the name of an agent the CLI can find; ``workspace`` is the folder the CLI
    works in. ``cli`` picks the CLI (``"claude"``, ``"codex"``, ``"gemini"``, ``"acp"``; else the definition's
    ``cli`` field, else claude) and ``cli_mode`` how codex runs: ``"app-server"`` (the default: one
    persistent JSON-RPC process with token deltas, permission prompts and interrupts) or ``"exec"``
    (a process per turn); ``$ELYNAV_CODEX_MODE`` sets the default. ``executable`` names the CLI: a
    path or command (``["node", "cli.js"]``; for ``cli="acp"`` the ACP agent's whole command, required),
    ``"standin"`` for claude's embedded stand-in (or, with ``cli="acp"``, the ACP stand-in), or
    ``None`` for the real CLI when on PATH (claude: else the stand-in, unless
    ``fallback_to_standin=False``).

    Conversation: ``session_id`` starts a new conversation with that id (claude, gemini; codex names
    its threads itself), ``resume`` continues an old one. ``model`` and ``permission_mode`` default
    to the definition's. ``permission_prompts=True`` (or a ``permission_handler``) surfaces the
    CLI's permission prompts as ``PermissionRequest`` events, denied after ``permission_timeout``
    (claude and codex app-server; a process per turn cannot ask: it runs in the safest mode).
    ``include_partial_messages`` (claude) streams token deltas. Readers of a turn get every delta;
    its stored events join consecutive text (and thinking) deltas into one event unless
    ``keep_deltas=True``; ``history_limit`` keeps the last N results only.

    Bounds (seconds): ``turn_timeout``, ``idle_timeout`` (no output), ``tool_idle_timeout`` (no output
    while a tool runs), ``start_timeout``, ``interrupt_timeout`` and ``settle_timeout`` (a cancel),
    ``retry_timeout`` (codex and gemini retrying an unreachable model API), ``stop_bounds`` (the
    forced stop steps); ``max_line_bytes`` and ``stderr_tail_bytes`` bound memory.

    The CLI's process: ``environment`` adds variables, ``extra_arguments`` adds flags. Codex and
    gemini only: ``cli_config`` (codex ``-c`` keys, gemini ``settings.json`` keys) and
    ``config_home`` (the runner's own CLI home); claude refuses them.

    Kernel tools: ``tools`` (a ``kernel_tools(...)`` set, or functions, ``KernelTool`` objects and
    sets in a list) are served to the agent from this kernel as the MCP server ``kernel``, and run
    here, on this loop, while the turn streams (``runner.tool_endpoint.calls`` counts the calls).
    claude reaches them on its stream-json pipe (SDK MCP server: no port). codex and gemini reach MCP
    servers over stdio or HTTP only, so they get ``runner.tool_server``: MCP streamable HTTP on
    127.0.0.1 in this process (a free port, from ``start()`` to ``stop()``), which takes no call
    without this runner's secret; the secret reaches the CLI in its environment only. The agent
    calls them as ``mcp__kernel__<name>`` (claude; codex: namespace ``mcp__kernel``) or
    ``mcp_kernel_<name>`` (gemini), without a permission prompt in any mode; events name them
    ``mcp__kernel__<name>`` on every CLI.

    Hooks: ``hooks`` maps ``"PreToolUse"`` / ``"PostToolUse"`` to a callback (sync or async, called
    with a ``HookCall``), a ``(matcher, callback)`` pair, a ``HookMatcher`` or a list of them; a
    callback returns None, ``allow()``, ``deny(reason)`` or ``rewrite(new_input)``
    (``elynav_nb.agents.hooks``). One that raises or outlasts its timeout (``hook_timeout``, 5 s
    by default, or its ``HookMatcher.timeout``) denies, and the turn gets a ``HookFailed`` event.
    claude runs them through its control protocol, gemini and codex exec as their own command hooks
    (tool names are each CLI's own), on built-in and MCP tools alike; codex app-server cannot (see
    ``limitations``): there they apply to kernel tools only.

    Budgets, per turn: ``max_turns`` (model turns) and ``max_budget_usd`` (claude only: codex and
    gemini report no cost, so a budget is refused there). A turn that reaches one ends with outcome
    ``limit`` and ``error_code`` ``MAX_TURNS_REACHED`` or ``BUDGET_REACHED``.
    """

    def __init__(
        self,
        definition: AgentDefinition | str | None,
        workspace: str | os.PathLike[str] = ".",
        *,
        executable: str | Sequence[str] | None = None,
        fallback_to_standin: bool = True,
        session_id: str | None = None,
        resume: str | None = None,
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
        environment: dict[str, str] | None = None,
        extra_arguments: Sequence[str] = (),
        history_limit: int | None = None,
        keep_deltas: bool = False,
        cli: CliName | None = None,
        cli_mode: str | None = None,
        cli_config: dict[str, Any] | None = None,
        config_home: str | os.PathLike[str] | None = None,
        retry_timeout: float = 60.0,
        tools: KernelToolSet | Sequence[Any] | Callable[..., Any] | None = None,
        hooks: Hooks | HookSet | None = None,
        hook_timeout: float = DEFAULT_HOOK_TIMEOUT,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
    ) -> None:
        options = RunnerOptions.of(
            executable=executable,
            fallback_to_standin=fallback_to_standin,
            model=model,
            permission_mode=permission_mode,
            permission_prompts=permission_prompts,
            permission_handler=permission_handler,
            permission_timeout=permission_timeout,
            include_partial_messages=include_partial_messages,
            turn_timeout=turn_timeout,
            idle_timeout=idle_timeout,
            tool_idle_timeout=tool_idle_timeout,
            start_timeout=start_timeout,
            interrupt_timeout=interrupt_timeout,
            settle_timeout=settle_timeout,
            stop_bounds=stop_bounds,
            max_line_bytes=max_line_bytes,
            stderr_tail_bytes=stderr_tail_bytes,
            environment=environment,
            extra_arguments=extra_arguments,
            history_limit=history_limit,
            keep_deltas=keep_deltas,
            cli=cli,
            cli_mode=cli_mode,
            cli_config=cli_config,
            config_home=config_home,
            retry_timeout=retry_timeout,
            tools=tools,
            hooks=hooks,
            hook_timeout=hook_timeout,
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
        )
        self._set_up(definition, workspace, options, session_id=session_id, resume=resume)

    @classmethod
    def from_options(
        cls,
        definition: AgentDefinition | str | None,
        workspace: str | os.PathLike[str],
        options: RunnerOptions,
        *,
        session_id: str | None = None,
        resume: str | None = None,
    ) -> AgentRunner:
        """A runner with ``options`` made already (``RunnerOptions.of(...)``: the keywords of ``AgentRunner``)."""
        runner = cls.__new__(cls)
        runner._set_up(definition, workspace, options, session_id=session_id, resume=resume)
        return runner

    def _set_up(
        self,
        definition: AgentDefinition | str | None,
        workspace: str | os.PathLike[str],
        options: RunnerOptions,
        *,
        session_id: str | None,
        resume: str | None,
    ) -> None:
        if session_id is not None and resume is not None:
            raise InvalidInput("give either session_id (a new conversation) or resume (an old one), not both")
        plan = plan_runner(definition, Path(workspace).resolve(), cli=options.cli, cli_mode=options.cli_mode)
        plan.check_accepts(
            cli_config=bool(options.process.cli_config) or options.process.config_home is not None,
            session_id=session_id is not None,
            budget=options.turn.limits.max_budget_usd is not None,
        )
        self.options = options
        self.plan: RunnerPlan = plan
        self.definition: AgentDefinition | None = (
            definition if isinstance(definition, AgentDefinition) else None
        )
        given = plan.definition if plan.definition_given else None
        self.conversation = Conversation.begin(
            session_id=session_id,
            resume=resume,
            names_its_threads=plan.protocol.names_its_threads,
            model=options.model,
            permission_mode=options.permissions.mode or (given.permission_mode if given else None),
            history_limit=options.history_limit,
        )
        endpoint: McpToolEndpoint | None = None
        if options.tools is not None:
            from elynav_nb.agents.tools.kernel_tool_server import serve_tools

            _, endpoint = serve_tools(options.tools)
        conversation = self.conversation
        hooks = HookRunner(options.hooks, report=self._report, session_id=lambda: conversation.session_id)
        if endpoint is not None and hooks and not plan.capabilities.native_tool_hooks:
            from elynav_nb.agents.tools.kernel_tool_server import apply_hooks

            apply_hooks(endpoint, hooks)  # the CLI runs no hooks: the kernel server does
        self.hooks = hooks
        self.tool_endpoint = endpoint
        self._turn_listeners: list[Callable[[Turn], None]] = []
        context = RunnerContext(options, plan, conversation, hooks, endpoint)
        launcher = launcher_for(plan)
        self._driver: Driver = (
            PersistentDriver(context, launcher)
            if isinstance(launcher, PersistentLauncher)
            else PerTurnDriver(context, launcher)
        )

    def _report(self, event: AgentEvent) -> None:
        """A hook's diagnostic (``HookFailed``) into the turn in flight (else kept as a stray event)."""
        self._driver.report(event)

    # -- what it is and what it can do ------------------------------------------------------------

    @property
    def workspace(self) -> Path:
        return self.plan.workspace

    @property
    def agent_name(self) -> str | None:
        return self.plan.agent_name

    @property
    def cli_name(self) -> CliName:
        return self.plan.cli

    @property
    def cli_mode(self) -> str:
        return self.plan.mode

    @property
    def cli(self) -> CliCommand | None:
        """The CLI located at the last start (None before it)."""
        return self.conversation.cli

    @property
    def session_id(self) -> str:
        """The conversation's id ("" until a CLI that names its threads has named it)."""
        return self.conversation.session_id

    @property
    def status(self) -> RunnerStatus:
        """``new``, ``starting``, ``idle``, ``busy``, ``stopping``, ``stopped``, ``exited`` or ``closed``."""
        return self.conversation.status

    @property
    def history(self) -> list[TurnResult]:
        """The finished turns' results (the last ``history_limit`` only, when given)."""
        return self.conversation.history

    @property
    def last_started(self) -> AgentStarted | None:
        return self.conversation.last_started

    @property
    def command_line(self) -> list[str]:
        """The CLI's argv at the last start (no secret: those go in its environment)."""
        return self.conversation.command_line

    @property
    def model(self) -> str | None:
        return self.conversation.model

    @property
    def permission_mode(self) -> str | None:
        return self.conversation.permission_mode

    @property
    def tool_server(self) -> LoopbackMcpServer | None:
        """The loopback MCP server of the kernel tools (codex, gemini, ACP: from ``start()`` to ``stop()``)."""
        return self._driver.tool_server

    @property
    def environment_overrides(self) -> Mapping[str, str]:
        """The variables given with ``environment=`` (read-only)."""
        return self.options.process.environment

    @property
    def interrupt_timeout(self) -> float:
        return self.options.bounds.interrupt

    @property
    def capabilities(self) -> Capabilities:
        """What this runner's CLI and mode can do (prompts, tool rules, cost, deltas, thinking...)."""
        return self.plan.capabilities

    @property
    def limitations(self) -> tuple[str, ...]:
        """What the CLI cannot honour of the runner's settings and the agent definition (may be empty)."""
        return self._driver.limitations

    @property
    def cli_version(self) -> str:
        """The CLI's version once located (codex, gemini; claude's is in ``last_started``)."""
        return self._driver.cli_version

    @property
    def cli_home(self) -> Path | None:
        """The runner's own CLI home once started (codex ``CODEX_HOME``, gemini's; None for claude)."""
        adapter = self._driver.adapter
        return adapter.settings.home if adapter is not None else None

    @property
    def is_running(self) -> bool:
        return self._driver.is_running

    @property
    def busy(self) -> bool:
        return self._driver.busy

    @property
    def process(self) -> CliProcess | None:
        """The CLI's process: the conversation's, or the last turn's for a process per turn."""
        return self._driver.process

    @property
    def pid(self) -> int | None:
        process = self._driver.process
        return process.pid if process is not None else None

    @property
    def uses_standin(self) -> bool:
        return self.conversation.uses_standin

    @property
    def pending_permissions(self) -> list[PermissionRequest]:
        return list(self._driver.pending_permissions)

    @property
    def current_turn(self) -> Turn | None:
        """The turn in flight, if any."""
        return self._driver.current_turn if self.busy else None

    # -- starting ---------------------------------------------------------------------------------

    async def start(self) -> AgentRunner:
        """Start the CLI and wait until it is ready (bounded). Idempotent.

        claude and codex app-server: spawn and handshake. gemini and codex exec: locate the CLI and
        write its config home (each turn starts its own process). Raises the typed error of a start
        that fails (``CLI_NOT_FOUND``, ``CLI_START_FAILED``, ``AGENT_NOT_FOUND``...); a turn sent to a
        runner that cannot start ends ``failed`` with the same error code instead.
        """
        await self._driver.start()
        return self

    # -- turns -----------------------------------------------------------------------------------

    def send(
        self,
        text: str | list[dict[str, Any]],
        *,
        output_schema: OutputSchemaSpec | None = None,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
    ) -> Turn:
        """Start a turn and return its ``Turn`` at once. ``AGENT_BUSY`` while another turn runs.

        ``output_schema`` (a JSON Schema dict, a pydantic model, a ``TypedDict``, or ``list[Model]``)
        asks for a structured answer: the result's ``data`` holds the validated value and
        ``to_frame()`` its rows; an answer that does not match ends the turn ``failed`` with
        ``error_code="OUTPUT_INVALID"`` and the raw answer in ``text``. A bad schema is
        ``INVALID_INPUT`` here, before anything runs. claude gets ``--json-schema`` (a flag of the
        process: a turn whose schema differs from the running process's restarts claude on the same
        session with ``--resume`` first), codex the turn's output schema, gemini (no schema option)
        the schema in the prompt; see ``output_schema.py``.

        ``max_turns`` and ``max_budget_usd`` replace the runner's bounds for this turn (claude: a
        bound that differs from the running process's, or a budget after a turn that cost
        something, restarts the process on the same conversation first).

        The turn starts the CLI when needed; a CLI that cannot start does not raise here: the turn
        ends ``failed`` with the start's error code in ``result.error_code`` (``CLI_NOT_FOUND``,
        ``CLI_START_FAILED``, ``AGENT_NOT_FOUND``...), shown in its repr. ``start()`` raises it instead.
        ``INVALID_INPUT`` before anything is sent for a prompt that is not valid Unicode text (a lone
        surrogate cannot be written as UTF-8).
        """
        return self._send(
            text,
            TurnOptions.of(output_schema=output_schema, max_turns=max_turns, max_budget_usd=max_budget_usd),
        )

    def _send(self, text: str | list[dict[str, Any]], asked: TurnOptions) -> Turn:
        remedy = "`await runner.send(...)` in a notebook or async code, or runner.send_sync(...) in a script"
        loop = require_loop(self._driver.loop, call="runner.send()", owner="this runner", remedy=remedy)
        if self.busy:
            raise AgentBusy(
                f"agent {self.agent_name or 'default'} is already in a turn; await it or cancel it first"
            )
        if self.status == RunnerStatus.CLOSED:
            raise RunnerClosed("this runner was stopped; start() it again or make a new one")
        prompt_text = prompt_text_of(text)
        options = asked.over(self.options.turn)
        if options.limits != self.options.turn.limits:
            self.plan.check_accepts(budget=options.limits.max_budget_usd is not None)
        driver = self._driver
        turn = Turn(
            self,
            prompt_text,
            session_id=self.session_id,
            keep_deltas=self.options.keep_deltas,
            cost_baseline=driver.total_cost_usd,
            output_schema=options.output_schema,
            limits=options.limits,
            count_model_turns=not self.capabilities.cli_keeps_limits,
        )
        driver.current_turn = turn
        turn.task = loop.create_task(driver.drive_turn(turn, text))
        for listener in list(self._turn_listeners):
            listener(turn)
        return turn

    def abort_turn(self, turn: Turn, outcome: Outcome, reason: str) -> Awaitable[None]:
        """End ``turn`` within its bounds (what ``turn.cancel()`` calls)."""
        return self._driver.abort_turn(turn, outcome, reason)

    def add_turn_listener(self, listener: Callable[[Turn], None]) -> None:
        """Call ``listener(turn)`` for every new turn (views subscribe here)."""
        self._turn_listeners.append(listener)

    def remove_turn_listener(self, listener: Callable[[Turn], None]) -> None:
        if listener in self._turn_listeners:
            self._turn_listeners.remove(listener)

    async def ask(
        self,
        text: str,
        *,
        output_schema: OutputSchemaSpec | None = None,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
    ) -> TurnResult:
        """``await runner.ask(text)`` = ``await runner.send(text)`` (the options as for ``send``)."""
        return await self._send(
            text,
            TurnOptions.of(output_schema=output_schema, max_turns=max_turns, max_budget_usd=max_budget_usd),
        )

    # -- settings of the conversation -------------------------------------------------------------

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode (claude: in the running process; the others: from the next turn)."""
        await self._driver.set_permission_mode(mode)

    async def set_model(self, model: str | None) -> None:
        """Change the model from the next turn on."""
        await self._driver.set_model(model)

    async def mcp_status(self) -> list[dict[str, Any]]:
        """The MCP servers of the CLI and their status (live where ``capabilities.live_mcp_status``)."""
        return await self._driver.mcp_status()

    # -- stopping -------------------------------------------------------------------------------------

    async def stop(self) -> None:
        """Cancel the turn in flight, stop the CLI in bounded steps, leave no process behind. Idempotent.
        Awaited on another loop than the runner's (started by ``start_sync``), it runs on the runner's."""
        if not self._loop_ended_with_nothing_left():
            await await_on_owner_loop(
                self._driver.stop(), self._driver.loop, call="runner.stop()", owner="this runner"
            )

    async def restart(self) -> AgentRunner:
        """Stop the process and start a new one on the same conversation (``--resume``)."""
        await self.stop()
        return await self.start()

    async def __aenter__(self) -> AgentRunner:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- blocking API (scripts and cells that want it) -------------------------------------------------------

    def _sync_loop(self) -> asyncio.AbstractEventLoop:
        return self._driver.loop if self._driver.loop is not None else private_loop()

    def start_sync(self) -> AgentRunner:
        """Blocking ``start()`` (the runner then lives on the private loop)."""
        return run_sync(self.start(), owner_loop=self._sync_loop(), owner="this runner")

    def send_sync(
        self,
        text: str,
        *,
        output_schema: OutputSchemaSpec | None = None,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
    ) -> TurnResult:
        """Blocking turn: start if needed, send, wait for the result."""
        # bad options raise here, in the caller's thread
        asked = TurnOptions.of(
            output_schema=output_schema, max_turns=max_turns, max_budget_usd=max_budget_usd
        )

        async def send_and_wait() -> TurnResult:
            return await self._send(text, asked)

        return run_sync(send_and_wait(), owner_loop=self._sync_loop(), owner="this runner")

    def stop_sync(self) -> None:
        """Blocking ``stop()``."""
        if self._driver.loop is not None and not self._loop_ended_with_nothing_left():
            run_sync(self.stop(), owner_loop=self._driver.loop, owner="this runner")

    def _loop_ended_with_nothing_left(self) -> bool:
        """The runner's loop is closed (``asyncio.run`` returned) and its CLI gone: nothing to stop."""
        return self._driver.loop is not None and self._driver.loop.is_closed() and not self._driver.is_running

    # -- display -------------------------------------------------------------------------------------

    def to_frame(self) -> pandas.DataFrame:
        """One row per finished turn of this runner."""
        return history_frame(self.history)

    def __repr__(self) -> str:
        cli = self.cli.label if self.cli is not None else f"{self.cli_name} (not located yet)"
        version = f" {self.cli_version}" if self.cli_version else ""
        limitations = "; ".join(self.limitations)
        return (
            f"<AgentRunner agent={self.agent_name!r} status={self.status} cli={cli}{version} "
            f"mode={self.cli_mode if self.capabilities.persistent_process else 'process per turn'} session={self.session_id or '(new)'} "
            f"turns={len(self.history)}" + (f" limitations=[{limitations}]>" if limitations else ">")
        )

    def _repr_html_(self) -> str:
        cli = self.cli.label if self.cli is not None else f"{self.cli_name} (not located yet)"
        return (
            f"<div><b>AgentRunner</b> {html.escape(self.agent_name or 'default')} · {html.escape(self.status)} · "
            f"CLI {html.escape(cli)} · session {html.escape(self.session_id)} · {len(self.history)} turns</div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)
