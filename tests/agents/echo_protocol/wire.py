"""``EchoWire``: the ``echo`` CLI's line protocol as a wire (no I/O: the driver writes and reads)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from elynav_nb.agents.events import (
    AgentError,
    AgentEvent,
    AgentStarted,
    ControlFrame,
    ControlResponse,
    PermissionAnswer,
    PermissionRequest,
    TextDelta,
    TurnEnded,
)
from elynav_nb.agents.protocols.wire import TurnSink, WireChannel, WireDefaults


class EchoWire(WireDefaults):
    def __init__(self, *, start_timeout: float) -> None:
        self.start_timeout = start_timeout
        self._text: list[str] = []

    def decode_line(self, line: bytes | str) -> Sequence[AgentEvent | ControlFrame]:
        try:
            message = json.loads(line)
        except ValueError:
            return [AgentError(f"not JSON: {line!r}", code="INVALID_JSON")]
        if "re" in message:
            return [ControlResponse(request_id=message["re"], ok=True, response=message)]
        kind = message.get("ev")
        if kind == "start":
            self._text.clear()
            return [AgentStarted(session_id=message["session"], model="echo")]
        if kind == "text":
            self._text.append(message["text"])
            return [TextDelta(message["text"])]
        if kind == "end":
            cancelled = bool(message.get("cancelled"))
            return [
                TurnEnded(
                    subtype="interrupted" if cancelled else "success",
                    is_error=cancelled,
                    result="".join(self._text),
                    terminal_reason="cancelled" if cancelled else "completed",
                )
            ]
        return []

    def encode_request(self, request_id: str, method: str, fields: dict[str, Any]) -> bytes:
        return (json.dumps({"op": method, "id": request_id, **fields}) + "\n").encode()

    def encode_error(self, request_id: str, message: str) -> bytes:
        return (json.dumps({"op": "error", "id": request_id, "message": message}) + "\n").encode()

    def encode_success(self, request_id: str, answer: dict[str, Any]) -> bytes:
        return (json.dumps({"op": "answer", "id": request_id, **answer}) + "\n").encode()

    def encode_permission_answer(self, request: PermissionRequest, answer: PermissionAnswer) -> bytes:
        raise AssertionError("echo asks no permission")

    async def open(self, channel: WireChannel) -> None:
        await channel.request("hello", timeout=self.start_timeout)

    async def send_prompt(
        self, channel: WireChannel, turn: TurnSink, content: str | list[dict[str, Any]]
    ) -> None:
        text = (
            content if isinstance(content, str) else " ".join(str(block.get("text", "")) for block in content)
        )
        await channel.write((json.dumps({"op": "prompt", "text": text}) + "\n").encode())

    async def interrupt(self, channel: WireChannel) -> None:
        await channel.write(b'{"op": "stop"}\n')
