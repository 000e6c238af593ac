"""The imitated claude version and the small pieces every stand-in wire line uses: ids, timestamps, encoding.

Where it sits: the base of the stand-in's wire builders (``wire``, ``wire_results``,
``wire_control``), re-exported by ``wire``, the face the stand-in imports. No I/O.

How data flows: ``ELYNAV_STANDIN_VERSION`` -> ``WireStyle`` (``modern`` for 2.1.332) -> every builder
chooses its key order with it; ``new_uuid`` / ``new_message_id`` / ``new_tool_use_id`` /
``now_timestamp`` fill the fields the real CLI generates; ``encode_line`` turns a built ``dict`` into
the bytes of one stdout line.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "BUILTIN_SKILLS",
    "BUILTIN_SLASH_COMMANDS",
    "CONTEXT_WINDOW",
    "DEFAULT_VERSION",
    "MAX_OUTPUT_TOKENS",
    "MODEL_NAME",
    "OUTPUT_STYLES",
    "SUPPORTED_VERSIONS",
    "WireStyle",
    "encode_line",
    "new_message_id",
    "new_tool_use_id",
    "new_uuid",
    "now_timestamp",
]

DEFAULT_VERSION = "2.1.332"
SUPPORTED_VERSIONS = ("2.1.332", "2.1.197")
MODEL_NAME = "elynav-standin"
CONTEXT_WINDOW = 200000
MAX_OUTPUT_TOKENS = 32000

BUILTIN_SLASH_COMMANDS = ["debug", "code-review", "simplify", "compact", "context", "init", "model", "usage"]
BUILTIN_SKILLS = ["debug", "code-review", "simplify"]
OUTPUT_STYLES = ["default", "Explanatory", "Learning"]


@dataclass(frozen=True)
class WireStyle:
    """Which real version the stand-in imitates: ``2.1.332`` (default) or ``2.1.197``."""

    version: str = DEFAULT_VERSION

    @property
    def modern(self) -> bool:
        """True for 2.1.332: ``result`` starts with ``duration_api_ms``, ``timestamp`` on assistant lines..."""
        return self.version != "2.1.197"


def new_uuid() -> str:
    return str(uuid.uuid4())


def new_message_id() -> str:
    return "msg_" + uuid.uuid4().hex[:24]


def new_tool_use_id() -> str:
    return "toolu_" + uuid.uuid4().hex[:24]


def now_timestamp() -> str:
    """``2026-11-29T18:10:31.022Z``: the ISO form the CLI writes."""
    moment = datetime.now(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def encode_line(message: dict[str, Any]) -> bytes:
    """One stdout line: compact JSON, raw UTF-8 (the CLI does not escape ``·``), newline."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
