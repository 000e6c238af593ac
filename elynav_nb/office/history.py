"""The office's one history: every ask, user to agent and agent to agent, appended to a JSONL file.

Where it sits: the office appends a record at each step of an ask; ``office.history()`` reads
the file back into a DataFrame; the board's History button shows it. The file is
``<workspace>/.elynav/history.jsonl``, so the history outlives the kernel.

Records (one JSON object a line, appended with one ``write`` each, never rewritten)::

    {"record": "ask",   "ask_id", "parent_id", "sender", "agent", "prompt", "queued_at"}
    {"record": "start", "ask_id", "started_at", "session_id"}
    {"record": "end",   "ask_id", "outcome", "reply", "error_code", "error", "cancelled_by",
                        "ended_at", "session_id", "cost_usd"}
    {"record": "note",  "at", "agent", "text"}          (office started, a session could not resume...)
    {"record": "refused", "ask_id", "request", "parent_id", "sender", "agent", "prompt", "target_id",
                        "error_code", "error", "at"}

A ``refused`` record is an ``elynav ask`` or ``elynav cancel`` the office refused (``DEADLOCK``,
``AGENT_NOT_FOUND``, ``NOT_ALLOWED``...): it was never queued, so it gets an id of its own and one
row with outcome ``refused``; ``request`` says which (``ask`` or ``cancel``) and ``target_id`` the ask
a refused cancel aimed at (``refusal_record`` builds it).

Reading folds them into one row per ask (``fold_records``, pure). A torn last line (a kernel
killed mid-write) is skipped, never fatal, and the next record starts on a line of its own. On start, ``end_unfinished`` marks the asks that were
in flight when the previous office died as ``failed`` ("office stopped").
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas

__all__ = [
    "HISTORY_COLUMNS",
    "REFUSED",
    "HistoryLog",
    "fold_records",
    "history_frame",
    "refusal_record",
    "utc_now",
]

HISTORY_COLUMNS = [
    "ask_id",
    "parent_id",
    "sender",
    "agent",
    "outcome",
    "prompt",
    "reply",
    "error_code",
    "error",
    "cancelled_by",
    "queued_at",
    "started_at",
    "ended_at",
    "wait_s",
    "run_s",
    "cost_usd",
    "session_id",
    "request",
    "target_id",
]
_TIME_COLUMNS = ("queued_at", "started_at", "ended_at")
REFUSED = "refused"
"""The outcome of a history row for a request the office refused (never queued)."""
_REFUSED_TEXT_CHARS = 100_000  # a refused request may be far longer than any ask (4 MB lines)
_REFUSED_NAME_CHARS = 200


def utc_now() -> datetime:
    return datetime.now(UTC)


def _timestamp(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


class HistoryLog:
    """Append-only JSONL file of office records. Safe to append from several threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._tail_checked = False

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=_timestamp_default) + "\n"
        data = line.encode("utf-8")
        with self._lock:
            descriptor = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                if not self._tail_checked:
                    data = self._after_torn_line(descriptor) + data
                    self._tail_checked = True
                os.write(descriptor, data)  # one write with O_APPEND: lines never interleave
            finally:
                os.close(descriptor)

    @staticmethod
    def _after_torn_line(descriptor: int) -> bytes:
        """A newline when the file ends inside a line (a writer died mid-line), so ours starts afresh."""
        size = os.fstat(descriptor).st_size
        if size and os.pread(descriptor, 1, size - 1) != b"\n":
            return b"\n"
        return b""

    def note(self, text: str, *, agent: str = "") -> None:
        self.append({"record": "note", "at": utc_now(), "agent": agent, "text": text})

    def records(self) -> list[dict[str, Any]]:
        """Every readable record, in file order (torn or foreign lines skipped)."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        records: list[dict[str, Any]] = []
        for line in raw.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and isinstance(record.get("record"), str):
                records.append(record)
        return records

    def end_unfinished(self, reason: str) -> list[str]:
        """Append a ``failed`` end for every ask that has no end yet; returns their ids."""
        unfinished = [row["ask_id"] for row in fold_records(self.records()) if row["outcome"] is None]
        now = utc_now()
        for ask_id in unfinished:
            self.append(
                {
                    "record": "end",
                    "ask_id": ask_id,
                    "outcome": "failed",
                    "reply": "",
                    "error_code": "OFFICE_STOPPED",
                    "error": reason,
                    "cancelled_by": "",
                    "ended_at": now,
                    "session_id": "",
                    "cost_usd": 0.0,
                }
            )
        return unfinished


def refusal_record(
    *,
    ask_id: str,
    request: str,
    sender: str,
    agent: str,
    error_code: str,
    error: str,
    prompt: str = "",
    parent_id: str | None = None,
    target_id: str | None = None,
    at: datetime | None = None,
) -> dict[str, Any]:
    """The ``refused`` record of an ask or cancel the office refused (long texts cut: a refusal is bounded too)."""
    return {
        "record": REFUSED,
        "ask_id": ask_id,
        "request": request,
        "parent_id": parent_id,
        "sender": sender[:_REFUSED_NAME_CHARS],
        "agent": agent[:_REFUSED_NAME_CHARS],
        "prompt": prompt[:_REFUSED_TEXT_CHARS],
        "target_id": target_id[:_REFUSED_NAME_CHARS] if target_id is not None else None,
        "error_code": error_code,
        "error": error[:_REFUSED_TEXT_CHARS],
        "at": at or utc_now(),
    }


def _timestamp_default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot store {type(value).__name__} in the history")


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def fold_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per ask (the columns of ``HISTORY_COLUMNS``), in the order the asks were queued."""
    rows: dict[str, dict[str, Any]] = {}
    for record in records:
        ask_id = record.get("ask_id")
        kind = record["record"]
        if not isinstance(ask_id, str):
            continue
        if kind == "ask":
            row = dict.fromkeys(HISTORY_COLUMNS)
            row.update(
                ask_id=ask_id,
                parent_id=record.get("parent_id"),
                sender=record.get("sender"),
                agent=record.get("agent"),
                prompt=record.get("prompt", ""),
                queued_at=_parse_time(record.get("queued_at")),
                reply="",
                error_code="",
                error="",
                cancelled_by="",
                session_id="",
                cost_usd=0.0,
                request="ask",
            )
            rows[ask_id] = row
            continue
        if kind == REFUSED:
            refused_at = _parse_time(record.get("at"))
            row = dict.fromkeys(HISTORY_COLUMNS)
            row.update(
                ask_id=ask_id,
                parent_id=record.get("parent_id"),
                sender=record.get("sender"),
                agent=record.get("agent"),
                outcome=REFUSED,
                prompt=record.get("prompt", ""),
                reply="",
                error_code=record.get("error_code", ""),
                error=record.get("error", ""),
                cancelled_by="",
                queued_at=refused_at,
                ended_at=refused_at,
                session_id="",
                cost_usd=0.0,
                request=record.get("request", "ask"),
                target_id=record.get("target_id"),
            )
            rows.setdefault(ask_id, row)
            continue
        row_or_none = rows.get(ask_id)
        if row_or_none is None:
            continue
        if kind == "start":
            row_or_none["started_at"] = _parse_time(record.get("started_at"))
            row_or_none["session_id"] = record.get("session_id") or row_or_none["session_id"]
        elif kind == "end" and row_or_none["outcome"] is None:
            row_or_none.update(
                outcome=record.get("outcome"),
                reply=record.get("reply", ""),
                error_code=record.get("error_code", ""),
                error=record.get("error", ""),
                cancelled_by=record.get("cancelled_by", ""),
                ended_at=_parse_time(record.get("ended_at")),
                cost_usd=float(record.get("cost_usd") or 0.0),
            )
            if record.get("session_id"):
                row_or_none["session_id"] = record["session_id"]
    for row in rows.values():
        row["wait_s"] = _seconds_between(row["queued_at"], row["started_at"] or row["ended_at"])
        row["run_s"] = _seconds_between(row["started_at"], row["ended_at"])
    return list(rows.values())


def _seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds())


def history_frame(rows: list[dict[str, Any]]) -> pandas.DataFrame:
    """The rows as a DataFrame: UTC datetimes, float seconds, one row per ask."""
    import pandas

    frame = pandas.DataFrame(rows, columns=HISTORY_COLUMNS)
    for column in _TIME_COLUMNS:
        frame[column] = pandas.to_datetime(frame[column], utc=True)
    for column in ("wait_s", "run_s", "cost_usd"):
        frame[column] = pandas.to_numeric(frame[column]).astype("float64")
    return frame
