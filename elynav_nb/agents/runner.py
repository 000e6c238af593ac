"""``AgentRunner`` and ``Turn``: one agent conversation as awaitable, streaming turns.

Which CLI: ``AgentRunner(..., cli="claude" | "codex" | "gemini")`` (or the definition's ``cli``
field; claude by default). Claude keeps one persistent stream-json process per conversation, the
code below. Codex and gemini run one process per turn with a resume id: ``AgentRunner(...)``
then makes a ``PerTurnRunner`` (``per_turn_runner.py``), the same ``Turn``, ``TurnResult``,
history and display, another conversation driver.

Where it sits: the heart of ``elynav_nb.agents``. It owns one ``CliProcess`` (I/O), feeds its
stdout lines to the pure ``ClaudeStreamDecoder``, routes control frames, and hands conversation
events to the ``Turn`` in flight. Widgets and the office subscribe to turns; nothing here imports
them.

How data flows::

    runner.send(text) -> Turn (a background task drives it, the call returns at once)
      -> one user line on stdin -> stdout lines -> decoder -> events -> turn (``transcript.py``)
      -> TurnEnded (the CLI's ``result``) -> TurnResult; ``await turn`` returns it

Bounds: every wait is bounded. ``turn.cancel()`` (and a turn or inactivity timeout) sends the
``interrupt`` control request and waits ``settle_timeout`` (1 s) for the CLI's ``result``: a CLI
that honours it keeps the conversation. One that does not gets its turn settled at once
(``cancelled`` / ``timeout``) while a background stop runs (status ``stopping``): it still waits for
a late ``result`` until ``interrupt_timeout``, then stops the process in short forced steps (SIGINT,
SIGTERM, SIGKILL of the tree, about ``interrupt_timeout`` + 2 s after the cancel at most). The next
turn waits for that stop and restarts the CLI with ``--resume``. A turn
timeout and an inactivity timeout end the turn with ``outcome="timeout"``; a CLI that dies
mid-turn gives ``outcome="failed"`` with its stderr tail. Unanswered permission prompts are
denied after ``permission_timeout``.

Cells and loops: a runner belongs to the event loop it was started on; every cell of a kernel
runs on that loop, so a runner started in one cell is used and stopped in others (no cancel
scope crosses tasks). The ``*_sync`` methods run the runner on a private loop instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import html
import inspect
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from elynav_nb._display import rich_bundle
from elynav_nb._sync import private_loop, run_sync
from elynav_nb.agents.cli.claude_codec import (
    ClaudeStreamDecoder,
    encode_control_error,
    encode_control_request,
    encode_control_success,
    encode_user_message,
)
from elynav_nb.agents.cli.claude_command import ClaudeLaunch, build_child_environment, build_claude_argv
from elynav_nb.agents.definitions import AgentDefinition, find_agent_file, install_agents
from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    ControlCancel,
    ControlFrame,
    ControlRequest,
    ControlResponse,
    PermissionRequest,
    PermissionWithdrawn,
    TextDelta,
    ToolResult,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.locate import CliCommand, CliName, choose_cli, choose_cli_mode, locate_cli
from elynav_nb.agents.process import CliProcess, StopBounds
from elynav_nb.agents.reaper import register_process
from elynav_nb.agents.results import Outcome, TurnResult, events_frame, main_text
from elynav_nb.agents.transcript import TurnTranscript
from elynav_nb.errors import (
    AgentBusy,
    AgentNotFound,
    AgentTimeout,
    BypassRefusedAsRoot,
    CliExited,
    CliStartFailed,
    ElynavError,
    InvalidInput,
    RunnerClosed,
)

if TYPE_CHECKING:
    import pandas

__all__ = ["AgentRunner", "PermissionHandler", "Turn"]

PermissionHandler = Callable[[PermissionRequest], "bool | None | Awaitable[bool | None]"]


class LineDecoder(Protocol):
    """What the runner needs of a persistent CLI's codec: one stdout line in, events and frames out."""

    def decode_line(self, line: bytes | str) -> Sequence[AgentEvent | ControlFrame]: ...


_WATCHDOG_TICK = 0.25
_DESCENDANT_SCAN_INTERVAL = 2.0


class Turn:
    """One user message and everything the agent does until the end of its answer.

    ``async for event in turn`` streams events (several readers may iterate; each gets the stored
    events so far, then every delta as it arrives); ``await turn`` gives the ``TurnResult``;
    ``turn.cancel()`` stops it within its bound (``await turn.cancel()`` waits for the result).
    """

    def __init__(self, runner: AgentRunner, prompt: str) -> None:
        self.runner = runner
        self.prompt = prompt
        self._transcript = TurnTranscript(keep_deltas=runner.keep_deltas)
        self.result: TurnResult | None = None
        self.session_id = runner.session_id or ""
        self.started_at = time.monotonic()
        self._loop = asyncio.get_running_loop()
        self._done: asyncio.Future[TurnResult] = self._loop.create_future()
        self._changed = asyncio.Event()
        self._written = False
        self._abort_outcome: Outcome | None = None
        self._abort_reason = ""
        self._cancel_task: asyncio.Task[None] | None = None
        self._open_tool_uses: set[str] = set()
        self._start_total_cost = runner._total_cost_usd
        self.task: asyncio.Task[None] | None = None

    # -- reading ----------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self._done.done()

    @property
    def status(self) -> str:
        if self.result is not None:
            return self.result.outcome
        if self._abort_outcome is not None:
            return "cancelling"
        return "running" if self._written else "starting"

    @property
    def events(self) -> list[AgentEvent]:
        """The stored events so far (a new list): consecutive deltas coalesced unless ``keep_deltas``."""
        return self._transcript.events()

    @property
    def text(self) -> str:
        """The answer so far."""
        return main_text(self.events)

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[AgentEvent]:
        queue = self._transcript.open_reader()
        try:
            while True:
                while queue:
                    yield queue.popleft()
                if self._done.done():
                    return
                self._changed.clear()
                if queue or self._done.done():
                    continue
                await self._changed.wait()
        finally:
            self._transcript.close_reader(queue)

    def __await__(self) -> Generator[Any, None, TurnResult]:
        return self._wait_result().__await__()

    async def _wait_result(self) -> TurnResult:
        try:
            return await asyncio.shield(self._done)
        except asyncio.CancelledError:
            # A kernel interrupt reaching a cell that awaits the turn becomes a bounded cancel,
            # so the CLI (shielded in its own session) never runs on unnoticed.
            if not self._done.done():
                self.cancel()
            raise

    def cancel(
        self, reason: str = "cancelled by the user", *, outcome: Literal["cancelled", "timeout"] = "cancelled"
    ) -> asyncio.Future[TurnResult]:
        """Stop the turn (interrupt, then bounded forced steps). Returns a future of the result.

        ``reason`` becomes the result's ``error``; ``outcome="timeout"`` is for callers enforcing a
        bound of their own (the office's ask timeout). Idempotent: the first call decides.
        """
        self._request_abort(outcome, reason)
        return self._done

    def _request_abort(self, outcome: Outcome, reason: str) -> None:
        if self._done.done() or self._cancel_task is not None:
            return
        if not self._on_own_loop():
            self._loop.call_soon_threadsafe(self._request_abort, outcome, reason)
            return
        self._abort_outcome = outcome
        self._abort_reason = reason
        self._cancel_task = self._loop.create_task(self.runner._abort_turn(self, outcome, reason))

    def _on_own_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    # -- writing (runner side) -------------------------------------------------------------------

    def _push(self, event: AgentEvent) -> None:
        self._transcript.append(event)
        if type(event) is TextDelta:  # the usual event: nothing else to track
            self._changed.set()
            return
        if isinstance(event, ToolUse):
            self._open_tool_uses.add(event.id)
        elif isinstance(event, ToolResult):
            self._open_tool_uses.discard(event.tool_use_id)
        elif isinstance(event, AgentStarted) and event.session_id:
            self.session_id = event.session_id
        self._changed.set()

    def _finish(self, result: TurnResult) -> None:
        if self._done.done():
            return
        self.result = result
        self._done.set_result(result)
        self._changed.set()

    # -- display ------------------------------------------------------------------------------------

    def to_frame(self) -> pandas.DataFrame:
        """The events so far, one row each."""
        return events_frame(self.events)

    def __repr__(self) -> str:
        return (
            f"<Turn {self.status} agent={self.runner.agent_name!r} events={len(self.events)} "
            f"prompt={self.prompt[:40]!r}>"
        )

    def _repr_html_(self) -> str:
        if self.result is not None:
            return self.result._repr_html_()
        return f"<div><b>{html.escape(self.status)}</b> · {len(self.events)} events<br>{html.escape(self.text)}</div>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)


class AgentRunner:
    """One agent's conversation: claude in one persistent stream-json process, codex and gemini in
    one process per turn (``cli=``; see ``PerTurnRunner`` for what those two cannot do).

    ``definition`` is an ``AgentDefinition`` (installed into ``workspace/.claude/agents`` when
    missing there) or the name of an agent the CLI can find. ``executable`` names the CLI: a
    path or command (``["node", "cli.js"]``), ``"standin"`` for the embedded stand-in, or
    ``None`` for the real ``claude`` when on PATH, else the stand-in. Readers of a turn get every
    delta; its stored events (``turn.events``, ``TurnResult.events``) join consecutive text (and
    thinking) deltas of one agent into one event; ``keep_deltas=True`` stores every delta.

    Codex and gemini only: ``cli_config`` (codex ``-c`` keys, gemini ``settings.json`` keys),
    ``config_home`` (the runner's own CLI home) and ``retry_timeout`` (how long a CLI may retry an
    unreachable model API before the turn ends); claude refuses them. ``cli_mode`` picks how codex
    runs: ``"app-server"`` (the default: one persistent JSON-RPC process with token deltas,
    permission prompts and interrupts) or ``"exec"`` (a process per turn); ``$ELYNAV_CODEX_MODE``
    sets the default.
    """

    def __new__(  # noqa: PYI034 (codex and gemini get their own runner classes)
        cls, definition: AgentDefinition | str | None = None, *args: Any, **options: Any
    ) -> AgentRunner:
        if cls is AgentRunner:
            workspace = Path(args[0] if args else options.get("workspace", ".")).resolve()
            mode = choose_cli_mode(
                choose_cli(options.get("cli"), definition, workspace), options.get("cli_mode")
            )
            if mode == "app-server":
                from elynav_nb.agents.codex_app_runner import CodexAppServerRunner

                return super().__new__(CodexAppServerRunner)
            if mode != "stream-json":
                from elynav_nb.agents.per_turn_runner import PerTurnRunner

                return super().__new__(PerTurnRunner)
        return super().__new__(cls)

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
    ) -> None:
        if isinstance(definition, AgentDefinition):
            self.definition: AgentDefinition | None = definition
            self.agent_name: str | None = definition.name
        else:
            self.definition = None
            self.agent_name = definition or None
        if session_id is not None and resume is not None:
            raise InvalidInput("give either session_id (a new conversation) or resume (an old one), not both")
        self.workspace = Path(workspace).resolve()
        self.cli_name: CliName = choose_cli(cli, definition, self.workspace)
        self.cli_mode = choose_cli_mode(self.cli_name, cli_mode)
        self.cli_config = dict(cli_config or {})
        self.config_home = Path(config_home).resolve() if config_home is not None else None
        self.retry_timeout = retry_timeout
        if self.cli_name == "claude" and (self.cli_config or config_home is not None):
            raise InvalidInput(
                "cli_config and config_home are for codex and gemini; give claude flags with extra_arguments"
            )
        self._session_id_given = session_id is not None
        self.executable = executable
        self.fallback_to_standin = fallback_to_standin
        self.session_id = resume or session_id or str(uuid.uuid4())
        self._resume_next_start = resume is not None
        self.model = model
        self.permission_mode = permission_mode or (
            definition.permission_mode if isinstance(definition, AgentDefinition) else None
        )
        self.permission_prompts = permission_prompts or permission_handler is not None
        self.permission_handler = permission_handler
        self.permission_timeout = permission_timeout
        self.include_partial_messages = include_partial_messages
        self.turn_timeout = turn_timeout
        self.idle_timeout = idle_timeout
        self.tool_idle_timeout = tool_idle_timeout
        self.start_timeout = start_timeout
        self.interrupt_timeout = interrupt_timeout
        self.settle_timeout = settle_timeout
        self.stop_bounds = stop_bounds
        self.max_line_bytes = max_line_bytes
        self.stderr_tail_bytes = stderr_tail_bytes
        self.environment_overrides = dict(environment or {})
        self.extra_arguments = tuple(extra_arguments)
        self.keep_deltas = keep_deltas  # read by each new turn

        self.cli: CliCommand | None = None
        self.history: list[TurnResult] = []
        self.history_limit = history_limit  # keep only the last N results (None: all of them)
        self.last_started: AgentStarted | None = None
        self.status = "new"
        self.last_activity = time.monotonic()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._process: CliProcess | None = None
        self.command_line: list[
            str
        ] = []  # the CLI's argv at the last start (no secret: those go in the environment)
        self._decoder: LineDecoder = ClaudeStreamDecoder(partial_messages=include_partial_messages)
        self._current_turn: Turn | None = None
        self._pending_controls: dict[str, asyncio.Future[ControlResponse]] = {}
        self._pending_permissions: dict[str, tuple[PermissionRequest, asyncio.TimerHandle]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._total_cost_usd = 0.0
        self._control_counter = 0
        self._start_lock: asyncio.Lock | None = None
        self._stopping: asyncio.Task[None] | None = None  # the background stop of a CLI that ignored a cancel
        self._late_turn_end: asyncio.Event | None = None
        self.stray_events: list[AgentEvent] = []
        self._turn_listeners: list[Callable[[Turn], None]] = []

    # -- starting ---------------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.is_running

    @property
    def busy(self) -> bool:
        return self._current_turn is not None and not self._current_turn.done

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def uses_standin(self) -> bool:
        return self.cli is not None and self.cli.is_standin

    async def start(self) -> AgentRunner:
        """Spawn the CLI and wait until it answers ``initialize`` (bounded). Idempotent."""
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop is not loop:
            raise InvalidInput("this runner belongs to another event loop; use it from that loop")
        self._loop = loop
        stopping = self._stopping
        if stopping is not None and not stopping.done():
            await asyncio.shield(stopping)  # a CLI that ignored a cancel is being stopped (bounded)
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self.is_running:
                return self
            await self._spawn_and_initialize()
        return self

    async def _spawn_and_initialize(self) -> None:
        self.status = "starting"
        self.cli = await asyncio.to_thread(
            locate_cli, self.executable, fallback_to_standin=self.fallback_to_standin
        )
        await asyncio.to_thread(self._ensure_agent_installed)
        mcp_config = self.workspace / ".mcp.json"
        launch = ClaudeLaunch(
            agent_name=self.agent_name,
            include_partial_messages=self.include_partial_messages,
            mcp_config_path=str(mcp_config) if mcp_config.is_file() else None,
            permission_mode=self.permission_mode,
            permission_prompts=self.permission_prompts,
            session_id=None if self._resume_next_start else self.session_id,
            resume_session_id=self.session_id if self._resume_next_start else None,
            model=self.model,
            extra_arguments=self.extra_arguments,
        )
        argv = build_claude_argv(self.cli.argv, launch)
        self.command_line = list(argv)
        agent_identity = {"ELYNAV_AGENT_NAME": self.agent_name} if self.agent_name else {}
        environment = build_child_environment(os.environ, {**agent_identity, **self.environment_overrides})
        self._decoder = ClaudeStreamDecoder(partial_messages=self.include_partial_messages)
        self._total_cost_usd = 0.0
        process = await self._spawn_process(argv, self.workspace, environment)
        try:
            response = await self._control("initialize", timeout=self.start_timeout, hooks=None)
        except (CliExited, AgentTimeout) as error:
            await process.stop(self.stop_bounds)
            self.status = "stopped"
            raise self._start_failure(error) from error
        if self.agent_name:
            known = [
                str(agent.get("name"))
                for agent in response.response.get("agents") or []
                if isinstance(agent, dict)
            ]
            if known and self.agent_name not in known:
                await process.stop(self.stop_bounds)
                self.status = "stopped"
                raise AgentNotFound(
                    f"the CLI does not know agent {self.agent_name!r} (it would silently run its default agent); "
                    f"known agents: {', '.join(known)}. Install it with install_agents(workspace).",
                    details={"agent": self.agent_name},
                )
        self._resume_next_start = True  # a later restart continues this conversation
        self.status = "idle"
        self.last_activity = time.monotonic()

    async def _spawn_process(self, argv: Sequence[str], cwd: Path, environment: dict[str, str]) -> CliProcess:
        """Spawn the conversation's CLI, its stdout routed to ``_handle_line``, reaped at exit."""
        process = CliProcess(
            argv,
            cwd=cwd,
            environment=environment,
            on_line=self._handle_line,
            on_oversized=self._handle_oversized_line,
            on_exit=self._handle_exit,
            max_line_bytes=self.max_line_bytes,
            stderr_tail_bytes=self.stderr_tail_bytes,
        )
        self._process = process
        await process.spawn()
        register_process(self, process)
        return process

    def _ensure_agent_installed(self) -> None:
        if self.agent_name is None:
            return
        if find_agent_file(self.workspace, self.agent_name) is not None:
            return
        if self.definition is not None:
            install_agents(self.workspace, [self.definition])
            return
        raise AgentNotFound(
            f"agent {self.agent_name!r} is not defined in {self.workspace / '.claude' / 'agents'} "
            "nor in a parent folder or ~/.claude/agents; install it with install_agents(workspace)",
            details={"agent": self.agent_name},
        )

    def _start_failure(self, error: ElynavError) -> ElynavError:
        assert self._process is not None
        details = self._process.exit_details()
        stderr_tail = str(details.get("stderr_tail") or "")
        lowered = stderr_tail.lower()
        if self.permission_mode == "bypassPermissions" and ("root" in lowered or "sudo" in lowered):
            return BypassRefusedAsRoot(
                "the claude CLI refuses permission mode bypassPermissions when running as root. "
                "Run as a normal user, use permission mode acceptEdits, or, inside a throw-away "
                "sandbox only, set IS_SANDBOX=1 in the runner's environment.",
                details=details,
            )
        if isinstance(error, AgentTimeout):
            return CliStartFailed(
                f"the agent CLI did not answer within {self.start_timeout:g} s", details=details
            )
        message = f"the agent CLI exited during start-up (exit code {details.get('exit_code')})"
        if stderr_tail.strip():
            message += f": {stderr_tail.strip()[-500:]}"
        return CliStartFailed(message, details=details)

    # -- turns -----------------------------------------------------------------------------------

    def send(self, text: str | list[dict[str, Any]]) -> Turn:
        """Start a turn and return its ``Turn`` at once. ``AGENT_BUSY`` while another turn runs."""
        if self.busy:
            raise AgentBusy(
                f"agent {self.agent_name or 'default'} is already in a turn; await it or cancel it first"
            )
        if self.status == "closed":
            raise RunnerClosed("this runner was stopped; start() it again or make a new one")
        prompt_text = (
            text
            if isinstance(text, str)
            else " ".join(
                str(block.get("text", ""))
                for block in text
                if isinstance(block, dict) and block.get("type") == "text"
            )
        )
        turn = Turn(self, prompt_text)
        self._current_turn = turn
        turn.task = asyncio.get_running_loop().create_task(self._drive_turn(turn, text))
        for listener in list(self._turn_listeners):
            listener(turn)
        return turn

    def add_turn_listener(self, listener: Callable[[Turn], None]) -> None:
        """Call ``listener(turn)`` for every new turn (views subscribe here)."""
        self._turn_listeners.append(listener)

    def remove_turn_listener(self, listener: Callable[[Turn], None]) -> None:
        if listener in self._turn_listeners:
            self._turn_listeners.remove(listener)

    @property
    def current_turn(self) -> Turn | None:
        """The turn in flight, if any."""
        return self._current_turn if self.busy else None

    async def ask(self, text: str) -> TurnResult:
        """``await runner.ask(text)`` = ``await runner.send(text)``."""
        return await self.send(text)

    async def _drive_turn(self, turn: Turn, content: str | list[dict[str, Any]]) -> None:
        try:
            await self._run_turn(turn, content)
        except Exception as error:  # never leave a turn unsettled: its awaiters would wait forever
            self._finish_turn(
                turn, "failed", error=f"{type(error).__name__}: {error}", error_code="AGENT_PROCESS_ERROR"
            )

    async def _run_turn(self, turn: Turn, content: str | list[dict[str, Any]]) -> None:
        try:
            await self.start()
        except ElynavError as error:
            self._finish_turn(turn, "failed", error=str(error), error_code=error.code)
            return
        if turn.done:
            return
        assert self._process is not None
        process = self._process
        self.status = "busy"
        try:
            await self._write_prompt(turn, process, content)
        except CliExited as error:
            self._finish_turn(turn, "failed", error=str(error), error_code=error.code)
            return
        turn._written = True
        turn._start_total_cost = self._total_cost_usd
        self.last_activity = time.monotonic()
        turn_deadline = time.monotonic() + self.turn_timeout
        next_descendant_scan = time.monotonic() + _DESCENDANT_SCAN_INTERVAL  # tools trigger a scan at once
        while not turn.done:
            if turn._abort_outcome is not None:
                await asyncio.wait([turn._done], timeout=_WATCHDOG_TICK)
                continue
            now = time.monotonic()
            waiting_on_tools = bool(turn._open_tool_uses) or bool(self._pending_permissions)
            idle_bound = self.tool_idle_timeout if waiting_on_tools else self.idle_timeout
            if now >= turn_deadline:
                turn._request_abort("timeout", f"the turn took longer than {self.turn_timeout:g} s")
                continue
            if now - self.last_activity >= idle_bound:
                turn._request_abort("timeout", f"no output from the agent CLI for {idle_bound:g} s")
                continue
            stalled = self._stall_reason(now)
            if stalled:
                turn._request_abort("timeout", stalled)
                continue
            if waiting_on_tools or now >= next_descendant_scan:  # tools may start processes of their own
                await process.record_descendants_in_thread()
                next_descendant_scan = now + _DESCENDANT_SCAN_INTERVAL
            await asyncio.wait([turn._done], timeout=min(_WATCHDOG_TICK, max(0.0, turn_deadline - now)))

    async def _abort_turn(self, turn: Turn, outcome: Outcome, reason: str) -> None:
        """Interrupt (bounded), then the forced stop steps if the CLI does not end the turn."""
        try:
            await self._interrupt_or_stop(turn, outcome, reason)
        except Exception as error:  # the turn still settles, with what went wrong
            self._finish_turn(
                turn, outcome, error=f"{reason}; stopping failed: {type(error).__name__}: {error}"
            )

    async def _interrupt_or_stop(self, turn: Turn, outcome: Outcome, reason: str) -> None:
        process = self._process
        if turn.done:
            return
        if not turn._written or process is None or not process.is_running:
            self._finish_turn(turn, outcome, error=reason)
            return
        interrupt = asyncio.ensure_future(self._interrupt_request())
        interrupt.add_done_callback(_ignore_outcome)
        await asyncio.wait([turn._done], timeout=min(self.settle_timeout, self.interrupt_timeout))
        if turn.done:  # the CLI honoured the interrupt: the conversation goes on in the same process
            await process.record_descendants_in_thread()  # after the interrupt: it goes out first
            await process.end_tool_sessions()
            return
        self._finish_turn(
            turn,
            outcome,
            error=f"{reason}; the agent CLI did not end the turn within {self.settle_timeout:g} s and is being stopped",
        )
        self.status = "stopping"
        assert self._loop is not None
        self._late_turn_end = asyncio.Event()
        self._stopping = self._loop.create_task(self._stop_unresponsive(process, self._late_turn_end))

    async def _stop_unresponsive(self, process: CliProcess, late_turn_end: asyncio.Event) -> None:
        """The background stop of a CLI that did not end its turn when asked: bounded, no orphan."""
        try:
            remaining = max(0.0, self.interrupt_timeout - self.settle_timeout)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(late_turn_end.wait(), timeout=remaining)
            if late_turn_end.is_set() and process.is_running:  # it ended the turn after all: keep it
                await process.record_descendants_in_thread()
                await process.end_tool_sessions()
                self.status = "idle"
                return
            short = dataclasses.replace(
                self.stop_bounds,
                close_stdin=0.0,
                sigint=min(self.stop_bounds.sigint, 1.0),
                sigterm=min(self.stop_bounds.sigterm, 1.0),
            )
            await process.stop(short)
        finally:
            self._late_turn_end = None
            if self.status == "stopping":
                self.status = "stopped"

    def _finish_turn(
        self,
        turn: Turn,
        outcome: Outcome,
        *,
        ended: TurnEnded | None = None,
        error: str = "",
        error_code: str = "",
    ) -> None:
        if turn.done:
            return
        for request_id in [request_id for request_id in self._pending_permissions]:
            self._close_permission(request_id, "withdrawn")
        total_cost = ended.total_cost_usd if ended is not None else self._total_cost_usd
        stderr_tail = ""
        if outcome == "failed" and self._process is not None:
            stderr_tail = self._process.stderr.text(max_chars=4000)
            if stderr_tail.strip() and stderr_tail.strip() not in error:
                error = (
                    f"{error} (stderr: {stderr_tail.strip()[-300:]})" if error else stderr_tail.strip()[-300:]
                )
        if outcome == "timeout" and not error_code:
            error_code = "AGENT_TIMEOUT"
        stored_events = turn.events
        result = TurnResult(
            outcome=outcome,
            text=main_text(stored_events) or (ended.result if ended is not None else ""),
            events=tuple(stored_events),
            session_id=turn.session_id or self.session_id,
            agent_name=self.agent_name or "",
            prompt=turn.prompt,
            cost_usd=max(0.0, total_cost - turn._start_total_cost),
            total_cost_usd=total_cost,
            usage=dict(ended.usage) if ended is not None else {},
            duration_s=time.monotonic() - turn.started_at,
            cli_duration_ms=ended.duration_ms if ended is not None else 0,
            num_turns=ended.num_turns if ended is not None else 0,
            terminal_reason=ended.terminal_reason if ended is not None else "",
            error=error,
            error_code=error_code,
            stderr_tail=stderr_tail,
            used_standin=self.uses_standin,
            cli=self.cli_name,
            cli_version=self.last_started.cli_version if self.last_started is not None else "",
        )
        self.history.append(result)
        if self.history_limit is not None and len(self.history) > self.history_limit:
            del self.history[: len(self.history) - self.history_limit]
        if self._current_turn is turn:
            self._current_turn = None
        if self.status == "busy":
            self.status = "idle"
        self.last_activity = time.monotonic()
        turn._finish(result)

    # -- stdout routing (called by the supervisor, synchronously, for each line) ------------------

    def _handle_line(self, line: bytes) -> None:
        self.last_activity = time.monotonic()
        for item in self._decoder.decode_line(line):
            if isinstance(item, AgentEvent) and not isinstance(item, PermissionRequest):
                self._route_event(item)  # the usual case first
            elif isinstance(item, ControlResponse):
                future = self._pending_controls.pop(item.request_id, None)
                if future is not None and not future.done():
                    future.set_result(item)
            elif isinstance(item, ControlCancel):
                self._close_permission(item.request_id, "withdrawn")
            elif isinstance(item, PermissionRequest):
                self._open_permission(item)
            elif isinstance(item, ControlRequest):
                self._write_soon(
                    self._encode_control_error(item.request_id, f"Unsupported by elynav_nb: {item.subtype}")
                )

    def _route_event(self, event: AgentEvent) -> None:
        turn = self._current_turn
        if type(event) is TextDelta and turn is not None and turn.result is None:
            turn._push(event)  # the usual event, on the shortest path
            return
        if isinstance(event, AgentStarted):
            self.last_started = event
            if event.session_id:
                self.session_id = event.session_id
        if turn is None or turn.done:
            if isinstance(event, TurnEnded) and self._late_turn_end is not None:
                self._late_turn_end.set()  # a CLI being stopped ended its cancelled turn after all
            if len(self.stray_events) < 1000:
                self.stray_events.append(event)
            return
        turn._push(event)
        if isinstance(event, TurnEnded):
            self._total_cost_usd = event.total_cost_usd
            if turn._abort_outcome is not None:
                outcome: Outcome = turn._abort_outcome
                error = turn._abort_reason
            else:
                outcome = "error" if event.is_error else "completed"
                error = "; ".join(event.errors) or (event.result if event.is_error else "")
            self._finish_turn(turn, outcome, ended=event, error=error)

    def _handle_oversized_line(self, size: int) -> None:
        self._route_event(
            AgentError(
                f"a stdout line of more than {size} bytes exceeded the {self.max_line_bytes}-byte cap and was skipped",
                code="LINE_TOO_LONG",
            )
        )

    def _handle_exit(self, returncode: int) -> None:
        for future in self._pending_controls.values():
            if not future.done():
                future.set_exception(CliExited("the agent CLI exited", details={"exit_code": returncode}))
        self._pending_controls.clear()
        turn = self._current_turn
        if (
            turn is not None and not turn.done and turn._written
        ):  # a turn not sent yet starts a new CLI itself
            if turn._abort_outcome is not None and turn._cancel_task is not None:
                pass  # the abort sequence is stopping the process and will settle the turn
            else:
                self._finish_turn(
                    turn,
                    "failed",
                    error=f"the agent CLI exited with code {returncode} during the turn",
                    error_code="CLI_EXITED",
                )
        if self.status != "closed":
            self.status = "exited"

    # -- the wire: claude's stream-json control protocol (the codex app-server runner overrides these) ----

    async def _write_prompt(
        self, turn: Turn, process: CliProcess, content: str | list[dict[str, Any]]
    ) -> None:
        """Send the turn's prompt to the running CLI."""
        await process.write(encode_user_message(content, session_id=self.session_id))

    def _interrupt_request(self) -> Awaitable[Any]:
        """Ask the CLI to end the turn in flight (answered when it took the request)."""
        return self._control("interrupt", timeout=self.interrupt_timeout)

    def _encode_control(self, request_id: str, subtype: str, fields: dict[str, Any]) -> bytes:
        return encode_control_request(request_id, subtype, **fields)

    def _encode_control_error(self, request_id: str, message: str) -> bytes:
        return encode_control_error(request_id, message)

    def _encode_permission_answer(
        self, request: PermissionRequest, allowed: bool, message: str, updated_input: dict[str, Any] | None
    ) -> bytes:
        if allowed:
            response = {"behavior": "allow", "updatedInput": updated_input or dict(request.input)}
            return encode_control_success(request.request_id, response)
        return encode_control_success(request.request_id, {"behavior": "deny", "message": message})

    def _stall_reason(self, now: float) -> str:
        """Why the turn in flight should end now although the CLI still writes ("" when it should not)."""
        return ""

    # -- control protocol -------------------------------------------------------------------------------

    async def _control(self, subtype: str, *, timeout: float, **fields: Any) -> ControlResponse:
        """Send a control request and wait for its response, racing the process's exit."""
        process = self._process
        if process is None or not process.is_running:
            raise CliExited("the agent CLI is not running")
        self._control_counter += 1
        request_id = f"req_{self._control_counter}_{uuid.uuid4().hex[:8]}"
        future: asyncio.Future[ControlResponse] = asyncio.get_running_loop().create_future()
        self._pending_controls[request_id] = future
        await process.write(self._encode_control(request_id, subtype, fields))
        exit_waiter: asyncio.Future[Any] = asyncio.ensure_future(process.exited.wait())
        try:
            finished, _ = await asyncio.wait(
                [future, exit_waiter], timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            exit_waiter.cancel()
        if future in finished:
            return future.result()
        self._pending_controls.pop(request_id, None)
        if process.exited.is_set():
            raise CliExited(
                f"the agent CLI exited before answering {subtype}", details=process.exit_details()
            )
        raise AgentTimeout(f"the agent CLI did not answer {subtype} within {timeout:g} s")

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode of the running conversation."""
        await self.start()
        await self._control("set_permission_mode", timeout=self.start_timeout, mode=mode)
        self.permission_mode = mode

    async def set_model(self, model: str | None) -> None:
        """Change the model from the next turn on."""
        await self.start()
        await self._control("set_model", timeout=self.start_timeout, model=model)
        self.model = model

    async def mcp_status(self) -> list[dict[str, Any]]:
        """The MCP servers of the running CLI and their status."""
        await self.start()
        response = await self._control("mcp_status", timeout=self.start_timeout)
        servers = response.response.get("mcpServers") or []
        return [server for server in servers if isinstance(server, dict)]

    def _write_soon(self, data: bytes) -> None:
        process = self._process
        if process is None or not process.is_running:
            return
        task = asyncio.get_running_loop().create_task(self._write_quietly(process, data))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @staticmethod
    async def _write_quietly(process: CliProcess, data: bytes) -> None:
        try:
            await process.write(data)
        except CliExited:
            pass

    # -- permission prompts -------------------------------------------------------------------------------

    def _open_permission(self, request: PermissionRequest) -> None:
        assert self._loop is not None
        attached = dataclasses.replace(request, responder=self._answer_permission)
        timer = self._loop.call_later(self.permission_timeout, self._expire_permission, request.request_id)
        self._pending_permissions[request.request_id] = (attached, timer)
        self._route_event(attached)
        if self.permission_handler is not None:
            task = self._loop.create_task(self._ask_permission_handler(attached))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _ask_permission_handler(self, request: PermissionRequest) -> None:
        assert self.permission_handler is not None
        decision = self.permission_handler(request)
        if inspect.isawaitable(decision):
            decision = await decision
        if decision is True:
            request.allow()
        elif decision is False:
            request.deny("Denied by the permission handler.")

    def _answer_permission(
        self, request: PermissionRequest, allowed: bool, message: str, updated_input: dict[str, Any] | None
    ) -> None:
        loop = self._loop
        if loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not loop:
            loop.call_soon_threadsafe(self._answer_permission, request, allowed, message, updated_input)
            return
        if request.request_id not in self._pending_permissions:
            return  # already answered, withdrawn or expired
        self._write_soon(self._encode_permission_answer(request, allowed, message, updated_input))
        self._close_permission(request.request_id, "allowed" if allowed else "denied")

    def _expire_permission(self, request_id: str) -> None:
        if request_id not in self._pending_permissions:
            return
        request = self._pending_permissions[request_id][0]
        message = f"No answer within {self.permission_timeout:g} s: denied."
        self._write_soon(self._encode_permission_answer(request, False, message, None))
        self._close_permission(request_id, "expired")

    def _close_permission(self, request_id: str, decision: str) -> None:
        entry = self._pending_permissions.pop(request_id, None)
        if entry is None:
            return
        entry[1].cancel()
        self._route_event(PermissionWithdrawn(request_id=request_id, decision=decision))

    @property
    def pending_permissions(self) -> list[PermissionRequest]:
        return [entry[0] for entry in self._pending_permissions.values()]

    # -- stopping -------------------------------------------------------------------------------------

    async def stop(self) -> None:
        """Cancel the turn in flight, stop the CLI in bounded steps, leave no process behind. Idempotent."""
        turn = self._current_turn
        if turn is not None and not turn.done:
            turn._request_abort("cancelled", "the runner was stopped")
            await asyncio.shield(turn._done)
        stopping = self._stopping
        if stopping is not None and not stopping.done():
            await asyncio.shield(stopping)
        if self._start_lock is not None:
            async with (
                self._start_lock
            ):  # a start under way ends first (bounded), so its process is stopped too
                await self._stop_process()
        else:
            await self._stop_process()
        for task in list(self._background):
            task.cancel()
        self.status = "closed"

    async def _stop_process(self) -> None:
        if self._process is not None:
            await self._process.stop(self.stop_bounds)

    async def restart(self) -> AgentRunner:
        """Stop the process and start a new one on the same conversation (``--resume``)."""
        await self.stop()
        self.status = "new"
        return await self.start()

    async def __aenter__(self) -> AgentRunner:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- blocking API (scripts and cells that want it) -------------------------------------------------------

    def _sync_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop if self._loop is not None else private_loop()

    def start_sync(self) -> AgentRunner:
        """Blocking ``start()`` (the runner then lives on the private loop)."""
        return run_sync(self.start(), owner_loop=self._sync_loop())

    def send_sync(self, text: str) -> TurnResult:
        """Blocking turn: start if needed, send, wait for the result."""

        async def send_and_wait() -> TurnResult:
            return await self.send(text)

        return run_sync(send_and_wait(), owner_loop=self._sync_loop())

    def stop_sync(self) -> None:
        """Blocking ``stop()``."""
        if self._loop is None:
            return
        run_sync(self.stop(), owner_loop=self._loop)

    # -- display -------------------------------------------------------------------------------------

    def to_frame(self) -> pandas.DataFrame:
        """One row per finished turn of this runner."""
        import pandas

        rows = [
            {
                "agent": result.agent_name,
                "session_id": result.session_id,
                "outcome": result.outcome,
                "prompt": result.prompt,
                "text": result.text,
                "events": len(result.events),
                "tool_calls": len(result.tool_uses),
                "cost_usd": result.cost_usd,
                "duration_s": result.duration_s,
                "error": result.error,
            }
            for result in self.history
        ]
        columns = [
            "agent",
            "session_id",
            "outcome",
            "prompt",
            "text",
            "events",
            "tool_calls",
            "cost_usd",
            "duration_s",
            "error",
        ]
        return pandas.DataFrame(rows, columns=columns)

    def __repr__(self) -> str:
        cli = self.cli.label if self.cli is not None else f"{self.cli_name} (not located yet)"
        return (
            f"<AgentRunner agent={self.agent_name!r} status={self.status} cli={cli} "
            f"session={self.session_id} turns={len(self.history)}>"
        )

    def _repr_html_(self) -> str:
        cli = self.cli.label if self.cli is not None else f"{self.cli_name} (not located yet)"
        return (
            f"<div><b>AgentRunner</b> {html.escape(self.agent_name or 'default')} · {html.escape(self.status)} · "
            f"CLI {html.escape(cli)} · session {html.escape(self.session_id)} · {len(self.history)} turns</div>"
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return rich_bundle(self, include, exclude)


def _ignore_outcome(future: asyncio.Future[Any]) -> None:
    """Retrieve a background future's exception so asyncio does not log it (the turn settles on its own)."""
    if not future.cancelled():
        future.exception()
