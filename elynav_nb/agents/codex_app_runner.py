"""``CodexAppServerRunner``: a codex conversation in one persistent ``codex app-server`` process.

Where it sits: ``AgentRunner(definition, workspace, cli="codex")`` makes one of these (the
default ``cli_mode="app-server"``; ``cli_mode="exec"`` gives the process-per-turn
``PerTurnRunner``). It is the claude runner with another wire: the same process supervision,
watchdog, bounded stop, permission prompts, history and display, with JSON-RPC instead of
stream-json control frames (``cli/codex_app_codec.py`` decodes and encodes; the codex adapter of
``per_turn_clis`` writes the runner's ``CODEX_HOME``).

How data flows::

    start(): locate codex, write CODEX_HOME/config.toml -> spawn ``codex app-server``
      -> initialize / initialized -> thread/start (or thread/resume <thread id>): session_id = thread id
    send(text) -> turn/start {threadId, input} -> notifications -> codec -> AgentEvent -> Turn
      item/commandExecution/requestApproval -> PermissionRequest -> allow()/deny() -> accept/decline
      turn/completed -> TurnEnded -> TurnResult (the process stays for the next turn)
    cancel / timeouts -> turn/interrupt (the process stays; tool processes of the turn are ended)
      -> no turn/completed within settle_timeout: the process is stopped in bounded steps, and the
         next send() starts a new one that resumes the thread (thread/resume), as after a kill -9

Permissions: ``permission_prompts=True`` (or a ``permission_handler``) runs codex with approval
policy ``untrusted`` (it asks before any command it does not know to be safe) in the sandbox
of the permission mode; without prompts the policy is ``never``. ``bypassPermissions`` runs
without sandbox. MCP tools are approved by the config (``default_tools_approval_mode``).

Retries: codex retries an unreachable model API on its own (``error`` with ``willRetry``); after
``retry_timeout`` seconds of nothing but those the turn ends ``timeout``. codex reports no cost.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from elynav_nb.agents.adapter_settings import AdapterSettingsMixin
from elynav_nb.agents.cli.codex_app_codec import CodexAppServerCodec
from elynav_nb.agents.cli.codex_command import build_codex_app_server, thread_policy
from elynav_nb.agents.definitions import AgentDefinition
from elynav_nb.agents.events import AgentError, ControlResponse, PermissionRequest, RawEvent
from elynav_nb.agents.locate import cli_version, locate_cli
from elynav_nb.agents.per_turn_clis import CodexAdapter, merged_limitations
from elynav_nb.agents.process import CliProcess
from elynav_nb.agents.runner import AgentRunner, Turn
from elynav_nb.errors import (
    AgentBusy,
    AgentTimeout,
    CliExited,
    CliStartFailed,
    ElynavError,
    InvalidInput,
    ProtocolError,
)

__all__ = ["CodexAppServerRunner"]

_RETRY_CODE = "CLI_RETRY"
_CLIENT_INFO = {"name": "elynav_nb", "title": "elynav-nb", "version": "0.1.0"}
_NOTES = (
    "codex answers permission prompts for commands only: allow(updated_input) runs the command as asked",
    "set_permission_mode restarts codex app-server on the same thread before the next turn",
)


class CodexAppServerRunner(AdapterSettingsMixin, AgentRunner):
    """A codex conversation over ``codex app-server`` (see the module docstring).

    Made by ``AgentRunner(..., cli="codex")``; takes the same arguments. ``session_id`` is the
    codex thread id (empty until the first start, unless ``resume=<thread id>``).
    """

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        if self._session_id_given:
            raise InvalidInput(
                "codex names its threads itself: give resume=<thread id> to continue one, not session_id"
            )
        if not self._resume_next_start:
            self.session_id = ""
        self.cli_version = ""
        self._resume_asked = self._resume_next_start
        self._adapter: CodexAdapter | None = None
        self._decoder = CodexAppServerCodec()
        self._notices: list[AgentError] = []
        self._turn_start_answer: asyncio.Future[ControlResponse] | None = None
        self._model_for_next_turn: str | None = None
        self._retrying_since: float | None = None
        self._last_retry_message = ""
        self._planned_limitations: tuple[str, ...] = ()
        if isinstance(self.definition, AgentDefinition):
            adapter = CodexAdapter(self._settings(self.definition), interactive=True)
            self._planned_limitations = adapter.planned_limitations()

    @property
    def _codec(self) -> CodexAppServerCodec:
        """The runner's decoder, as the codec it is (one per process; it also encodes our lines)."""
        assert isinstance(self._decoder, CodexAppServerCodec)
        return self._decoder

    @property
    def limitations(self) -> tuple[str, ...]:
        """What codex cannot honour of the runner's settings and the agent definition."""
        planned = self._adapter.limitations if self._adapter is not None else self._planned_limitations
        return merged_limitations(None, (*planned, *_NOTES))

    # -- starting ----------------------------------------------------------------------------------

    async def _spawn_and_initialize(self) -> None:
        self.status = "starting"
        try:
            self.cli = await asyncio.to_thread(
                locate_cli, self.executable, cli="codex", fallback_to_standin=False
            )
            self.cli_version = await asyncio.to_thread(cli_version, self.cli)
            definition = await asyncio.to_thread(self._load_definition)
            adapter = CodexAdapter(self._settings(definition), interactive=True)
            await asyncio.to_thread(adapter.prepare, self.cli, self.cli_version)
        except ElynavError:
            self.status = "stopped"
            raise
        assert adapter.plan is not None
        self._adapter = adapter
        command = build_codex_app_server(
            self.cli.argv,
            adapter.plan,
            parent_environment=adapter.settings.parent_environment,
            environment=adapter.settings.environment_overrides,
        )
        self.command_line = list(command.argv)
        self._decoder = CodexAppServerCodec(model=adapter.plan.model or "", cli_version=self.cli_version)
        process = await self._spawn_process(command.argv, command.cwd, dict(command.environment))
        try:
            await self._call("initialize", clientInfo=_CLIENT_INFO)
            await process.write(self._codec.notification("initialized"))
            thread_id = await self._open_thread(adapter)
        except (CliExited, AgentTimeout, ProtocolError) as error:
            await process.stop(self.stop_bounds)
            self.status = "stopped"
            if isinstance(error, ProtocolError) and self._resume_asked:
                raise CliStartFailed(
                    f"No conversation found with thread id {self.session_id} in {adapter.settings.home} "
                    f"(codex cannot resume it: {error})",
                    details={"session_id": self.session_id, "cli": "codex"},
                ) from error
            if isinstance(error, ProtocolError):  # codex runs, and refused initialize or thread/start
                raise CliStartFailed(str(error), details=dict(error.details)) from error
            raise self._start_failure(error) from error
        self.session_id = thread_id
        self._codec.thread_id = thread_id
        self._resume_next_start = True  # a later start (after a crash, a stop) continues this thread
        self._resume_asked = False
        self.status = "idle"
        self.last_activity = time.monotonic()

    async def _call(self, method: str, **params: Any) -> dict[str, Any]:
        """A request answered within ``start_timeout``; ``PROTOCOL_ERROR`` when codex refuses it."""
        response = await self._control(method, timeout=self.start_timeout, **params)
        if not response.ok:
            raise ProtocolError(
                f"codex app-server refused {method}: {response.error}", details={"method": method}
            )
        return response.response

    async def _open_thread(self, adapter: CodexAdapter) -> str:
        """Resume the runner's thread when it has one, else start a new one; the thread id."""
        assert adapter.plan is not None
        params: dict[str, Any] = {
            "cwd": str(self.workspace),
            **thread_policy(adapter.plan),
        }
        if adapter.plan.model:
            params["model"] = adapter.plan.model
        if self._resume_next_start and self.session_id:
            try:
                answer = await self._call("thread/resume", threadId=self.session_id, **params)
                return str(answer.get("thread", {}).get("id") or self.session_id)
            except ProtocolError as error:
                if self._resume_asked:
                    raise
                self._notices.append(
                    AgentError(
                        f"codex could not resume thread {self.session_id} ({error}): this turn starts a new one",
                        code="CONVERSATION_LOST",
                    )
                )
        answer = await self._call("thread/start", **params)
        thread_id = answer.get("thread", {}).get("id")
        if not isinstance(thread_id, str) or not thread_id:
            raise ProtocolError("codex app-server answered thread/start without a thread id")
        return thread_id

    # -- the wire ------------------------------------------------------------------------------------

    async def _write_prompt(
        self, turn: Turn, process: CliProcess, content: str | list[dict[str, Any]]
    ) -> None:
        for notice in self._notices:
            turn._push(notice)
        self._notices.clear()
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        text_blocks = [
            {"type": "text", "text": str(block.get("text", ""))}
            for block in blocks
            if isinstance(block, dict) and block.get("type") == "text"
        ]
        if len(text_blocks) < len(blocks):
            turn._push(
                AgentError(
                    f"only text reaches codex: {len(blocks) - len(text_blocks)} other content blocks left out",
                    code="CONTENT_DROPPED",
                )
            )
        params: dict[str, Any] = {"threadId": self.session_id, "input": text_blocks}
        if self._model_for_next_turn:
            params["model"] = self._model_for_next_turn
        self._retrying_since = None
        self._codec.turn_id = ""  # known from the answer (or turn/started): a cancel waits for it
        self._control_counter += 1
        request_id = f"turn_{self._control_counter}"
        answered: asyncio.Future[ControlResponse] = asyncio.get_running_loop().create_future()
        self._pending_controls[request_id] = answered
        self._turn_start_answer = answered
        answered.add_done_callback(lambda future: self._on_turn_started(turn, future))
        await process.write(self._codec.request(request_id, "turn/start", params))

    def _on_turn_started(self, turn: Turn, answered: asyncio.Future[ControlResponse]) -> None:
        if answered.cancelled() or answered.exception() is not None:
            return  # the process exited: _handle_exit settles the turn
        response = answered.result()
        if response.ok:
            turn_id = response.response.get("turn", {}).get("id")
            if isinstance(turn_id, str) and turn_id:
                self._codec.turn_id = turn_id
            return
        self._finish_turn(
            turn,
            "failed",
            error=f"codex app-server refused the turn: {response.error}",
            error_code="PROTOCOL_ERROR",
        )

    async def _interrupt_request(self) -> ControlResponse:
        answer = self._turn_start_answer
        if not self._codec.turn_id and answer is not None:  # a cancel right after send(): its turn id first
            await asyncio.wait([answer], timeout=self.interrupt_timeout)
        return await self._control(
            "turn/interrupt",
            timeout=self.interrupt_timeout,
            threadId=self.session_id,
            turnId=self._codec.turn_id,
        )

    def _encode_control(self, request_id: str, subtype: str, fields: dict[str, Any]) -> bytes:
        return self._codec.request(request_id, subtype, fields)

    def _encode_control_error(self, request_id: str, message: str) -> bytes:
        return self._codec.error(request_id, message)

    def _encode_permission_answer(
        self, request: PermissionRequest, allowed: bool, message: str, updated_input: dict[str, Any] | None
    ) -> bytes:
        return self._codec.permission_answer(request.request_id, allowed)

    def _route_event(self, event: Any) -> None:
        if isinstance(event, AgentError) and event.code == _RETRY_CODE:
            if self._retrying_since is None:
                self._retrying_since = time.monotonic()
            self._last_retry_message = event.message
        elif not isinstance(event, RawEvent):
            self._retrying_since = None
        super()._route_event(event)

    def _stall_reason(self, now: float) -> str:
        if self._retrying_since is None or now - self._retrying_since < self.retry_timeout:
            return ""
        return (
            f"codex kept retrying the model API for {self.retry_timeout:g} s "
            f"(last: {self._last_retry_message[:200]})"
        )

    # -- settings between turns ----------------------------------------------------------------------

    async def set_model(self, model: str | None) -> None:
        """Change the model from the next turn on (``turn/start`` carries it)."""
        self.model = model
        self._model_for_next_turn = model

    async def set_permission_mode(self, mode: str) -> None:
        """Change the permission mode: codex app-server restarts on the same thread before the next turn."""
        if self.busy:
            raise AgentBusy("change codex's permission mode between turns (a turn is running)")
        self.permission_mode = mode
        if self.is_running:
            await self._stop_process()

    async def mcp_status(self) -> list[dict[str, Any]]:
        """The MCP servers of the running codex and their status (``mcpServerStatus/list``)."""
        await self.start()
        answer = await self._call("mcpServerStatus/list")
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

    # -- display -------------------------------------------------------------------------------------

    def __repr__(self) -> str:
        cli = self.cli.label if self.cli is not None else "codex (not located yet)"
        version = f" {self.cli_version}" if self.cli_version else ""
        return (
            f"<AgentRunner agent={self.agent_name!r} status={self.status} cli={cli}{version} "
            f"mode=app-server session={self.session_id or '(new)'} turns={len(self.history)} "
            f"limitations=[{'; '.join(self.limitations)}]>"
        )
