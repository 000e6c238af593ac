"""Run code in a notebook's kernel through the Jupyter server, without waiting behind the asking cell.

Where it sits: the kernel I/O layer of ``elynav_nb.notebook``; ``live.py`` calls ``KernelClient.run``
for ``run_cell`` with a ``RunWatcher`` (``run_display.RunDisplay``), told when the request is sent and
each time the outputs change, which writes them into the cell as they come. It speaks the Jupyter messaging protocol
over the server's kernel WebSocket (``/api/kernels/<id>/channels``; ``kernel_wire`` frames it).

The trap and its way out (facts measured with ipykernel 7.4): the kernel that would run the cell is
usually the very kernel whose cell is awaiting the agent's turn, and a second ``execute_request`` on
its main shell waits until that cell ends, for ever. ipykernel 7 has subshells (JEP 91): a
``create_subshell_request`` on the control channel gives a ``subshell_id``; an ``execute_request``
whose header carries it runs on the subshell's own thread at once, with the same namespace. So::

    kernel_info_request -> supported_features has "kernel subshells"?
    the kernel is ours (we run inside it) or its main shell busy -> a subshell (made once, deleted on close)
        no subshells there                                   -> RUN_REFUSED, said at once (never a wait)
    else (idle or starting, another kernel)                  -> the main shell, as a person's run
    execute_request -> iopub messages of that request -> OutputCollector -> execute_reply

A reader task takes every message of the socket while it is open: the status messages go to
``kernel_wire.MainShell`` (is the main shell busy? the server's own ``execution_state`` cannot say once a
subshell has run: its ``idle`` is the last status), the run's messages to the run (``_receive``),
the rest is dropped. The server's view is asked once per socket, for a cell already running then.

A kernel that dies or restarts during the run is ``KERNEL_DIED``: an iopub ``status`` of ``dead`` or
``restarting``, or of ``starting`` once the run began; the socket closed; the server saying the kernel
is gone; or an idle kernel whose activity does not move for ``_NEVER_STARTED_POLLS`` looks while
nothing of the run came (jupyter-server-documents 0.3.3 may restart a dead kernel without a word on our
socket and keep reporting its old state); or, once the run began, a message from another kernel process
(each process signs its messages with its own ``header.session``), which a ``kernel_info_request`` on
the control channel, sent after ``_PROBE_AFTER_QUIET`` s of silence, brings out when the server says
nothing else (the old process's run would be answered by the same session). A run longer than its
timeout ends ``TIMEOUT``: on the main shell the kernel is interrupted (``POST
/api/kernels/<id>/interrupt``); on a subshell it is not, since the interrupt is a SIGINT that only the
main thread gets (ipykernel 7.4 cannot interrupt a subshell): it would stop the main shell's cell, maybe
the very cell awaiting us, and leave ours running. That subshell is then forgotten, not deleted
(deleting a busy subshell joins its thread and holds the kernel's shell channel until the cell ends);
the next run makes a new one."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.protocol import State
from websockets.typing import Subprotocol

from elynav_nb._websockets import quick_acknowledger
from elynav_nb.errors import KernelDied, OperationTimeout, ProtocolError, RunRefused
from elynav_nb.notebook.kernel_wire import (
    V1_PROTOCOL,
    MainShell,
    decode_kernel_message,
    encode_kernel_message,
)
from elynav_nb.notebook.outputs import DEFAULT_MAX_OUTPUT_BYTES, OutputCollector
from elynav_nb.notebook.server_api import JupyterServerApi

__all__ = ["KernelClient", "RunResult", "RunWatcher"]

_REPLY_TIMEOUT: Final = 10.0
_REPLY_AFTER_IDLE: Final = 0.5
_NEVER_STARTED_POLLS: Final = 3  # looks 1 s apart at an idle kernel that never took the request
_GONE_STATES: Final = ("dead", "restarting", "autorestarting", "starting")
_PROBE_AFTER_QUIET: Final = 5.0  # s of silence in a run before asking which kernel process is there


class _SocketGone(Exception):
    """The kernel's socket closed under an exchange (the reader's last word)."""


@dataclass
class RunResult:
    """What one run gave: ``status`` (``ok``/``error``/``aborted``), the outputs, the count, how it ran."""

    status: str
    execution_count: int | None
    outputs: list[dict[str, Any]] = field(default_factory=list)
    subshell: bool = False
    error_name: str = ""


class RunWatcher(Protocol):
    """Told of a run as it goes (``run_display.RunDisplay`` shows it in the cell)."""

    def sent(self) -> None:
        """The ``execute_request`` is on its way to the kernel."""

    def changed(self, collector: OutputCollector) -> None:
        """The run's outputs changed (``collector.notebook_outputs()``)."""


def _message(
    message_type: str, content: dict[str, Any], channel: str, session: str, **header: Any
) -> dict[str, Any]:
    return {
        "header": {
            "msg_id": uuid.uuid4().hex,
            "msg_type": message_type,
            "username": "elynav",
            "session": session,
            "date": datetime.datetime.now(datetime.UTC).isoformat(),
            "version": "5.4",
            **header,
        },
        "parent_header": {},
        "metadata": {},
        "content": content,
        "channel": channel,
        "buffers": [],
    }


class KernelClient:
    """One kernel of the server, reached over its WebSocket; ``own_kernel`` says we run inside it."""

    def __init__(self, api: JupyterServerApi, kernel_id: str, *, own_kernel: bool = False) -> None:
        self.api = api
        self.kernel_id = kernel_id
        self.own_kernel = own_kernel
        self._session = uuid.uuid4().hex
        self._socket: ClientConnection | None = None
        self._subshell_id: str | None = None
        self._supports_subshells: bool | None = None
        self._lock = asyncio.Lock()
        self._reader: asyncio.Task[None] | None = None
        self._inbox: asyncio.Queue[dict[str, Any] | Exception] | None = None  # the exchange under way
        self._shell = MainShell()

    def __repr__(self) -> str:
        return f"KernelClient({self.kernel_id!r}, own_kernel={self.own_kernel})"

    @property
    def connected(self) -> bool:
        """Our socket to the kernel is open: the kernel was not shut down (nor changed, which shuts the
        old one down) since the last run."""
        return self._socket is not None and self._socket.state is State.OPEN

    async def _connect(self) -> ClientConnection:
        if self._socket is not None and self.connected:
            return self._socket
        url = self.api.kernel_channels_url(self.kernel_id, self._session)
        separator = "&" if "?" in url else "?"
        if self.api.token:
            url += f"{separator}token={self.api.token}"
        try:
            socket = await asyncio.wait_for(
                websockets.connect(
                    url,
                    max_size=64 * 1024 * 1024,
                    ping_interval=None,
                    subprotocols=[Subprotocol(V1_PROTOCOL)],
                ),
                _REPLY_TIMEOUT,
            )
        except (OSError, InvalidHandshake, TimeoutError):
            raise RunRefused(
                f"the kernel {self.kernel_id} cannot be reached through the Jupyter server"
            ) from None
        self._socket, self._shell = socket, MainShell()
        self._reader = asyncio.get_running_loop().create_task(self._read(socket), name="elynav-kernel-reader")
        return socket

    async def _read(self, socket: ClientConnection) -> None:
        """Every message of the socket, for as long as it is open: its status to ``_shell``, and to the
        exchange under way if any (else dropped: nothing piles up between runs)."""
        quick_ack = quick_acknowledger(socket)  # the server leaves Nagle on (see ``quick_acknowledger``)
        try:
            async for data in socket:
                quick_ack()
                try:
                    message = decode_kernel_message(data)
                except ProtocolError as error:
                    self._deliver(error)
                    continue
                self._shell.see(message)
                self._deliver(message)
        except ConnectionClosed:
            pass
        finally:
            if self._socket in (socket, None):  # a replaced socket says nothing to the next one's runs
                self._deliver(_SocketGone())

    def _deliver(self, item: dict[str, Any] | Exception) -> None:
        if self._inbox is not None:
            self._inbox.put_nowait(item)

    @contextlib.contextmanager
    def _exchange(self) -> Iterator[None]:
        """Messages go to ``_receive`` while inside (nested: the outer exchange's inbox)."""
        outer = self._inbox
        if outer is None:
            self._inbox = asyncio.Queue()
        try:
            yield
        finally:
            if outer is None:
                self._inbox = None

    async def _receive(self, wait: float) -> dict[str, Any]:
        """The next message of the exchange; ``TimeoutError`` after ``wait`` s, ``_SocketGone`` if closed."""
        if self._inbox is None:
            raise RuntimeError("no exchange under way")
        item = await asyncio.wait_for(self._inbox.get(), wait)
        if isinstance(item, Exception):
            raise item
        return item

    def _encode(self, message: dict[str, Any], socket: ClientConnection | None = None) -> bytes | str:
        chosen = socket or self._socket
        return encode_kernel_message(message, binary=chosen is not None and chosen.subprotocol == V1_PROTOCOL)

    async def close(self) -> None:
        socket, self._socket = self._socket, None
        if socket is None:
            return
        if self._subshell_id is not None:
            with contextlib.suppress(Exception), self._exchange():
                request = _message(
                    "delete_subshell_request", {"subshell_id": self._subshell_id}, "control", self._session
                )
                await self._request(socket, request, "delete_subshell_reply")
            self._subshell_id = None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(socket.close(), 2.0)
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader

    async def _request(
        self, socket: ClientConnection, message: dict[str, Any], reply_type: str
    ) -> dict[str, Any]:
        await socket.send(self._encode(message, socket))
        deadline = time.monotonic() + _REPLY_TIMEOUT
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RunRefused(
                    f"the kernel did not answer {message['header']['msg_type']} in {_REPLY_TIMEOUT:g} s"
                )
            try:
                received = await self._receive(remaining)
            except TimeoutError:
                continue
            if received.get("parent_header", {}).get("msg_id") == message["header"]["msg_id"]:
                if received["header"]["msg_type"] == reply_type:
                    content: dict[str, Any] = received["content"]
                    return content

    async def _needs_subshell(self) -> bool:
        """A subshell when the main shell runs something (maybe the cell that awaits us), from the statuses
        our socket sees; the server's view is asked once per socket (a starting kernel is not busy)."""
        if self.own_kernel:
            return True
        if not self._shell.known:
            look = await self.api.kernel_state(self.kernel_id)
            self._shell.begin(look is not None and look[0] == "busy")
        return self._shell.busy

    async def _subshell(self, socket: ClientConnection) -> str:
        if self._supports_subshells is None:
            # asked on the control channel: the shell may be held by the very cell that asks
            info = await self._request(
                socket, _message("kernel_info_request", {}, "control", self._session), "kernel_info_reply"
            )
            self._supports_subshells = "kernel subshells" in info.get("supported_features", [])
        if not self._supports_subshells:
            raise RunRefused(
                "the kernel is busy (it may be running the very cell that asked) and it has no subshells"
                " (ipykernel 7 has them): running now would wait for ever, so nothing was run",
                details={"kernel_id": self.kernel_id},
            )
        if self._subshell_id is None:
            reply = await self._request(
                socket,
                _message("create_subshell_request", {}, "control", self._session),
                "create_subshell_reply",
            )
            if reply.get("status") != "ok":
                raise RunRefused(f"the kernel refused a subshell ({reply.get('ename', 'error')})")
            self._subshell_id = str(reply["subshell_id"])
        return self._subshell_id

    async def run(
        self,
        code: str,
        *,
        timeout: float,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        watcher: RunWatcher | None = None,
    ) -> RunResult:
        """Run ``code`` and collect its outputs, telling ``watcher`` as they come (see the module
        docstring for how and when it refuses: a refusal comes before ``watcher.sent``)."""
        async with self._lock:
            with self._exchange():
                try:
                    return await self._run(code, timeout, max_output_bytes, watcher)
                except (ConnectionClosed, _SocketGone):
                    self._socket = None
                    raise KernelDied(
                        "the kernel's connection closed during the run (the kernel died or restarted)"
                    ) from None

    async def _run(
        self, code: str, timeout: float, max_output_bytes: int, watcher: RunWatcher | None
    ) -> RunResult:
        socket = await self._connect()
        header: dict[str, Any] = {}
        subshell = await self._needs_subshell()
        if subshell:
            header["subshell_id"] = await self._subshell(socket)
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        request = _message("execute_request", content, "shell", self._session, **header)
        collector = OutputCollector(max_output_bytes)
        reply = await self._collect(socket, request, collector, timeout, watcher)
        count = reply.get("execution_count")
        return RunResult(
            status=str(reply.get("status", "error")),
            execution_count=count if isinstance(count, int) else collector.execution_count,
            outputs=collector.notebook_outputs(),
            subshell=subshell,
            error_name=str(reply.get("ename", "")),
        )

    async def _collect(
        self,
        socket: ClientConnection,
        request: dict[str, Any],
        collector: OutputCollector,
        timeout: float,
        watcher: RunWatcher | None,
    ) -> dict[str, Any]:
        await socket.send(self._encode(request, socket))
        if watcher is not None:
            watcher.sent()
        request_id = request["header"]["msg_id"]
        deadline = time.monotonic() + timeout
        reply: dict[str, Any] | None = None
        idle_at: float | None = None
        started = False  # something of this request came back
        run_session = ""  # the kernel process's session, from the first message of this request
        quiet_looks: list[tuple[str, str]] = []  # the server's view while nothing came
        heard_at = time.monotonic()  # the last message of any kind
        while reply is None or idle_at is None:
            now = time.monotonic()
            if reply is None and idle_at is not None and now - idle_at > _REPLY_AFTER_IDLE:
                return _reply_from_iopub(collector)  # the shell reply went to another socket
            remaining = deadline - now
            if remaining <= 0:
                raise await self._time_up(timeout, on_subshell="subshell_id" in request["header"])
            wait = min(remaining, 1.0 if idle_at is None else _REPLY_AFTER_IDLE)
            try:
                received = await self._receive(wait)
            except TimeoutError:
                if idle_at is not None:
                    continue
                look = await self.api.kernel_state(self.kernel_id)
                if look is None or look[0] in _GONE_STATES:
                    state = look[0] if look is not None else "gone"
                    raise KernelDied(f"the kernel is {state}: the run ended without its outputs") from None
                quiet_looks = [*quiet_looks, look][-_NEVER_STARTED_POLLS:] if not started else []
                if started and time.monotonic() - heard_at >= _PROBE_AFTER_QUIET:
                    # who answers on control tells which kernel process is there now
                    probe = _message("kernel_info_request", {}, "control", self._session)
                    await socket.send(self._encode(probe, socket))
                    heard_at = time.monotonic()
                if len(quiet_looks) == _NEVER_STARTED_POLLS and all(
                    seen == ("idle", quiet_looks[0][1]) for seen in quiet_looks
                ):
                    raise KernelDied(
                        "the kernel is idle and never started the run (it died or restarted, and the "
                        "server said nothing): the run ended without its outputs"
                    ) from None
                continue
            heard_at = time.monotonic()
            message_type = received.get("header", {}).get("msg_type", "")
            parent_id = received.get("parent_header", {}).get("msg_id")
            sender = str(received.get("header", {}).get("session", ""))
            if message_type == "status" and received["content"].get("execution_state") in (
                "dead",
                "restarting",
            ):
                raise KernelDied(f"the kernel {received['content']['execution_state']} during the run")
            if (
                started
                and message_type == "status"
                and received["content"].get("execution_state") == "starting"
            ):
                raise KernelDied("a new kernel process started during the run (the kernel died or restarted)")
            if run_session and sender and sender != run_session:
                raise KernelDied(
                    "another kernel process answered during the run (the kernel died or restarted)"
                )
            if parent_id != request_id:
                continue
            started = True
            run_session = run_session or sender
            if received.get("channel") == "shell" and message_type == "execute_reply":
                reply = received["content"]
            elif message_type == "status":
                if received["content"].get("execution_state") == "idle":
                    idle_at = time.monotonic()
            elif collector.add(message_type, received.get("content", {})) and watcher is not None:
                watcher.changed(collector)
        return reply

    async def _time_up(self, timeout: float, *, on_subshell: bool) -> OperationTimeout:
        """Interrupt a run on the main shell; leave a subshell's run alone (see the module docstring)."""
        if not on_subshell:
            await self.api.request("POST", f"api/kernels/{self.kernel_id}/interrupt")
            return OperationTimeout(f"the cell ran longer than {timeout:g} s: the kernel was interrupted")
        self._subshell_id = None  # still busy: the next run gets a new subshell, not a queue
        return OperationTimeout(
            f"the cell ran longer than {timeout:g} s on a subshell, which ipykernel cannot interrupt: it "
            "goes on until it ends (restart the kernel to stop it sooner); the kernel's main shell was not "
            "interrupted, so its own cell goes on",
            details={"kernel_id": self.kernel_id},
        )


def _reply_from_iopub(collector: OutputCollector) -> dict[str, Any]:
    """The reply as iopub tells it, when the shell reply does not come to us.

    jupyter-server-documents 0.3.3 gives every kernel WebSocket the same ZMQ identity, so the kernel
    sends a shell reply to one of them only; iopub (``execute_input``, the outputs, ``idle``) reaches all.
    """
    errors = [output for output in collector.outputs if output.get("output_type") == "error"]
    reply: dict[str, Any] = {
        "status": "error" if errors else "ok",
        "execution_count": collector.execution_count,
    }
    if errors:
        reply["ename"] = errors[-1].get("ename", "")
    return reply
