"""A binary message written to a websockets client connection at once, from the caller's task.

Where it sits: a package-level private module, because capabilities do not import each other.
Docs' live connection (``docs/live/_socket.py``) and the live notebook's room connection
(``notebook/connection.py``) both send their document updates this way once their handshake is
done: the frame leaves when the transaction commits, as the Node providers' do, and no writer
task has to wake up for it. I/O only; the message is already encoded.
"""

from __future__ import annotations

from websockets.asyncio.client import ClientConnection
from websockets.protocol import State

__all__ = ["send_binary_now"]


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
