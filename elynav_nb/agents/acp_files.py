"""The ACP client's file methods, ``fs/read_text_file`` and ``fs/write_text_file``, confined to the workspace.

Where it sits: the ``AcpLauncher`` (``launchers.py``) gives one ``WorkspaceFiles`` to each ACP wire,
which serves the agent's fs requests with it (``AcpWire.serve_request``). I/O only: the disk work
runs off the event loop.

Rules: a path must be absolute (ACP says so) and, once its symlinks are resolved, inside the
workspace: anything else is ``PATH_OUTSIDE_WORKSPACE`` and nothing is read or written. A read is
bounded (``max_bytes``), UTF-8 (``INVALID_INPUT`` otherwise) and honours ``line`` (1-based) and
``limit``. A write goes to a temporary file beside the target, then replaces it (``os.replace``):
the target is never half written; a new file's parent folders are made, inside the workspace.

How data flows::

    agent -> fs/read_text_file {path, line?, limit?} -> confined path -> {"content": text}
    agent -> fs/write_text_file {path, content}     -> confined path -> temp file -> replace -> {}
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from elynav_nb._files import write_atomically
from elynav_nb.errors import InvalidInput, NotFound, PathOutsideWorkspace

__all__ = ["DEFAULT_MAX_READ_BYTES", "WorkspaceFiles", "confined_path"]

DEFAULT_MAX_READ_BYTES = 8 * 1024 * 1024


def confined_path(workspace: Path, value: Any, *, what: str = "path") -> Path:
    """``value`` as a path inside ``workspace`` (symlinks resolved), else ``PATH_OUTSIDE_WORKSPACE``."""
    if not isinstance(value, str) or not value or "\x00" in value:
        raise InvalidInput(f"the agent gave no valid {what}", details={what: str(value)[:200]})
    path = Path(value)
    if not path.is_absolute():
        raise InvalidInput(f"the {what} must be absolute (ACP): {value[:200]}", details={what: value[:200]})
    root = workspace.resolve()
    resolved = path.resolve()
    if resolved != root and root not in resolved.parents:
        raise PathOutsideWorkspace(
            f"{value[:200]} is outside the agent's workspace {root}", details={what: value[:200]}
        )
    return resolved


class WorkspaceFiles:
    """The fs methods of one ACP agent (see the module docstring)."""

    def __init__(self, workspace: Path, *, max_read_bytes: int = DEFAULT_MAX_READ_BYTES) -> None:
        self.workspace = workspace
        self.max_read_bytes = max_read_bytes

    async def read_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        path = confined_path(self.workspace, params.get("path"))
        line = params.get("line")
        limit = params.get("limit")
        content = await asyncio.to_thread(self._read, path)
        if isinstance(line, int) or isinstance(limit, int):
            lines = content.splitlines(keepends=True)
            start = max(0, line - 1) if isinstance(line, int) else 0
            end = start + limit if isinstance(limit, int) and limit >= 0 else None
            content = "".join(lines[start:end])
        return {"content": content}

    def _read(self, path: Path) -> str:
        if not path.is_file():
            raise NotFound(f"no file {path}", details={"path": str(path)})
        size = path.stat().st_size
        if size > self.max_read_bytes:
            raise InvalidInput(
                f"{path} holds {size} bytes: more than the {self.max_read_bytes} an agent may read at once",
                details={"path": str(path), "bytes": size},
            )
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise InvalidInput(f"{path} is not UTF-8 text", details={"path": str(path)}) from error

    async def write_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        path = confined_path(self.workspace, params.get("path"))
        content = params.get("content")
        if not isinstance(content, str):
            raise InvalidInput("fs/write_text_file needs a string content", details={"path": str(path)})
        await asyncio.to_thread(self._write, path, content)
        return {}

    def _write(self, path: Path, content: str) -> None:
        if path.is_dir():
            raise InvalidInput(f"{path} is a folder", details={"path": str(path)})
        write_atomically(path, content)  # keeps an existing file's mode
