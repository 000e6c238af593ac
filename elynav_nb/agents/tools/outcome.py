"""``ToolOutcome``: what one kernel tool call gives back to the model, a result or a tool error.

Where it sits: built by ``KernelTool.call`` (and ``KernelToolSet.call``) for every call, never raised;
the transport that comes later sends ``content`` to the CLI and may send ``structured`` as the tool's
structured result. Pure: no I/O.

A result: ``is_error`` False, ``structured`` the JSON value, ``content`` its compact JSON text.
A tool error: ``is_error`` True, ``structured`` ``{"code", "message", ...}`` with a code of the
``elynav_nb.errors`` tree (``INVALID_INPUT`` for wrong arguments, ``TIMEOUT`` for a hung tool,
``TOOL_FAILED`` for a tool that raised or returned a value with no JSON form, the error's own code when
the tool raised an ``ElynavError``), ``content`` the line ``CODE: message``.

Messages carry no traceback and no secret: an exception becomes its type name and its message,
passed through ``redact_secrets`` plus the token shapes below, and cut to a bounded length.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from elynav_nb.errors import ElynavError, ToolFailed, redact_secrets

__all__ = ["ToolOutcome", "error_outcome", "exception_outcome", "redact_tool_text"]

MAX_MESSAGE_CHARS = 2000

# Token shapes that ``redact_secrets`` (key=value, bearer, sk-...) does not catch on their own.
_TOKEN_SHAPES = [
    re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,})"),  # GitHub tokens
    re.compile(r"\b(github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\b((?:AKIA|ASIA)[0-9A-Z]{16})\b"),  # AWS access key ids
    re.compile(r"\b(xox[abposr]-[A-Za-z0-9-]{10,})"),  # Slack tokens
    re.compile(r"\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+)"),  # JSON Web Tokens
    re.compile(r"\b(AIza[0-9A-Za-z_-]{30,})"),  # Google API keys
]


def redact_tool_text(text: str) -> str:
    """``text`` with anything that looks like a key, token or password replaced by ``[redacted]``."""
    text = redact_secrets(text)
    for shape in _TOKEN_SHAPES:
        text = shape.sub("[redacted]", text)
    return text


@dataclass(frozen=True)
class ToolOutcome:
    """One call's answer: ``is_error``, ``content`` (text for the model), ``structured`` (JSON value)."""

    is_error: bool
    content: str
    structured: Any = field(default=None)
    tool_name: str = ""
    seconds: float = field(default=0.0, repr=False)

    @property
    def code(self) -> str | None:
        """The error code of a tool error (``None`` for a result)."""
        if self.is_error and isinstance(self.structured, dict):
            code = self.structured.get("code")
            return code if isinstance(code, str) else None
        return None

    @property
    def truncated(self) -> bool:
        """Whether the result was cut to its size bound (it then says so itself: ``"truncated": true``)."""
        return isinstance(self.structured, dict) and self.structured.get("truncated") is True

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool_name,
            "is_error": self.is_error,
            "content": self.content,
            "structured": self.structured,
        }

    def _repr_html_(self) -> str:
        state = "error" if self.is_error else "result"
        shown = self.content if len(self.content) <= 4000 else self.content[:4000] + "…"
        return (
            f"<b>{html.escape(self.tool_name or 'tool')}</b> {state} ({self.seconds * 1000:.1f} ms)"
            f"<pre style='white-space:pre-wrap'>{html.escape(shown)}</pre>"
        )


def error_outcome(tool_name: str, error: ElynavError, seconds: float = 0.0) -> ToolOutcome:
    """A tool error from one of our typed errors (its message redacted and bounded)."""
    message = _bounded(redact_tool_text(error.message))
    structured: dict[str, Any] = {"code": error.code, "message": message}
    for key, value in error.details.items():
        if isinstance(value, (str, int, float, bool)) or value is None:
            structured[key] = redact_tool_text(value) if isinstance(value, str) else value
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            structured[key] = [redact_tool_text(item) for item in value]
    return ToolOutcome(True, f"{error.code}: {message}", structured, tool_name, seconds)


def exception_outcome(tool_name: str, exception: BaseException, seconds: float = 0.0) -> ToolOutcome:
    """A tool error for an exception the tool raised: its type and message only, never a traceback."""
    if isinstance(exception, ElynavError):
        return error_outcome(tool_name, exception, seconds)
    type_name = type(exception).__name__
    try:
        text = str(exception)
    except Exception:  # an exception whose __str__ fails still gives its type
        text = "(its message could not be read)"
    message = f"{type_name}: {text}" if text else type_name
    failed = ToolFailed(
        f"tool {tool_name!r} raised {message}",
        details={"exception_type": type_name},
    )
    return error_outcome(tool_name, failed, seconds)


def _bounded(text: str) -> str:
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    return text[:MAX_MESSAGE_CHARS] + f"… ({len(text) - MAX_MESSAGE_CHARS} more characters)"
