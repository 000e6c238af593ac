"""The ACP client's file methods, ``fs/read_text_file`` and ``fs/write_text_file``, confined to the workspace.

Where it sits: the ``AcpLauncher`` (``protocols/acp/launcher.py``) gives one ``WorkspaceFiles`` to each ACP wire,
which serves the agent's fs requests with it (``AcpWire.serve_request``). I/O only: the disk work
runs off the event loop.

Rules: a path must be absolute (ACP says so), valid Unicode, and, once ``..`` is folded, inside the
workspace (the folder as given or its real path): anything else is ``PATH_OUTSIDE_WORKSPACE`` and
nothing is read or written. The path is then opened part by part from a descriptor of the
workspace's real folder (``openat`` with ``O_NOFOLLOW``): a symbolic link anywhere in it is refused,
not followed, so swapping a folder for a link to the outside between a check and the open finds
nothing to race; a file with more than one hard link is refused too (the other name may be outside).
A read is bounded (``max_bytes``), of a regular file only, UTF-8 (``INVALID_INPUT`` otherwise) and
honours ``line`` (1-based) and ``limit``. A write goes to a temporary file created beside the target
in the same held folder, then replaces it (``os.replace`` between the same folder descriptor): the
target is never half written; a new file's missing parent folders are made, each inside the last.
Cost (``benchmarks/acp_files.py``, against the resolve-then-open-by-name it replaced): a read
1.1-1.6x at depth 1 (+25-45 µs, about 100 µs in all), 0.8-1.1x at depth 6; a write 0.8-1.0x (the
fsyncs dominate). The races it closes: ``tests/agents/test_acp_file_confinement.py``.

How data flows::

    agent -> fs/read_text_file {path, line?, limit?} -> parts under the workspace -> openat walk
          -> fstat (regular, one link, size) -> {"content": text}
    agent -> fs/write_text_file {path, content} -> parts -> openat walk (mkdir as needed)
          -> temp file (O_EXCL, O_NOFOLLOW) -> fsync -> replace -> fsync the folder -> {}
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from elynav_nb._files import NEW_FILE_MODE
from elynav_nb.errors import InvalidInput, NotFound, PathOutsideWorkspace

__all__ = ["DEFAULT_MAX_READ_BYTES", "WorkspaceFiles", "confined_path"]

DEFAULT_MAX_READ_BYTES = 8 * 1024 * 1024
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
_TEMPORARY_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _checked_value(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or "\x00" in value:
        raise InvalidInput(f"the agent gave no valid {what}", details={what: str(value)[:200]})
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            f"the {what} is not valid Unicode (a lone surrogate)", details={what: ascii(value)[:200]}
        ) from None
    if not Path(value).is_absolute():
        raise InvalidInput(f"the {what} must be absolute (ACP): {value[:200]}", details={what: value[:200]})
    return value


def confined_path(workspace: Path, value: Any, *, what: str = "path") -> Path:
    """``value`` as a path inside ``workspace`` (symlinks resolved), else ``PATH_OUTSIDE_WORKSPACE``.

    For a terminal's working folder (the command then runs there); files go through ``WorkspaceFiles``,
    which never follows a link.
    """
    text = _checked_value(value, what)
    root = workspace.resolve()
    resolved = Path(text).resolve()
    if resolved != root and root not in resolved.parents:
        raise PathOutsideWorkspace(
            f"{text[:200]} is outside the agent's workspace {root}", details={what: text[:200]}
        )
    return resolved


def confined_parts(workspace: Path, value: Any, *, what: str = "path") -> tuple[Path, tuple[str, ...]]:
    """The workspace's real folder and the parts of ``value`` below it (``..`` folded, nothing resolved)."""
    text = _checked_value(value, what)
    folded = Path(os.path.normpath(text))
    root = workspace.resolve()
    for base in (Path(os.path.normpath(workspace.absolute())), root):
        with contextlib.suppress(ValueError):
            return root, folded.relative_to(base).parts
    raise PathOutsideWorkspace(
        f"{text[:200]} is outside the agent's workspace {root}", details={what: text[:200]}
    )


class WorkspaceFiles:
    """The fs methods of one ACP agent (see the module docstring)."""

    def __init__(self, workspace: Path, *, max_read_bytes: int = DEFAULT_MAX_READ_BYTES) -> None:
        self.workspace = workspace
        self.max_read_bytes = max_read_bytes

    async def read_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        root, parts = confined_parts(self.workspace, params.get("path"))
        line = params.get("line")
        limit = params.get("limit")
        content = await asyncio.to_thread(self._read, root, parts, str(params.get("path")))
        if isinstance(line, int) or isinstance(limit, int):
            lines = content.splitlines(keepends=True)
            start = max(0, line - 1) if isinstance(line, int) else 0
            end = start + limit if isinstance(limit, int) and limit >= 0 else None
            content = "".join(lines[start:end])
        return {"content": content}

    def _read(self, root: Path, parts: tuple[str, ...], shown: str) -> str:
        if not parts:
            raise InvalidInput(f"{shown} is the workspace folder, not a file", details={"path": shown})
        folder = _open_folder(root, parts[:-1], shown, create=False)
        try:
            descriptor = _open_in(folder, parts[-1], _READ_FLAGS, shown)
        finally:
            os.close(folder)
        with os.fdopen(descriptor, "rb") as handle:
            status = os.fstat(descriptor)
            _check_regular_single(status, shown)
            if status.st_size > self.max_read_bytes:
                raise _too_big(shown, status.st_size, self.max_read_bytes)
            data = handle.read(self.max_read_bytes + 1)
        if len(data) > self.max_read_bytes:  # grew since the fstat
            raise _too_big(shown, len(data), self.max_read_bytes)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InvalidInput(f"{shown} is not UTF-8 text", details={"path": shown}) from error

    async def write_text_file(self, params: dict[str, Any]) -> dict[str, Any]:
        root, parts = confined_parts(self.workspace, params.get("path"))
        shown = str(params.get("path"))
        content = params.get("content")
        if not isinstance(content, str):
            raise InvalidInput("fs/write_text_file needs a string content", details={"path": shown})
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(
                "the content is not valid Unicode (a lone surrogate): nothing was written",
                details={"path": shown},
            ) from None
        if not parts:
            raise InvalidInput(f"{shown} is the workspace folder", details={"path": shown})
        await asyncio.to_thread(self._write, root, parts, data, shown)
        return {}

    def _write(self, root: Path, parts: tuple[str, ...], data: bytes, shown: str) -> None:
        folder = _open_folder(root, parts[:-1], shown, create=True)
        try:
            name = parts[-1]
            try:
                status: os.stat_result | None = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                status = None
            if status is not None and stat.S_ISDIR(status.st_mode):
                raise InvalidInput(f"{shown} is a folder", details={"path": shown})
            if status is not None:
                _check_regular_single(status, shown)
            mode = stat.S_IMODE(status.st_mode) & 0o777 if status is not None else NEW_FILE_MODE
            try:
                _replace_in(folder, name, data, mode)
            except FileNotFoundError:  # the held folder was removed meanwhile
                raise NotFound(f"the folder of {shown} went away", details={"path": shown}) from None
            with contextlib.suppress(OSError):
                os.fsync(folder)
        finally:
            os.close(folder)


def _replace_in(folder: int, name: str, data: bytes, mode: int) -> None:
    """Write ``data`` to a new temporary file in ``folder``, then rename it over ``name`` (same folder)."""
    temporary = f".{name[:100]}.{secrets.token_hex(6)}.tmp"
    descriptor = os.open(temporary, _TEMPORARY_FLAGS, 0o600, dir_fd=folder)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        raise


def _open_folder(root: Path, parts: tuple[str, ...], shown: str, *, create: bool) -> int:
    """A descriptor of ``root/parts...``, each part opened from the last without following a link."""
    descriptor = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            try:
                child = _open_in(descriptor, part, _FOLDER_FLAGS, shown)
            except NotFound:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=descriptor)
                child = _open_in(descriptor, part, _FOLDER_FLAGS, shown)
            os.close(descriptor)
            descriptor = child
        return descriptor
    except BaseException:
        os.close(descriptor)
        raise


def _open_in(folder: int, name: str, flags: int, shown: str) -> int:
    """``openat(folder, name, flags)``, its failures typed (a link is ``PATH_OUTSIDE_WORKSPACE``)."""
    try:
        return os.open(name, flags, dir_fd=folder)
    except FileNotFoundError:
        raise NotFound(f"no file {shown}", details={"path": shown}) from None
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            with contextlib.suppress(OSError):
                if stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
                    raise PathOutsideWorkspace(
                        f"{shown} goes through a symbolic link ({name[:80]!r}): links are not followed",
                        details={"path": shown},
                    ) from None
            raise InvalidInput(f"{shown}: {name[:80]!r} is not a folder", details={"path": shown}) from None
        raise


def _check_regular_single(status: os.stat_result, shown: str) -> None:
    if stat.S_ISLNK(status.st_mode):
        raise PathOutsideWorkspace(
            f"{shown} is a symbolic link: links are not followed", details={"path": shown}
        )
    if not stat.S_ISREG(status.st_mode):
        raise InvalidInput(f"{shown} is not a regular file", details={"path": shown})
    if status.st_nlink > 1:
        raise PathOutsideWorkspace(
            f"{shown} has {status.st_nlink} hard links: one may be outside the workspace, so it is refused",
            details={"path": shown, "links": status.st_nlink},
        )


def _too_big(shown: str, size: int, limit: int) -> InvalidInput:
    return InvalidInput(
        f"{shown} holds {size} bytes: more than the {limit} an agent may read at once",
        details={"path": shown, "bytes": size},
    )
