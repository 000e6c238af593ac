"""One redaction path for text that leaves the kernel towards a model or a log: the same rules everywhere.

Where it sits: a package-level private module beside ``errors.py``, because every capability sends
text out. ``redact_for_model`` is what a model may read from us: a kernel tool's error
(``agents/tools/outcome.py``), a hook's deny reason and a ``HookFailed`` message
(``agents/hooks/runner.py``, ``agents/hooks/server.py``), the fields a magic fills into a prompt
(``magics/interpolation.py``). ``_logging.Redactor`` applies the same patterns to log lines. Pure:
the environment is a mapping it is given (``os.environ`` by default: read, never changed).

The rules, in order::

    1. the value of each secret variable of the environment (a name holding KEY, TOKEN, SECRET,
       PASSWORD, PASSWD, COOKIE, AUTH or CREDENTIAL; values of 6 characters or more), as it is and
       as it reads inside a JSON string
    2. header, JSON-field and NAME=value shapes: ``Authorization: ...``, ``"api_key": "..."``,
       ``OPENAI_API_KEY=...``
    3. ``key=value`` / ``token: ...`` words, ``Bearer ...``, ``sk-...`` (``errors.redact_secrets``)
    4. token shapes that stand alone: GitHub, AWS access key ids, Slack, JSON Web Tokens, Google keys

Each match becomes ``[redacted]``. ``max_chars`` cuts the result (the cut is said).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Mapping

from elynav_nb.errors import redact_secrets

__all__ = [
    "REDACTED",
    "describe_exception",
    "is_secret_name",
    "redact_for_model",
    "redact_patterns",
    "secret_values_pattern",
]

REDACTED = "[redacted]"
SHORTEST_SECRET_VALUE = 6  # shorter values ("1", "true") would blank out ordinary text

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|COOKIE|AUTH|CREDENTIAL", re.IGNORECASE)
_HEADER = re.compile(
    r"(?im)\b((?:proxy-)?authorization|set-cookie|cookie|x-api-key|api-key|x-goog-api-key)(\s*:\s*)[^\r\n\"']+"
)
_JSON_FIELD = re.compile(
    r"(?i)(\"[\w.-]*(?:api[_-]?key|apikey|token|secret|password|passwd|cookie|authorization|credential)[\w.-]*\"\s*:\s*\")"
    r"(?:[^\"\\]|\\.)*\""
)
_ENVIRONMENT_ASSIGNMENT = re.compile(
    r"\b([A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|COOKIE|AUTH|CREDENTIAL)[A-Z0-9_]*=)(['\"]?)[^\s'\";,]+"
)
_TOKEN_SHAPES = [
    re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{20,})"),  # GitHub tokens
    re.compile(r"\b(github_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"\b((?:AKIA|ASIA)[0-9A-Z]{16})\b"),  # AWS access key ids
    re.compile(r"\b(xox[abposr]-[A-Za-z0-9-]{10,})"),  # Slack tokens
    re.compile(r"\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+)"),  # JSON Web Tokens
    re.compile(r"\b(AIza[0-9A-Za-z_-]{30,})"),  # Google API keys
]


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's value must never leave (KEY, TOKEN, SECRET... in its name)."""
    return _SECRET_NAME.search(name) is not None


@functools.lru_cache(maxsize=8)
def _compiled_values(values: frozenset[str]) -> re.Pattern[str] | None:
    variants: set[str] = set()
    for value in values:
        if len(value) < SHORTEST_SECRET_VALUE:
            continue
        variants.add(value)
        variants.add(json.dumps(value, ensure_ascii=False)[1:-1])  # as it appears inside a JSON line
        variants.add(json.dumps(value)[1:-1])
    ordered = sorted(variants, key=len, reverse=True)  # the longest first: no partial leftovers
    return re.compile("|".join(re.escape(value) for value in ordered)) if ordered else None


def secret_values_pattern(values: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern matching each of ``values`` (and its JSON-escaped forms); None when there is none."""
    return _compiled_values(frozenset(values))


def redact_patterns(text: str) -> str:
    """``text`` with rules 2 to 4 applied (no environment values)."""
    text = _HEADER.sub(r"\1\2" + REDACTED, text)
    text = _JSON_FIELD.sub(r"\1" + REDACTED + '"', text)
    text = _ENVIRONMENT_ASSIGNMENT.sub(r"\1\2" + REDACTED, text)
    text = redact_secrets(text)
    for shape in _TOKEN_SHAPES:
        text = shape.sub(REDACTED, text)
    return text


def redact_for_model(
    text: str, *, environment: Mapping[str, str] | None = None, max_chars: int | None = None
) -> str:
    """``text`` as a model may read it: every rule of the module docstring, then cut at ``max_chars``."""
    source = os.environ if environment is None else environment
    values = secret_values_pattern(value for name, value in source.items() if is_secret_name(name))
    if values is not None:
        text = values.sub(REDACTED, text)
    text = redact_patterns(text)
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars] + f"… ({len(text) - max_chars} more characters)"
    return text


def describe_exception(error: BaseException, *, max_chars: int | None = None) -> str:
    """``Type: message`` of an exception as a model may read it (redacted); never raises.

    Its type name alone when the message is empty; a message whose ``__str__`` fails is said so.
    """
    type_name = type(error).__name__
    try:
        text = str(error)
    except Exception:
        text = "(its message could not be read)"
    return redact_for_model(f"{type_name}: {text}" if text else type_name, max_chars=max_chars)
