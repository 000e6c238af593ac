"""A real ACP client for ``elynav acp``: the official SDK's ``ClientSideConnection`` over the process's
pipes, with every line both ways recorded, and every line the agent sends validated against the
SDK's schema (``check_conformance``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import acp
from acp import schema

__all__ = ["AcpSession", "RecordingClient", "check_conformance", "elynav_acp"]

ELYNAV = [sys.executable, "-m", "elynav_nb.cli"]

# the answer the client's requests get from the agent: validated with these models
_RESULTS = {
    "initialize": schema.InitializeResponse,
    "session/new": schema.NewSessionResponse,
    "session/load": schema.LoadSessionResponse,
    "session/prompt": schema.PromptResponse,
}
# the agent's own messages
_AGENT_MESSAGES = {
    "session/update": schema.SessionNotification,
    "session/request_permission": schema.RequestPermissionRequest,
}


class RecordingClient:
    """The client side: records session updates, answers permission prompts with ``permission_choice``."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permission_requests: list[Any] = []
        self.permission_choice = "allow_once"
        self.changed = asyncio.Event()

    def on_connect(self, connection: Any) -> None:
        return None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.changed.set()

    async def request_permission(self, options: Any, session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        self.permission_requests.append((tool_call, options))
        self.changed.set()
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(option_id=self.permission_choice, outcome="selected")
        )

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(
            update.content.text
            for update in self.updates
            if getattr(update, "session_update", "") == kind and getattr(update.content, "type", "") == "text"
        )

    def of_kind(self, kind: str) -> list[Any]:
        return [update for update in self.updates if getattr(update, "session_update", "") == kind]


class _TeeWriter(asyncio.StreamWriter):
    """The agent's stdin: every line the client writes is recorded, then written."""

    def __init__(self, writer: asyncio.StreamWriter, record: list[dict[str, Any]]) -> None:
        super().__init__(writer.transport, writer._protocol, None, asyncio.get_running_loop())  # noqa: SLF001
        self._record = record

    def write(self, data: bytes | bytearray | memoryview) -> None:
        for line in bytes(data).splitlines():
            if line.strip():
                self._record.append(json.loads(line))
        super().write(data)


class AcpSession:
    """One ``elynav acp`` process and the SDK client connected to it."""

    def __init__(self, process: asyncio.subprocess.Process, connection: Any, client: RecordingClient) -> None:
        self.process = process
        self.connection = connection
        self.client = client
        self.sent: list[dict[str, Any]] = []  # by the client
        self.received: list[dict[str, Any]] = []  # from the agent


async def _tee(
    source: asyncio.StreamReader, target: asyncio.StreamReader, record: list[dict[str, Any]]
) -> None:
    while line := await source.readline():
        record.append(json.loads(line))
        target.feed_data(line)
    target.feed_eof()


@contextlib.asynccontextmanager
async def elynav_acp(
    workspace: Path, agent: str, *, executable: str = "standin", client: RecordingClient | None = None
) -> AsyncIterator[AcpSession]:
    """``elynav acp --agent <agent> --workspace <workspace>`` with an SDK client; stopped by pid after."""
    process = await asyncio.create_subprocess_exec(
        *ELYNAV,
        "acp",
        "--agent",
        agent,
        "--workspace",
        str(workspace),
        "--executable",
        executable,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,
        env={**os.environ},
    )
    assert process.stdin is not None and process.stdout is not None
    client = client or RecordingClient()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    session = AcpSession(process, None, client)
    tee = asyncio.get_running_loop().create_task(_tee(process.stdout, reader, session.received))
    try:
        session.connection = acp.connect_to_agent(client, _TeeWriter(process.stdin, session.sent), reader)
        yield session
    finally:
        if session.connection is not None:
            with contextlib.suppress(Exception):
                await session.connection.close()
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 20)
            except TimeoutError:
                process.kill()
                await process.wait()
        tee.cancel()


def check_conformance(session: AcpSession) -> int:
    """Validate every line the agent sent with the SDK's schema (strict JSON-RPC 2.0 too); the count."""
    methods = {
        message["id"]: message["method"]
        for message in session.sent
        if "id" in message and "method" in message
    }
    for message in session.received:
        assert message.get("jsonrpc") == "2.0", message
        if "method" in message:
            model = _AGENT_MESSAGES.get(message["method"])
            assert model is not None, f"the agent sent a method the client does not know: {message['method']}"
            model.model_validate(message.get("params"))
            continue
        assert "id" in message and ("result" in message) != ("error" in message), message
        if "error" in message:
            error = message["error"]
            assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str), message
            continue
        model = _RESULTS[methods[message["id"]]]
        if message["result"] is not None:
            model.model_validate(message["result"])
    return len(session.received)
