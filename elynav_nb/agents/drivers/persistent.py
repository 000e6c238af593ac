"""``PersistentDriver``: one CLI process for the whole conversation, spoken to through a wire.

Where it sits: the driver of ``AgentRunner`` for every protocol with one process per conversation
(claude stream-json, codex app-server, ACP agents: the plan's ``persistent`` driver). It owns the
``CliProcess`` (I/O), feeds its stdout lines to the wire's decoder, routes control answers to their
futures, surfaces permission prompts, and hands conversation events to the turn in flight. The
protocol itself (what to write, how to read it) is the wire's (``protocols/<cli>/wire.py``); the launch
step (locate, files, command) is the protocol's launcher (``launchers.PersistentLauncher``, built by
the registry). Neither knows which CLI it is.

How data flows::

    prepare: launcher.locate -> launcher.launch(request) -> spawn -> wire.open(self) (bounded by start_timeout)
    turn: wire.send_prompt -> stdout lines -> wire.decode_line -> events -> turn.push
      -> TurnEnded -> finish_turn -> TurnResult; the process stays for the next turn
    a turn whose output schema is not the process's, where the schema is a flag of the process
      (``schema_per_process``: claude's ``--json-schema``): before_start stops it, and the turn starts a
      new one on the same session (``--resume``, or ``--session-id`` while the session has no turn
      yet); codex and ACP take a schema per turn

Bounds: ``turn.cancel()`` (and a turn, inactivity or protocol timeout) asks the wire to interrupt and
waits ``settle_timeout`` for the end of the turn: a CLI that honours it keeps the conversation. One
that does not gets its turn settled at once (``cancelled`` / ``timeout``) while a background stop runs
(status ``stopping``): it still waits for a late end of turn until ``interrupt_timeout``, then stops
the process in short forced steps (SIGINT, SIGTERM, SIGKILL of the tree). The next turn waits for
that stop and restarts the CLI on the same conversation. Unanswered permission prompts are denied
after ``permission_timeout``; a CLI that dies mid-turn gives ``failed`` with its stderr tail.

Logging: every line read from the CLI (``<``) and written to it (``>``) goes to
``elynav_nb.agents.wire`` at DEBUG, redacted by the process's ``redactor``; the check is one
``isEnabledFor`` per line, so the hot path stays cheap when DEBUG is off.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import time
import uuid
from collections.abc import Awaitable, Sequence
from typing import Any

from elynav_nb._logging import WIRE_LOGGER_NAME
from elynav_nb.agents.context import RunnerContext
from elynav_nb.agents.conversation import RunnerStatus
from elynav_nb.agents.drivers.base import DESCENDANT_SCAN_INTERVAL, WATCHDOG_TICK, Driver, ignore_outcome
from elynav_nb.agents.drivers.process import CliProcess
from elynav_nb.agents.drivers.reaper import register_process
from elynav_nb.agents.events import (
    AgentEvent,
    AgentStarted,
    ControlCancel,
    ControlRequest,
    ControlResponse,
    PermissionAnswer,
    PermissionRequest,
    PermissionWithdrawn,
    TextDelta,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.output_schema import OutputSchema
from elynav_nb.agents.protocols.launcher import Launch, LaunchRequest, PersistentLauncher
from elynav_nb.agents.protocols.per_turn import PerTurnAdapter
from elynav_nb.agents.protocols.wire import PersistentWire, TurnSink
from elynav_nb.agents.results import Outcome
from elynav_nb.agents.turn import Turn
from elynav_nb.errors import AgentBusy, AgentTimeout, CliExited, ElynavError

RELEASE_WAIT_SECONDS = 10.0
"""How long ``stop()`` waits for the wire's end-of-turn work (ACP terminals: a scan, SIGTERM, SIGKILL)."""

__all__ = ["PersistentDriver"]

wire_logger = logging.getLogger(WIRE_LOGGER_NAME)
logger = logging.getLogger(__name__)
PERMISSION_HANDLER = "the permission handler"  # who answered, in PermissionWithdrawn.by


class PersistentDriver(Driver):
    """A conversation in one persistent process (see the module docstring)."""

    def __init__(self, context: RunnerContext, launcher: PersistentLauncher) -> None:
        super().__init__(context, launcher)
        self.launcher: PersistentLauncher = launcher
        self.wire: PersistentWire | None = None
        self._pending_controls: dict[str, asyncio.Future[ControlResponse]] = {}
        self._pending_permissions: dict[str, tuple[PermissionRequest, asyncio.TimerHandle]] = {}
        self._served_requests: dict[str, asyncio.Task[None]] = {}
        self._request_counter = 0
        self._late_turn_end: asyncio.Event | None = None
        self._releases: set[asyncio.Future[Any]] = set()
        self._conversation_has_turns = (
            context.conversation.resume_next_start
        )  # resume=: it holds turns already
        self._process_limits = context.options.turn.limits  # the bounds the next process starts with
        self._process_schema: OutputSchema | None = None  # the schema it starts with (schema_per_process)

    @property
    def adapter(self) -> PerTurnAdapter | None:
        return self.launcher.adapter

    # -- starting -----------------------------------------------------------------------------------

    async def prepare(self) -> None:
        if self.is_running:
            return
        conversation = self.conversation
        conversation.status = RunnerStatus.STARTING
        try:
            conversation.cli = await asyncio.to_thread(self.launcher.locate, self.context)
            request = LaunchRequest(self._process_limits, self._process_schema, self.kernel_tools())
            launch = await self.launcher.launch(self.context, request, conversation.cli)
        except ElynavError:
            conversation.status = RunnerStatus.STOPPED
            raise
        conversation.command_line = list(launch.argv)
        self.cli_version = launch.version or self.cli_version
        self.wire = launch.wire
        self.total_cost_usd = 0.0
        process = await self._spawn(launch.argv, launch)
        try:
            await launch.wire.open(self)
        except ElynavError as error:
            await process.stop(self.options.process.stop_bounds)
            conversation.status = RunnerStatus.STOPPED
            raise launch.wire.describe_start_failure(error, process.exit_details()) from error
        conversation.resume_next_start = True  # a later restart continues this conversation
        conversation.resume_asked = False
        conversation.status = RunnerStatus.IDLE
        conversation.touch()

    async def before_start(self, turn: Turn) -> None:
        """A turn whose output schema is not the running process's restarts it (``--resume``), where the
        schema is a flag of the process (claude).

        ``--json-schema`` is a flag of the process; the restart keeps the conversation (same session,
        ``resume_next_start``). A turn with the process's own schema (or none for none) costs nothing.
        A process started here carries the turn's bounds (``--max-turns``, ``--max-budget-usd``).
        """
        await self._restart_for_schema(turn)
        if not self.is_running:
            self._process_limits = turn.limits  # a new process carries this turn's bounds

    async def _restart_for_schema(self, turn: Turn) -> None:
        if not self.launcher.schema_per_process:
            return
        wanted = turn.output_schema
        running = self._process_schema
        if self.is_running and _schema_key(wanted) != _schema_key(running):
            # claude saves a session with its first message: one with no turn yet cannot be resumed
            # ("No conversation found"), so a restart before any turn starts it again with its id
            self.conversation.resume_next_start = self._conversation_has_turns
            logger.debug(
                "%s: restarting the CLI for the turn's output schema (%s -> %s)",
                self.plan.agent_name or "default",
                running.label if running is not None else "none",
                wanted.label if wanted is not None else "none",
            )
            if self.start_lock is not None:
                async with self.start_lock:
                    await self.stop_process()
            else:
                await self.stop_process()
        if not self.is_running:
            self._process_schema = wanted

    async def _spawn(self, argv: Sequence[str], launch: Launch) -> CliProcess:
        """Spawn the conversation's CLI, its stdout routed to ``_handle_line``, reaped at exit."""
        settings = self.options.process
        process = CliProcess(
            argv,
            cwd=launch.cwd,
            environment=launch.environment,
            on_line=self._handle_line,
            on_oversized=self._handle_oversized_line,
            on_exit=self._handle_exit,
            max_line_bytes=settings.max_line_bytes,
            stderr_tail_bytes=settings.stderr_tail_bytes,
        )
        self.process = process
        await process.spawn()
        register_process(self, process)
        return process

    # -- the channel a wire speaks through ------------------------------------------------------

    def next_request_id(self, prefix: str) -> str:
        self._request_counter += 1
        return f"{prefix}_{self._request_counter}_{uuid.uuid4().hex[:8]}"

    async def write(self, data: bytes) -> None:
        process = self.process
        if process is None or not process.is_running:
            raise CliExited("the agent CLI is not running")
        if wire_logger.isEnabledFor(logging.DEBUG):
            self._log_line(process, ">", data)
        await process.write(data)

    def _log_line(self, process: CliProcess, direction: str, data: bytes) -> None:
        """One line in (``<``) or out (``>``) at DEBUG, redacted (callers check the level first)."""
        agent = self.plan.agent_name or "default"
        wire_logger.debug("%s %s %s %s", agent, process.label, direction, process.redactor.line(data))

    async def start_request(
        self, request_id: str, method: str, fields: dict[str, Any]
    ) -> asyncio.Future[ControlResponse]:
        assert self.wire is not None
        future: asyncio.Future[ControlResponse] = asyncio.get_running_loop().create_future()
        self._pending_controls[request_id] = future
        await self.write(self.wire.encode_request(request_id, method, fields))
        return future

    async def request(self, method: str, *, timeout: float, **fields: Any) -> ControlResponse:
        """Send a request and wait for its answer, racing the process's exit."""
        process = self.process
        if process is None or not process.is_running:
            raise CliExited("the agent CLI is not running")
        request_id = self.next_request_id("req")
        future = await self.start_request(request_id, method, fields)
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
            raise CliExited(f"the agent CLI exited before answering {method}", details=process.exit_details())
        raise AgentTimeout(f"the agent CLI did not answer {method} within {timeout:g} s")

    def end_turn(self, turn: TurnSink, outcome: Outcome, *, error: str, error_code: str) -> None:
        assert isinstance(turn, Turn)
        self.finish_turn(turn, outcome, error=error, error_code=error_code)

    def emit(self, event: AgentEvent) -> None:
        self._route_event(event)

    def _write_soon(self, data: bytes) -> None:
        process = self.process
        if process is None or not process.is_running:
            return
        if wire_logger.isEnabledFor(logging.DEBUG):
            self._log_line(process, ">", data)
        self.run_in_background(_write_quietly(process, data))

    # -- one turn -----------------------------------------------------------------------------------

    async def _restart_for_limits(self, turn: Turn) -> bool:
        """A new process on the same conversation whose flags carry ``turn.limits`` (False: failed)."""
        resume = self._conversation_has_turns
        self._process_limits = turn.limits
        try:
            await self.stop_process()
            self.conversation.resume_next_start = resume
            await self.prepare()
        except ElynavError as error:
            self.finish_turn(turn, "failed", error=str(error), error_code=error.code)
            return False
        return True

    async def run_turn(self, turn: Turn, content: str | list[dict[str, Any]]) -> None:
        conversation = self.conversation
        if self.launcher.restart_for_limits(self._process_limits, turn.limits, self.total_cost_usd):
            if not await self._restart_for_limits(turn):
                return
        process = self.process
        wire = self.wire
        assert process is not None and wire is not None
        conversation.status = RunnerStatus.BUSY
        try:
            await wire.send_prompt(self, turn, content)
        except CliExited as error:
            self.finish_turn(turn, "failed", error=str(error), error_code=error.code)
            return
        turn.mark_written(self.total_cost_usd)
        self._conversation_has_turns = True
        conversation.touch()
        turn_deadline = time.monotonic() + self.options.bounds.turn
        next_descendant_scan = time.monotonic() + DESCENDANT_SCAN_INTERVAL  # tools trigger a scan at once
        while not turn.done:
            if turn.abort_outcome is not None:
                await turn.wait_settled(WATCHDOG_TICK)
                continue
            now = time.monotonic()
            waiting_on_tools = turn.waiting_on_tools or bool(self._pending_permissions)
            reached = self.bound_reached(now, turn_deadline, conversation.last_activity, waiting_on_tools)
            if reached:
                turn.request_abort("timeout", reached)
                continue
            stalled = wire.stall_reason(now)
            if stalled:
                turn.request_abort("timeout", stalled)
                continue
            if waiting_on_tools or now >= next_descendant_scan:  # tools may start processes of their own
                await process.record_descendants_in_thread()
                next_descendant_scan = now + DESCENDANT_SCAN_INTERVAL
            await turn.wait_settled(min(WATCHDOG_TICK, max(0.0, turn_deadline - now)))

    async def interrupt_or_stop(self, turn: Turn, outcome: Outcome, reason: str) -> None:
        bounds = self.options.bounds
        process = self.process
        if turn.done:
            return
        if not turn.written or process is None or not process.is_running or self.wire is None:
            self.finish_turn(turn, outcome, error=reason)
            return
        interrupt = asyncio.ensure_future(self.wire.interrupt(self))
        interrupt.add_done_callback(ignore_outcome)
        if await turn.wait_settled(min(bounds.settle, bounds.interrupt)):
            # the CLI honoured the interrupt: the conversation goes on in the same process
            await process.record_descendants_in_thread()  # after the interrupt: it goes out first
            await process.end_tool_sessions()
            return
        self.finish_turn(
            turn,
            outcome,
            error=f"{reason}; the agent CLI did not end the turn within {bounds.settle:g} s and is being stopped",
        )
        self.conversation.status = RunnerStatus.STOPPING
        assert self.loop is not None
        self._late_turn_end = asyncio.Event()
        self.stopping = self.loop.create_task(self._stop_unresponsive(process, self._late_turn_end))

    async def _stop_unresponsive(self, process: CliProcess, late_turn_end: asyncio.Event) -> None:
        """The background stop of a CLI that did not end its turn when asked: bounded, no orphan."""
        conversation = self.conversation
        try:
            remaining = max(0.0, self.options.bounds.interrupt - self.options.bounds.settle)
            try:
                await asyncio.wait_for(late_turn_end.wait(), timeout=remaining)
            except TimeoutError:
                pass
            if late_turn_end.is_set() and process.is_running:  # it ended the turn after all: keep it
                await process.record_descendants_in_thread()
                await process.end_tool_sessions()
                conversation.status = RunnerStatus.IDLE
                return
            bounds = self.options.process.stop_bounds
            short = dataclasses.replace(
                bounds, close_stdin=0.0, sigint=min(bounds.sigint, 1.0), sigterm=min(bounds.sigterm, 1.0)
            )
            await process.stop(short)
        finally:
            self._late_turn_end = None
            if conversation.status == RunnerStatus.STOPPING:
                conversation.status = RunnerStatus.STOPPED

    def before_finish(self, turn: Turn, outcome: Outcome) -> None:
        for request_id in list(self._pending_permissions):
            self._close_permission(request_id, "withdrawn")
        if self.wire is not None:
            self._keep_release(self.wire.release_turn_resources())
        # what its tools left outside its tree: only a turn that ran a tool can have left a process, and
        # a scan of the machine's processes costs the kernel's loop a few ms, so a turn without one skips it
        ran_a_tool = any(isinstance(event, ToolUse) for event in turn.events)
        if ran_a_tool and self.process is not None and self.process.is_running:
            self.run_in_background(self.process.end_leftovers())

    def _keep_release(self, release: Awaitable[Any] | None) -> None:
        """Keep the wire's end-of-turn work under way: ``stop()`` waits for it (``close_services``)."""
        if release is not None:
            future = asyncio.ensure_future(release)
            future.add_done_callback(ignore_outcome)
            self._releases.add(future)
            future.add_done_callback(self._releases.discard)

    async def close_services(self) -> None:
        """At ``stop()``: wait (bounded) for what the wire ends for the last turn (ACP terminals)."""
        if self._releases:
            await asyncio.wait(list(self._releases), timeout=RELEASE_WAIT_SECONDS)

    # -- stdout routing (called by the supervisor, synchronously, for each line) ------------------

    def _handle_line(self, line: bytes) -> None:
        self.conversation.last_activity = time.monotonic()
        assert self.wire is not None
        if wire_logger.isEnabledFor(logging.DEBUG) and self.process is not None:
            self._log_line(self.process, "<", line)
        for item in self.wire.decode_line(line):
            if isinstance(item, AgentEvent) and not isinstance(item, PermissionRequest):
                self._route_event(item)  # the usual case first
            elif isinstance(item, ControlResponse):
                future = self._pending_controls.pop(item.request_id, None)
                if future is not None and not future.done():
                    future.set_result(item)
            elif isinstance(item, ControlCancel):
                self._close_permission(item.request_id, "withdrawn")
                served = self._served_requests.pop(item.request_id, None)
                if served is not None:
                    served.cancel()  # the CLI gave up on it: no answer is written
            elif isinstance(item, PermissionRequest):
                self._open_permission(item)
            elif isinstance(item, ControlRequest):
                self._serve_request(item)

    def _serve_request(self, request: ControlRequest) -> None:
        """Answer a request of the CLI in a task (kernel tools, hooks), or refuse what the wire does not serve."""
        assert self.wire is not None and self.loop is not None
        answer = self.wire.serve_request(request)
        if answer is None:
            self._write_soon(
                self.wire.encode_error(request.request_id, f"Unsupported by elynav_nb: {request.subtype}")
            )
            return
        task = self.loop.create_task(self._answer_request(request, answer))
        self._served_requests[request.request_id] = task
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def _answer_request(self, request: ControlRequest, answer: Awaitable[dict[str, Any]]) -> None:
        wire = self.wire
        assert wire is not None
        try:
            reply = wire.encode_success(request.request_id, await answer)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the server's own failure: the CLI gets it as an error answer
            reply = wire.encode_error(request.request_id, f"{type(error).__name__}: {error}")
        finally:
            self._served_requests.pop(request.request_id, None)
        process = self.process
        if process is not None and process.is_running:
            if wire_logger.isEnabledFor(logging.DEBUG):
                self._log_line(process, ">", reply)
            await _write_quietly(process, reply)

    def _route_event(self, event: AgentEvent) -> None:
        turn = self.current_turn
        if type(event) is TextDelta and turn is not None and turn.result is None:
            if self.wire is not None:
                self.wire.observe(event)
            turn.push(event)  # the usual event, on the shortest path
            return
        if self.wire is not None:
            self.wire.observe(event)
        conversation = self.conversation
        if isinstance(event, AgentStarted):
            conversation.last_started = event
            if event.session_id:
                conversation.session_id = event.session_id
        if turn is None or turn.done:
            if isinstance(event, TurnEnded) and self._late_turn_end is not None:
                self._late_turn_end.set()  # a CLI being stopped ended its cancelled turn after all
            conversation.keep_stray(event)
            return
        turn.push(event)
        if isinstance(event, TurnEnded):
            self.total_cost_usd = event.total_cost_usd
            outcome, error, error_code = self.outcome_of(turn, event)
            self.finish_turn(turn, outcome, ended=event, error=error, error_code=error_code)

    def _handle_oversized_line(self, size: int) -> None:
        self._route_event(self.oversized_line_error(size))

    def _handle_exit(self, returncode: int) -> None:
        for future in self._pending_controls.values():
            if not future.done():
                future.set_exception(CliExited("the agent CLI exited", details={"exit_code": returncode}))
        self._pending_controls.clear()
        for task in self._served_requests.values():
            task.cancel()
        self._served_requests.clear()
        if self.wire is not None:
            self._keep_release(self.wire.release_turn_resources())
        turn = self.current_turn
        if turn is not None and not turn.done and turn.written:  # a turn not sent yet starts a new CLI itself
            if not (turn.abort_outcome is not None and turn.aborting):  # else the abort sequence settles it
                self.finish_turn(
                    turn,
                    "failed",
                    error=f"the agent CLI exited with code {returncode} during the turn",
                    error_code=CliExited.code,
                )
        if self.conversation.status != RunnerStatus.CLOSED:
            self.conversation.status = RunnerStatus.EXITED

    # -- permission prompts -------------------------------------------------------------------------

    @property
    def pending_permissions(self) -> list[PermissionRequest]:
        return [entry[0] for entry in self._pending_permissions.values()]

    def _open_permission(self, request: PermissionRequest) -> None:
        assert self.loop is not None
        attached = dataclasses.replace(request, responder=self._answer_permission)
        timeout = self.options.bounds.permission
        timer = self.loop.call_later(timeout, self._expire_permission, request.request_id)
        self._pending_permissions[request.request_id] = (attached, timer)
        self._route_event(attached)
        if self.options.permissions.handler is not None:
            self.run_in_background(self._ask_permission_handler(attached))

    async def _ask_permission_handler(self, request: PermissionRequest) -> None:
        handler = self.options.permissions.handler
        assert handler is not None
        decision = handler(request)
        if inspect.isawaitable(decision):
            decision = await decision
        if decision is True:
            self._answer_permission(request, PermissionAnswer(True, by=PERMISSION_HANDLER))
        elif decision is False:
            answer = PermissionAnswer(False, "Denied by the permission handler.", by=PERMISSION_HANDLER)
            self._answer_permission(request, answer)

    def _answer_permission(self, request: PermissionRequest, answer: PermissionAnswer) -> None:
        loop = self.loop
        if loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not loop:
            loop.call_soon_threadsafe(self._answer_permission, request, answer)
            return
        if request.request_id not in self._pending_permissions or self.wire is None:
            return  # already answered, withdrawn or expired
        self._write_soon(self.wire.encode_permission_answer(request, answer))
        self._close_permission(request.request_id, "allowed" if answer.allowed else "denied", by=answer.by)

    def _expire_permission(self, request_id: str) -> None:
        if request_id not in self._pending_permissions or self.wire is None:
            return
        request = self._pending_permissions[request_id][0]
        message = f"No answer within {self.options.bounds.permission:g} s: denied."
        self._write_soon(self.wire.encode_permission_answer(request, PermissionAnswer(False, message)))
        self._close_permission(request_id, "expired")

    def _close_permission(self, request_id: str, decision: str, by: str = "") -> None:
        entry = self._pending_permissions.pop(request_id, None)
        if entry is None:
            return
        entry[1].cancel()
        self._route_event(PermissionWithdrawn(request_id=request_id, decision=decision, by=by))

    # -- settings of the conversation -------------------------------------------------------------

    async def set_model(self, model: str | None) -> None:
        if self.plan.capabilities.live_settings:
            await self.start()
            assert self.wire is not None
            await self.wire.set_model(self, model)
        elif self.wire is not None:
            await self.wire.set_model(self, model)
        self.conversation.model = model

    async def set_permission_mode(self, mode: str) -> None:
        if self.plan.capabilities.live_settings:
            await self.start()
            assert self.wire is not None
            await self.wire.set_permission_mode(self, mode)
            self.conversation.permission_mode = mode
            return
        if self.busy:
            raise AgentBusy(f"change {self.plan.cli}'s permission mode between turns (a turn is running)")
        self.conversation.permission_mode = mode
        if self.is_running:  # the process restarts on the same conversation before the next turn
            await self.stop_process()

    async def mcp_status(self) -> list[dict[str, Any]]:
        await self.start()
        assert self.wire is not None
        return await self.wire.mcp_status(self)


def _schema_key(schema: OutputSchema | None) -> str:
    return schema.key if schema is not None else ""


async def _write_quietly(process: CliProcess, data: bytes) -> None:
    try:
        await process.write(data)
    except CliExited:
        pass
