"""How a run learns that its kernel died or ran out of time when the server says little (no server: a
scripted socket and API).

jupyter-server-documents 0.3.3 restarts a dead kernel and may say nothing on our socket while its REST
model keeps the old state (seen in the live tier: ``idle`` with a frozen ``last_activity``, or a
``starting`` status from the new kernel after our run's ``busy``). Both must end ``KERNEL_DIED``, not
wait for the run's timeout; so must a run that began and went silent while the server kept the old
``busy``: a control ``kernel_info_request`` then shows another process (its own ``header.session``)
answering. A run past its timeout interrupts the kernel only on the main shell: on a
subshell the SIGINT would hit the main shell's cell instead (seen in the live tier when a fresh kernel
still said ``starting`` and the run took a subshell it did not need).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest
from websockets.protocol import State

from elynav_nb.errors import KernelDied, OperationTimeout
from elynav_nb.notebook import kernel as kernel_module
from elynav_nb.notebook.kernel import KernelClient

RUN_TIMEOUT = 30.0  # far above what the signals below need: reaching it fails the test


class ScriptedSocket:
    """A kernel WebSocket (JSON framing) that answers each execute_request with the script's messages."""

    subprotocol = None
    state = State.OPEN
    transport = None

    def __init__(self, script: list[tuple[str, str, str]], kernel_session: str = "kernel-1") -> None:
        self.script = script  # (channel, msg_type, execution_state) of messages parented by the request
        self.kernel_session = kernel_session  # the process that answers control requests (a new one: died)
        self.inbox: asyncio.Queue[str] = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []

    async def send(self, data: str) -> None:
        request = json.loads(data)
        self.sent.append(request)
        answers = {
            "kernel_info_request": {"supported_features": ["kernel subshells"]},
            "create_subshell_request": {"status": "ok", "subshell_id": f"sub-{len(self.sent)}"},
        }
        message_type = request["header"]["msg_type"]
        if message_type in answers:
            reply = {
                "channel": "control",
                "header": {
                    "msg_type": message_type.replace("_request", "_reply"),
                    "msg_id": "r",
                    "session": self.kernel_session,
                },
                "parent_header": request["header"],
                "content": answers[message_type],
            }
            self.inbox.put_nowait(json.dumps(reply))
            return
        for channel, message_type, state in self.script:
            parent = request["header"] if state != "starting" else {}  # a new kernel's status has no parent
            session = "kernel-1" if state != "starting" else "kernel-2"
            message = {
                "channel": channel,
                "header": {"msg_type": message_type, "msg_id": "m", "session": session},
                "parent_header": parent,
                "content": {"execution_state": state},
            }
            self.inbox.put_nowait(json.dumps(message))

    def __aiter__(self) -> ScriptedSocket:
        return self

    async def __anext__(self) -> str:
        return await self.inbox.get()  # nothing more: waits, as a socket the server forgot

    async def close(self) -> None:
        pass


class FrozenApi:
    """The server's REST view: the first look (which shell to use) ``first``, then ``state`` with a
    frozen last activity; the requests it was sent (an interrupt means the run reached its timeout)."""

    token = ""

    def __init__(self, state: str, first: str = "idle") -> None:
        self.state = state
        self.first = first
        self.looks = 0
        self.requests: list[str] = []

    def kernel_channels_url(self, kernel_id: str, session_id: str) -> str:
        return "ws://127.0.0.1:1/api/kernels/k/channels"

    async def kernel_state(self, kernel_id: str) -> tuple[str, str]:
        self.looks += 1
        return (self.first if self.looks == 1 else self.state), "2026-12-05T08:00:00.000000Z"

    async def request(self, method: str, path: str, **keywords: Any) -> None:
        self.requests.append(f"{method} {path}")


def run_with(
    monkeypatch: pytest.MonkeyPatch, api: FrozenApi, socket: ScriptedSocket, timeout: float, runs: int = 1
) -> None:
    async def connect(*arguments: Any, **keywords: Any) -> ScriptedSocket:
        return socket

    async def run() -> None:
        """``runs`` runs on one client; the earlier ones may time out, the last one's outcome is raised."""
        client = KernelClient(api, "k")  # type: ignore[arg-type]
        for _ in range(runs - 1):
            with contextlib.suppress(OperationTimeout):
                await client.run("import os; os._exit(1)", timeout=timeout)
        await client.run("import os; os._exit(1)", timeout=timeout)

    monkeypatch.setattr(kernel_module.websockets, "connect", connect)
    asyncio.run(run())


def subshells_of_runs(socket: ScriptedSocket) -> list[str | None]:
    return [
        sent["header"].get("subshell_id")
        for sent in socket.sent
        if sent["header"]["msg_type"] == "execute_request"
    ]


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


def test_a_silent_run_whose_kernel_was_replaced_is_a_death(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our run's ``busy``, then nothing, and the server keeps saying ``busy`` (the old process's state): the
    control probe after the quiet spell is answered by another process (its own session), so it died."""
    api = FrozenApi("busy")
    socket = ScriptedSocket([("iopub", "status", "busy")], kernel_session="kernel-2")
    with pytest.raises(KernelDied, match="another kernel process"):
        run_with(monkeypatch, api, socket, RUN_TIMEOUT)
    probes = [sent for sent in socket.sent if sent["header"]["msg_type"] == "kernel_info_request"]
    assert len(probes) == 1 and probes[0]["channel"] == "control" and api.requests == []


def test_a_silent_run_on_the_same_kernel_process_is_left_to_its_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same probe answered by the process that took the run: a long silent cell, not a death."""
    api = FrozenApi("busy")
    socket = ScriptedSocket([("iopub", "status", "busy")])
    with pytest.raises(OperationTimeout, match="the kernel was interrupted"):
        run_with(monkeypatch, api, socket, 7.5)
    assert any(sent["header"]["msg_type"] == "kernel_info_request" for sent in socket.sent)


def test_a_starting_kernel_runs_on_its_main_shell_and_is_interrupted_at_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fresh kernel that still says ``starting`` runs nothing: the run goes to the main shell, where an
    interrupt stops it (on a subshell it could not be stopped)."""
    api = FrozenApi("busy", first="starting")
    socket = ScriptedSocket([("iopub", "status", "busy")])
    with pytest.raises(OperationTimeout, match="the kernel was interrupted"):
        run_with(monkeypatch, api, socket, 1.5)
    assert subshells_of_runs(socket) == [None] and api.requests == ["POST api/kernels/k/interrupt"]


def test_a_subshell_run_past_its_timeout_leaves_the_main_shell_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel is busy (a cell awaits us): the run takes a subshell; at its timeout no interrupt is
    sent (it would hit that cell, not ours), the error says so, and the next run gets a new subshell
    instead of queueing behind the cell still running."""
    api = FrozenApi("busy", first="busy")
    socket = ScriptedSocket([("iopub", "status", "busy")])
    with pytest.raises(OperationTimeout) as timed_out:
        run_with(monkeypatch, api, socket, 1.5)
    assert "cannot interrupt" in str(timed_out.value) and api.requests == []
    assert subshells_of_runs(socket) == ["sub-2"]


def test_the_run_after_a_subshell_timeout_gets_a_new_subshell(monkeypatch: pytest.MonkeyPatch) -> None:
    api = FrozenApi("busy", first="busy")
    socket = ScriptedSocket([("iopub", "status", "busy")])
    with pytest.raises(OperationTimeout, match="cannot interrupt"):
        run_with(monkeypatch, api, socket, 1.5, runs=2)
    first, second = subshells_of_runs(socket)
    assert first is not None and second is not None and first != second and api.requests == []
