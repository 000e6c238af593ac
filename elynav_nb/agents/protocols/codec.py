"""Shared pieces of the codecs of the process-per-turn CLIs, codex and gemini (pure, no I/O).

Where it sits: imported by ``codex/exec_codec.py``, ``gemini/codec.py`` and ``codex/app_codec.py``. ``parse_json_line`` turns one
stdout line into a dict or one ``AgentError`` (orjson first, the standard library for the lines
it refuses, as the claude codec does); the ``as_*`` helpers read loosely typed fields without
trusting them; ``TurnVerdict`` is how a turn ended once its process is gone (each decoder's
``verdict(exit_code, cancel_requested=…)`` builds it from the lines it saw).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import orjson

from elynav_nb.agents.events import AgentError, AgentEvent, ControlFrame
from elynav_nb.agents.results import Outcome

DecodedT = TypeVar("DecodedT", AgentEvent, AgentEvent | ControlFrame)

__all__ = [
    "EXCERPT_LENGTH",
    "JsonLineDecoder",
    "TurnVerdict",
    "as_dict",
    "as_int",
    "as_str",
    "excerpt",
    "json_line",
    "parse_json_line",
]

EXCERPT_LENGTH = 120


def excerpt(line: bytes | str) -> str:
    """The start of a line, for error events."""
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    return text if len(text) <= EXCERPT_LENGTH else text[:EXCERPT_LENGTH] + "…"


def json_line(message: Mapping[str, Any]) -> bytes:
    """One JSON object as a compact UTF-8 line (what the JSON-RPC codecs write to a CLI's stdin)."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def parse_json_line(line: bytes | str) -> dict[str, Any] | AgentError | None:
    """The JSON object on ``line``; ``None`` for a blank line; an ``AgentError`` for anything else."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        if isinstance(line, bytes):
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                return AgentError(
                    "stdout line is not valid UTF-8", code="INVALID_UTF8", excerpt=excerpt(line)
                )
        else:
            text = line
        if not text.strip():
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            return AgentError(
                f"stdout line is not JSON ({error.msg})", code="INVALID_JSON", excerpt=excerpt(text)
            )
    if not isinstance(value, dict):
        return AgentError("stdout line is JSON but not an object", code="INVALID_JSON", excerpt=excerpt(line))
    return value


@dataclass(frozen=True)
class TurnVerdict:
    """How a process-per-turn CLI's turn ended, once its process is gone (``reason``: for people)."""

    outcome: Outcome
    reason: str


class JsonLineDecoder(ABC, Generic[DecodedT]):
    """The line step the CLI codecs share: a stdout line to its JSON object, then ``decode_message``.

    ``DecodedT``: what a line decodes to (``AgentEvent`` for the per-turn codecs; events and control
    frames for codex app-server's JSON-RPC). A line that is not JSON becomes an ``AgentError``.
    """

    def decode_line(self, line: bytes | str) -> list[DecodedT | AgentError]:
        """All items carried by one stdout line (none for a blank line)."""
        parsed = parse_json_line(line)
        if parsed is None:
            return []
        if isinstance(parsed, AgentError):
            return [parsed]
        return self.decode_message(parsed)

    @abstractmethod
    def decode_message(self, message: dict[str, Any]) -> list[DecodedT | AgentError]:
        """The items one parsed JSON message carries (the CLI's own codec)."""
