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
passed through ``_redaction.redact_for_model`` (the path hook reasons and magic prompts take too: the
values of the kernel's secret variables, then key, token and password shapes), and cut to a bounded length.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from elynav_nb._redaction import describe_exception, redact_for_model
from elynav_nb.errors import ElynavError, ToolFailed

__all__ = ["ToolOutcome", "error_outcome", "exception_outcome"]

MAX_MESSAGE_CHARS = 2000


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
    message = _bounded(redact_for_model(error.message))
    structured: dict[str, Any] = {"code": error.code, "message": message}
    for key, value in error.details.items():
        if isinstance(value, (str, int, float, bool)) or value is None:
            structured[key] = redact_for_model(value) if isinstance(value, str) else value
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            structured[key] = [redact_for_model(item) for item in value]
    return ToolOutcome(True, f"{error.code}: {message}", structured, tool_name, seconds)


def exception_outcome(tool_name: str, exception: BaseException, seconds: float = 0.0) -> ToolOutcome:
    """A tool error for an exception the tool raised: its type and message only, never a traceback."""
    if isinstance(exception, ElynavError):
        return error_outcome(tool_name, exception, seconds)
    failed = ToolFailed(
        f"tool {tool_name!r} raised {describe_exception(exception)}",
        details={"exception_type": type(exception).__name__},
    )
    return error_outcome(tool_name, failed, seconds)


def _bounded(text: str) -> str:
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    return text[:MAX_MESSAGE_CHARS] + f"… ({len(text) - MAX_MESSAGE_CHARS} more characters)"
