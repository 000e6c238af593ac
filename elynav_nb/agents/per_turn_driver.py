"""``PerTurnDriver``: a codex or gemini conversation, one CLI process per turn.

Where it sits: the driver of ``AgentRunner(definition, workspace, cli="gemini")`` and of
``cli="codex", cli_mode="exec"`` (codex's default is app-server, the persistent driver). No
persistent process, no control protocol: the adapter (``codex_adapter.py``, ``gemini_adapter.py``)
writes the runner's config home and builds each turn's command and decoder (its wire: the pure
``agents/cli`` launch builders and codecs); ``CliProcess`` supervises the process.

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
import dataclasses
import json
import logging
import shlex
import signal
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elynav_nb._logging import WIRE_LOGGER_NAME
from elynav_nb.agents.adapter_settings import adapter_settings
from elynav_nb.agents.cli.codex_hooks import (
    CODEX_HOOK_ARGUMENTS,
    CODEX_HOOK_CONFIG,
    codex_hooks_file,
    workspace_codex_hooks,
)
from elynav_nb.agents.cli.gemini_hooks import gemini_hook_settings
from elynav_nb.agents.cli.gemini_launch import KERNEL_TOKEN_NOTE
from elynav_nb.agents.cli.per_turn_launch import TurnCommand
from elynav_nb.agents.cli_adapter import PerTurnAdapter, PerTurnDecoder, PerTurnSettings, merged_limitations
from elynav_nb.agents.codex_adapter import CodexAdapter
from elynav_nb.agents.driver import DESCENDANT_SCAN_INTERVAL, WATCHDOG_TICK, Driver
from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    TextDelta,
    ThinkingDelta,
    ToolUse,
    TurnEnded,
)
from elynav_nb.agents.gemini_adapter import GeminiAdapter
from elynav_nb.agents.hook_server import HookCommandServer
from elynav_nb.agents.locate import CliName, cli_version, locate_cli
from elynav_nb.agents.process import CliProcess, StopBounds
from elynav_nb.agents.reaper import register_process
from elynav_nb.agents.results import Outcome
from elynav_nb.agents.turn import Turn
from elynav_nb.errors import ElynavError, InvalidInput, SessionNotFound

if TYPE_CHECKING:
    from elynav_nb.agents.runner import AgentRunner

__all__ = ["PerTurnDriver", "adapter_for"]

wire_logger = logging.getLogger(WIRE_LOGGER_NAME)

_RETRY_CODES = ("CLI_ERROR",)
_CLI_NOTES = {
    "codex": (
        "codex exec --json streams whole items: a message arrives in one piece, not token by token",
        "set_model and set_permission_mode take effect at the next turn (a process per turn)",
    ),
    "gemini": (
        "gemini's stream-json carries no thinking",
        "set_model and set_permission_mode take effect at the next turn (a process per turn)",
        "output_schema: gemini 0.61.0 has no schema option; the schema goes in the prompt and the answer "
        "is validated here",
    ),
}


_HOOKS_NOTES = {
    "codex": "codex exec runs hooks= as command hooks with --dangerously-bypass-hook-trust (its own hooks only: "
    "a workspace with codex hooks of its own is refused); codex warns about that flag in each turn",
    "gemini": "gemini runs hooks= as command hooks: HookCall.tool_use_id is empty and tool names are gemini's "
    "(run_shell_command...)",
}


def adapter_for(cli: CliName, settings: PerTurnSettings) -> PerTurnAdapter:
    """The adapter of ``cli`` (``codex`` or ``gemini``)."""
    if cli == "codex":
        return CodexAdapter(settings)
    if cli == "gemini":
        return GeminiAdapter(settings)
    raise InvalidInput(f"{cli} does not run a process per turn")


class PerTurnDriver(Driver):
    """A codex or gemini conversation, one CLI process per turn (see the module docstring)."""

    def __init__(self, runner: AgentRunner) -> None:
        super().__init__(runner)
        self._adapter: PerTurnAdapter | None = None
        self._prepared = False
        self._turn_finalizer: weakref.finalize[[], object] | None = None
        self._turn_states: dict[Turn, _TurnState] = {}
        self._hook_server: HookCommandServer | None = None  # gemini's command hooks
        self._conversation_has_content = runner.resume_next_start  # resume=: assume it holds turns
        self._notes: list[str] = list(_CLI_NOTES.get(runner.cli_name, ()))
        if runner.permission_handler is not None:
            self._notes.append("the permission handler is never called: a process per turn has no prompts")
        if runner.hooks:
            self._notes.append(_HOOKS_NOTES[runner.cli_name])
        if runner.tools is not None and runner.cli_name == "gemini":
            self._notes.append(KERNEL_TOKEN_NOTE)

    @property
    def adapter(self) -> PerTurnAdapter | None:
        """The adapter of the last start (None before it)."""
        return self._adapter

    def replan(self) -> None:
        """Write the config home again before the next turn (the settings or the environment changed)."""
        self._prepared = False

    @property
    def limitations(self) -> tuple[str, ...]:
        """What this CLI cannot honour of the runner's settings and the agent definition."""
        runner = self.runner
        if self._adapter is not None:
            planned = self._adapter.limitations
        elif runner.plan.definition is not None:
            planned = adapter_for(
                runner.cli_name, adapter_settings(runner, runner.plan.definition)
            ).planned_limitations()
        else:
            planned = ()
        return merged_limitations((*planned, *self._notes))

    # -- starting ----------------------------------------------------------------------------------

    async def prepare(self) -> None:
        """Locate the CLI, tell its version, write the config home (once)."""
        runner = self.runner
        if self._prepared:
            if runner.status in ("closed", "new", "stopped", "exited"):
                runner.status = "idle"
            return
        runner.status = "starting"
        try:
            runner.cli = await asyncio.to_thread(
                locate_cli, runner.executable, cli=runner.cli_name, fallback_to_standin=False
            )
            self.cli_version = await asyncio.to_thread(cli_version, runner.cli)
            definition = runner.plan.require_definition()
            settings = adapter_settings(runner, definition)
            if runner.cli_name == "gemini" and runner.hooks:
                settings = await self._with_gemini_hooks(settings)
            elif runner.cli_name == "codex" and runner.hooks:
                settings = await self._with_codex_hooks(settings)
            adapter = adapter_for(runner.cli_name, settings)
            await asyncio.to_thread(adapter.prepare, runner.cli, self.cli_version)
            if runner.cli_name == "codex" and runner.hooks:
                await asyncio.to_thread(self._write_codex_hooks, settings.home)
            if runner.resume_next_start and not await asyncio.to_thread(
                adapter.has_conversation, runner.session_id
            ):
                raise SessionNotFound(
                    f"No conversation found with session ID {runner.session_id} in {adapter.settings.home} "
                    f"({runner.cli_name} cannot resume it)",
                    details={"session_id": runner.session_id, "cli": runner.cli_name},
                )
        except ElynavError:
            runner.status = "stopped"
            raise
        self._adapter = adapter
        self._prepared = True
        runner.status = "idle"
        runner.last_activity = time.monotonic()

    async def _hook_server_started(self) -> HookCommandServer:
        if self._hook_server is None:
            self._hook_server = HookCommandServer(self.runner.hooks.serve_command)
        await self._hook_server.start()
        return self._hook_server

    async def _with_codex_hooks(self, settings: PerTurnSettings) -> PerTurnSettings:
        """The settings that make codex exec run the runner's hooks (``cli/codex_hooks.py``)."""
        brought = workspace_codex_hooks(settings.workspace)
        if brought:
            raise InvalidInput(
                f"the workspace brings codex hooks of its own ({', '.join(str(path) for path in brought)}): "
                "running the runner's hooks needs --dangerously-bypass-hook-trust, which would run those "
                "unreviewed too; remove them or give this runner no hooks"
            )
        await self._hook_server_started()
        return dataclasses.replace(
            settings,
            cli_config={**settings.cli_config, **CODEX_HOOK_CONFIG},
            extra_arguments=(*settings.extra_arguments, *CODEX_HOOK_ARGUMENTS),
        )

    def _write_codex_hooks(self, home: Path) -> None:
        assert self._hook_server is not None
        content = codex_hooks_file(self.runner.hooks.hook_set, self._hook_server.command("codex"))
        (home / "hooks.json").write_text(json.dumps(content, indent=2), encoding="utf-8")

    async def _with_gemini_hooks(self, settings: PerTurnSettings) -> PerTurnSettings:
        """The settings with the runner's hooks as gemini command hooks (the hook server started)."""
        runner = self.runner
        await self._hook_server_started()
        assert self._hook_server is not None
        user_hooks = settings.cli_config.get("hooks")
        hooks = gemini_hook_settings(
            runner.hooks.hook_set,
            self._hook_server.command("gemini"),
            user_hooks if isinstance(user_hooks, dict) else None,
        )
        return dataclasses.replace(settings, cli_config={**settings.cli_config, "hooks": hooks})

    async def close_services(self) -> None:
        if self._hook_server is not None:
            await self._hook_server.stop()
            self._prepared = False  # the next start opens a new hook socket and writes it again

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode from the next turn on (the config home is written again)."""
        self.runner.permission_mode = mode
        self._prepared = False

    async def set_model(self, model: str | None) -> None:
        """Change the model from the next turn on."""
        self.runner.model = model
        self._prepared = False

    async def mcp_status(self) -> list[dict[str, Any]]:
        """The MCP servers written into the CLI's config (a process per turn reports no live status)."""
        await self.runner.start()
        names = self._adapter.mcp_server_names if self._adapter is not None else ()
        return [{"name": name, "status": "configured"} for name in names]

    # -- one turn ------------------------------------------------------------------------------------

    async def run_turn(self, turn: Turn, content: str | list[dict[str, Any]]) -> None:
        runner = self.runner
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
                        f"only text reaches {runner.cli_name} (a prompt argument): {len(dropped)} other content blocks left out",
                        code="CONTENT_DROPPED",
                    )
                )
        resuming = await self._resuming(turn, adapter)
        command = await asyncio.to_thread(  # codex writes the turn's schema file
            adapter.turn_command,
            prompt,
            conversation_id=runner.session_id,
            resuming=resuming,
            output_schema=turn.output_schema,
        )
        decoder = adapter.new_decoder()
        process = self._turn_process(turn, command, decoder)
        self.process = process
        runner.command_line = (
            [*command.argv[:-1], "<prompt>"] if not command.stdin_data else list(command.argv)
        )
        runner.status = "busy"
        try:
            await process.spawn()
        except ElynavError as error:
            self.finish_turn(turn, "failed", error=str(error), error_code=error.code)
            return
        self._turn_finalizer = register_process(runner, process)
        if wire_logger.isEnabledFor(logging.DEBUG):
            self._log_line(process, ">", shlex.join(command.argv).encode("utf-8"))
            if command.stdin_data:
                self._log_line(process, ">", command.stdin_data)
        if command.stdin_data:
            await process.write_and_close(command.stdin_data)
        turn.mark_written(self.total_cost_usd)
        runner.last_activity = time.monotonic()
        await self._watch_turn(turn, process)

    async def _resuming(self, turn: Turn, adapter: PerTurnAdapter) -> bool:
        """Whether this turn resumes the conversation; a new id when it cannot be resumed.

        Resumed: a conversation the CLI saved, once it holds something to resume (a failed first
        gemini turn leaves a session file gemini refuses both to resume and to create again).
        """
        runner = self.runner
        saved = bool(runner.session_id) and await asyncio.to_thread(
            adapter.has_conversation, runner.session_id
        )
        if saved and self._conversation_has_content:
            return True
        if runner.session_id and self._conversation_has_content:
            turn.push(
                AgentError(
                    f"{runner.cli_name} had not saved conversation {runner.session_id}: this turn starts a new one",
                    code="CONVERSATION_LOST",
                )
            )
        if not runner.session_id or saved or self._conversation_has_content:
            runner.session_id = adapter.new_conversation_id()
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
            max_line_bytes=self.runner.max_line_bytes,
            stderr_tail_bytes=self.runner.stderr_tail_bytes,
            stdin_devnull=command.stdin_devnull,
        )
        self._turn_states[turn] = state
        return process

    async def _watch_turn(self, turn: Turn, process: CliProcess) -> None:
        """The watchdog: turn, idle and retry bounds, descendants recorded while tools run."""
        runner = self.runner
        state = self._turn_states[turn]
        started = time.monotonic()
        turn_deadline = started + runner.turn_timeout
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
                if state.retrying_since is not None and now - state.retrying_since >= runner.retry_timeout:
                    turn.request_abort(
                        "timeout",
                        f"{runner.cli_name} kept retrying the model API for {runner.retry_timeout:g} s "
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
        agent = self.runner.agent_name or "default"
        wire_logger.debug("%s %s %s %s", agent, process.label, direction, process.redactor.line(data))

    def _on_line(self, turn: Turn, decoder: PerTurnDecoder, state: _TurnState, line: bytes) -> None:
        self.runner.last_activity = time.monotonic()
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
            self.runner.last_started = event
            if event.session_id:
                self.runner.session_id = event.session_id
        elif isinstance(event, TextDelta | ThinkingDelta | ToolUse):
            self._conversation_has_content = True  # something the CLI saves and can resume
        if turn.done:
            self.keep_stray(event)
            return
        turn.push(event)
        if isinstance(event, TurnEnded):
            self._end_from_terminal_line(turn, event)

    def _end_from_terminal_line(self, turn: Turn, ended: TurnEnded) -> None:
        outcome, error, error_code = self.outcome_of(turn, ended)
        self.finish_turn(turn, outcome, ended=ended, error=error, error_code=error_code)
        process = self.process
        if process is not None and turn.abort_outcome is None:
            self._reap_in_background(process, grace=self.runner.interrupt_timeout)

    def before_finish(self, turn: Turn, outcome: Outcome) -> None:
        if outcome in ("cancelled", "timeout", "failed") and self._turn_started(turn):
            # The CLI recorded the prompt and nothing rolled it back (an API error does, in gemini).
            self._conversation_has_content = True

    @staticmethod
    def _turn_started(turn: Turn) -> bool:
        return any(isinstance(event, AgentStarted) for event in turn.events)

    def _on_exit(self, turn: Turn, decoder: PerTurnDecoder, process: CliProcess, returncode: int) -> None:
        assert self._adapter is not None
        runner = self.runner
        conversation_id = self._adapter.after_turn(decoder)
        if conversation_id:
            runner.session_id = conversation_id
        runner.resume_next_start = False  # a new runner resumes; this one decides per turn
        lost = self._adapter.lost_conversation(process.stderr.text(max_chars=4000))
        if lost:  # the next turn starts a new conversation instead of failing the same way
            runner.session_id = self._adapter.new_conversation_id()
            self._conversation_has_content = False
        if not turn.done and not turn.aborting:
            verdict = decoder.verdict(returncode)
            error_code = "CLI_EXITED" if verdict.outcome == "failed" else ""
            reason = verdict.reason + ("; the next turn starts a new conversation" if lost else "")
            self.finish_turn(turn, verdict.outcome, error=reason, error_code=error_code)
        self._reap_in_background(process, grace=0.0)

    # -- stopping a turn --------------------------------------------------------------------------------

    async def interrupt_or_stop(self, turn: Turn, outcome: Outcome, reason: str) -> None:
        runner = self.runner
        process = self.process
        if turn.done:
            return
        if not turn.written or process is None or not process.is_running:
            self.finish_turn(turn, outcome, error=reason)
            return
        await process.record_descendants_in_thread()
        process.signal_group(signal.SIGINT)  # codex ends its command on SIGINT (not on SIGTERM)
        if await _wait_event(process.exited, min(runner.settle_timeout, runner.interrupt_timeout)):
            self.finish_turn(turn, outcome, error=reason)
        else:
            self.finish_turn(
                turn,
                outcome,
                error=f"{reason}; {runner.cli_name} did not stop within {runner.settle_timeout:g} s and is being stopped",
            )
            runner.status = "stopping"
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
            bounds = self.runner.stop_bounds
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
            if self.runner.status in ("stopping", "busy"):
                self.runner.status = "idle"


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
