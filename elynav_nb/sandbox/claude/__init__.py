"""The claude CLI stand-in: an executable that behaves on the wire like ``claude --print`` (stream-json).

What: ``claude_standin`` is the entry point (``python -m elynav_nb.sandbox.claude.claude_standin``, or
the ``elynav-claude-standin`` console script); the ``standin_*`` modules are its parts (flags, wire
messages, turns, tool calls, hooks, MCP, sessions). The names keep their ``standin_`` prefix so they
never read as the real CLI's codecs in ``elynav_nb.agents.cli`` (``claude_wire`` and friends).

Where it sits: ``elynav_nb/sandbox/claude``; imported by nothing in the library. The agent runner's
tests, the notebooks, the benchmarks and the README demo spawn it instead of ``claude``
(``elynav_nb.agents.locate`` names it by module).

How data flows: argv -> ``standin_args`` -> ``standin_start.plan_start`` -> ``claude_standin.Conversation`` (stdin lines -> control
answers, queued user messages) -> ``standin_turns.TurnRunner`` (``@standin`` directives -> tool calls,
hooks, MCP) -> ``standin_wire`` -> stdout, one whole line at a time. Importing this package loads nothing.
"""

from __future__ import annotations

__all__: list[str] = []
