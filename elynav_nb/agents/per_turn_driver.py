"""``PerTurnRunner``: a codex or gemini conversation as ``AgentRunner`` turns, one CLI process per turn.

Where it sits: ``AgentRunner(definition, workspace, cli="gemini")`` (or ``cli="codex",
cli_mode="exec"``: codex's default is ``codex_app_runner``, over app-server) makes one of these
(``runner.py``'s ``__new__``); it shares ``Turn``, ``TurnResult``, the history, the listeners, the
sync API and the display with the claude runner, and replaces the conversation driver: no
persistent process, no control protocol. The adapter (``per_turn_clis.py``) writes the runner's
config home and builds each turn's command; the phase-1 codecs decode its stdout; ``CliProcess``
supervises the process.

How data flows::

    runner.send(text) -> Turn -> start() (locate, version, config home; once)
      -> adapter.turn_command(prompt, conversation id, resuming?) -> CliProcess (own session,
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
"""

from __future__ import annotations

import asyncio
import signal
import time
import weakref
from typing import Any

from elynav_nb.agents.adapter_settings import AdapterSettingsMixin
from elynav_nb.agents.cli.per_turn_command import TurnCommand
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    TextDelta,
    ThinkingDelta,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.locate import cli_version, locate_cli
from elynav_nb.agents.per_turn_clis import (
    PerTurnAdapter,
    PerTurnDecoder,
    adapter_for,
    merged_limitations,
)
from elynav_nb.agents.process import CliProcess, StopBounds
from elynav_nb.agents.reaper import register_process
from elynav_nb.agents.results import Outcome
from elynav_nb.agents.runner import AgentRunner, Turn
from elynav_nb.errors import CliStartFailed, ElynavError, InvalidInput

__all__ = ["PerTurnRunner"]

_WATCHDOG_TICK = 0.25
_DESCENDANT_SCAN_INTERVAL = 2.0
_RETRY_CODES = ("CLI_ERROR",)
_CLI_NOTES = {
    "codex": (
        "codex exec --json streams whole items: a message arrives in one piece, not token by token",
        "set_model and set_permission_mode take effect at the next turn (a process per turn)",
    ),
    "gemini": (
        "gemini's stream-json carries no thinking",
        "set_model and set_permission_mode take effect at the next turn (a process per turn)",
    ),
}


class PerTurnRunner(AdapterSettingsMixin, AgentRunner):
    """A codex or gemini conversation, one CLI process per turn (see the module docstring).

    Made by ``AgentRunner(..., cli="gemini")`` or ``AgentRunner(..., cli="codex", cli_mode="exec")``; takes the same arguments. ``limitations``
    says what the CLI cannot honour of them.
    """

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        if self.cli_name == "codex" and self._session_id_given:
            raise InvalidInput(
                "codex names its threads itself: give resume=<thread id> to continue one, not session_id"
            )
        if self.cli_name == "codex" and not self._resume_next_start:
            self.session_id = ""  # known at the first thread.started
        self.cli_version = ""
        self._adapter: PerTurnAdapter | None = None
        self._prepared = False
        self._turn_finalizer: weakref.finalize[[], object] | None = None
        self._turn_states: dict[Turn, _TurnState] = {}
        self._conversation_has_content = self._resume_next_start  # resume=: assume it holds turns
        self._notes: list[str] = list(_CLI_NOTES.get(self.cli_name, ()))
        if self.permission_handler is not None:
            self._notes.append("the permission handler is never called: a process per turn has no prompts")
        self._planned_limitations: tuple[str, ...] = ()
        if isinstance(self.definition, AgentDefinition):
            self._planned_limitations = adapter_for(
                self.cli_name, self._settings(self.definition)
            ).planned_limitations()

    # -- what the CLI cannot do --------------------------------------------------------------------

    @property
    def limitations(self) -> tuple[str, ...]:
        """What this CLI cannot honour of the runner's settings and the agent definition."""
        planned = self._adapter.limitations if self._adapter is not None else self._planned_limitations
        return merged_limitations(None, (*planned, *self._notes))

    # -- starting ----------------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        """True while a turn's process lives (there is no process between turns)."""
        return super().is_running

    async def start(self) -> AgentRunner:
        """Locate the CLI, tell its version, write the config home (once; bounded, idempotent)."""
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop is not loop:
            raise InvalidInput("this runner belongs to another event loop; use it from that loop")
        self._loop = loop
        stopping = self._stopping
        if stopping is not None and not stopping.done():
            await asyncio.shield(stopping)  # the last turn's process is being reaped (bounded)
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._prepared:
                if self.status in ("closed", "new", "stopped", "exited"):
                    self.status = "idle"
                return self
            await self._prepare()
        return self

    async def _prepare(self) -> None:
        self.status = "starting"
        try:
            self.cli = await asyncio.to_thread(
                locate_cli, self.executable, cli=self.cli_name, fallback_to_standin=False
            )
            self.cli_version = await asyncio.to_thread(cli_version, self.cli)
            definition = await asyncio.to_thread(self._load_definition)
            adapter = adapter_for(self.cli_name, self._settings(definition))
            await asyncio.to_thread(adapter.prepare, self.cli, self.cli_version)
            if self._resume_next_start and not await asyncio.to_thread(
                adapter.has_conversation, self.session_id
            ):
                raise CliStartFailed(
                    f"No conversation found with session ID {self.session_id} in {adapter.settings.home} "
                    f"({self.cli_name} cannot resume it)",
                    details={"session_id": self.session_id, "cli": self.cli_name},
                )
        except ElynavError:
            self.status = "stopped"
            raise
        self._adapter = adapter
        self._prepared = True
        self.status = "idle"
        self.last_activity = time.monotonic()

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode from the next turn on (the config home is written again)."""
        self.permission_mode = mode
        self._prepared = False

    async def set_model(self, model: str | None) -> None:
        """Change the model from the next turn on."""
        self.model = model
        self._prepared = False

    async def mcp_status(self) -> list[dict[str, Any]]:
        """The MCP servers written into the CLI's config (a process per turn reports no live status)."""
        await self.start()
        names = self._adapter.mcp_server_names if self._adapter is not None else ()
        return [{"name": name, "status": "configured"} for name in names]

    # -- one turn ------------------------------------------------------------------------------------

    async def _run_turn(self, turn: Turn, content: str | list[dict[str, Any]]) -> None:
        try:
            await self.start()
        except ElynavError as error:
            self._finish_turn(turn, "failed", error=str(error), error_code=error.code)
            return
        if turn.done:
            return
        adapter = self._adapter
        assert adapter is not None
        prompt = content if isinstance(content, str) else turn.prompt
        if not isinstance(content, str):
            dropped = [
                block for block in content if not (isinstance(block, dict) and block.get("type") == "text")
            ]
            if dropped:
                turn._push(
                    AgentError(
                        f"only text reaches {self.cli_name} (a prompt argument): {len(dropped)} other content blocks left out",
                        code="CONTENT_DROPPED",
                    )
                )
        resuming = await self._resuming(turn, adapter)
        command = adapter.turn_command(prompt, conversation_id=self.session_id, resuming=resuming)
        decoder = adapter.new_decoder()
        process = self._turn_process(turn, command, decoder)
        self._process = process
        self.command_line = [*command.argv[:-1], "<prompt>"] if not command.stdin_data else list(command.argv)
        self.status = "busy"
        try:
            await process.spawn()
        except ElynavError as error:
            self._finish_turn(turn, "failed", error=str(error), error_code=error.code)
            return
        self._turn_finalizer = register_process(self, process)
        if command.stdin_data:
            await process.write_and_close(command.stdin_data)
        turn._written = True
        self.last_activity = time.monotonic()
        await self._watch_turn(turn, process)

    async def _resuming(self, turn: Turn, adapter: PerTurnAdapter) -> bool:
        """Whether this turn resumes the conversation; a new id when it cannot be resumed.

        Resumed: a conversation the CLI saved, once it holds something to resume (a failed first
        gemini turn leaves a session file gemini refuses both to resume and to create again).
        """
        saved = bool(self.session_id) and await asyncio.to_thread(adapter.has_conversation, self.session_id)
        if saved and self._conversation_has_content:
            return True
        if self.session_id and self._conversation_has_content:
            turn._push(
                AgentError(
                    f"{self.cli_name} had not saved conversation {self.session_id}: this turn starts a new one",
                    code="CONVERSATION_LOST",
                )
            )
        if not self.session_id or saved or self._conversation_has_content:
            self.session_id = adapter.new_conversation_id()
        self._conversation_has_content = False
        return False

    def _turn_process(self, turn: Turn, command: TurnCommand, decoder: PerTurnDecoder) -> CliProcess:
        state = _TurnState()
        process: CliProcess

        def on_line(line: bytes) -> None:
            self._on_line(turn, decoder, state, line)

        def on_exit(returncode: int) -> None:
            self._on_exit(turn, decoder, process, returncode)

        process = CliProcess(
            command.argv,
            cwd=command.cwd,
            environment=dict(command.environment),
            on_line=on_line,
            on_oversized=lambda size: self._push(turn, state, self._oversized_error(size)),
            on_exit=on_exit,
            max_line_bytes=self.max_line_bytes,
            stderr_tail_bytes=self.stderr_tail_bytes,
            stdin_devnull=command.stdin_devnull,
        )
        self._turn_states[turn] = state
        return process

    async def _watch_turn(self, turn: Turn, process: CliProcess) -> None:
        """The watchdog: turn, idle and retry bounds, descendants recorded while tools run."""
        state = self._turn_states[turn]
        started = time.monotonic()
        turn_deadline = started + self.turn_timeout
        next_descendant_scan = started
        try:
            while not turn.done:
                if turn._abort_outcome is not None:
                    await asyncio.wait([turn._done], timeout=_WATCHDOG_TICK)
                    continue
                now = time.monotonic()
                idle_bound = self.tool_idle_timeout if turn._open_tool_uses else self.idle_timeout
                if now >= turn_deadline:
                    turn._request_abort("timeout", f"the turn took longer than {self.turn_timeout:g} s")
                    continue
                if now - state.last_progress >= idle_bound:
                    turn._request_abort("timeout", f"no output from {self.cli_name} for {idle_bound:g} s")
                    continue
                if state.retrying_since is not None and now - state.retrying_since >= self.retry_timeout:
                    turn._request_abort(
                        "timeout",
                        f"{self.cli_name} kept retrying the model API for {self.retry_timeout:g} s "
                        f"(last: {state.last_retry_message[:200]})",
                    )
                    continue
                if turn._open_tool_uses or now >= next_descendant_scan:
                    await process.record_descendants_in_thread()
                    # the first seconds often: codex's node wrapper starts the native binary then
                    settling = now - started < _DESCENDANT_SCAN_INTERVAL
                    next_descendant_scan = now + (_WATCHDOG_TICK if settling else _DESCENDANT_SCAN_INTERVAL)
                await asyncio.wait([turn._done], timeout=min(_WATCHDOG_TICK, max(0.0, turn_deadline - now)))
        finally:
            self._turn_states.pop(turn, None)

    # -- stdout and exit (called by the supervisor) ---------------------------------------------------

    def _on_line(self, turn: Turn, decoder: PerTurnDecoder, state: _TurnState, line: bytes) -> None:
        self.last_activity = time.monotonic()
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
            self.last_started = event
            if event.session_id:
                self.session_id = event.session_id
        elif isinstance(event, TextDelta | ThinkingDelta | ToolUse):
            self._conversation_has_content = True  # something the CLI saves and can resume
        if turn.done:
            if len(self.stray_events) < 1000:
                self.stray_events.append(event)
            return
        turn._push(event)
        if isinstance(event, TurnEnded):
            self._end_from_terminal_line(turn, event)

    def _end_from_terminal_line(self, turn: Turn, ended: TurnEnded) -> None:
        if turn._abort_outcome is not None:
            outcome: Outcome = turn._abort_outcome
            error = turn._abort_reason
        else:
            outcome = "error" if ended.is_error else "completed"
            error = "; ".join(ended.errors) or (ended.result if ended.is_error else "")
        self._finish_turn(turn, outcome, ended=ended, error=error)
        process = self._process
        if process is not None and turn._abort_outcome is None:
            self._reap_in_background(process, grace=self.interrupt_timeout)

    def _finish_turn(
        self,
        turn: Turn,
        outcome: Outcome,
        *,
        ended: TurnEnded | None = None,
        error: str = "",
        error_code: str = "",
    ) -> None:
        if not turn.done and outcome in ("cancelled", "timeout", "failed") and self._turn_started(turn):
            # The CLI recorded the prompt and nothing rolled it back (an API error does, in gemini).
            self._conversation_has_content = True
        super()._finish_turn(turn, outcome, ended=ended, error=error, error_code=error_code)

    @staticmethod
    def _turn_started(turn: Turn) -> bool:
        return any(isinstance(event, AgentStarted) for event in turn.events)

    def _oversized_error(self, size: int) -> AgentError:
        return AgentError(
            f"a stdout line of more than {size} bytes exceeded the {self.max_line_bytes}-byte cap and was skipped",
            code="LINE_TOO_LONG",
        )

    def _on_exit(self, turn: Turn, decoder: PerTurnDecoder, process: CliProcess, returncode: int) -> None:
        assert self._adapter is not None
        conversation_id = self._adapter.after_turn(decoder)
        if conversation_id:
            self.session_id = conversation_id
        self._resume_next_start = False  # a new runner resumes; this one decides per turn
        lost = self._adapter.lost_conversation(process.stderr.text(max_chars=4000))
        if lost:  # the next turn starts a new conversation instead of failing the same way
            self.session_id = self._adapter.new_conversation_id()
            self._conversation_has_content = False
        if not turn.done and turn._cancel_task is None:
            verdict = decoder.verdict(returncode)
            error_code = "CLI_EXITED" if verdict.outcome == "failed" else ""
            reason = verdict.reason + ("; the next turn starts a new conversation" if lost else "")
            self._finish_turn(turn, verdict.outcome, error=reason, error_code=error_code)
        self._reap_in_background(process, grace=0.0)

    # -- stopping a turn --------------------------------------------------------------------------------

    async def _interrupt_or_stop(self, turn: Turn, outcome: Outcome, reason: str) -> None:
        process = self._process
        if turn.done:
            return
        if not turn._written or process is None or not process.is_running:
            self._finish_turn(turn, outcome, error=reason)
            return
        await process.record_descendants_in_thread()
        process.signal_group(signal.SIGINT)  # codex ends its command on SIGINT (not on SIGTERM)
        if await _wait_event(process.exited, min(self.settle_timeout, self.interrupt_timeout)):
            self._finish_turn(turn, outcome, error=reason)
        else:
            self._finish_turn(
                turn,
                outcome,
                error=f"{reason}; {self.cli_name} did not stop within {self.settle_timeout:g} s and is being stopped",
            )
            self.status = "stopping"
        self._reap_in_background(process, grace=0.0)  # tool processes and a CLI still alive: bounded

    def _reap_in_background(self, process: CliProcess, *, grace: float) -> None:
        """Wait ``grace`` seconds for the exit, then the bounded stop (no orphan, no zombie)."""
        if self._stopping is not None and not self._stopping.done():
            return
        assert self._loop is not None
        self._stopping = self._loop.create_task(self._reap(process, grace))

    async def _reap(self, process: CliProcess, grace: float) -> None:
        try:
            if grace > 0:
                await _wait_event(process.exited, grace)
            short = StopBounds(
                close_stdin=0.0,
                sigint=min(self.stop_bounds.sigint, 1.0),
                sigterm=min(self.stop_bounds.sigterm, 1.0),
                sigkill=self.stop_bounds.sigkill,
                orphans=self.stop_bounds.orphans,
            )
            await process.stop(short)
        finally:
            finalizer = self._turn_finalizer
            if finalizer is not None and self._process is process:
                finalizer.detach()
                self._turn_finalizer = None
            if self.status in ("stopping", "busy"):
                self.status = "idle"

    # -- display -----------------------------------------------------------------------------------------

    def __repr__(self) -> str:
        cli = self.cli.label if self.cli is not None else f"{self.cli_name} (not located yet)"
        version = f" {self.cli_version}" if self.cli_version else ""
        limitations = "; ".join(self.limitations)
        return (
            f"<AgentRunner agent={self.agent_name!r} status={self.status} cli={cli}{version} "
            f"mode=process per turn session={self.session_id or '(new)'} turns={len(self.history)} "
            f"limitations=[{limitations}]>"
        )


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
