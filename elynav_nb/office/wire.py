"""The office socket's protocol: one JSON object a line, both ways. Pure (bytes in, values out).

Where it sits: between ``office/socket_server.py`` (the office side) and ``office/ask_command.py``
(``elynav ask`` / ``elynav cancel``, the caller side). Neither parses JSON itself.

Requests (caller -> office), one per connection::

    {"op": "ask", "agent": "elynav-sdr", "text": "...", "timeout": 600}      timeout optional (seconds)
    {"op": "ask", ..., "schema": {JSON Schema}}   optional: a structured answer (``elynav ask --schema``)
    {"op": "cancel", "ask_id": "..."}
    {"op": "ask", ..., "stream": true}   the ask's queue place, start and agent events stream before
                                         its reply, and the caller may answer permission prompts or
                                         cancel it on the same connection (``office/stream_wire.py``)
    {"op": "watch"}                      a snapshot of the board at once and at every change
    "token": "..." on any request: the user token (a terminal, a kernel attached to the office); an
                   agent's process sends none (the office knows it from its ancestry or environment)

Answers (office -> caller)::

    {"type": "accepted", "ask_id", "agent", "position"}     at once, for an ask
    {"type": "reply", "ask_id", "outcome", "text", "error_code", "error", "cancelled_by"[, "data"]}
                                                            when it ends ("data": the validated answer
                                                            of an ask with a schema, when done)
    {"type": "cancelled", "ask_id", "status"}               for a cancel
    {"type": "error", "code", "message"}                    anything refused; the connection then closes

The caller's identity is never part of a request: the office takes it from the socket itself.
``decode_request`` raises ``PROTOCOL_ERROR`` and nothing else for any line it cannot decode into a
request: longer than ``MAX_REQUEST_BYTES``, not UTF-8, not JSON (nested too deeply for the parser
included), not an object, an unknown ``op``, a missing field or one of the wrong type, text that is
not valid Unicode (a lone surrogate). A well-formed request the office then refuses gets that
refusal's own code (``INVALID_INPUT`` for an empty text, ``AGENT_NOT_FOUND``, ...).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from elynav_nb.errors import ElynavError, ProtocolError, error_for_code

__all__ = [
    "MAX_REQUEST_BYTES",
    "SOCKET_VARIABLE",
    "AskRequest",
    "CancelRequest",
    "WatchRequest",
    "decode_answer",
    "decode_request",
    "encode_accepted",
    "encode_ask_request",
    "encode_cancel_request",
    "encode_cancelled",
    "encode_error",
    "encode_reply",
    "encode_watch_request",
    "error_from_answer",
]

MAX_REQUEST_BYTES = 4 * 1024 * 1024
SOCKET_VARIABLE = "ELYNAV_OFFICE_SOCKET"
"""The environment variable that carries the office socket's path into every agent process."""


@dataclass(frozen=True)
class AskRequest:
    agent: str
    text: str
    timeout: float | None = None
    schema: dict[str, Any] | None = None
    token: str = field(default="", repr=False)
    stream: bool = False


@dataclass(frozen=True)
class CancelRequest:
    ask_id: str
    token: str = field(default="", repr=False)


@dataclass(frozen=True)
class WatchRequest:
    token: str = field(default="", repr=False)


def _encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def encode_ask_request(
    agent: str,
    text: str,
    timeout: float | None = None,
    schema: dict[str, Any] | None = None,
    *,
    token: str = "",
    stream: bool = False,
) -> bytes:
    message: dict[str, Any] = {"op": "ask", "agent": agent, "text": text}
    if stream:
        message["stream"] = True
    if timeout is not None:
        message["timeout"] = timeout
    if schema is not None:
        message["schema"] = schema
    if token:
        message["token"] = token
    return _encode(message)


def encode_watch_request(*, token: str = "") -> bytes:
    return _encode({"op": "watch", "token": token} if token else {"op": "watch"})


def encode_cancel_request(ask_id: str, *, token: str = "") -> bytes:
    message = {"op": "cancel", "ask_id": ask_id}
    if token:
        message["token"] = token
    return _encode(message)


def _request_object(line: bytes) -> dict[str, Any]:
    """The JSON object of one request line, or ``PROTOCOL_ERROR`` saying why it is not one."""
    if len(line) > MAX_REQUEST_BYTES:
        raise ProtocolError(f"a request line is limited to {MAX_REQUEST_BYTES} bytes, got {len(line)}")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError("the request is not UTF-8 text") from None
    try:
        message = json.loads(text)
    except ValueError:
        raise ProtocolError("the request is not a JSON line") from None
    except RecursionError:  # deeper than the parser goes (thousands of levels; 4 MB holds millions)
        raise ProtocolError("the request is nested too deeply to decode") from None
    if not isinstance(message, dict):
        raise ProtocolError("the request must be a JSON object")
    return message


def _text_field(message: dict[str, Any], name: str, *, empty_allowed: bool = True) -> str:
    value = message.get(name)
    if not isinstance(value, str) or (not value and not empty_allowed):
        raise ProtocolError(f"{message.get('op')} needs a string {name!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ProtocolError(f"{name!r} is not valid Unicode text (it holds a lone surrogate)") from None
    return value


def _timeout_field(message: dict[str, Any]) -> float | None:
    timeout = message.get("timeout")
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ProtocolError("'timeout' must be a number of seconds")
    try:
        seconds = float(timeout)
    except OverflowError:  # an integer beyond any float
        seconds = math.inf
    if not math.isfinite(seconds):
        raise ProtocolError("'timeout' must be a finite number of seconds")
    return seconds


def _schema_field(message: dict[str, Any]) -> dict[str, Any] | None:
    schema = message.get("schema")
    if schema is None:
        return None
    if not isinstance(schema, dict):
        raise ProtocolError("'schema' must be a JSON object (a JSON Schema)")
    return schema


def decode_request(line: bytes) -> AskRequest | CancelRequest | WatchRequest:
    """One request line -> a request value; ``PROTOCOL_ERROR`` for any line that is not one."""
    message = _request_object(line)
    operation = message.get("op")
    token = _text_field(message, "token") if "token" in message else ""
    if operation == "ask":
        return AskRequest(
            _text_field(message, "agent"),
            _text_field(message, "text"),
            _timeout_field(message),
            _schema_field(message),
            token,
            message.get("stream") is True,
        )
    if operation == "watch":
        return WatchRequest(token)
    if operation == "cancel":
        return CancelRequest(_text_field(message, "ask_id", empty_allowed=False), token)
    if isinstance(operation, str) and len(operation) <= 40:
        raise ProtocolError(f"unknown op {operation!r} (expected 'ask', 'cancel' or 'watch')")
    raise ProtocolError(
        "the request needs an 'op' of 'ask', 'cancel' or 'watch'"
    )  # whatever it holds, not echoed


def encode_accepted(ask_id: str, agent: str, position: int) -> bytes:
    return _encode({"type": "accepted", "ask_id": ask_id, "agent": agent, "position": position})


def encode_reply(
    ask_id: str,
    outcome: str,
    text: str,
    *,
    error_code: str = "",
    error: str = "",
    cancelled_by: str = "",
    data: Any = None,
    has_data: bool = False,
    cost_usd: float = 0.0,
    usage: dict[str, Any] | None = None,
) -> bytes:
    """The reply line; ``has_data``: the ask had a schema and ``data`` (plain JSON values) is its answer."""
    message: dict[str, Any] = {
        "type": "reply",
        "ask_id": ask_id,
        "outcome": outcome,
        "text": text,
        "error_code": error_code,
        "error": error,
        "cancelled_by": cancelled_by,
        "cost_usd": cost_usd,
    }
    if usage:
        message["usage"] = usage
    if has_data:
        message["data"] = data
    return _encode(message)


def encode_cancelled(ask_id: str, status: str) -> bytes:
    return _encode({"type": "cancelled", "ask_id": ask_id, "status": status})


def encode_error(error: ElynavError) -> bytes:
    return _encode({"type": "error", "code": error.code, "message": error.message})


def decode_answer(line: bytes) -> dict[str, Any]:
    """One answer line (caller side) -> its object, or ``PROTOCOL_ERROR``."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise ProtocolError("the office sent a line that is not JSON") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("the office sent an answer without a type")
    return message


def error_from_answer(answer: dict[str, Any]) -> ElynavError:
    """The typed error carried by an ``error`` answer."""
    code = str(answer.get("code") or "ELYNAV_ERROR")
    error = error_for_code(code)(str(answer.get("message") or code))
    if error.code != code:  # a code this version does not know: keep it visible
        error.details["code"] = code
    return error
