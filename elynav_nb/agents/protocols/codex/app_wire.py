"""``CodexAppServerWire``: codex's ``app-server`` JSON-RPC protocol as a wire (no I/O of its own).

Where it sits: the persistent driver's wire for ``cli="codex"`` (the default ``cli_mode="app-server"``).
It speaks through the driver's ``WireChannel`` and decodes with the pure ``CodexAppServerCodec``;
``codex/launch.py`` builds the command line and the thread policy, the codex adapter writes
``CODEX_HOME`` before the spawn.

How data flows::

    open: initialize / initialized -> thread/resume <thread id> (after a restart, a crash, resume=)
          or thread/start -> the thread id becomes the conversation's session id
    send_prompt: turn/start {threadId, input[, outputSchema]}; its answer carries the turn id a cancel
          needs. ``outputSchema`` (the turn's schema, wrapped when its root is not an object) constrains
          the turn's final agent message: that message is the JSON text the driver validates
    interrupt: turn/interrupt {threadId, turnId} (the process stays for the next turn)
    permission answers: accept / decline, echoing codex's own (integer) request ids
    observe: ``error`` notifications with ``willRetry`` (CLI_RETRY) start a retry run; after
             ``retry_timeout`` seconds of nothing else the watchdog ends the turn (``stall_reason``)

A thread that cannot be resumed: with ``resume=`` given, the start fails (``CLI_START_FAILED``);
after a crash, a new thread starts and the next turn gets a ``CONVERSATION_LOST`` note.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    ControlFrame,
    ControlResponse,
    PermissionAnswer,
    PermissionRequest,
    RawEvent,
)
from elynav_nb.agents.protocols.codex.app_codec import CodexAppServerCodec
from elynav_nb.agents.protocols.codex.launch import CodexRunnerPlan, thread_policy
from elynav_nb.agents.protocols.wire import TurnSink, WireChannel, WireDefaults, start_failure
from elynav_nb.errors import CliStartFailed, ElynavError, ProtocolError, SessionNotFound

__all__ = ["CLIENT_INFO", "CodexAppServerWire"]

CLIENT_INFO = {"name": "elynav_nb", "title": "elynav-nb", "version": "0.1.0"}
_RETRY_CODE = "CLI_RETRY"


class CodexAppServerWire(WireDefaults):
    """``codex app-server`` (see the module docstring). One per process: a restart makes a new one."""

    def __init__(
        self,
        *,
        plan: CodexRunnerPlan,
        cli_version: str,
        workspace: Path,
        home: Path,
        thread_id: str,
        resume_asked: bool,
        set_thread_id: Callable[[str], None],
        start_timeout: float,
        interrupt_timeout: float,
        retry_timeout: float,
        model_for_next_turn: str | None = None,
    ) -> None:
        self.plan = plan
        self.codec = CodexAppServerCodec(model=plan.model or "", cli_version=cli_version)
        self.workspace = workspace
        self.home = home
        self.thread_id = thread_id
        self.resume_asked = resume_asked  # resume= was given: a thread that cannot be resumed fails the start
        self._set_thread_id = set_thread_id
        self.start_timeout = start_timeout
        self.interrupt_timeout = interrupt_timeout
        self.retry_timeout = retry_timeout
        self.model_for_next_turn = model_for_next_turn
        self.notices: list[AgentError] = []  # said in the next turn (a lost thread)
        self._turn_start_answer: asyncio.Future[ControlResponse] | None = None
        self._retrying_since: float | None = None
        self._last_retry_message = ""

    # -- reading and encoding ----------------------------------------------------------------------

    def decode_line(self, line: bytes | str) -> Sequence[AgentEvent | ControlFrame]:
        return self.codec.decode_line(line)

    def encode_request(self, request_id: str, method: str, fields: dict[str, Any]) -> bytes:
        return self.codec.request(request_id, method, fields)

    def encode_error(self, request_id: str, message: str) -> bytes:
        return self.codec.error(request_id, message)

    def encode_success(self, request_id: str, answer: dict[str, Any]) -> bytes:
        return self.codec.result(request_id, answer)

    def encode_permission_answer(self, request: PermissionRequest, answer: PermissionAnswer) -> bytes:
        return self.codec.permission_answer(request.request_id, answer.allowed, always=answer.always)

    # -- the conversation --------------------------------------------------------------------------

    async def _call(self, channel: WireChannel, method: str, **params: Any) -> dict[str, Any]:
        """A request answered within ``start_timeout``; ``PROTOCOL_ERROR`` when codex refuses it."""
        response = await channel.request(method, timeout=self.start_timeout, **params)
        if not response.ok:
            raise ProtocolError(
                f"codex app-server refused {method}: {response.error}", details={"method": method}
            )
        return response.response

    async def open(self, channel: WireChannel) -> None:
        await self._call(channel, "initialize", clientInfo=CLIENT_INFO)
        await channel.write(self.codec.notification("initialized"))
        thread_id = await self._open_thread(channel)
        self.thread_id = thread_id
        self.codec.thread_id = thread_id
        self._set_thread_id(thread_id)
        self.resume_asked = False

    async def _open_thread(self, channel: WireChannel) -> str:
        """Resume the runner's thread when it has one, else start a new one; the thread id."""
        params: dict[str, Any] = {"cwd": str(self.workspace), **thread_policy(self.plan)}
        if self.plan.model:
            params["model"] = self.plan.model
        if self.thread_id:
            try:
                answer = await self._call(channel, "thread/resume", threadId=self.thread_id, **params)
                return str(answer.get("thread", {}).get("id") or self.thread_id)
            except ProtocolError as error:
                if self.resume_asked:
                    raise
                self.notices.append(
                    AgentError(
                        f"codex could not resume thread {self.thread_id} ({error}): this turn starts a new one",
                        code="CONVERSATION_LOST",
                    )
                )
        answer = await self._call(channel, "thread/start", **params)
        thread_id = answer.get("thread", {}).get("id")
        if not isinstance(thread_id, str) or not thread_id:
            raise ProtocolError("codex app-server answered thread/start without a thread id")
        return thread_id

    def describe_start_failure(self, error: ElynavError, details: dict[str, Any]) -> ElynavError:
        if isinstance(error, ProtocolError) and self.resume_asked:
            return SessionNotFound(
                f"No conversation found with thread id {self.thread_id} in {self.home} "
                f"(codex cannot resume it: {error})",
                details={"session_id": self.thread_id, "cli": "codex"},
            )
        if isinstance(error, ProtocolError):  # codex runs, and refused initialize or thread/start
            return CliStartFailed(str(error), details=dict(error.details))
        return start_failure(error, details, self.start_timeout)

    async def send_prompt(
        self, channel: WireChannel, turn: TurnSink, content: str | list[dict[str, Any]]
    ) -> None:
        for notice in self.notices:
            turn.push(notice)
        self.notices.clear()
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        text_blocks = [
            {"type": "text", "text": str(block.get("text", ""))}
            for block in blocks
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        if len(text_blocks) < len(blocks):
            turn.push(
                AgentError(
                    f"only text reaches codex: {len(blocks) - len(text_blocks)} other content blocks left out",
                    code="CONTENT_DROPPED",
                )
            )
        params: dict[str, Any] = {"threadId": self.thread_id, "input": text_blocks}
        if self.model_for_next_turn:
            params["model"] = self.model_for_next_turn
        output_schema = getattr(turn, "output_schema", None)  # a sink without one asks for none
        if output_schema is not None:
            params["outputSchema"] = output_schema.wire_schema
        self._retrying_since = None
        self.codec.turn_id = ""  # known from the answer (or turn/started): a cancel waits for it
        answered = await channel.start_request(channel.next_request_id("turn"), "turn/start", params)
        self._turn_start_answer = answered
        answered.add_done_callback(lambda future: self._on_turn_started(channel, turn, future))

    def _on_turn_started(
        self, channel: WireChannel, turn: TurnSink, answered: asyncio.Future[ControlResponse]
    ) -> None:
        if answered.cancelled() or answered.exception() is not None:
            return  # the process exited: the driver settles the turn
        response = answered.result()
        if response.ok:
            turn_id = response.response.get("turn", {}).get("id")
            if isinstance(turn_id, str) and turn_id:
                self.codec.turn_id = turn_id
            return
        channel.end_turn(
            turn,
            "failed",
            error=f"codex app-server refused the turn: {response.error}",
            error_code="PROTOCOL_ERROR",
        )

    async def interrupt(self, channel: WireChannel) -> Any:
        answer = self._turn_start_answer
        if not self.codec.turn_id and answer is not None:  # a cancel right after send(): its turn id first
            await asyncio.wait([answer], timeout=self.interrupt_timeout)
        return await channel.request(
            "turn/interrupt",
            timeout=self.interrupt_timeout,
            threadId=self.thread_id,
            turnId=self.codec.turn_id,
        )

    def observe(self, event: AgentEvent) -> None:
        if isinstance(event, AgentError) and event.code == _RETRY_CODE:
            if self._retrying_since is None:
                self._retrying_since = time.monotonic()
            self._last_retry_message = event.message
        elif not isinstance(event, RawEvent):
            self._retrying_since = None

    def stall_reason(self, now: float) -> str:
        if self._retrying_since is None or now - self._retrying_since < self.retry_timeout:
            return ""
        return (
            f"codex kept retrying the model API for {self.retry_timeout:g} s "
            f"(last: {self._last_retry_message[:200]})"
        )

    # -- settings between turns ----------------------------------------------------------------------

    async def set_model(self, channel: WireChannel, model: str | None) -> None:
        self.model_for_next_turn = model  # turn/start carries it

    async def set_permission_mode(self, channel: WireChannel, mode: str) -> bool:
        return True  # the sandbox and approval policy are the thread's: codex restarts on the same thread

    async def mcp_status(self, channel: WireChannel) -> list[dict[str, Any]]:
        answer = await self._call(channel, "mcpServerStatus/list")
        servers = answer.get("data") or []
        return [
            {
                "name": server.get("name"),
                "status": server.get("runtimeStatus") or "configured",
                "tools": sorted(server.get("tools") or {}),
            }
            for server in servers
            if isinstance(server, dict)
        ]
