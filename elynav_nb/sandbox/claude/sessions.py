"""Conversation transcripts of the stand-in: one JSONL file per session id.

Where it sits: used by ``claude_standin`` for ``--session-id``, ``--resume``, ``--continue``,
``--fork-session`` and ``--no-session-persistence``. Files live under ``$ELYNAV_STANDIN_HOME``
(default ``~/.cache/elynav-standin``) in ``sessions/<session_id>.jsonl``: a header line
``{"type": "session", "session_id", "cwd", "created_at"}`` then one line per user or assistant
message ``{"type": "user" | "assistant", "text", "timestamp"}``. Each append is flushed at once,
so a killed process leaves a readable file.

Data flow: turn texts -> ``SessionStore.append`` -> disk; start-up -> ``load`` -> earlier turns.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elynav_nb.sandbox.claude.wire import now_timestamp

__all__ = ["SessionStore", "TranscriptEntry", "standin_home"]


def standin_home() -> Path:
    """``$ELYNAV_STANDIN_HOME`` or ``~/.cache/elynav-standin``."""
    configured = os.environ.get("ELYNAV_STANDIN_HOME")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "elynav-standin"


@dataclass(frozen=True)
class TranscriptEntry:
    role: str
    text: str


@dataclass
class SessionStore:
    """The transcript of one session; ``persist=False`` keeps it in memory only."""

    home: Path
    session_id: str
    cwd: str
    persist: bool = True
    history: list[TranscriptEntry] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.home / "sessions" / f"{self.session_id}.jsonl"

    @staticmethod
    def exists(home: Path, session_id: str) -> bool:
        return (home / "sessions" / f"{session_id}.jsonl").is_file()

    @staticmethod
    def load(home: Path, session_id: str) -> list[TranscriptEntry] | None:
        """The stored messages of a session, or None when no such session was saved."""
        path = home / "sessions" / f"{session_id}.jsonl"
        if not path.is_file():
            return None
        entries: list[TranscriptEntry] = []
        with path.open(encoding="utf-8") as transcript:
            for line in transcript:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a torn last line after a kill: skip it
                if isinstance(record, dict) and record.get("type") in ("user", "assistant"):
                    entries.append(TranscriptEntry(str(record["type"]), str(record.get("text", ""))))
        return entries

    @staticmethod
    def most_recent_for(home: Path, cwd: str) -> str | None:
        """``--continue``: the newest session whose header names this cwd."""
        directory = home / "sessions"
        if not directory.is_dir():
            return None
        newest: tuple[float, str] | None = None
        for path in directory.glob("*.jsonl"):
            try:
                with path.open(encoding="utf-8") as transcript:
                    header = json.loads(transcript.readline() or "{}")
                modified = path.stat().st_mtime
            except (OSError, ValueError):
                continue
            same_directory = isinstance(header, dict) and header.get("cwd") == cwd
            if same_directory and (newest is None or modified > newest[0]):
                newest = (modified, path.stem)
        return None if newest is None else newest[1]

    def start(self, earlier: list[TranscriptEntry]) -> None:
        """Open the transcript: keep ``earlier`` turns (resume, fork) and write them if the file is new.

        As on the real CLI (2.1.332), a new session with no message is not saved: it cannot be
        resumed ("No conversation found") and its id may be given to ``--session-id`` again.
        """
        self.history = list(earlier)
        if earlier:
            self._write_new_file()

    def _write_new_file(self) -> None:
        if not self.persist or self.path.is_file():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        header = {
            "type": "session",
            "session_id": self.session_id,
            "cwd": self.cwd,
            "created_at": now_timestamp(),
        }
        with self.path.open("w", encoding="utf-8") as transcript:
            transcript.write(json.dumps(header) + "\n")
            for entry in self.history:
                transcript.write(json.dumps(self._record(entry)) + "\n")

    def append(self, role: str, text: str) -> None:
        entry = TranscriptEntry(role, text)
        if not self.path.is_file():
            self._write_new_file()  # the header and the turns kept so far
        self.history.append(entry)
        if not self.persist:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as transcript:
            transcript.write(json.dumps(self._record(entry)) + "\n")
            transcript.flush()

    def earlier_user_turns(self) -> int:
        count = 0
        for entry in self.history:
            if entry.role == "user":
                count += 1
        return count

    @staticmethod
    def _record(entry: TranscriptEntry) -> dict[str, Any]:
        return {"type": entry.role, "text": entry.text, "timestamp": now_timestamp()}
