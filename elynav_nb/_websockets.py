"""A binary message written to a websockets client connection at once, from the caller's task; and the
socket's TCP acknowledgements sent at once.

Where it sits: a package-level private module, because capabilities do not import each other.
Docs' live connection (``docs/live/_socket.py``) and the live notebook's room connection
(``notebook/connection.py``) both send their document updates this way once their handshake is
done: the frame leaves when the transaction commits, as the Node providers' do, and no writer
task has to wake up for it. The live notebook's room and kernel sockets ask for quick TCP
acknowledgements (``quick_acknowledger``). I/O only; the message is already encoded.
"""

from __future__ import annotations

import contextlib
import socket as socket_module
from collections.abc import Callable

from websockets.asyncio.client import ClientConnection
from websockets.protocol import State

__all__ = ["quick_acknowledger", "send_binary_now"]


def send_binary_now(connection: ClientConnection, message: bytes) -> bool:
    """Write ``message`` now; False when the socket is not open (or fails while writing): the next
    handshake's SyncStep2 carries the change then."""
    if connection.protocol.state is not State.OPEN:
        return False
    try:
        connection.protocol.send_binary(message)
        connection.send_data()
    except Exception:  # the socket is going away
        return False
    return True


def quick_acknowledger(socket: ClientConnection) -> Callable[[], None]:
    """A function that asks Linux to acknowledge the socket's next TCP segments at once (``TCP_QUICKACK``,
    which the kernel clears again by itself, so it is set after each message).

    The Jupyter server (tornado) does not set ``TCP_NODELAY``: after a first small message (the echo of
    our update) Nagle holds the second (the SyncStep2 that acknowledges it) until our TCP ACK, which
    Linux delays by up to 40 ms. Measured: an acknowledged insert 45-50 ms without, 12-20 ms with.
    Elsewhere (no ``TCP_QUICKACK``) it does nothing.
    """
    option = getattr(socket_module, "TCP_QUICKACK", None)
    raw = socket.transport.get_extra_info("socket") if socket.transport is not None else None
    if option is None or raw is None:
        return lambda: None

    def acknowledge_quickly() -> None:
        with contextlib.suppress(OSError):
            raw.setsockopt(socket_module.IPPROTO_TCP, option, 1)

    acknowledge_quickly()
    return acknowledge_quickly
