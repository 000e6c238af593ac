"""What a wire is: the protocol of one persistent agent CLI, as an object with no I/O of its own.

Where it sits: between the persistent driver (``drivers/persistent.py``: the process, the
watchdog, the bounded stop, control futures, permission prompts) and the pure codecs of this folder.
A wire decides what to say and how to read what the CLI says; the driver says it and waits. Each
persistent protocol has one wire: ``claude/wire.ClaudeStreamWire`` (stream-json control protocol),
``codex/app_wire.CodexAppServerWire`` (JSON-RPC), ``acp/wire.AcpWire`` (any Agent Client Protocol agent).

How data flows::

    driver -> wire.open(channel)                 the handshake (channel.request / channel.write)
    driver -> wire.send_prompt(channel, turn, content) -> channel.write(one line)
    CLI stdout line -> wire.decode_line -> events and control frames -> driver routes them
    driver -> wire.observe(event) / wire.stall_reason(now) -> the watchdog's protocol bound
    cancel -> wire.interrupt(channel); permission answer -> wire.encode_permission_answer
    a request of the CLI (claude ``mcp_message``, ``hook_callback``) -> wire.serve_request(request)
      -> the driver awaits it in a task -> wire.encode_success(request_id, answer) (or encode_error)
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from elynav_nb.agents.events import (
    AgentEvent,
    ControlFrame,
    ControlRequest,
    ControlResponse,
    PermissionAnswer,
    PermissionRequest,
)
from elynav_nb.agents.output_schema import OutputSchema
from elynav_nb.agents.results import Outcome
from elynav_nb.errors import AgentTimeout, CliStartFailed, ElynavError

__all__ = ["PersistentWire", "TurnSink", "WireChannel", "WireDefaults", "start_failure"]


class TurnSink(Protocol):
    """The turn a wire writes notes into (``Turn``'s driver side), and the schema it answers in."""

    output_schema: OutputSchema | None

    def push(self, event: AgentEvent) -> None: ...


class WireChannel(Protocol):
    """What the driver lends a wire: the only way a wire reaches the process."""

    async def request(self, method: str, *, timeout: float, **fields: Any) -> ControlResponse:
        """Send a request and wait for its answer (``CLI_EXITED`` / ``AGENT_TIMEOUT`` otherwise)."""
        ...

    async def start_request(
        self, request_id: str, method: str, fields: dict[str, Any]
    ) -> asyncio.Future[ControlResponse]:
        """Send a request with ``request_id`` and return the future of its answer at once."""
        ...

    async def write(self, data: bytes) -> None:
        """Write one encoded line to the CLI."""
        ...

    def next_request_id(self, prefix: str) -> str:
        """A request id no other request of this process has."""
        ...

    def end_turn(self, turn: TurnSink, outcome: Outcome, *, error: str, error_code: str) -> None:
        """Settle ``turn`` (a request the turn depends on was refused)."""
        ...

    def emit(self, event: AgentEvent) -> None:
        """Route an event the wire makes itself (not read from a line) as a decoded one is routed."""
        ...


class PersistentWire(Protocol):
    """One persistent CLI protocol (see the module docstring)."""

    def decode_line(self, line: bytes | str) -> Sequence[AgentEvent | ControlFrame]: ...

    def encode_request(self, request_id: str, method: str, fields: dict[str, Any]) -> bytes: ...

    def encode_error(self, request_id: str, message: str) -> bytes: ...

    def encode_success(self, request_id: str, answer: dict[str, Any]) -> bytes: ...

    def serve_request(self, request: ControlRequest) -> Awaitable[dict[str, Any]] | None:
        """The answer to a request of the CLI, to await (None: unsupported, answered with an error).

        The driver awaits it in a task (a raise is answered with an error naming the exception) and
        cancels it when the CLI withdraws the request or the process ends.
        """
        ...

    def encode_permission_answer(self, request: PermissionRequest, answer: PermissionAnswer) -> bytes: ...

    async def open(self, channel: WireChannel) -> None:
        """The handshake after the spawn (raises a typed error the driver turns into a start failure)."""
        ...

    async def send_prompt(
        self, channel: WireChannel, turn: TurnSink, content: str | list[dict[str, Any]]
    ) -> None: ...

    async def interrupt(self, channel: WireChannel) -> Any:
        """Ask the CLI to end the turn in flight (answered when it took the request)."""
        ...

    def observe(self, event: AgentEvent) -> None:
        """See every event the driver routes (a wire may track a protocol bound)."""
        ...

    def stall_reason(self, now: float) -> str:
        """Why the turn in flight should end now although the CLI still writes ("" when it should not)."""
        ...

    def release_turn_resources(self) -> Awaitable[Any] | None:
        """A turn settled or the process went: end what the client ran for it (ACP terminals).

        The awaitable (if any) is that work under way: ``runner.stop()`` waits for it, bounded.
        """
        ...

    def describe_start_failure(self, error: ElynavError, details: dict[str, Any]) -> ElynavError:
        """The error ``start()`` raises when ``open`` failed with ``error`` (``details``: the exit)."""
        ...

    async def set_model(self, channel: WireChannel, model: str | None) -> None:
        """Change the model from the next turn on."""
        ...

    async def set_permission_mode(self, channel: WireChannel, mode: str) -> bool:
        """Change the permission mode; True when the process must restart for it (between turns)."""
        ...

    async def mcp_status(self, channel: WireChannel) -> list[dict[str, Any]]: ...


class WireDefaults:
    """What a wire does where its protocol has nothing to say: a base for a new wire (``PersistentWire``).

    It serves no request of the CLI, tracks no protocol bound, runs nothing of its own for a turn,
    describes a failed handshake as ``start_failure`` does, takes a new model and permission mode at
    the next start (a restart), and reports no MCP server. A protocol with more says so by overriding.
    """

    start_timeout: float

    def serve_request(self, request: ControlRequest) -> Awaitable[dict[str, Any]] | None:
        return None

    def observe(self, event: AgentEvent) -> None:
        return None

    def stall_reason(self, now: float) -> str:
        return ""

    def release_turn_resources(self) -> Awaitable[Any] | None:
        return None  # the CLI runs its tools itself

    def describe_start_failure(self, error: ElynavError, details: dict[str, Any]) -> ElynavError:
        return start_failure(error, details, self.start_timeout)

    async def set_model(self, channel: WireChannel, model: str | None) -> None:
        return None

    async def set_permission_mode(self, channel: WireChannel, mode: str) -> bool:
        return True  # the next process starts in it

    async def mcp_status(self, channel: WireChannel) -> list[dict[str, Any]]:
        return []


def start_failure(error: Exception, details: dict[str, Any], start_timeout: float) -> CliStartFailed:
    """The ``CLI_START_FAILED`` of a CLI that did not answer its handshake (``details``: its exit)."""
    if isinstance(error, AgentTimeout):
        return CliStartFailed(f"the agent CLI did not answer within {start_timeout:g} s", details=details)
    message = f"the agent CLI exited during start-up (exit code {details.get('exit_code')})"
    stderr_tail = str(details.get("stderr_tail") or "").strip()
    if stderr_tail:
        message += f": {stderr_tail[-500:]}"
    return CliStartFailed(message, details=details)
