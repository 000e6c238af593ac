"""CRM domain: the records, the allowed values and the validation of every input. Pure, no I/O.

Where it sits: under ``store.py`` (which calls these validators before any SQL) and ``server.py``
(which returns these records as MCP structured output). Data flows in as raw caller values
(strings, numbers, ``None``) and out as normalised values or an ``InvalidInput`` whose message
tells the caller (often an agent) exactly what to fix.

Also here, because they are pure text transforms: the FTS5 match expression built from free
search text (every word quoted, so no FTS5 operator or SQL text gets through) and the opaque
pagination cursors.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from elynav_nb.errors import InvalidInput

__all__ = [
    "ACCOUNT_SIZES",
    "ACCOUNT_STATUSES",
    "ACTIVITY_KINDS",
    "CLOSED_STAGES",
    "DEFAULT_PAGE_SIZE",
    "MAX_BODY_BYTES",
    "MAX_PAGE_SIZE",
    "MAX_QUERY_CHARS",
    "MAX_SHORT_TEXT_CHARS",
    "OPPORTUNITY_STAGES",
    "Account",
    "AccountDetail",
    "AccountPage",
    "Activity",
    "ActivityPage",
    "Contact",
    "ContactPage",
    "Opportunity",
    "PipelineSummary",
    "RowBatch",
    "StageTotal",
    "decode_cursor",
    "encode_cursor",
    "format_timestamp",
    "search_expression",
    "validate_account_size",
    "validate_account_status",
    "validate_amount",
    "validate_body",
    "validate_country",
    "validate_date",
    "validate_domain",
    "validate_email",
    "validate_id",
    "validate_kind",
    "validate_limit",
    "validate_optional_text",
    "validate_required_text",
    "validate_search_text",
    "validate_stage",
    "validate_timestamp",
]

# --- allowed values -------------------------------------------------------------------------

ACTIVITY_KINDS: tuple[str, ...] = ("email", "call", "meeting", "note", "linkedin")
OPPORTUNITY_STAGES: tuple[str, ...] = (
    "prospecting",
    "qualification",
    "proposal",
    "negotiation",
    "won",
    "lost",
)
CLOSED_STAGES: tuple[str, ...] = ("won", "lost")
ACCOUNT_STATUSES: tuple[str, ...] = ("prospect", "customer", "partner", "churned")
ACCOUNT_SIZES: tuple[str, ...] = ("1-10", "11-50", "51-200", "201-500", "501-1000", "1000+")

# --- limits ---------------------------------------------------------------------------------

MAX_SHORT_TEXT_CHARS = 200
"""Names, titles, subjects, owners: one line of text."""
MAX_BODY_BYTES = 64 * 1024
"""An activity body is refused above 64 KiB of UTF-8 (a 1 MB e-mail body is INVALID_INPUT)."""
MAX_QUERY_CHARS = 200
MAX_QUERY_WORDS = 12
DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
MAX_AMOUNT = 1_000_000_000_000.0

# --- records (also the MCP structured output) -----------------------------------------------


@dataclass(frozen=True)
class Account:
    id: int
    name: str
    domain: str | None
    industry: str | None
    size: str | None
    country: str | None
    status: str
    owner: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class Contact:
    id: int
    account_id: int
    first_name: str
    last_name: str
    email: str
    title: str | None
    phone: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class Activity:
    id: int
    account_id: int
    contact_id: int | None
    kind: str
    subject: str
    body: str
    occurred_at: str
    logged_by: str
    created_at: str


@dataclass(frozen=True)
class Opportunity:
    id: int
    account_id: int
    name: str
    stage: str
    amount: float
    close_date: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class AccountPage:
    """One page of accounts; pass ``next_cursor`` back as ``cursor`` for the next one (null: last page)."""

    items: list[Account]
    next_cursor: str | None


@dataclass(frozen=True)
class ContactPage:
    items: list[Contact]
    next_cursor: str | None


@dataclass(frozen=True)
class ActivityPage:
    items: list[Activity]
    next_cursor: str | None


@dataclass(frozen=True)
class AccountDetail:
    """An account with its contacts, its opportunities and its most recent activities."""

    account: Account
    contacts: list[Contact]
    opportunities: list[Opportunity]
    recent_activities: list[Activity]


@dataclass(frozen=True)
class StageTotal:
    stage: str
    count: int
    total_amount: float


@dataclass(frozen=True)
class PipelineSummary:
    """Opportunities per stage, in pipeline order (stages with none are listed with 0)."""

    stages: list[StageTotal]
    open_count: int
    open_amount: float
    won_amount: float


@dataclass
class RowBatch:
    """Rows ready for a bulk insert, each a tuple in the table's column order (ids included)."""

    accounts: list[tuple[object, ...]] = field(default_factory=list)
    contacts: list[tuple[object, ...]] = field(default_factory=list)
    activities: list[tuple[object, ...]] = field(default_factory=list)
    opportunities: list[tuple[object, ...]] = field(default_factory=list)


# --- validators -----------------------------------------------------------------------------


def validate_id(field_name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{field_name} must be a positive integer id, got {value!r}")
    return value


def validate_required_text(field_name: str, value: object, max_chars: int = MAX_SHORT_TEXT_CHARS) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{field_name} must be text, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise InvalidInput(f"{field_name} must not be empty")
    if len(text) > max_chars:
        raise InvalidInput(f"{field_name} is {len(text)} characters long; the limit is {max_chars}")
    return text


def validate_optional_text(
    field_name: str, value: object, max_chars: int = MAX_SHORT_TEXT_CHARS
) -> str | None:
    """``None`` or blank text gives ``None``; otherwise the stripped text, within ``max_chars``."""
    if value is None:
        return None
    if isinstance(value, str) and not value.strip():
        return None
    return validate_required_text(field_name, value, max_chars)


_EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")


def validate_email(value: object) -> str:
    """A normalised (stripped, lower-case) e-mail address with exactly one ``@`` and a dotted domain."""
    text = validate_required_text("email", value, 254)
    if "@" not in text:
        raise InvalidInput(f"email {text!r} has no '@'; give a full address such as jeanne.martin@exemple.fr")
    if not _EMAIL_PATTERN.fullmatch(text):
        raise InvalidInput(
            f"email {text!r} is not a valid address; expected one '@', no spaces and a dotted domain "
            "(jeanne.martin@exemple.fr)"
        )
    return text.lower()


_DOMAIN_PATTERN = re.compile(r"^(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,63}$")


def validate_domain(value: object) -> str | None:
    """A bare web domain in lower case (``exemple.fr``), or ``None``."""
    text = validate_optional_text("domain", value, 253)
    if text is None:
        return None
    text = text.lower()
    if not _DOMAIN_PATTERN.fullmatch(text):
        raise InvalidInput(
            f"domain {text!r} is not a bare web domain; give it without scheme, path or '@' (exemple.fr)"
        )
    return text


def validate_country(value: object) -> str | None:
    text = validate_optional_text("country", value, 60)
    if text is None:
        return None
    if not re.fullmatch(r"[A-Za-z]{2}", text):
        raise InvalidInput(f"country {text!r} must be a two-letter ISO 3166 code such as FR")
    return text.upper()


def _validate_choice(field_name: str, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value.strip().lower() not in allowed:
        raise InvalidInput(f"{field_name} {value!r} is unknown; use one of: {', '.join(allowed)}")
    return value.strip().lower()


def validate_kind(value: object) -> str:
    return _validate_choice("kind", value, ACTIVITY_KINDS)


def validate_stage(value: object) -> str:
    return _validate_choice("stage", value, OPPORTUNITY_STAGES)


def validate_account_status(value: object) -> str:
    return _validate_choice("status", value, ACCOUNT_STATUSES)


def validate_account_size(value: object) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _validate_choice("size", value, ACCOUNT_SIZES)


def validate_amount(value: object) -> float:
    """A finite, non-negative amount in euros, rounded to the cent."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"amount must be a number of euros, got {type(value).__name__}")
    amount = float(value)
    if math.isnan(amount) or math.isinf(amount):
        raise InvalidInput("amount must be a finite number of euros")
    if amount < 0:
        raise InvalidInput(f"amount {value!r} is negative; give the expected deal value in euros, 0 or more")
    if amount > MAX_AMOUNT:
        raise InvalidInput(f"amount {value!r} is above the limit of {MAX_AMOUNT:,.0f} euros")
    return round(amount, 2)


def validate_body(value: object) -> str:
    """Activity body: any text up to ``MAX_BODY_BYTES`` of UTF-8 (empty allowed)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"body must be text, got {type(value).__name__}")
    size = len(value.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise InvalidInput(
            f"body is {size:,} bytes; the limit is {MAX_BODY_BYTES:,} bytes of UTF-8. "
            "Log a summary and keep the full text elsewhere"
        )
    return value


def validate_limit(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE_SIZE}, got {value!r}")
    return value


def validate_search_text(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"query must be text, got {type(value).__name__}")
    if len(value) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query is {len(value)} characters long; the limit is {MAX_QUERY_CHARS}")
    return value.strip()


def format_timestamp(moment: datetime) -> str:
    """``2025-03-14T09:30:00Z``: UTC, to the second. Naive datetimes are taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def validate_timestamp(field_name: str, value: object) -> str:
    """An ISO 8601 date or date-time, returned as UTC ``YYYY-MM-DDTHH:MM:SSZ``."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field_name} must be an ISO 8601 date-time text, got {type(value).__name__}")
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InvalidInput(
            f"{field_name} {value!r} is not an ISO 8601 date-time; use e.g. 2025-03-14T09:30:00Z or 2025-03-14"
        ) from None
    return format_timestamp(moment)


def validate_date(field_name: str, value: object) -> str | None:
    """An ISO 8601 calendar date ``YYYY-MM-DD``, or ``None``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{field_name} must be an ISO date text YYYY-MM-DD, got {type(value).__name__}")
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise InvalidInput(f"{field_name} {value!r} is not a date; use YYYY-MM-DD, e.g. 2025-09-30") from None


# --- search text and cursors ----------------------------------------------------------------

_SEARCH_WORD = re.compile(r"[^\W_]+")


def search_expression(query: str) -> str | None:
    """The FTS5 MATCH expression for free text: each word quoted and prefix-matched, all required.

    ``acme lyon`` gives ``"acme"* "lyon"*``. Punctuation, quotes and FTS5 operators never reach
    FTS5 as syntax: only runs of letters and digits are kept, each inside a quoted string (the
    words ``AND``/``OR``/``NOT``/``NEAR`` become plain words). ``None`` means the text holds no
    word at all, so nothing can match.
    """
    words = _SEARCH_WORD.findall(query)
    if not words:
        return None
    if len(words) > MAX_QUERY_WORDS:
        raise InvalidInput(f"query has {len(words)} words; use at most {MAX_QUERY_WORDS}")
    quoted_words = []
    for word in words:
        quoted_words.append('"' + word.replace('"', '""') + '"*')
    return " ".join(quoted_words)


_CURSOR_PREFIX = "offset:"


def encode_cursor(offset: int) -> str:
    """An opaque page cursor (today: the row offset of the next page, base64url-encoded)."""
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{offset}".encode("ascii")).decode("ascii").rstrip("=")


def decode_cursor(cursor: object) -> int:
    """The offset a cursor stands for; ``None`` or ``""`` is the first page."""
    if cursor is None or cursor == "":
        return 0
    problem = InvalidInput(
        f"cursor {cursor!r} was not given by this server; pass the next_cursor of the previous page, "
        "or omit cursor for the first page"
    )
    if not isinstance(cursor, str) or len(cursor) > 64:
        raise problem
    try:
        decoded = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise problem from None
    if not decoded.startswith(_CURSOR_PREFIX) or not decoded[len(_CURSOR_PREFIX) :].isdigit():
        raise problem
    return int(decoded[len(_CURSOR_PREFIX) :])
