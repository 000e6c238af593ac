"""Logging of elynav_nb: the ``ELYNAV_LOG`` switch, and the redaction every logged line goes through.

Where it sits: beside ``errors.py``, used by every layer that logs. Each module logs to
``logging.getLogger(__name__)`` (``elynav_nb.agents.process``, ``elynav_nb.office.office``, ...),
so a level set on ``elynav_nb``, ``elynav_nb.agents`` or ``elynav_nb.office`` reaches the whole
layer; the lines a CLI reads and writes go to ``elynav_nb.agents.wire`` (DEBUG), so they can be
silenced alone. A library does not configure logging: nothing here runs unless ``ELYNAV_LOG`` is
set, in which case ``import elynav_nb`` calls ``configure_from_environment`` once.

How data flows::

    ELYNAV_LOG=debug|info|warning|error -> configure_from_environment -> one stderr handler
      on the ``elynav_nb`` logger (installed once; its level set to the one asked)
    a line to log -> Redactor (values of the secret variables of the process's environment,
      then the patterns of ``_redaction.py``, the one path text towards a model takes too) -> the log

Secrets: a variable is secret when its name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD, COOKIE,
AUTH or CREDENTIAL (``ANTHROPIC_API_KEY``, ``ELYNAV_OFFICE_TOKEN``, ``DOCS_CSRF_TOKEN``...): its
value is replaced wherever it appears, even in a CLI's output. Per-line code guards its formatting
with ``logger.isEnabledFor(logging.DEBUG)``, so a runner that streams 100k lines a second pays one
level check per line when DEBUG is off.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Mapping
from typing import TextIO

from elynav_nb._redaction import REDACTED, is_secret_name, redact_patterns, secret_values_pattern

__all__ = [
    "LOG_VARIABLE",
    "LOGGED_LINE_CHARS",
    "WIRE_LOGGER_NAME",
    "Redactor",
    "configure_from_environment",
    "is_secret_name",
    "redact",
]

LOG_VARIABLE = "ELYNAV_LOG"
WIRE_LOGGER_NAME = "elynav_nb.agents.wire"
LOGGED_LINE_CHARS = 8192
"""A logged line is cut after this many characters (the cut is said); a CLI line may be 64 MiB."""

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "warn": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
}
_OFF = ("", "0", "off", "false", "no", "none")
_HANDLER_NAME = "elynav-log"
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def redact(text: str) -> str:
    """``text`` with what looks like a key, a token, a cookie or an ``Authorization`` value replaced."""
    return redact_patterns(text)


class Redactor:
    """Redacts known secret values (those of a process's environment, an office's tokens) and patterns."""

    def __init__(self, secret_values: Iterable[str] = ()) -> None:
        self._values = secret_values_pattern(secret_values)

    @classmethod
    def for_environment(cls, environment: Mapping[str, str], extra: Iterable[str] = ()) -> Redactor:
        """A redactor of every secret variable's value in ``environment`` (and of ``extra`` values)."""
        values = [value for name, value in environment.items() if is_secret_name(name)]
        return cls([*values, *extra])

    def __call__(self, text: str) -> str:
        if self._values is not None:
            text = self._values.sub(REDACTED, text)
        return redact_patterns(text)

    def line(self, data: bytes | str, limit: int = LOGGED_LINE_CHARS) -> str:
        """One CLI line as log text: decoded, cut at ``limit`` characters (said), redacted."""
        text = data.decode("utf-8", errors="replace") if isinstance(data, bytes | bytearray) else data
        text = text.rstrip("\r\n")
        if len(text) <= limit:
            return self(text)
        # Redact a little past the cut, then cut: a secret across the limit is replaced whole first.
        hidden = len(text) - limit
        return self(text[: limit + 512])[:limit] + f"… ({hidden} more characters)"

    def environment(self, environment: Mapping[str, str], base: Mapping[str, str] | None = None) -> str:
        """``NAME=value`` of the variables that differ from ``base`` (all when None), secrets redacted."""
        shown = []
        for name in sorted(environment):
            value = environment[name]
            if base is not None and base.get(name) == value:
                continue
            shown.append(f"{name}={'[redacted]' if is_secret_name(name) else self(value)}")
        return " ".join(shown)


class _StandardErrorHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler writing to whatever ``sys.stderr`` is at each record (a kernel or pytest replaces it)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def level_from(value: str) -> int | None:
    """The logging level ``ELYNAV_LOG`` asks for (None: off); an unknown value gives WARNING."""
    text = value.strip().lower()
    if text in _OFF:
        return None
    if text.isdigit():
        return int(text)
    return _LEVELS.get(text, logging.WARNING)


def configure_from_environment(environment: Mapping[str, str] | None = None) -> logging.Handler | None:
    """Install one stderr handler on the ``elynav_nb`` logger at the level ``ELYNAV_LOG`` names.

    Called by ``import elynav_nb`` only when ``ELYNAV_LOG`` is set; calling it again changes the
    level but never adds a second handler. Returns the handler (None when the variable is unset or off).
    """
    source = os.environ if environment is None else environment
    value = source.get(LOG_VARIABLE, "")
    level = level_from(value)
    if level is None:
        return None
    package_logger = logging.getLogger("elynav_nb")
    package_logger.setLevel(level)
    for handler in package_logger.handlers:
        if handler.get_name() == _HANDLER_NAME:
            return handler
    handler = _StandardErrorHandler()
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(logging.Formatter(_FORMAT))
    package_logger.addHandler(handler)
    if value.strip().lower() not in _LEVELS and not value.strip().isdigit():
        package_logger.warning(
            "%s=%r is not a level (debug, info, warning, error): logging at WARNING", LOG_VARIABLE, value[:40]
        )
    return handler
