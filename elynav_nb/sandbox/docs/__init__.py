"""The local La Suite Docs sandbox: REST API + Hocuspocus collaboration WebSocket on one port.

What: ``server.DocsSandbox`` (the app and its lifecycle), ``store`` (users, sessions, documents,
accesses), ``tree`` (Docs' materialised-path tree), ``abilities`` (who may do what, and the JSON Docs
shows), ``tree_routes`` / ``lifecycle_routes`` / ``lifecycle`` / ``api_common`` (the document routes
as Django REST framework answers them), ``collaboration`` (the rooms, with the real y-provider's
checks) and ``command`` (``elynav sandbox docs --port N``).

Where it sits: ``elynav_nb/sandbox/docs``; the embedded default Docs instance of the notebooks, tests,
benchmarks and ``elynav demo``; no capability imports it (``elynav_nb.docs`` talks to it over HTTP and
WebSocket like to a real instance).

How data flows: REST request -> ``server`` routes -> ``api_common`` / ``*_routes`` -> ``store`` (+
``tree``, ``abilities``) -> JSON; WebSocket -> ``server`` gate (Origin, Cookie) ->
``collaboration.CollaborationHub`` (Yjs rooms; content saved only by the REST PATCH). Importing this
package loads nothing.
"""

from __future__ import annotations

__all__: list[str] = []
