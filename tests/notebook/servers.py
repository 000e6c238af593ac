"""The real Jupyter servers of the live-notebook tier, and an independent peer to share their rooms with.

Two lanes, each a tier of ``tests/tiers.py``:

| lane | variable | what it needs |
|---|---|---|
| jupyter-collaboration 5.x | ``ELYNAV_REQUIRE_LIVE`` | the ``live`` extra in this venv (``pip install -e '.[test,live]'``) |
| jupyter-server-documents 0.3.x | ``ELYNAV_REQUIRE_JSD`` | ``ELYNAV_JSD_JUPYTER``: the ``jupyter`` of another venv that has jupyter-server-documents and elynav_nb (the two backends serve the same room URLs and cannot share a venv) |

Servers are ``tests/browser/lab_server.LabServer`` (loopback, a token, temporary settings, stopped
whole by pid). ``RawPeer`` is a peer nobody here wrote: pycrdt's own ``Provider`` over a websockets
channel, with ``jupyter_ydoc.YNotebook`` (it plays the person, and checks what the room holds).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import urllib.parse
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from pycrdt import Doc, Provider

from tests import tiers
from tests.browser.lab_server import LabServer, write_notebook

__all__ = [
    "JSD",
    "LIVE",
    "RawPeer",
    "jsd_missing",
    "live_missing",
    "room_url",
    "start_server",
    "write_notebook",
]

LIVE = "ELYNAV_REQUIRE_LIVE"
JSD = "ELYNAV_REQUIRE_JSD"


def live_missing() -> str | None:
    for module in ("jupyterlab", "jupyter_collaboration", "jupyter_ydoc"):
        if importlib.util.find_spec(module) is None:
            return f"no {module}: the live-notebook tier needs pip install -e '.[test,live]'"
    return None


def jsd_missing() -> str | None:
    jupyter = os.environ.get("ELYNAV_JSD_JUPYTER", "")
    if not jupyter or not os.access(jupyter, os.X_OK):
        return "ELYNAV_JSD_JUPYTER is not set to the jupyter of a venv with jupyter-server-documents"
    return None


def start_server(backend: str, folder: Path, extra_args: tuple[str, ...] = ()) -> LabServer:
    """A server of ``backend`` (``collaboration`` or ``documents``) over a copy of ``folder``."""
    if backend == "collaboration":
        reason = live_missing()
        if reason:
            tiers.skip_or_fail(LIVE, reason)
        return LabServer.start(folder, extra_args=extra_args)
    reason = jsd_missing()
    if reason:
        tiers.skip_or_fail(JSD, reason)
    return LabServer.start(folder, extra_args=extra_args, launcher=(os.environ["ELYNAV_JSD_JUPYTER"], "lab"))


class _SocketChannel:
    def __init__(self, socket: Any, path: str) -> None:
        self._socket = socket
        self._path = path

    @property
    def path(self) -> str:
        return self._path

    def __aiter__(self) -> _SocketChannel:
        return self

    async def __anext__(self) -> bytes:
        try:
            message = await self._socket.recv()
        except websockets.ConnectionClosed:
            raise StopAsyncIteration from None
        return message if isinstance(message, bytes) else message.encode()

    async def send(self, message: bytes) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            await self._socket.send(message)

    async def recv(self) -> bytes:
        return await self.__anext__()


class RawPeer:
    """pycrdt's Provider in a notebook's room: ``async with RawPeer.join(server, path) as peer``."""

    def __init__(self, notebook: Any) -> None:
        self.notebook = notebook

    @property
    def cells(self) -> list[dict[str, Any]]:
        return [cell.to_py() for cell in self.notebook.ycells]

    def cell(self, cell_id: str) -> Any:
        for ycell in self.notebook.ycells:
            if ycell.get("id") == cell_id:
                return ycell
        raise KeyError(cell_id)

    @classmethod
    @contextlib.asynccontextmanager
    async def join(cls, server: LabServer, path: str, timeout: float = 10.0) -> AsyncIterator[RawPeer]:
        async with cls.join_url(await room_url(server, path), path, timeout) as peer:
            yield peer

    @classmethod
    @contextlib.asynccontextmanager
    async def join_url(cls, url: str, path: str, timeout: float = 10.0) -> AsyncIterator[RawPeer]:
        """The same peer, given the room's WebSocket URL (``room_url``)."""
        from jupyter_ydoc import YNotebook

        notebook = YNotebook(Doc())
        async with websockets.connect(url, max_size=None) as socket:
            async with Provider(notebook.ydoc, _SocketChannel(socket, path)) as provider:
                await asyncio.wait_for(provider.synced.wait(), timeout)
                yield cls(notebook)
                await asyncio.sleep(
                    1.0
                )  # let its last updates leave and be handled (the Provider has no ack)


async def room_url(server: LabServer, path: str) -> str:
    headers = {"Authorization": f"token {server.token}"}
    async with httpx.AsyncClient(base_url=server.base_url, headers=headers, timeout=10) as client:
        response = await client.put(
            f"/api/collaboration/session/{urllib.parse.quote(path)}",
            json={"format": "json", "type": "notebook"},
        )
        if response.status_code in (200, 201):
            body = response.json()
            query = f"sessionId={body['sessionId']}&token={server.token}"
            return (
                f"ws://127.0.0.1:{server.port}/api/collaboration/room/json:notebook:{body['fileId']}?{query}"
            )
        response = await client.post("/api/fileid/index", params={"path": path})
        file_id = response.json()["id"]
        return f"ws://127.0.0.1:{server.port}/api/collaboration/room/json:notebook:{file_id}?token={server.token}"


async def wait_until(condition: Any, timeout: float = 10.0, what: str = "the condition") -> None:
    """Poll ``condition()`` every 50 ms; fail the test after ``timeout`` s (a bound, not a timing)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"{what} did not happen within {timeout:g} s")
        await asyncio.sleep(0.05)


def restart(server: LabServer, *, forget_store: bool = False, timeout: float = 60.0) -> None:
    """Stop the server (SIGKILL: nothing saved on the way out) and start it again on the same port,
    root and file-id database, as a crash and a restart would. ``forget_store``: its update store
    (jupyter-collaboration's ``.jupyter_ystore.db``) is lost too, so the room starts from the file."""
    import signal
    import subprocess
    import time

    arguments = list(server.process.args)  # type: ignore[arg-type]
    os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait(timeout=30)
    if forget_store:
        for store in server.home.glob("**/.jupyter_ystore.db"):
            store.unlink()
    environment = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(server.home / "config"),
        "JUPYTER_DATA_DIR": str(server.home / "data"),
        "JUPYTER_RUNTIME_DIR": str(server.home / "runtime"),
        "IPYTHONDIR": str(server.home / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    with open(server.log_path, "ab") as log:
        server.process = subprocess.Popen(
            arguments,
            cwd=server.home,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            server.api("GET", "/api/status", timeout=2.0)
            return
        time.sleep(0.2)
    raise RuntimeError(f"the restarted server did not answer in {timeout:g} s:\n{server.log_tail()}")
