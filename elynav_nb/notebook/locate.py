"""From inside a kernel to its notebook, its server and the server's token: the user types nothing.

Where it sits: the discovery step of ``LiveNotebook.current()``. It reads the kernel's environment and
one small JSON file; it opens no socket.

How data flows (facts in ``docs/notebook-live-protocol.md``)::

    JPY_SESSION_NAME  the notebook's absolute path (set by the server when it started the kernel;
                      not updated on a rename)
    JPY_PARENT_PID    the server's pid
    $JUPYTER_RUNTIME_DIR/jpserver-<pid>.json  -> url, token, root_dir
    path = JPY_SESSION_NAME relative to root_dir (as the REST API names it)
    the kernel's connection file (kernel-<id>.json) -> the kernel id, so a run knows it is its own kernel

A kernel started by jupyter_client alone (nbval, a console) has no ``JPY_SESSION_NAME``: that is
``NOT_FOUND`` with what to do instead (``LiveNotebook.open(path, server_url=..., token=...)``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elynav_nb.errors import NotFound

__all__ = ["KernelPlace", "locate_current"]

_KERNEL_FILE = re.compile(r"kernel-([0-9a-fA-F-]{8,})\.json$")


@dataclass(frozen=True)
class KernelPlace:
    """Where the running kernel is: its notebook's API path, the server's URL and token, its id."""

    path: str
    server_url: str
    token: str
    kernel_id: str | None

    def __repr__(self) -> str:  # the token stays out
        return (
            f"KernelPlace(path={self.path!r}, server_url={self.server_url!r}, kernel_id={self.kernel_id!r})"
        )


def _runtime_dir(environment: dict[str, str]) -> Path:
    configured = environment.get("JUPYTER_RUNTIME_DIR")
    if configured:
        return Path(configured)
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


def _kernel_id() -> str | None:
    try:
        from ipykernel.connect import get_connection_file

        match = _KERNEL_FILE.search(get_connection_file())
    except Exception:  # not inside an ipykernel
        return None
    return match.group(1) if match else None


def _server_info(parent_pid: str, environment: dict[str, str]) -> dict[str, Any]:
    server_file = _runtime_dir(environment) / f"jpserver-{parent_pid}.json"
    try:
        info: dict[str, Any] = json.loads(server_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise NotFound(
            f"the Jupyter server that started this kernel (pid {parent_pid}) left no readable"
            f" {server_file.name} in its runtime directory: open the notebook with"
            " LiveNotebook.open(path, server_url=..., token=...)"
        ) from None
    return info


def locate_current(environment: dict[str, str] | None = None) -> KernelPlace:
    """The notebook this kernel belongs to (``NOT_FOUND`` outside a kernel started by a Jupyter server)."""
    env = dict(os.environ) if environment is None else environment
    session_name = env.get("JPY_SESSION_NAME")
    parent_pid = env.get("JPY_PARENT_PID")
    if not session_name or not parent_pid:
        raise NotFound(
            "this kernel was not started by a Jupyter server for a notebook (no JPY_SESSION_NAME):"
            " open the notebook with LiveNotebook.open(path, server_url=..., token=...)"
        )
    info = _server_info(parent_pid, env)
    root_dir = Path(str(info.get("root_dir", "/"))).resolve()
    notebook = Path(session_name)
    if not notebook.is_absolute():
        notebook = root_dir / notebook
    try:
        path = notebook.resolve().relative_to(root_dir).as_posix()
    except ValueError:
        raise NotFound(
            f"this kernel's notebook {session_name!r} is outside the server's root directory"
        ) from None
    return KernelPlace(
        path=path, server_url=str(info["url"]), token=str(info.get("token", "")), kernel_id=_kernel_id()
    )
