"""How a run learns that its kernel died when the server says little (no server: a scripted socket and API).

jupyter-server-documents 0.3.3 restarts a dead kernel and may say nothing on our socket while its REST
model keeps the old state (seen in the live tier: ``idle`` with a frozen ``last_activity``, or a
``starting`` status from the new kernel after our run's ``busy``). Both must end ``KERNEL_DIED``, not
wait for the run's timeout.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from elynav_nb.errors import KernelDied, OperationTimeout
from elynav_nb.notebook import kernel as kernel_module
from elynav_nb.notebook.kernel import KernelClient

RUN_TIMEOUT = 30.0  # far above what the signals below need: reaching it fails the test


class ScriptedSocket:
    """A kernel WebSocket (JSON framing) that answers each execute_request with the script's messages."""

    subprotocol = None

    def __init__(self, script: list[tuple[str, str, str]]) -> None:
        self.script = script  # (channel, msg_type, execution_state) of messages parented by the request
        self.inbox: asyncio.Queue[str] = asyncio.Queue()

    async def send(self, data: str) -> None:
        request = json.loads(data)
        for channel, message_type, state in self.script:
            parent = request["header"] if state != "starting" else {}  # a new kernel's status has no parent
            message = {
                "channel": channel,
                "header": {"msg_type": message_type, "msg_id": "m"},
                "parent_header": parent,
                "content": {"execution_state": state},
            }
            self.inbox.put_nowait(json.dumps(message))

    async def recv(self) -> str:
        return await self.inbox.get()  # nothing more: waits, as a socket the server forgot

    async def close(self) -> None:
        pass


class FrozenApi:
    """The server's REST view: the first look (which shell to use) idle, then ``state`` with a frozen
    last activity; the requests it was sent (an interrupt means the run reached its timeout)."""

    token = ""

    def __init__(self, state: str) -> None:
        self.state = state
        self.looks = 0
        self.requests: list[str] = []

    def kernel_channels_url(self, kernel_id: str, session_id: str) -> str:
        return "ws://127.0.0.1:1/api/kernels/k/channels"

    async def kernel_state(self, kernel_id: str) -> tuple[str, str]:
        self.looks += 1
        return ("idle" if self.looks == 1 else self.state), "2026-12-05T08:00:00.000000Z"

    async def request(self, method: str, path: str, **keywords: Any) -> None:
        self.requests.append(f"{method} {path}")


def run_with(monkeypatch: pytest.MonkeyPatch, api: FrozenApi, socket: ScriptedSocket, timeout: float) -> None:
    async def connect(*arguments: Any, **keywords: Any) -> ScriptedSocket:
        return socket

    monkeypatch.setattr(kernel_module.websockets, "connect", connect)
    client = KernelClient(api, "k")  # type: ignore[arg-type]
    asyncio.run(client.run("import os; os._exit(1)", timeout=timeout))


def test_an_idle_kernel_that_never_started_the_run_is_dead(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FrozenApi("idle")
    with pytest.raises(KernelDied, match="never started the run"):
        run_with(monkeypatch, api, ScriptedSocket([]), RUN_TIMEOUT)
    assert api.looks >= 1 + 3 and api.requests == []  # no interrupt: the timeout was not what ended it


def test_a_new_kernel_starting_after_the_run_began_is_a_death(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FrozenApi("busy")  # the old state, kept
    script = [("iopub", "status", "busy"), ("iopub", "status", "starting")]
    with pytest.raises(KernelDied, match="new kernel process started"):
        run_with(monkeypatch, api, ScriptedSocket(script), RUN_TIMEOUT)
    assert api.requests == []


def test_a_run_that_began_and_goes_quiet_is_left_to_its_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """An idle, frozen view after our run's ``busy`` (a long silent cell) is no death: the timeout decides."""
    api = FrozenApi("idle")
    with pytest.raises(OperationTimeout):
        run_with(monkeypatch, api, ScriptedSocket([("iopub", "status", "busy")]), 4.5)
    assert api.requests == ["POST api/kernels/k/interrupt"] and api.looks >= 1 + 3
