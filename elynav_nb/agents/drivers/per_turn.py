"""``PerTurnDriver``: a conversation with one CLI process per turn (gemini, codex exec).

Where it sits: the driver of every protocol whose plan says ``per-turn``: ``AgentRunner(definition,
workspace, cli="gemini")`` and ``cli="codex", cli_mode="exec"`` (codex's default is app-server, the
persistent driver). No persistent process, no control protocol: the protocol's launcher
(``launchers.PerTurnLauncher``, built by the registry) gives the adapter (``protocols/codex/adapter.py``,
``protocols/gemini/adapter.py``) that writes the runner's config home and builds each turn's command and
decoder (the pure ``agents/protocols`` launch builders and codecs), and says how the CLI runs ``hooks=``
as commands; ``CliProcess`` supervises the process. Nothing here names a CLI.

How data flows::

    runner.send(text) -> Turn -> start() (locate, version, config home; once)
      -> adapter.turn_command(prompt, conversation id, resuming?, output schema) -> CliProcess (own session,
         stdin /dev/null) -> stdout lines -> the turn's decoder -> AgentEvent -> Turn
      -> TurnEnded (turn.completed / result) settles the turn at once; the process's exit is
         reaped in the background (bounded), and the next turn waits for that
      -> no terminal line: decoder.verdict(exit code) -> failed (with the stderr tail) or cancelled

Conversation id: gemini runs on ours (``--session-id``, then ``--resume``); codex names its thread
on the first turn (``thread.started``) and every later turn runs ``exec resume <thread_id>``, so
after a kill -9 the next ``send`` continues the same thread. ``session_id`` is that id.

Bounds: ``turn.cancel()`` (and the turn, idle and retry timeouts) sends SIGINT to the process
group and to the group of every tool process recorded (codex stops its command on SIGINT but not
on SIGTERM; gemini's shell commands run in sessions of their own), waits ``settle_timeout`` for the
exit, then settles the turn; a CLI still alive is stopped in the background in short forced steps
(``CliProcess.stop``: SIGTERM, SIGKILL of the tree, orphans), status ``stopping``. Error lines a
CLI writes while it retries (codex ``Reconnecting...``) do not count as progress: after
``retry_timeout`` seconds of nothing but those, the turn ends ``timeout`` (codex would retry an
unreachable API for ever).

What these CLIs cannot do is listed in ``runner.limitations`` (and the repr): no cost, no
permission prompts (``permission_prompts=True`` runs the safest non-interactive mode), built-in
tool filters (codex), whole messages instead of token deltas (codex), no thinking (gemini).

Logging: each turn's command line (the prompt is its last argument) and its stdin go to
``elynav_nb.agents.wire`` at DEBUG as ``>`` lines, every stdout line as ``<``, redacted by the
process's ``redactor`` and checked with one ``isEnabledFor`` per line.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import signal
import time
import weakref
from typing import Any

from elynav_nb._logging import WIRE_LOGGER_NAME
from elynav_nb.agents.context import RunnerContext
from elynav_nb.agents.conversation import RunnerStatus
from elynav_nb.agents.drivers.base import DESCENDANT_SCAN_INTERVAL, WATCHDOG_TICK, Driver
from elynav_nb.agents.drivers.process import CliProcess, StopBounds
from elynav_nb.agents.drivers.reaper import register_process
from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    TextDelta,
    ThinkingDelta,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.hooks.server import HookCommandServer
from elynav_nb.agents.protocols.adapter_settings import adapter_settings
from elynav_nb.agents.protocols.command import cli_version
from elynav_nb.agents.protocols.launch import TurnCommand
from elynav_nb.agents.protocols.launcher import PerTurnLauncher
from elynav_nb.agents.protocols.per_turn import PerTurnAdapter, PerTurnDecoder
from elynav_nb.agents.results import Outcome
from elynav_nb.agents.turn import Turn
from elynav_nb.errors import CliExited, ElynavError, SessionNotFound

__all__ = ["PerTurnDriver"]

wire_logger = logging.getLogger(WIRE_LOGGER_NAME)

_RETRY_CODES = ("CLI_ERROR",)


class PerTurnDriver(Driver):
    """A conversation, one CLI process per turn (see the module docstring)."""

    def __init__(self, context: RunnerContext, launcher: PerTurnLauncher) -> None:
        super().__init__(context, launcher)
        self.launcher: PerTurnLauncher = launcher
        self._adapter: PerTurnAdapter | None = None
        self._prepared = False
        self._turn_finalizer: weakref.finalize[[], object] | None = None
        self._turn_states: dict[Turn, _TurnState] = {}
        self._hook_server: HookCommandServer | None = None  # the CLI's command hooks
        self._conversation_has_content = (
            context.conversation.resume_next_start
        )  # resume=: assume it holds turns

    @property
    def adapter(self) -> PerTurnAdapter | None:
        """The adapter of the last start (None before it)."""
        return self._adapter

    def replan(self) -> None:
        """Write the config home again before the next turn (the settings or the environment changed)."""
        self._prepared = False

    # -- starting ----------------------------------------------------------------------------------

    async def prepare(self) -> None:
        """Locate the CLI, tell its version, write the config home (once)."""
        conversation = self.conversation
        launcher = self.launcher
        if self._prepared:
            if conversation.status in (
                RunnerStatus.CLOSED,
                RunnerStatus.NEW,
                RunnerStatus.STOPPED,
                RunnerStatus.EXITED,
            ):
                conversation.status = RunnerStatus.IDLE
            return
        conversation.status = RunnerStatus.STARTING
        try:
            command = await asyncio.to_thread(launcher.locate, self.context)
            conversation.cli = command
            self.cli_version = await asyncio.to_thread(cli_version, command, launcher.location)
            definition = self.plan.require_definition()
            settings = adapter_settings(self.context, definition, self.kernel_tools())
            hook_command: list[str] = []
            if self.hooks and launcher.hook_dialect is not None:
                hook_command = (await self._hook_server_started()).command(self.plan.cli)
                settings = launcher.hook_settings(settings, self.hooks.hook_set, hook_command)
            adapter = launcher.adapter(settings)
            await asyncio.to_thread(adapter.prepare, command, self.cli_version)
            if hook_command:
                await asyncio.to_thread(
                    launcher.write_hooks, settings.home, self.hooks.hook_set, hook_command
                )
            if conversation.resume_next_start and not await asyncio.to_thread(
                adapter.has_conversation, conversation.session_id
            ):
                raise SessionNotFound(
                    f"No conversation found with session ID {conversation.session_id} in {adapter.settings.home} "
                    f"({self.plan.cli} cannot resume it)",
                    details={"session_id": conversation.session_id, "cli": self.plan.cli},
                )
        except ElynavError:
            conversation.status = RunnerStatus.STOPPED
            raise
        self._adapter = adapter
        self._prepared = True
        conversation.status = RunnerStatus.IDLE
        conversation.touch()

    async def _hook_server_started(self) -> HookCommandServer:
        """The runner's hook socket (started), answering in the protocol's hook dialect."""
        if self._hook_server is None:
            dialect = self.launcher.hook_dialect
            assert dialect is not None
            hooks = self.hooks

            async def serve(_cli: str, hook_input: dict[str, Any]) -> dict[str, Any]:
                return await hooks.serve(dialect, hook_input)

            self._hook_server = HookCommandServer(serve)
        await self._hook_server.start()
        return self._hook_server

    async def close_services(self) -> None:
        if self._hook_server is not None:
            await self._hook_server.stop()
            self._prepared = False  # the next start opens a new hook socket and writes it again

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode from the next turn on (the config home is written again)."""
        self.conversation.permission_mode = mode
        self._prepared = False

    async def set_model(self, model: str | None) -> None:
        """Change the model from the next turn on."""
        self.conversation.model = model
        self._prepared = False

    async def mcp_status(self) -> list[dict[str, Any]]:
        """The MCP servers written into the CLI's config (a process per turn reports no live status)."""
        await self.start()
        names = self._adapter.mcp_server_names if self._adapter is not None else ()
        return [{"name": name, "status": "configured"} for name in names]

    # -- one turn ------------------------------------------------------------------------------------

    async def run_turn(self, turn: Turn, content: str | list[dict[str, Any]]) -> None:
        conversation = self.conversation
        adapter = self._adapter
        assert adapter is not None
        prompt = content if isinstance(content, str) else turn.prompt
        if not isinstance(content, str):
            dropped = [
                block for block in content if not (isinstance(block, dict) and block.get("type") == "text")
            ]
            if dropped:
                turn.push(
                    AgentError(
                        f"only text reaches {self.plan.cli} (a prompt argument): {len(dropped)} other content blocks left out",
                        code="CONTENT_DROPPED",
                    )
                )
        resuming = await self._resuming(turn, adapter)
        command = await asyncio.to_thread(  # codex writes the turn's schema file
            adapter.turn_command,
            prompt,
            conversation_id=conversation.session_id,
            resuming=resuming,
            output_schema=turn.output_schema,
        )
        decoder = adapter.new_decoder()
        process = self._turn_process(turn, command, decoder)
        self.process = process
        conversation.command_line = (
            [*command.argv[:-1], "<prompt>"] if not command.stdin_data else list(command.argv)
        )
        conversation.status = RunnerStatus.BUSY
        try:
            await process.spawn()
        except ElynavError as error:
            self.finish_turn(turn, "failed", error=str(error), error_code=error.code)
            return
        self._turn_finalizer = register_process(self, process)
        if wire_logger.isEnabledFor(logging.DEBUG):
            self._log_line(process, ">", shlex.join(command.argv).encode("utf-8"))
            if command.stdin_data:
                self._log_line(process, ">", command.stdin_data)
        if command.stdin_data:
            await process.write_and_close(command.stdin_data)
        turn.mark_written(self.total_cost_usd)
        conversation.touch()
        await self._watch_turn(turn, process)

    async def _resuming(self, turn: Turn, adapter: PerTurnAdapter) -> bool:
        """Whether this turn resumes the conversation; a new id when it cannot be resumed.

        Resumed: a conversation the CLI saved, once it holds something to resume (a failed first
        gemini turn leaves a session file gemini refuses both to resume and to create again).
        """
        conversation = self.conversation
        saved = bool(conversation.session_id) and await asyncio.to_thread(
            adapter.has_conversation, conversation.session_id
        )
        if saved and self._conversation_has_content:
            return True
        if conversation.session_id and self._conversation_has_content:
            turn.push(
                AgentError(
                    f"{self.plan.cli} had not saved conversation {conversation.session_id}: this turn starts a new one",
                    code="CONVERSATION_LOST",
                )
            )
        if not conversation.session_id or saved or self._conversation_has_content:
            conversation.session_id = adapter.new_conversation_id()
        self._conversation_has_content = False
        return False

    def _turn_process(self, turn: Turn, command: TurnCommand, decoder: PerTurnDecoder) -> CliProcess:
        state = _TurnState()
        process: CliProcess

        def on_line(line: bytes) -> None:
            if wire_logger.isEnabledFor(logging.DEBUG):
                self._log_line(process, "<", line)
            self._on_line(turn, decoder, state, line)

        def on_exit(returncode: int) -> None:
            self._on_exit(turn, decoder, process, returncode)

        process = CliProcess(
            command.argv,
            cwd=command.cwd,
            environment=dict(command.environment),
            on_line=on_line,
            on_oversized=lambda size: self._push(turn, state, self.oversized_line_error(size)),
            on_exit=on_exit,
            max_line_bytes=self.options.process.max_line_bytes,
            stderr_tail_bytes=self.options.process.stderr_tail_bytes,
            stdin_devnull=command.stdin_devnull,
        )
        self._turn_states[turn] = state
        return process

    async def _watch_turn(self, turn: Turn, process: CliProcess) -> None:
        """The watchdog: turn, idle and retry bounds, descendants recorded while tools run."""
        bounds = self.options.bounds
        state = self._turn_states[turn]
        started = time.monotonic()
        turn_deadline = started + bounds.turn
        next_descendant_scan = started
        try:
            while not turn.done:
                if turn.abort_outcome is not None:
                    await turn.wait_settled(WATCHDOG_TICK)
                    continue
                now = time.monotonic()
                reached = self.bound_reached(now, turn_deadline, state.last_progress, turn.waiting_on_tools)
                if reached:
                    turn.request_abort("timeout", reached)
                    continue
                if state.retrying_since is not None and now - state.retrying_since >= bounds.retry:
                    turn.request_abort(
                        "timeout",
                        f"{self.plan.cli} kept retrying the model API for {bounds.retry:g} s "
                        f"(last: {state.last_retry_message[:200]})",
                    )
                    continue
                if turn.waiting_on_tools or now >= next_descendant_scan:
                    await process.record_descendants_in_thread()
                    # the first seconds often: codex's node wrapper starts the native binary then
                    settling = now - started < DESCENDANT_SCAN_INTERVAL
                    next_descendant_scan = now + (WATCHDOG_TICK if settling else DESCENDANT_SCAN_INTERVAL)
                await turn.wait_settled(min(WATCHDOG_TICK, max(0.0, turn_deadline - now)))
        finally:
            self._turn_states.pop(turn, None)

    # -- stdout and exit (called by the supervisor) ---------------------------------------------------

    def _log_line(self, process: CliProcess, direction: str, data: bytes) -> None:
        """One line in (``<``) or out (``>``) at DEBUG, redacted (callers check the level first)."""
        agent = self.plan.agent_name or "default"
        wire_logger.debug("%s %s %s %s", agent, process.label, direction, process.redactor.line(data))

    def _on_line(self, turn: Turn, decoder: PerTurnDecoder, state: _TurnState, line: bytes) -> None:
        self.conversation.last_activity = time.monotonic()
        for event in decoder.decode_line(line):
            self._push(turn, state, event)

    def _push(self, turn: Turn, state: _TurnState, event: AgentEvent) -> None:
        if isinstance(event, AgentError) and event.code in _RETRY_CODES:
            if state.retrying_since is None:
                state.retrying_since = time.monotonic()
            state.last_retry_message = event.message
        else:
            state.last_progress = time.monotonic()
            state.retrying_since = None
        if isinstance(event, AgentStarted):
            self.conversation.last_started = event
            if event.session_id:
                self.conversation.session_id = event.session_id
        elif isinstance(event, TextDelta | ThinkingDelta | ToolUse):
            self._conversation_has_content = True  # something the CLI saves and can resume
        if turn.done:
            self.conversation.keep_stray(event)
            return
        turn.push(event)
        if isinstance(event, TurnEnded):
            self._end_from_terminal_line(turn, event)

    def _end_from_terminal_line(self, turn: Turn, ended: TurnEnded) -> None:
        outcome, error, error_code = self.outcome_of(turn, ended)
        self.finish_turn(turn, outcome, ended=ended, error=error, error_code=error_code)
        process = self.process
        if process is not None and turn.abort_outcome is None:
            self._reap_in_background(process, grace=self.options.bounds.interrupt)

    def before_finish(self, turn: Turn, outcome: Outcome) -> None:
        if outcome in ("cancelled", "timeout", "failed") and self._turn_started(turn):
            # The CLI recorded the prompt and nothing rolled it back (an API error does, in gemini).
            self._conversation_has_content = True

    @staticmethod
    def _turn_started(turn: Turn) -> bool:
        return any(isinstance(event, AgentStarted) for event in turn.events)

    def _on_exit(self, turn: Turn, decoder: PerTurnDecoder, process: CliProcess, returncode: int) -> None:
        assert self._adapter is not None
        conversation = self.conversation
        conversation_id = self._adapter.after_turn(decoder)
        if conversation_id:
            conversation.session_id = conversation_id
        conversation.resume_next_start = False  # a new runner resumes; this one decides per turn
        lost = self._adapter.lost_conversation(process.stderr.text(max_chars=4000))
        if lost:  # the next turn starts a new conversation instead of failing the same way
            conversation.session_id = self._adapter.new_conversation_id()
            self._conversation_has_content = False
        if not turn.done and not turn.aborting:
            verdict = decoder.verdict(returncode)
            error_code = CliExited.code if verdict.outcome == "failed" else ""
            reason = verdict.reason + ("; the next turn starts a new conversation" if lost else "")
            self.finish_turn(turn, verdict.outcome, error=reason, error_code=error_code)
        self._reap_in_background(process, grace=0.0)

    # -- stopping a turn --------------------------------------------------------------------------------

    async def interrupt_or_stop(self, turn: Turn, outcome: Outcome, reason: str) -> None:
        bounds = self.options.bounds
        process = self.process
        if turn.done:
            return
        if not turn.written or process is None or not process.is_running:
            self.finish_turn(turn, outcome, error=reason)
            return
        await process.record_descendants_in_thread()
        process.signal_group(signal.SIGINT)  # codex ends its command on SIGINT (not on SIGTERM)
        if await _wait_event(process.exited, min(bounds.settle, bounds.interrupt)):
            self.finish_turn(turn, outcome, error=reason)
        else:
            self.finish_turn(
                turn,
                outcome,
                error=f"{reason}; {self.plan.cli} did not stop within {bounds.settle:g} s and is being stopped",
            )
            self.conversation.status = RunnerStatus.STOPPING
        self._reap_in_background(process, grace=0.0)  # tool processes and a CLI still alive: bounded

    def _reap_in_background(self, process: CliProcess, *, grace: float) -> None:
        """Wait ``grace`` seconds for the exit, then the bounded stop (no orphan, no zombie)."""
        if self.stopping is not None and not self.stopping.done():
            return
        assert self.loop is not None
        self.stopping = self.loop.create_task(self._reap(process, grace))

    async def _reap(self, process: CliProcess, grace: float) -> None:
        try:
            if grace > 0:
                await _wait_event(process.exited, grace)
            bounds = self.options.process.stop_bounds
            short = StopBounds(
                close_stdin=0.0,
                sigint=min(bounds.sigint, 1.0),
                sigterm=min(bounds.sigterm, 1.0),
                sigkill=bounds.sigkill,
                orphans=bounds.orphans,
            )
            await process.stop(short)
        finally:
            finalizer = self._turn_finalizer
            if finalizer is not None and self.process is process:
                finalizer.detach()
                self._turn_finalizer = None
            if self.conversation.status in (RunnerStatus.STOPPING, RunnerStatus.BUSY):
                self.conversation.status = RunnerStatus.IDLE


class _TurnState:
    """What the watchdog needs of one turn's stream: the last progress and the retry run."""

    __slots__ = ("last_progress", "last_retry_message", "retrying_since")

    def __init__(self) -> None:
        self.last_progress = time.monotonic()
        self.retrying_since: float | None = None
        self.last_retry_message = ""


async def _wait_event(event: asyncio.Event, timeout: float) -> bool:
    if event.is_set():
        return True
    try:
        await asyncio.wait_for(event.wait(), timeout=timeout)
    except TimeoutError:
        return False
    return True
