"""What the fake model API answers, and what it saw: scripted replies and recorded requests (pure).

Where it sits: under ``fake_model_api`` (the loopback HTTP server) and the three wire modules
(``fake_wire_anthropic``, ``fake_wire_openai``, ``fake_wire_gemini``), which render one ``Reply``
in their API's streaming format. Nothing here does I/O; the server holds the lock.

How data flows: a test (or notebook) queues ``Reply`` objects in a ``ModelScript``; each model
request the server receives is turned into a ``ModelRequest`` (the parts a test checks: system
prompt, tools offered, last user text) and answered by the next reply. A reply is written once
for all three APIs: ``ShellCall`` and ``McpCall`` are mapped by each wire module to its CLI's own
tool (``Bash`` / ``exec_command`` / ``run_shell_command``; ``mcp__crm__x`` / the ``mcp__crm``
namespace / ``mcp_crm_x``). When the script is empty the server answers ``DEFAULT_REPLY``.

A reply streams, in order: its thinking, its text chunks (one frame each), its tool calls; then
the end of the message with ``usage``. ``chunk_delay`` slows every frame, ``failure`` answers an
HTTP error instead, ``cut_after_frames`` drops the connection after that many frames.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from elynav_nb.errors import InvalidInput

__all__ = [
    "DEFAULT_REPLY",
    "ApiFailure",
    "ApiName",
    "McpCall",
    "ModelRequest",
    "ModelScript",
    "NativeToolCall",
    "Reply",
    "ReplyChooser",
    "RequestFacts",
    "ShellCall",
    "ToolCall",
    "Usage",
    "WireAnswer",
    "sse_frame",
]

ApiName = Literal["anthropic", "openai", "gemini", "other"]

_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie"})


@dataclass(frozen=True)
class ShellCall:
    """The model asks the CLI to run a shell command (each CLI's own shell tool)."""

    command: str
    description: str = "run a shell command"


@dataclass(frozen=True)
class McpCall:
    """The model calls tool ``tool`` of MCP server ``server`` (named as the CLI configured it)."""

    server: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NativeToolCall:
    """A call by the tool's name as one CLI offers it (``Read``, ``read_file``...), sent as is."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


ToolCall = ShellCall | McpCall | NativeToolCall


@dataclass(frozen=True)
class ApiFailure:
    """Answer an HTTP error (the API's own JSON error body) instead of a stream."""

    status: int = 400
    message: str = "fake error"


@dataclass(frozen=True)
class Usage:
    """Token counts reported at the end of each streamed answer."""

    input_tokens: int = 100
    output_tokens: int = 10
    cached_tokens: int = 20
    reasoning_tokens: int = 3


@dataclass(frozen=True)
class Reply:
    """One scripted model answer. Build it with the class methods or directly."""

    text: tuple[str, ...] = ()
    thinking: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    chunk_delay: float = 0.0
    failure: ApiFailure | None = None
    cut_after_frames: int | None = None
    usage: Usage = field(default_factory=Usage)

    def __post_init__(self) -> None:
        if isinstance(self.text, str):
            raise InvalidInput("Reply.text is a tuple of chunks; use Reply.say('...') for one string")
        if self.chunk_delay < 0:
            raise InvalidInput("Reply.chunk_delay cannot be negative")
        if self.cut_after_frames is not None and self.cut_after_frames < 0:
            raise InvalidInput("Reply.cut_after_frames cannot be negative")

    @classmethod
    def say(cls, *chunks: str, thinking: str = "", chunk_delay: float = 0.0) -> Reply:
        """A text answer streamed as ``chunks`` (one frame each)."""
        return cls(text=tuple(chunks), thinking=thinking, chunk_delay=chunk_delay)

    @classmethod
    def slow(cls, *chunks: str, chunk_delay: float) -> Reply:
        """A text answer with ``chunk_delay`` seconds before each frame."""
        return cls(text=tuple(chunks), chunk_delay=chunk_delay)

    @classmethod
    def shell(cls, command: str, *, text: str = "") -> Reply:
        """The model runs ``command`` with the CLI's shell tool (optionally saying ``text`` first)."""
        return cls(text=(text,) if text else (), tool_calls=(ShellCall(command),))

    @classmethod
    def mcp(cls, server: str, tool: str, arguments: Mapping[str, Any] | None = None) -> Reply:
        """The model calls an MCP tool."""
        return cls(tool_calls=(McpCall(server, tool, dict(arguments or {})),))

    @classmethod
    def http_error(cls, status: int = 400, message: str = "fake error") -> Reply:
        """The API answers an HTTP error."""
        return cls(failure=ApiFailure(status, message))

    @classmethod
    def cut(cls, *chunks: str, after_frames: int) -> Reply:
        """A text answer whose connection drops after ``after_frames`` frames."""
        return cls(text=tuple(chunks), cut_after_frames=after_frames)

    @property
    def full_text(self) -> str:
        return "".join(self.text)


DEFAULT_REPLY = Reply.say("OK.")


@dataclass(frozen=True)
class RequestFacts:
    """What a wire module reads in a request body (see ``ModelRequest``)."""

    model: str = ""
    system_prompt: str = ""
    tool_names: tuple[str, ...] = ()
    last_user_text: str = ""
    conversational: bool = True


@dataclass(frozen=True)
class ModelRequest:
    """One request the fake API received, reduced to what tests check. Secret headers are redacted.

    ``conversational`` is false for side requests (gemini's router or title calls, claude's token
    counts...): those get a fixed answer and leave the script alone. ``reply_index`` is the
    position of the scripted reply that answered (``None``: the default reply or a side answer).
    """

    api: ApiName
    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    model: str = ""
    system_prompt: str = ""
    tool_names: tuple[str, ...] = ()
    last_user_text: str = ""
    conversational: bool = True
    reply_index: int | None = None

    @property
    def user_agent(self) -> str:
        return self.headers.get("user-agent", "")


def redact_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Header names lower-cased; values of credential headers replaced by ``[redacted]``."""
    redacted: dict[str, str] = {}
    for name, value in headers:
        lowered = name.lower()
        redacted[lowered] = "[redacted]" if lowered in _SECRET_HEADERS else value
    return redacted


@dataclass(frozen=True)
class WireAnswer:
    """One HTTP answer as a wire module renders it: status, content type and body frames.

    ``consumed`` is false when the answer is only a first step of the reply (codex must search
    for an MCP tool before it may call it): the same reply then answers the next request too.
    """

    status: int
    content_type: str
    frames: tuple[bytes, ...]
    chunk_delay: float = 0.0
    cut_after_frames: int | None = None
    consumed: bool = True


def sse_frame(data: Any, *, event: str | None = None, separator: str = "\n") -> bytes:
    """One server-sent-events frame: an optional ``event:`` line, one ``data:`` line of JSON."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    head = f"event: {event}{separator}" if event else ""
    return f"{head}data: {text}{separator}{separator}".encode()


ReplyChooser = Callable[[ModelRequest], Reply | None]


class ModelScript:
    """The queue of replies, thread-safe (the server may run on its own thread).

    ``chooser``, when given, is asked first for each conversational request: a ``Reply`` answers
    it, ``None`` falls back to the queue. Replies are consumed in order; the position of each is
    counted from 0 over the script's whole life (``reply_index`` of a ``ModelRequest``).
    """

    def __init__(self, replies: Iterable[Reply] = (), *, chooser: ReplyChooser | None = None) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._consumed = 0
        self.chooser = chooser
        self.extend(replies)

    def extend(self, replies: Iterable[Reply]) -> None:
        """Queue more replies after the ones not used yet."""
        checked = list(replies)
        for reply in checked:
            if not isinstance(reply, Reply):
                raise InvalidInput(f"a script holds Reply objects, not {type(reply).__name__}")
        with self._lock:
            self._queue.extend(checked)

    def replace(self, replies: Iterable[Reply]) -> None:
        """Drop the replies not used yet, then queue ``replies``."""
        with self._lock:
            self._queue.clear()
        self.extend(replies)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._queue)

    def peek(self, request: ModelRequest) -> tuple[Reply, int | None]:
        """The reply for ``request`` without consuming it (a wire may need two requests for one reply)."""
        if self.chooser is not None:
            chosen = self.chooser(request)
            if chosen is not None:
                return chosen, None
        with self._lock:
            if not self._queue:
                return DEFAULT_REPLY, None
            return self._queue[0], self._consumed

    def consume(self, index: int | None) -> None:
        """Mark the reply at ``index`` (from ``peek``) as used."""
        if index is None:
            return
        with self._lock:
            if self._queue and self._consumed == index:
                self._queue.popleft()
                self._consumed += 1
