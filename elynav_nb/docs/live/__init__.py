"""Docs' collaboration server, live: the Hocuspocus frame codec, the WebSocket connection, presence.

Where it sits: the live layer of ``elynav_nb.docs``. ``frames`` is the pure codec of Hocuspocus
messages (bytes in, typed messages out; every bad input a ``ProtocolError``); ``connection`` is the
one I/O module speaking it over a WebSocket (``_socket`` under it), bound to a ``pycrdt.Doc``;
``presence`` reads who is in the room and where their cursors are (``_yjs_items``).
"""

from elynav_nb.docs.live.connection import REMOTE_ORIGIN, DocsConnection

__all__ = ["REMOTE_ORIGIN", "DocsConnection"]
