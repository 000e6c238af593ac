"""``Driver``: what both conversation drivers share — the loop a runner belongs to, the turn in flight, the
background stop, and the one place a turn's ``TurnResult`` is made.

Where it sits: under ``AgentRunner`` (the facade), above ``CliProcess``. ``PersistentDriver`` (one
process for the conversation: claude stream-json, codex app-server, ACP agents) and ``PerTurnDriver``
(one process per turn: gemini, codex exec) subclass it. A driver is given the runner's
``RunnerContext`` (its frozen options, its plan, its conversation, its hooks, its kernel tools) and a
launcher of its protocol; it never sees the runner. It writes the conversation (``status``,
``session_id``, ``history``, ``last_started``, ``cli``, ``command_line``); the runner calls the driver's
public methods only, and reads the conversation.

How data flows::

    runner.send -> driver.drive_turn(turn, content) (a task) -> start -> run_turn (the subclass)
      -> events -> turn.push -> ... -> finish_turn(turn, outcome, ended) -> TurnResult
         -> conversation.history, turn.finish(result)
    turn.cancel() -> runner.abort_turn -> driver.abort_turn -> interrupt_or_stop (the subclass)

Logging: a turn's end goes to the ``elynav_nb.agents.driver`` logger (its name is the README's, wherever
this module lives).
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from elynav_nb._logging import redact
from elynav_nb.agents.context import RunnerContext
from elynav_nb.agents.conversation import RunnerStatus
from elynav_nb.agents.drivers.process import CliProcess
from elynav_nb.agents.events import AgentError, AgentEvent, TurnEnded
from elynav_nb.agents.limits import limit_of_ended
from elynav_nb.agents.output_schema import OutputSchema, settle_structured
from elynav_nb.agents.protocols.adapter_settings import kernel_tools_server
from elynav_nb.agents.protocols.launch import KernelToolsServer
from elynav_nb.agents.protocols.launcher import Launcher
from elynav_nb.agents.protocols.per_turn import PerTurnAdapter, merged_limitations
from elynav_nb.agents.results import Outcome, TurnResult, main_text
from elynav_nb.agents.turn import Turn
from elynav_nb.errors import (
    AgentProcessError,
    AgentTimeout,
    ElynavError,
    LoopEnded,
    LoopMismatch,
    OutputInvalid,
)

if TYPE_CHECKING:
    from elynav_nb.agents.tools.loopback_server import LoopbackMcpServer

__all__ = ["WATCHDOG_TICK", "DESCENDANT_SCAN_INTERVAL", "Driver", "ignore_outcome"]

WATCHDOG_TICK = 0.25
DESCENDANT_SCAN_INTERVAL = 2.0
_STRUCTURED_RETRIES_EXHAUSTED = "error_max_structured_output_retries"  # claude's result subtype

logger = logging.getLogger("elynav_nb.agents.driver")  # the README's name, wherever this module lives


class Driver(ABC):
    """The part of a conversation driver that does not depend on the process model."""

    def __init__(self, context: RunnerContext, launcher: Launcher) -> None:
        self.context = context
        self.options = context.options
        self.plan = context.plan
        self.conversation = context.conversation
        self.hooks = context.hooks
        self.tools = context.tools
        self.launcher: Launcher = launcher
        self.tool_server: LoopbackMcpServer | None = None  # loopback protocols: serving from start to stop
        self.process: CliProcess | None = None
        self.current_turn: Turn | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.start_lock: asyncio.Lock | None = None
        self.stopping: asyncio.Task[None] | None = None  # a background stop (a CLI that ignored a cancel)
        self.background: set[asyncio.Task[Any]] = set()
        self.total_cost_usd = 0.0
        self.cli_version = ""
        self._loop_guard: asyncio.Task[None] | None = None
        self._stopped: asyncio.Event | None = None

    # -- state --------------------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        return self.process is not None and self.process.is_running

    @property
    def busy(self) -> bool:
        return self.current_turn is not None and not self.current_turn.done

    @property
    def pending_permissions(self) -> list[Any]:
        return []

    @property
    def adapter(self) -> PerTurnAdapter | None:
        """The adapter that wrote the runner's CLI home (codex, gemini; None before the start)."""
        return None

    @property
    def limitations(self) -> tuple[str, ...]:
        """What the CLI cannot honour of the runner's settings and the agent definition.

        The protocol's planned limitations (its launcher's), then the registry's notes of it, and the
        notes of what this runner asked for that the protocol handles its own way (hooks, kernel
        tools, a permission handler where nobody is asked).
        """
        protocol = self.plan.protocol
        adapter = self.adapter  # what the last start planned, else what a start would plan
        planned = (
            adapter.limitations if adapter is not None else self.launcher.planned_limitations(self.context)
        )
        notes = [*planned, *protocol.notes]
        if self.options.permissions.handler is not None and not self.plan.capabilities.permission_prompts:
            notes.append("the permission handler is never called: a process per turn has no prompts")
        if self.hooks:
            notes.append(protocol.hook_notes)
        if self.tools is not None:
            notes.append(protocol.kernel_tools_note)
        return merged_limitations(notes)

    def kernel_tools(self) -> KernelToolsServer | None:
        """How the CLI reaches the runner's loopback tool server (None: no tools, or not serving)."""
        return kernel_tools_server(self.tool_server, self.tools.tool_set if self.tools is not None else None)

    # -- starting -----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind to the running loop, wait for a background stop, then ``prepare`` once (locked)."""
        loop = asyncio.get_running_loop()
        if self.loop is not None and self.loop is not loop:
            if self.loop.is_closed():
                raise LoopEnded(
                    "this runner belongs to an event loop that has ended (asyncio.run returned): make a "
                    "new runner (resume=its session_id goes on with the conversation)"
                )
            raise LoopMismatch("this runner belongs to another event loop; use it from that loop")
        self.loop = loop
        self._guard_the_loop(loop)
        stopping = self.stopping
        if stopping is not None and not stopping.done():
            await asyncio.shield(stopping)  # a CLI being stopped (bounded)
        if self.start_lock is None:
            self.start_lock = asyncio.Lock()
        async with self.start_lock:
            await self.serve_kernel_tools()
            try:
                await self.prepare()
            except BaseException:
                if not self.is_running:
                    await self.stop_kernel_tools()  # a start that failed leaves no port open
                raise

    async def serve_kernel_tools(self) -> None:
        """Start the runner's loopback tool server (``tools=`` on a ``loopback`` protocol) on this loop, once per start.

        A new server (a new port and secret) means new CLI files: ``replan`` has them written again.
        A ``pipe`` protocol (claude) gets its tools on its own pipe and needs no server.
        """
        if self.tools is None or self.plan.protocol.kernel_tools != "loopback":
            return
        if self.tool_server is not None and self.tool_server.is_serving:
            return
        from elynav_nb.agents.tools.loopback_server import LoopbackMcpServer

        server = LoopbackMcpServer(self.tools)
        await server.start()
        self.tool_server = server
        self.replan()

    async def stop_kernel_tools(self) -> None:
        """Close the tool server: its port, every connection, any call in flight (idempotent)."""
        server = self.tool_server
        if server is not None:
            await server.stop()

    def replan(self) -> None:
        """Have the CLI's files written again at the next start (a driver that writes them once says how)."""

    def _guard_the_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """A task that stops the CLI when the loop ends with the runner still started.

        ``asyncio.run`` cancels the tasks left when its coroutine returns and runs them to their end:
        a script that forgot ``await runner.stop()`` gets its CLI stopped there, on a live loop, instead
        of a subprocess transport closed by the garbage collector on a closed loop ("Event loop is
        closed" noise). ``stop()`` ends the guard quietly.
        """
        if self._loop_guard is not None and not self._loop_guard.done():
            return
        self._stopped = asyncio.Event()
        self._loop_guard = loop.create_task(self._stop_when_the_loop_ends(self._stopped))

    async def _stop_when_the_loop_ends(self, stopped: asyncio.Event) -> None:
        try:
            await stopped.wait()
        except asyncio.CancelledError:
            try:
                for task in list(self.background):
                    task.cancel()
                try:
                    await self.stop_process()
                finally:
                    await self.stop_kernel_tools()
                    await self.close_services()
            finally:
                self.conversation.status = RunnerStatus.CLOSED
            raise

    @abstractmethod
    async def prepare(self) -> None:
        """Whatever the first turn needs (idempotent): spawn and open, or write the CLI's home."""

    # -- turns --------------------------------------------------------------------------------------

    async def drive_turn(self, turn: Turn, content: str | list[dict[str, Any]]) -> None:
        try:
            try:
                await self.before_start(turn)
                await self.start()
            except ElynavError as error:
                self.finish_turn(turn, "failed", error=str(error), error_code=error.code)
                return
            if turn.done:
                return
            await self.run_turn(turn, content)
        except Exception as error:  # never leave a turn unsettled: its awaiters would wait forever
            self.finish_turn(
                turn, "failed", error=f"{type(error).__name__}: {error}", error_code=AgentProcessError.code
            )

    async def before_start(self, turn: Turn) -> None:
        """What a turn needs of the process before it starts (nothing by default; claude: its schema)."""

    @abstractmethod
    async def run_turn(self, turn: Turn, content: str | list[dict[str, Any]]) -> None:
        """Send the prompt and watch the turn until it is settled (the driver's watchdog)."""

    async def abort_turn(self, turn: Turn, outcome: Outcome, reason: str) -> None:
        """Interrupt (bounded), then the forced stop steps if the CLI does not end the turn."""
        try:
            await self.interrupt_or_stop(turn, outcome, reason)
        except Exception as error:  # the turn still settles, with what went wrong
            self.finish_turn(
                turn, outcome, error=f"{reason}; stopping failed: {type(error).__name__}: {error}"
            )

    @abstractmethod
    async def interrupt_or_stop(self, turn: Turn, outcome: Outcome, reason: str) -> None: ...

    def bound_reached(
        self, now: float, turn_deadline: float, last_progress: float, waiting_on_tools: bool
    ) -> str:
        """Why the watchdog ends the turn now: its whole bound or its silence bound ("" while neither)."""
        bounds = self.options.bounds
        if now >= turn_deadline:
            return f"the turn took longer than {bounds.turn:g} s"
        idle_bound = bounds.tool_idle if waiting_on_tools else bounds.idle
        if now - last_progress >= idle_bound:
            return f"no output from {self.plan.speaker} for {idle_bound:g} s"
        return ""

    def oversized_line_error(self, size: int) -> AgentError:
        return AgentError(
            f"a stdout line of more than {size} bytes exceeded the {self.options.process.max_line_bytes}-byte cap and was skipped",
            code="LINE_TOO_LONG",
        )

    def report(self, event: AgentEvent) -> None:
        """An event of ours (a hook's ``HookDenied``, ``HookFailed``) into the turn in flight, else kept as a stray event."""
        turn = self.current_turn
        if turn is not None and not turn.done:
            turn.push(event)
        else:
            self.conversation.keep_stray(event)

    def before_finish(self, turn: Turn, outcome: Outcome) -> None:
        """What a driver does as a turn settles, before its result is made (nothing by default)."""

    def finish_turn(
        self,
        turn: Turn,
        outcome: Outcome,
        *,
        ended: TurnEnded | None = None,
        error: str = "",
        error_code: str = "",
    ) -> None:
        """Settle ``turn``: its ``TurnResult`` (in the runner's history), then ``turn.finish``."""
        if turn.done:
            return
        self.before_finish(turn, outcome)
        conversation = self.conversation
        total_cost = ended.total_cost_usd if ended is not None else self.total_cost_usd
        stderr_tail = ""
        if outcome == "failed" and self.process is not None:
            stderr_tail = self.process.stderr.text(max_chars=4000)
            if stderr_tail.strip() and stderr_tail.strip() not in error:
                error = (
                    f"{error} (stderr: {stderr_tail.strip()[-300:]})" if error else stderr_tail.strip()[-300:]
                )
        if not error_code and outcome == turn.abort_outcome:
            error_code = turn.abort_error_code  # a bound of ours (limit) says which
        if outcome == "timeout" and not error_code:
            error_code = AgentTimeout.code
        stored_events = turn.events
        text = main_text(stored_events) or (ended.result if ended is not None else "")
        data: Any = None
        if turn.output_schema is not None and outcome == "error" and ended is not None:
            if ended.subtype == _STRUCTURED_RETRIES_EXHAUSTED:  # claude gave up on its own schema check
                outcome, error_code = "failed", OutputInvalid.code
        if turn.output_schema is not None and outcome == "completed":
            try:
                data = self.structured_data(turn.output_schema, ended, text)
            except OutputInvalid as invalid:
                outcome, error, error_code = "failed", str(invalid), invalid.code
        result = TurnResult(
            outcome=outcome,
            text=text,
            events=tuple(stored_events),
            event_times=tuple(turn.event_times),
            session_id=turn.session_id or conversation.session_id,
            agent_name=self.plan.agent_name or "",
            prompt=turn.prompt,
            cost_usd=max(0.0, total_cost - turn.cost_baseline),
            total_cost_usd=total_cost,
            usage=dict(ended.usage) if ended is not None else {},
            duration_s=time.monotonic() - turn.started_at,
            cli_duration_ms=ended.duration_ms if ended is not None else 0,
            num_turns=ended.num_turns if ended is not None else 0,
            terminal_reason=ended.terminal_reason if ended is not None else "",
            error=error,
            error_code=error_code,
            stderr_tail=stderr_tail,
            used_standin=conversation.uses_standin,
            cli=self.plan.cli,
            cli_version=conversation.last_started.cli_version
            if conversation.last_started is not None
            else "",
            data=data,
            output_schema=turn.output_schema,
        )
        conversation.record(result)
        level = logging.INFO if outcome in ("failed", "timeout") else logging.DEBUG
        if logger.isEnabledFor(level):
            logger.log(
                level, "%s turn ended: %s", self.plan.agent_name or "default", redact(result.summary_line())
            )
        if self.current_turn is turn:
            self.current_turn = None
        if conversation.status == RunnerStatus.BUSY:
            conversation.status = RunnerStatus.IDLE
        conversation.touch()
        turn.finish(result)

    def structured_data(self, schema: OutputSchema, ended: TurnEnded | None, text: str) -> Any:
        """The validated data of a completed structured turn (``OUTPUT_INVALID`` otherwise).

        claude gives the value itself (``structured_output`` of its ``result`` line); the other
        CLIs give text: their last message (``TurnEnded.result``), else the turn's answer.
        """
        if ended is not None and ended.structured_output is not None:
            return settle_structured(schema, ended.structured_output, "")
        if self.plan.capabilities.output_schema == "value":
            raise OutputInvalid(
                f"{self.plan.cli} ended the turn without a structured_output "
                "(the StructuredOutput tool was not called)"
            )
        answer = ended.result if ended is not None and ended.result.strip() else text
        return settle_structured(schema, None, answer)

    def outcome_of(self, turn: Turn, ended: TurnEnded) -> tuple[Outcome, str, str]:
        """A terminal line's outcome, error and error code, unless a cancel or a bound decided first.

        The CLI's own "limit reached" ends (claude ``error_max_turns``, ``error_max_budget_usd``)
        are outcome ``limit``.
        """
        if turn.abort_outcome is not None:
            return turn.abort_outcome, turn.abort_reason, turn.abort_error_code
        limit = limit_of_ended(ended)
        if limit is not None:
            return "limit", limit[1], limit[0]
        outcome: Outcome = "error" if ended.is_error else "completed"
        return outcome, "; ".join(ended.errors) or (ended.result if ended.is_error else ""), ended.error_code

    # -- settings -----------------------------------------------------------------------------------

    @abstractmethod
    async def set_model(self, model: str | None) -> None: ...

    @abstractmethod
    async def set_permission_mode(self, mode: str) -> None: ...

    @abstractmethod
    async def mcp_status(self) -> list[dict[str, Any]]: ...

    # -- stopping -----------------------------------------------------------------------------------

    async def stop(self) -> None:
        """Cancel the turn in flight, stop the CLI in bounded steps, leave no process behind."""
        turn = self.current_turn
        if turn is not None and not turn.done:
            turn.request_abort("cancelled", "the runner was stopped")
            await turn.settled()
        stopping = self.stopping
        if stopping is not None and not stopping.done():
            await asyncio.shield(stopping)
        try:
            if self.start_lock is not None:
                async with (
                    self.start_lock
                ):  # a start under way ends first (bounded), so its process is stopped too
                    await self.stop_process()
            else:
                await self.stop_process()
        finally:
            await self.stop_kernel_tools()  # after the CLI: it may still be calling a tool as it stops
        for task in list(self.background):
            task.cancel()
        await self.close_services()
        self.conversation.status = RunnerStatus.CLOSED
        if self._stopped is not None:
            self._stopped.set()  # the loop guard ends: nothing left to stop

    async def close_services(self) -> None:
        """Close what the driver serves beside the process (a hook socket), at ``stop`` (nothing by default)."""

    async def stop_process(self) -> None:
        if self.process is not None:
            await self.process.stop(self.options.process.stop_bounds)

    def run_in_background(self, coroutine: Any) -> None:
        """A task the driver keeps until it ends (cancelled by ``stop``)."""
        assert self.loop is not None
        task = self.loop.create_task(coroutine)
        self.background.add(task)
        task.add_done_callback(self.background.discard)


def ignore_outcome(future: asyncio.Future[Any]) -> None:
    """Retrieve a background future's exception so asyncio does not log it (the turn settles on its own)."""
    if not future.cancelled():
        future.exception()
