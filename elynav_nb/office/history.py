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

__all__ = ["HISTORY_COLUMNS", "HistoryLog", "fold_records", "history_frame", "utc_now"]

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
]
_TIME_COLUMNS = ("queued_at", "started_at", "ended_at")


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
            )
            rows[ask_id] = row
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
