"""The claude CLI stand-in: an executable that behaves on the wire like ``claude --print`` (stream-json).

What: ``claude_standin`` is the entry point (``python -m elynav_nb.sandbox.claude.claude_standin``, or
the ``elynav-claude-standin`` console script); the other modules of this folder are its parts (flags
``args``, wire messages ``wire*``, ``turns``, ``tool_calls``, ``hooks``, MCP ``mcp_servers`` / ``sdk_mcp``,
``sessions``). The folder says they are the stand-in's; the real CLI's codecs are
``elynav_nb.agents.protocols.claude`` (``codec``, ``wire``), which these never import.

Where it sits: ``elynav_nb/sandbox/claude``; imported by nothing in the library. The agent runner's
tests, the notebooks, the benchmarks and the README demo spawn it instead of ``claude``
(``elynav_nb.agents.locate`` names it by module).

How data flows: argv -> ``args`` -> ``start.plan_start`` -> ``claude_standin.Conversation`` (stdin lines -> control
answers, queued user messages) -> ``turns.TurnRunner`` (``@standin`` directives -> tool calls,
hooks, MCP) -> ``wire`` -> stdout, one whole line at a time. Importing this package loads nothing.
"""

from __future__ import annotations

__all__: list[str] = []
