"""``OfficeClient``: another process's way into a running office, through its socket, as the user.

Where it sits: used by ``elynav acp`` (``office/acp_agent.py``), the jupyter-ai personas
(``office/chat_persona.py``) and a kernel attached to an office (``office/attached.py``). It finds
the office that serves a workspace (``workspace.serving_office``: the lock file names the socket;
the user token lies beside it), opens one connection per request and decodes the answers with
``office/wire.py`` and ``office/stream_wire.py``. No parsing of its own, no office state.

How data flows::

    client.submit(agent, text) -> {"op": "ask", "stream": true, "token"} -> "accepted" -> RemoteAsk
      RemoteAsk.updates(): Position(place, busy_for) | Started | AgentEvent ... | the Reply (last)
      RemoteAsk.answer_permission(...) / cancel() -> one line on the same connection
      RemoteAsk.close() -> hang-up: the office cancels the ask if it has not ended
    client.cancel(ask_id) -> {"op": "cancel"} ;  client.watch() -> board snapshots (dicts)

A refused request raises its typed error (``AGENT_NOT_FOUND``, ``CALLER_UNKNOWN``...); an office
that goes away mid-ask ends the ask ``failed`` with ``OFFICE_UNREACHABLE`` (nothing is left pending).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elynav_nb.agents.events import AgentEvent
from elynav_nb.errors import ElynavError, OfficeUnreachable, ProtocolError
from elynav_nb.office.asks import Reply, ReplyOutcome
from elynav_nb.office.history import utc_now
from elynav_nb.office.rights import USER
from elynav_nb.office.stream_wire import decode_event
from elynav_nb.office.wire import (
    MAX_REQUEST_BYTES,
    decode_answer,
    encode_ask_request,
    encode_cancel_request,
    encode_watch_request,
    error_from_answer,
)
from elynav_nb.office.workspace import presented_user_token, serving_office

__all__ = ["OfficeClient", "Position", "RemoteAsk", "Started"]

_OUTCOMES: tuple[ReplyOutcome, ...] = ("done", "cancelled", "timeout", "failed")


@dataclass(frozen=True)
class Position:
    """The ask waits: ``place`` 1 is next; ``busy_for`` is who the employee works for now."""

    place: int
    busy_for: str | None


@dataclass(frozen=True)
class Started:
    """The employee took the ask (its canonical conversation ``session_id``)."""

    session_id: str


Update = Position | Started | AgentEvent | Reply


class RemoteAsk:
    """One streamed ask to an office in another process (or another connection of this one).

    ``await remote_ask`` gives its ``Reply``; ``updates()`` yields what happens until then.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        accepted: dict[str, Any],
        text: str,
    ) -> None:
        self.id = str(accepted.get("ask_id") or "")
        self.agent = str(accepted.get("agent") or "")
        self.text = text
        self.sender = USER
        self.position = int(accepted.get("position") or 0)
        self.busy_for: str | None = None
        self.session_id = ""
        self.status = "queued" if self.position else "running"
        self.events: list[AgentEvent] = []
        self.reply: Reply | None = None
        self.usage: dict[str, Any] = {}  # the tokens the employee's CLI reported for the turn
        self.queued_at = utc_now()
        self.started_at = None if self.position else self.queued_at
        self._reader = reader
        self._writer = writer
        self._updates: asyncio.Queue[Update | None] = asyncio.Queue()
        self._done: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._task = asyncio.get_running_loop().create_task(self._read())  # the place comes as a line

    @property
    def done(self) -> bool:
        return self.reply is not None

    @property
    def cancelling(self) -> bool:
        return False

    async def _read(self) -> None:
        try:
            while line := await self._reader.readline():
                answer = decode_answer(line)
                kind = answer["type"]
                if kind == "position":
                    self.position = int(answer.get("position") or 0)
                    self.busy_for = answer.get("busy_for")
                    self._updates.put_nowait(Position(self.position, self.busy_for))
                elif kind == "started":
                    self.status, self.position, self.started_at = "running", 0, utc_now()
                    self.session_id = str(answer.get("session_id") or "")
                    self._updates.put_nowait(Started(self.session_id))
                elif kind == "event":
                    event = decode_event(answer.get("event"))
                    if event is not None:
                        self.events.append(event)
                        self._updates.put_nowait(event)
                elif kind == "reply":
                    usage = answer.get("usage")
                    self.usage = usage if isinstance(usage, dict) else {}
                    self._settle(self._reply_of(answer))
                    return
                elif kind == "error":
                    error = error_from_answer(answer)
                    self._settle(self._synthetic("failed", error.message, error.code))
                    return
            self._settle(
                self._synthetic("failed", "the office went away before the reply", "OFFICE_UNREACHABLE")
            )
        except (ConnectionError, ProtocolError, ValueError) as error:
            code = error.code if isinstance(error, ElynavError) else "OFFICE_UNREACHABLE"
            self._settle(self._synthetic("failed", f"the connection to the office broke: {error}", code))
        finally:
            self._updates.put_nowait(None)
            self._writer.close()

    def _reply_of(self, answer: dict[str, Any]) -> Reply:
        outcome = answer.get("outcome")
        return Reply(
            ask_id=self.id,
            sender=self.sender,
            agent=self.agent,
            outcome=outcome if outcome in _OUTCOMES else "failed",
            text=str(answer.get("text") or ""),
            prompt=self.text,
            queued_at=self.queued_at,
            started_at=self.started_at,
            ended_at=utc_now(),
            events=tuple(self.events),
            session_id=self.session_id,
            cost_usd=float(answer.get("cost_usd") or 0.0),
            error=str(answer.get("error") or ""),
            error_code=str(answer.get("error_code") or ""),
            cancelled_by=str(answer.get("cancelled_by") or ""),
            data=answer.get("data"),
        )

    def _synthetic(self, outcome: ReplyOutcome, error: str, code: str) -> Reply:
        return Reply(
            ask_id=self.id,
            sender=self.sender,
            agent=self.agent,
            outcome=outcome,
            text="",
            prompt=self.text,
            queued_at=self.queued_at,
            started_at=self.started_at,
            ended_at=utc_now(),
            events=tuple(self.events),
            error=error,
            error_code=code,
        )

    def _settle(self, reply: Reply) -> None:
        if self.reply is None:
            self.reply = reply
            self.status = reply.outcome
            self._updates.put_nowait(reply)
            if not self._done.done():
                self._done.set_result(reply)

    async def updates(self) -> AsyncIterator[Update]:
        """Position, Started and agent events as they come, the ``Reply`` last (one reader)."""
        while (update := await self._updates.get()) is not None:
            yield update

    async def batches(self) -> AsyncIterator[list[Update]]:
        """The same updates, in lists of what has arrived together (a streaming reader keeps up)."""
        while (update := await self._updates.get()) is not None:
            batch = [update]
            while not self._updates.empty():
                more = self._updates.get_nowait()
                if more is None:
                    yield batch
                    return
                batch.append(more)
            yield batch

    def __await__(self) -> Generator[Any, None, Reply]:
        return asyncio.shield(self._done).__await__()

    async def _send(self, message: dict[str, Any]) -> None:
        if self.reply is not None:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            self._writer.write(json.dumps(message).encode() + b"\n")
            await self._writer.drain()

    async def answer_permission(
        self, request_id: str, allow: bool, *, always: bool = False, message: str = ""
    ) -> None:
        """Allow or deny one of the employee's tool prompts (a ``PermissionRequest`` event of this ask)."""
        await self._send(
            {
                "op": "permission",
                "request_id": request_id,
                "allow": allow,
                "always": always,
                "message": message,
            }
        )

    async def cancel(self) -> None:
        """Cancel the ask (the user's cancel: it cascades); its reply still comes."""
        await self._send({"op": "cancel"})

    async def close(self) -> None:
        """Hang up (an ask not ended yet is cancelled by the office) and wait for the reader (bounded)."""
        self._writer.close()
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._task), timeout=5.0)

    def __repr__(self) -> str:
        return f"<RemoteAsk {self.id} {self.status} user -> {self.agent}>"


class OfficeClient:
    """The user's connection to the office at ``socket_path`` (see the module docstring)."""

    def __init__(self, socket_path: str | os.PathLike[str], token: str | None = None) -> None:
        self.socket_path = Path(socket_path)
        self.token = presented_user_token(self.socket_path) if token is None else token

    @classmethod
    def for_workspace(cls, workspace: str | os.PathLike[str]) -> OfficeClient:
        """The client of the office serving ``workspace``, or ``OFFICE_UNREACHABLE`` when none does."""
        found = serving_office(Path(workspace).resolve())
        if found is None:
            raise OfficeUnreachable(
                f"no office serves {workspace}: start one (Office(workspace).start() in a notebook, or "
                "elynav office serve)",
                details={"workspace": str(workspace)},
            )
        socket_path, token = found
        return cls(socket_path, token)

    async def _open(
        self, request: bytes
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, dict[str, Any]]:
        try:
            reader, writer = await asyncio.open_unix_connection(
                str(self.socket_path), limit=MAX_REQUEST_BYTES + 1
            )
        except OSError as error:
            raise OfficeUnreachable(
                f"the office at {self.socket_path} does not answer ({error.strerror}); it may have stopped"
            ) from None
        writer.write(request)
        await writer.drain()
        line = await reader.readline()
        if not line:
            writer.close()
            raise OfficeUnreachable("the office closed the connection without answering")
        answer = decode_answer(line)
        if answer["type"] == "error":
            writer.close()
            raise error_from_answer(answer)
        return reader, writer, answer

    async def submit(
        self, agent: str, text: str, *, timeout: float | None = None, schema: dict[str, Any] | None = None
    ) -> RemoteAsk:
        """Queue an ask as the user; its ``RemoteAsk`` once the office accepted it (typed error if refused)."""
        request = encode_ask_request(agent, text, timeout, schema, token=self.token, stream=True)
        reader, writer, accepted = await self._open(request)
        return RemoteAsk(reader, writer, accepted, text)

    async def ask(self, agent: str, text: str, *, timeout: float | None = None) -> Reply:
        remote = await self.submit(agent, text, timeout=timeout)
        try:
            return await remote
        finally:
            await remote.close()

    async def cancel(self, ask_id: str) -> str:
        """Cancel an ask as the user; its status after the cancel (``cancelling``, ``cancelled``...)."""
        _reader, writer, answer = await self._open(encode_cancel_request(ask_id, token=self.token))
        writer.close()
        return str(answer.get("status") or "")

    async def watch(self) -> AsyncIterator[dict[str, Any]]:
        """Board snapshots: now, then at every change, until the office stops (or the caller stops reading)."""
        reader, writer, first = await self._open(encode_watch_request(token=self.token))
        try:
            yield first
            while line := await reader.readline():
                yield decode_answer(line)
        finally:
            writer.close()
