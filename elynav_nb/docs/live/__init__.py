"""Docs' collaboration server, live: the Hocuspocus frame codec and the WebSocket connection.

Where it sits: the live layer of ``elynav_nb.docs``. ``frames`` is the pure codec of Hocuspocus
messages (bytes in, typed messages out; every bad input a ``ProtocolError``); ``connection`` is the
one I/O module speaking it over a WebSocket, bound to a ``pycrdt.Doc``.
"""

from elynav_nb.docs.live.connection import REMOTE_ORIGIN, DocsConnection

__all__ = ["REMOTE_ORIGIN", "DocsConnection"]
