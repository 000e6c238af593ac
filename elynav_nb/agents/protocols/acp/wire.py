"""``AcpWire``: any Agent Client Protocol agent as a wire of the persistent driver (no I/O of its own).

Where it sits: the wire of ``AgentRunner(cli="acp", executable=[...])``. It speaks through the
driver's ``WireChannel`` and decodes with the pure ``AcpCodec``; ``AcpLauncher`` (``protocols/launcher.py``)
builds the command, the MCP server list and the client services (``files.py``, ``terminals.py``),
whose I/O the wire only awaits.

How data flows::

    open: initialize {protocolVersion 1, clientCapabilities: fs, terminal} -> the agent's capabilities
          -> session/load <id> (after a crash or a restart, resume=; where it advertises loadSession),
             then a quiet moment with no session/update (an agent that replays after its answer)
             or session/new {cwd: workspace, mcpServers: .mcp.json's + kernel tools}
             (an agent that asks to authenticate first: authenticate with a method its environment
             holds, then session/new once more) -> the session id becomes the conversation's
          -> session/set_mode <permission_mode> where the agent offers that mode (a session/load
             answer that leaves its modes out: asked anyway, the agent's refusal a MODE_NOT_OFFERED note)
    send_prompt: session/prompt {sessionId, prompt}; its answer (stopReason) ends the turn (the codec)
    interrupt: every pending permission prompt answered ``cancelled``, then session/cancel
    a request of the agent: fs/* and terminal/* -> the client services; anything else -> -32601
    a turn ends or the process goes: ``release_turn_resources`` kills its terminals

A session that cannot be loaded: with ``resume=`` given the start fails (``CLI_START_FAILED``); after a
crash a new session starts and the next turn carries a ``CONVERSATION_LOST`` note (in its events and
the history), as for codex.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    ControlFrame,
    ControlRequest,
    ControlResponse,
    PermissionAnswer,
    PermissionRequest,
)
from elynav_nb.agents.output_schema import prompt_with_schema
from elynav_nb.agents.protocols.acp.codec import (
    ACP_PROTOCOL_VERSION,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    AcpCodec,
)
from elynav_nb.agents.protocols.acp.files import WorkspaceFiles
from elynav_nb.agents.protocols.acp.terminals import WorkspaceTerminals
from elynav_nb.agents.protocols.wire import TurnSink, WireChannel, WireDefaults, start_failure
from elynav_nb.errors import (
    CliStartFailed,
    ElynavError,
    InvalidInput,
    NotAllowed,
    NotFound,
    ProtocolError,
    SessionNotFound,
)

__all__ = ["AUTH_REQUIRED_CODE", "CLIENT_INFO", "AcpWire", "usable_auth_method"]

CLIENT_INFO = {"name": "elynav_nb", "title": "elynav-nb", "version": "0.1.0"}
AUTH_REQUIRED_CODE = -32000
# ACP says an agent answers session/load once the history is replayed; gemini 0.61.0 answers first and
# streams the replay after (not awaited), into the next prompt. After a load the wire waits until no
# session/update came for REPLAY_QUIET seconds (at most REPLAY_SETTLE_BOUND) before the first prompt.
REPLAY_QUIET = 0.3
REPLAY_SETTLE_BOUND = 5.0
_FILE_METHODS = ("fs/read_text_file", "fs/write_text_file")
_TERMINAL_METHODS = (
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
)


def usable_auth_method(methods: Sequence[Any], environment: Mapping[str, str]) -> str:
    """The first auth method the agent's environment can satisfy ("" when none can).

    An ``env_var`` method whose variables are all set; else a method whose id names an API key the
    environment holds (gemini's ``gemini-api-key`` with ``GEMINI_API_KEY``). Logins in a browser never.
    """
    for method in methods:
        if not isinstance(method, dict) or not isinstance(method.get("id"), str):
            continue
        names = [
            str(variable.get("name")) for variable in method.get("vars") or [] if isinstance(variable, dict)
        ]
        if method.get("type") == "env_var" and names and all(environment.get(name) for name in names):
            return str(method["id"])
    for method in methods:
        method_id = method.get("id") if isinstance(method, dict) else None
        if isinstance(method_id, str) and method_id.endswith("api-key"):
            variable = method_id.replace("-", "_").upper()  # gemini-api-key -> GEMINI_API_KEY
            if environment.get(variable):
                return method_id
    return ""


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class AcpWire(WireDefaults):
    """One ACP agent process (see the module docstring). A restart makes a new one."""

    def __init__(
        self,
        *,
        workspace: Path,
        session_id: str,
        resume_asked: bool,
        set_session_id: Callable[[str], None],
        mcp_servers: Sequence[dict[str, Any]],
        environment: Mapping[str, str],
        start_timeout: float,
        interrupt_timeout: float,
        permission_mode: str | None = None,
        model: str | None = None,
        instructions: str = "",
        files: WorkspaceFiles | None = None,
        terminals: WorkspaceTerminals | None = None,
        label: str = "the ACP agent",
    ) -> None:
        self.codec = AcpCodec()
        self.workspace = workspace
        self.session_id = session_id
        self.resume_asked = resume_asked
        self._set_session_id = set_session_id
        self.mcp_servers = list(mcp_servers)
        self.environment = environment
        self.start_timeout = start_timeout
        self.interrupt_timeout = interrupt_timeout
        self.permission_mode = permission_mode
        self.model = model
        self.instructions = instructions  # the definition's prompt: it opens a new session's first turn
        self._session_is_new = False
        self.files = files
        self.terminals = terminals
        self.label = label
        self.agent_info: dict[str, Any] = {}
        self.agent_capabilities: dict[str, Any] = {}
        # the session modes and the models the agent offers (ids); None: a session/load answer left
        # them out (ACP allows it), so the agent is asked
        self.modes: list[str] | None = []
        self.models: list[str] | None = []
        self.notices: list[AgentError] = []  # said in the next turn (a lost session, a mode not offered)
        self._cleanup: set[asyncio.Task[Any]] = set()
        self._refusal_codes: dict[str, int] = {}  # served requests refused: their JSON-RPC error code

    # -- reading and encoding ----------------------------------------------------------------------

    def decode_line(self, line: bytes | str) -> Sequence[AgentEvent | ControlFrame]:
        return self.codec.decode_line(line)

    def encode_request(self, request_id: str, method: str, fields: dict[str, Any]) -> bytes:
        return self.codec.request(request_id, method, fields)

    def encode_error(self, request_id: str, message: str) -> bytes:
        code = self._refusal_codes.pop(request_id, None)
        if code is None:
            served = self.codec.method_of(request_id) in self._served_methods()
            code = INTERNAL_ERROR if served else METHOD_NOT_FOUND
        return self.codec.error(request_id, message, code)

    def encode_success(self, request_id: str, answer: dict[str, Any]) -> bytes:
        return self.codec.result(request_id, answer)

    def _served_methods(self) -> tuple[str, ...]:
        return (_FILE_METHODS if self.files else ()) + (_TERMINAL_METHODS if self.terminals else ())

    def serve_request(self, request: ControlRequest) -> Awaitable[dict[str, Any]] | None:
        """fs and terminal calls, where offered; None (answered -32601) for anything else."""
        method = request.subtype
        files, terminals = self.files, self.terminals
        handler: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None = None
        if files is not None and method == "fs/read_text_file":
            handler = files.read_text_file
        elif files is not None and method == "fs/write_text_file":
            handler = files.write_text_file
        elif terminals is not None and method in _TERMINAL_METHODS:
            handler = getattr(terminals, method.removeprefix("terminal/"))
        if handler is None:
            return None
        return self._served(request.request_id, handler(request.request))

    async def _served(self, request_id: str, answer: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        """``answer``, its typed refusal noted for ``encode_error`` (ACP's code: -32002 not found...)."""
        try:
            return await answer
        except ElynavError as error:
            if isinstance(error, NotFound):
                self._refusal_codes[request_id] = RESOURCE_NOT_FOUND
            elif isinstance(error, InvalidInput | NotAllowed):
                self._refusal_codes[request_id] = INVALID_PARAMS
            raise

    def encode_permission_answer(self, request: PermissionRequest, answer: PermissionAnswer) -> bytes:
        return self.codec.permission_answer(request.request_id, answer.allowed, always=answer.always)

    # -- the conversation --------------------------------------------------------------------------

    async def _call(self, channel: WireChannel, method: str, **params: Any) -> ControlResponse:
        return await channel.request(method, timeout=self.start_timeout, **params)

    async def _must(self, channel: WireChannel, method: str, **params: Any) -> dict[str, Any]:
        response = await self._call(channel, method, **params)
        if not response.ok:
            raise ProtocolError(
                f"{self.label} refused {method}: {response.error}", details={"method": method}
            )
        return response.response

    async def open(self, channel: WireChannel) -> None:
        answer = await self._must(
            channel,
            "initialize",
            protocolVersion=ACP_PROTOCOL_VERSION,
            clientCapabilities={
                "fs": {"readTextFile": self.files is not None, "writeTextFile": self.files is not None},
                "terminal": self.terminals is not None,
            },
            clientInfo=CLIENT_INFO,
        )
        version = answer.get("protocolVersion")
        if version != ACP_PROTOCOL_VERSION:
            raise ProtocolError(
                f"{self.label} speaks ACP version {version!r}; elynav_nb speaks {ACP_PROTOCOL_VERSION}",
                details={"protocol_version": str(version)},
            )
        self.agent_capabilities = dict(answer.get("agentCapabilities") or {})
        self.agent_info = dict(answer.get("agentInfo") or {})
        self.codec.agent_name = str(self.agent_info.get("name") or "")
        self.codec.agent_version = str(self.agent_info.get("version") or "")
        self.codec.is_standin = self.codec.agent_name == "elynav-acp-standin"
        if self.codec.agent_name and not self.codec.is_standin:
            self.label = f"the ACP agent {self.codec.agent_name}"
        auth_methods = list(answer.get("authMethods") or [])
        session = await self._open_session(channel, auth_methods)
        self._read_session(session)
        self._set_session_id(self.session_id)
        self.codec.session_id = self.session_id
        self.resume_asked = False
        if self.permission_mode:
            await self._apply_mode(channel, self.permission_mode, at_start=True)
        if self.model:
            await self._apply_model(channel, self.model, at_start=True)

    async def _open_session(self, channel: WireChannel, auth_methods: list[Any]) -> dict[str, Any]:
        """Load the runner's session where the agent can, else start a new one; the answer."""
        params = {"cwd": str(self.workspace), "mcpServers": self.mcp_servers}
        if self.session_id:
            if self.agent_capabilities.get("loadSession"):
                response = await self._call(channel, "session/load", sessionId=self.session_id, **params)
                if response.ok:
                    self._session_is_new = False
                    await self._replay_settled()
                    return response.response
                reason = f"it refused session/load: {response.error}"
            else:
                reason = "it does not advertise loadSession"
            if self.resume_asked:
                raise SessionNotFound(
                    f"{self.label} cannot load session {self.session_id} ({reason})",
                    details={"session_id": self.session_id, "cli": "acp"},
                )
            self.notices.append(
                AgentError(
                    f"{self.label} could not load session {self.session_id} ({reason}): "
                    "this turn starts a new session, without the earlier turns",
                    code="CONVERSATION_LOST",
                )
            )
        response = await self._call(channel, "session/new", **params)
        if not response.ok and auth_methods:
            method = usable_auth_method(auth_methods, self.environment)
            if method:
                await self._must(channel, "authenticate", methodId=method)
                response = await self._call(channel, "session/new", **params)
        if not response.ok:
            raise ProtocolError(f"{self.label} refused session/new: {response.error}")
        session_id = response.response.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            raise ProtocolError(f"{self.label} answered session/new without a sessionId")
        self.session_id = session_id
        self._session_is_new = True
        return response.response

    async def _replay_settled(self) -> None:
        """Wait (bounded) until the agent has sent no session/update for ``REPLAY_QUIET`` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + REPLAY_SETTLE_BOUND
        seen = -1
        while seen != self.codec.updates_decoded and loop.time() < deadline:
            seen = self.codec.updates_decoded
            await asyncio.sleep(REPLAY_QUIET)

    def _read_session(self, session: Mapping[str, Any]) -> None:
        modes = session.get("modes") if isinstance(session.get("modes"), dict) else {}
        assert isinstance(modes, dict)
        # a new session without modes has none (ACP); a loaded one may leave them out of its answer
        said = bool(modes) or self._session_is_new
        self.modes = (
            [str(mode.get("id")) for mode in modes.get("availableModes") or [] if isinstance(mode, dict)]
            if said
            else None
        )
        models = session.get("models") if isinstance(session.get("models"), dict) else {}
        assert isinstance(models, dict)
        said = bool(models) or self._session_is_new
        self.models = (
            [
                str(model.get("modelId"))
                for model in models.get("availableModels") or []
                if isinstance(model, dict)
            ]
            if said
            else None
        )
        self.codec.model = str(models.get("currentModelId") or self.codec.model or "")

    async def _apply_mode(self, channel: WireChannel, mode: str, *, at_start: bool) -> None:
        await self._choose(channel, "session/set_mode", "modeId", mode, self.modes, at_start=at_start)

    async def _apply_model(self, channel: WireChannel, model: str, *, at_start: bool) -> None:
        if await self._choose(channel, "session/set_model", "modelId", model, self.models, at_start=at_start):
            self.codec.model = model

    async def _choose(
        self,
        channel: WireChannel,
        method: str,
        field: str,
        value: str,
        offered: list[str] | None,
        *,
        at_start: bool,
    ) -> bool:
        """Ask the agent for a session mode or a model; False (and a notice, at start) when it has none such.

        ``offered`` is None when the session's answer did not say (a ``session/load`` answered
        ``null``, as ACP allows): the agent is asked, and only its refusal counts.
        """
        what, code, detail = (
            ("session mode", "MODE_NOT_OFFERED", "permission_mode")
            if field == "modeId"
            else ("model", "MODEL_NOT_OFFERED", "model")
        )
        if offered is None:
            response = await self._call(channel, method, sessionId=self.session_id, **{field: value})
            if response.ok:
                return True
            problem = f"{self.label} refused {what} {value!r}: {response.error}"
        elif value in offered:
            await self._must(channel, method, sessionId=self.session_id, **{field: value})
            return True
        else:
            problem = f"{self.label} offers no {what} {value!r} (its {what}s: {', '.join(offered) or 'none'})"
        if not at_start:
            raise InvalidInput(problem, details={detail: value})
        self.notices.append(AgentError(f"{problem}: it runs in its own default", code=code))
        return False

    def describe_start_failure(self, error: ElynavError, details: dict[str, Any]) -> ElynavError:
        if isinstance(error, SessionNotFound):
            return error
        if isinstance(error, ProtocolError):  # the agent runs, and refused the handshake
            return CliStartFailed(str(error), details={**details, **error.details, "cli": "acp"})
        return start_failure(error, details, self.start_timeout)

    async def send_prompt(
        self, channel: WireChannel, turn: TurnSink, content: str | list[dict[str, Any]]
    ) -> None:
        channel.emit(self.codec.started())  # the runner learns the session and the agent's version
        for notice in self.notices:
            turn.push(notice)
        self.notices.clear()
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        prompt = [block for block in blocks if isinstance(block, dict) and self._accepts(block)]
        if len(prompt) < len(blocks):
            turn.push(
                AgentError(
                    f"{self.label} does not take {len(blocks) - len(prompt)} of the content blocks "
                    "(its promptCapabilities): left out",
                    code="CONTENT_DROPPED",
                )
            )
        if self._session_is_new and self.instructions.strip():
            prompt.insert(
                0, {"type": "text", "text": f"<instructions>\n{self.instructions.strip()}\n</instructions>"}
            )
        self._session_is_new = False
        schema = getattr(turn, "output_schema", None)
        if schema is not None:
            texts = [index for index, block in enumerate(prompt) if block.get("type") == "text"]
            if texts:
                last = texts[-1]
                prompt[last] = {
                    "type": "text",
                    "text": prompt_with_schema(str(prompt[last].get("text")), schema),
                }
        request_id = channel.next_request_id("prompt")
        self.codec.prompt_request_id = request_id
        self.codec.cancel_asked = False
        answered = await channel.start_request(
            request_id, "session/prompt", {"sessionId": self.session_id, "prompt": prompt}
        )
        # the codec ends the turn from the answer's line; a process that exits first fails this
        # future (the driver settles the turn): retrieved here, not left unretrieved on the loop
        answered.add_done_callback(_retrieve)

    def _accepts(self, block: Mapping[str, Any]) -> bool:
        kind = block.get("type")
        if kind in ("text", "resource_link"):
            return True
        offered = self.agent_capabilities.get("promptCapabilities") or {}
        wanted = {"image": "image", "audio": "audio", "resource": "embeddedContext"}.get(str(kind))
        return bool(wanted and isinstance(offered, dict) and offered.get(wanted))

    async def interrupt(self, channel: WireChannel) -> Any:
        for request_id in self.codec.pending_permissions():
            await channel.write(self.codec.permission_cancelled(request_id))
        self.codec.cancel_asked = bool(self.codec.prompt_request_id)
        await channel.write(self.codec.notification("session/cancel", {"sessionId": self.session_id}))
        return None

    def release_turn_resources(self) -> Awaitable[Any] | None:
        """End every process the terminals of the turn that ended (or of the process that went) started."""
        terminals = self.terminals
        if terminals is None or not terminals.live:
            return None
        task = asyncio.get_running_loop().create_task(terminals.end_all())
        self._cleanup.add(task)
        task.add_done_callback(self._cleanup.discard)
        return task

    # -- settings ----------------------------------------------------------------------------------

    async def set_model(self, channel: WireChannel, model: str | None) -> None:
        if model is not None:
            await self._apply_model(channel, model, at_start=False)

    async def set_permission_mode(self, channel: WireChannel, mode: str) -> bool:
        await self._apply_mode(channel, mode, at_start=False)
        return False

    async def mcp_status(self, channel: WireChannel) -> list[dict[str, Any]]:
        """ACP has no status request: the servers given to the session, as configured."""
        return [
            {"name": server.get("name"), "status": "configured", "tools": []} for server in self.mcp_servers
        ]
