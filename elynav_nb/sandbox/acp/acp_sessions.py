"""Sessions of the ACP stand-in: their state, the permission modes, and one JSON file per session on disk.

Where it sits: ``acp_standin`` creates a ``SessionState`` at ``session/new`` and finds one at
``session/load`` (in memory, else on disk: a new process can load what a killed one saved); ``acp_turns``
reads the mode and the remembered always-allow / always-reject answers. Files live under
``$ELYNAV_ACP_STANDIN_HOME`` (default ``~/.elynav-acp-standin``) in ``sessions/<sessionId>.json``:
``{"sessionId", "cwd", "mode", "turns", "always": {kind: "allow"|"reject"}, "history": [{"role":
"user"|"agent", "text"}]}``. Each save writes a temporary file then ``os.replace``-s it, so a kill -9 at
any moment leaves the previous or the new file whole. The session's MCP servers are not saved: the
client passes them again to ``session/load``.

Data flow: ``session/new`` -> ``SessionState`` -> ``SessionStore.save`` (at creation and after each
turn) -> disk -> ``SessionStore.load`` -> replayed history.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elynav_nb.sandbox.acp.acp_mcp import McpServerEntry

__all__ = ["HOME_VARIABLE", "MODES", "SessionState", "SessionStore", "new_session_id", "standin_home"]

HOME_VARIABLE = "ELYNAV_ACP_STANDIN_HOME"
MODES: tuple[tuple[str, str, str], ...] = (
    ("default", "Default", "Ask before running commands and before editing files"),
    ("acceptEdits", "Accept edits", "Edit files without asking; still ask before running commands"),
    ("bypassPermissions", "Bypass permissions", "Never ask: run commands and edit files at once"),
    ("plan", "Plan", "Plan only; asks before every tool like default"),
)
MODE_IDS = frozenset(mode_id for mode_id, _, _ in MODES)
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


def standin_home() -> Path:
    configured = os.environ.get(HOME_VARIABLE)
    return Path(configured) if configured else Path.home() / ".elynav-acp-standin"


def new_session_id() -> str:
    return f"sess_{uuid.uuid4().hex}"


def modes_json(current: str) -> dict[str, Any]:
    return {
        "currentModeId": current,
        "availableModes": [
            {"id": mode_id, "name": name, "description": description} for mode_id, name, description in MODES
        ],
    }


@dataclass
class SessionState:
    session_id: str
    cwd: str
    mode: str = "default"
    turns: int = 0
    always: dict[str, str] = field(default_factory=dict)
    history: list[dict[str, str]] = field(default_factory=list)
    mcp_servers: list[McpServerEntry] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "mode": self.mode,
            "turns": self.turns,
            "always": dict(self.always),
            "history": [dict(entry) for entry in self.history],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionState:
        history = [
            {"role": str(entry.get("role")), "text": str(entry.get("text", ""))}
            for entry in data.get("history", [])
            if isinstance(entry, dict)
        ]
        always = data.get("always") if isinstance(data.get("always"), dict) else {}
        mode = str(data.get("mode", "default"))
        return cls(
            session_id=str(data["sessionId"]),
            cwd=str(data.get("cwd", "/")),
            mode=mode if mode in MODE_IDS else "default",
            turns=int(data.get("turns", 0)),
            always={str(key): str(value) for key, value in (always or {}).items()},
            history=history,
        )


class SessionStore:
    def __init__(self, home: Path) -> None:
        self.directory = home / "sessions"

    def path_of(self, session_id: str) -> Path | None:
        if not _SESSION_ID.fullmatch(session_id):
            return None  # never a path outside the store
        return self.directory / f"{session_id}.json"

    def save(self, state: SessionState) -> None:
        path = self.path_of(state.session_id)
        if path is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(state.to_json(), handle, ensure_ascii=False)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise

    def load(self, session_id: str) -> SessionState | None:
        path = self.path_of(session_id)
        if path is None or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return SessionState.from_json(data) if isinstance(data, dict) else None
        except (ValueError, KeyError, TypeError, OSError):
            return None
