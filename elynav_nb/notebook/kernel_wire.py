"""The Jupyter server's kernel WebSocket messages, both framings (JSON text, the v1 binary protocol), and
what their ``status`` messages say of the kernel's main shell.

Where it sits: the pure codec under ``kernel.py`` (no I/O). We ask for the subprotocol
``v1.kernel.websocket.jupyter.org`` (jupyter-server-documents' kernel handler takes nothing else;
jupyter_server takes both); a server that does not choose it gets JSON text with a ``channel`` key.

v1 layout (jupyter_server ``serialize_msg_to_ws_v1``): an 8-byte little-endian count ``n`` of offsets,
``n`` 8-byte offsets, then the channel name and the JSON parts (header, parent header, metadata,
content, then any buffers), each ending at the next offset.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from elynav_nb.errors import ProtocolError

__all__ = ["V1_PROTOCOL", "MainShell", "decode_kernel_message", "encode_kernel_message"]

V1_PROTOCOL: Final = "v1.kernel.websocket.jupyter.org"
_PARTS: Final = ("header", "parent_header", "metadata", "content")


def encode_kernel_message(message: dict[str, Any], *, binary: bool) -> bytes | str:
    """``message`` (with its ``channel``) in the framing chosen for this socket."""
    if not binary:
        return json.dumps(message)
    parts = [json.dumps(message[name]).encode("utf-8") for name in _PARTS]
    channel = str(message["channel"]).encode("utf-8")
    offsets = [8 * (1 + 1 + len(parts) + 1)]
    offsets.append(offsets[-1] + len(channel))
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    head = len(offsets).to_bytes(8, "little") + b"".join(offset.to_bytes(8, "little") for offset in offsets)
    return head + channel + b"".join(parts)


def decode_kernel_message(data: bytes | str) -> dict[str, Any]:
    """A message from the socket as a dict with ``channel``; ``ProtocolError`` when it is not one."""
    try:
        if isinstance(data, str):
            decoded: dict[str, Any] = json.loads(data)
            return decoded
        count = int.from_bytes(data[:8], "little")
        offsets = [
            int.from_bytes(data[8 * (index + 1) : 8 * (index + 2)], "little") for index in range(count)
        ]
        message: dict[str, Any] = {"channel": data[offsets[0] : offsets[1]].decode("utf-8")}
        for index, name in enumerate(_PARTS):
            message[name] = json.loads(data[offsets[index + 1] : offsets[index + 2]])
        return message
    except (ValueError, IndexError, UnicodeDecodeError) as error:
        raise ProtocolError(f"the kernel WebSocket sent a malformed message ({error})") from None


_NEW_PROCESS_STATES: Final = ("starting", "restarting", "autorestarting", "dead")


@dataclass
class MainShell:
    """Whether the kernel's main shell is running something, from the iopub ``status`` messages.

    The server's ``execution_state`` is the last status of any request, so a subshell's ``idle`` makes it
    say ``idle`` while the main shell still runs a cell (measured, jupyter_server 2 with ipykernel 7.4: a
    second run sent to the main shell then queued behind that cell). Here each request counts apart:
    ``busy``/``idle`` pairs by parent ``msg_id``, a subshell's (its parent header has ``subshell_id``)
    left out. ``begin(busy)`` takes the server's view once, at connection: a cell already running then
    is ``unseen_busy`` until an ``idle`` of an ``execute_request`` we did not see start.
    """

    known: bool = False
    unseen_busy: bool = False
    running: set[str] = field(default_factory=set)

    def begin(self, busy: bool) -> None:
        self.known, self.unseen_busy = True, busy
        self.running.clear()

    def see(self, message: dict[str, Any]) -> None:
        if message.get("header", {}).get("msg_type") != "status":
            return
        state = message.get("content", {}).get("execution_state")
        parent = message.get("parent_header") or {}
        if state in _NEW_PROCESS_STATES:
            self.unseen_busy = False
            self.running.clear()
            return
        parent_id = parent.get("msg_id")
        if not parent_id or parent.get("subshell_id"):
            return
        if state == "busy":
            self.running.add(parent_id)
        elif state == "idle":
            if parent_id in self.running:
                self.running.discard(parent_id)
            elif parent.get("msg_type") == "execute_request":
                self.unseen_busy = False

    @property
    def busy(self) -> bool:
        return self.unseen_busy or bool(self.running)
