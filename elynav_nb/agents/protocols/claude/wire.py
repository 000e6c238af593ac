"""``ClaudeStreamWire``: claude's stream-json protocol as a wire (no I/O of its own).

Where it sits: the persistent driver's wire for ``cli="claude"``. It speaks through the driver's
``WireChannel`` and decodes with the pure ``ClaudeStreamDecoder``; ``claude/launch.py`` builds the
command line. Control requests (``initialize``, ``interrupt``, ``set_model``, ...) are
``control_request`` lines answered by ``control_response`` lines with the same ``request_id``.

How data flows::

    open: initialize {hooks: the runner's hooks (``hooks.claude_initialize_hooks``) or null[, agents]}
          -> the agents claude knows (an unknown agent fails the start:
          claude would silently run its default agent instead)
    send_prompt: one ``user`` line with the conversation's session id
    interrupt: the ``interrupt`` control request; permission answers: ``can_use_tool`` responses
    the CLI's own requests: ``request_servers[subtype](fields)`` (``hook_callback``: the runner's
          ``HookRunner.serve_claude``; ``mcp_message``: the kernel tool server) -> the answer
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from elynav_nb.agents.events import (
    AgentEvent,
    ControlFrame,
    ControlRequest,
    PermissionAnswer,
    PermissionRequest,
)
from elynav_nb.agents.protocols.claude.codec import (
    ClaudeStreamDecoder,
    encode_control_error,
    encode_control_request,
    encode_control_success,
    encode_user_message,
)
from elynav_nb.agents.protocols.wire import TurnSink, WireChannel, WireDefaults, start_failure
from elynav_nb.errors import AgentNotFound, BypassRefusedAsRoot, ElynavError, SessionNotFound

__all__ = ["ClaudeStreamWire", "RequestServer"]

RequestServer = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""What answers one subtype of the CLI's requests (``mcp_message``, ``hook_callback``): its fields -> the answer."""


class ClaudeStreamWire(WireDefaults):
    """claude ``--input-format stream-json --output-format stream-json`` (see the module docstring)."""

    def __init__(
        self,
        *,
        session_id: Callable[[], str],
        agent_name: str | None,
        permission_mode: str | None,
        partial_messages: bool,
        start_timeout: float,
        interrupt_timeout: float,
        request_servers: Mapping[str, RequestServer] | None = None,
        agents: Mapping[str, dict[str, Any]] | None = None,
        initialize_hooks: dict[str, Any] | None = None,
    ) -> None:
        self._session_id = session_id
        self.initialize_hooks = initialize_hooks
        self.request_servers: dict[str, RequestServer] = dict(request_servers or {})
        self.agents = dict(agents or {})  # definitions sent with initialize: they win over the agent files
        self.agent_name = agent_name
        self.permission_mode = permission_mode
        self.start_timeout = start_timeout
        self.interrupt_timeout = interrupt_timeout
        self._decoder = ClaudeStreamDecoder(partial_messages=partial_messages)

    # -- reading and encoding ----------------------------------------------------------------------

    def decode_line(self, line: bytes | str) -> Sequence[AgentEvent | ControlFrame]:
        return self._decoder.decode_line(line)

    def encode_request(self, request_id: str, method: str, fields: dict[str, Any]) -> bytes:
        return encode_control_request(request_id, method, **fields)

    def encode_error(self, request_id: str, message: str) -> bytes:
        return encode_control_error(request_id, message)

    def encode_success(self, request_id: str, answer: dict[str, Any]) -> bytes:
        return encode_control_success(request_id, answer)

    def serve_request(self, request: ControlRequest) -> Awaitable[dict[str, Any]] | None:
        server = self.request_servers.get(request.subtype)
        return None if server is None else server(request.request)

    def encode_permission_answer(self, request: PermissionRequest, answer: PermissionAnswer) -> bytes:
        if answer.allowed:
            response = {"behavior": "allow", "updatedInput": answer.updated_input or dict(request.input)}
            return encode_control_success(request.request_id, response)
        return encode_control_success(request.request_id, {"behavior": "deny", "message": answer.message})

    # -- the conversation --------------------------------------------------------------------------

    async def open(self, channel: WireChannel) -> None:
        fields: dict[str, Any] = {"hooks": self.initialize_hooks}
        if self.agents:
            fields["agents"] = self.agents
        response = await channel.request("initialize", timeout=self.start_timeout, **fields)
        if not self.agent_name:
            return
        known = [
            str(agent.get("name"))
            for agent in response.response.get("agents") or []
            if isinstance(agent, dict)
        ]
        if known and self.agent_name not in known:
            raise AgentNotFound(
                f"the CLI does not know agent {self.agent_name!r} (it would silently run its default agent); "
                f"known agents: {', '.join(known)}. Install it with install_agents(workspace).",
                details={"agent": self.agent_name},
            )

    def describe_start_failure(self, error: ElynavError, details: dict[str, Any]) -> ElynavError:
        if isinstance(error, AgentNotFound):
            return error
        lowered = str(details.get("stderr_tail") or "").lower()
        if self.permission_mode == "bypassPermissions" and ("root" in lowered or "sudo" in lowered):
            return BypassRefusedAsRoot(
                "the claude CLI refuses permission mode bypassPermissions when running as root. "
                "Run as a normal user, use permission mode acceptEdits, or, inside a throw-away "
                "sandbox only, set IS_SANDBOX=1 in the runner's environment.",
                details=details,
            )
        if "no conversation found" in lowered:  # claude's words for a session it cannot resume
            failure = start_failure(error, details, self.start_timeout)
            return SessionNotFound(failure.message, details=failure.details)
        return start_failure(error, details, self.start_timeout)

    async def send_prompt(
        self, channel: WireChannel, turn: TurnSink, content: str | list[dict[str, Any]]
    ) -> None:
        await channel.write(encode_user_message(content, session_id=self._session_id()))

    async def interrupt(self, channel: WireChannel) -> Any:
        return await channel.request("interrupt", timeout=self.interrupt_timeout)

    # -- settings of the running conversation ----------------------------------------------------

    async def set_model(self, channel: WireChannel, model: str | None) -> None:
        await channel.request("set_model", timeout=self.start_timeout, model=model)

    async def set_permission_mode(self, channel: WireChannel, mode: str) -> bool:
        await channel.request("set_permission_mode", timeout=self.start_timeout, mode=mode)
        self.permission_mode = mode
        return False

    async def mcp_status(self, channel: WireChannel) -> list[dict[str, Any]]:
        response = await channel.request("mcp_status", timeout=self.start_timeout)
        servers = response.response.get("mcpServers") or []
        return [server for server in servers if isinstance(server, dict)]
