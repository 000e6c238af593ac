"""The ACP stand-in: a real Agent Client Protocol (v1) agent process, deterministic and scripted.

What: ``acp_standin`` is the entry point (``python -m elynav_nb.sandbox.acp.acp_standin``, or the
``elynav-acp-standin`` console script); the ``acp_*`` modules are its parts: ``acp_wire`` (JSON-RPC 2.0
lines on stdin/stdout), ``acp_directives`` (the ``@standin`` language), ``acp_sessions`` (sessions on
disk), ``acp_tools`` (shell and file work, through the client or locally), ``acp_mcp`` (a real MCP
client) and ``acp_turns`` (playing one prompt turn). It is **not a model**: it says so on stderr at
start-up and in ``agentInfo``.

Where it sits: ``elynav_nb/sandbox/acp``; imported by nothing in the library. The ACP backend's tests,
the notebooks and the README demo spawn it instead of a real ACP agent.

How data flows: stdin lines -> ``acp_wire.Connection`` -> ``acp_standin.Agent`` (initialize, sessions,
prompts, cancel) -> ``acp_turns.Turn`` (directives -> session/update notifications and agent -> client
requests) -> ``acp_wire`` -> stdout, one whole line at a time. Importing this package loads nothing.
"""

from __future__ import annotations

__all__: list[str] = []
