"""Local stand-ins that let every notebook, test and demo of elynav_nb run offline.

Where it sits: beside the capabilities, never imported by them. ``docs_*`` is the local Docs
server; ``claude_standin`` (with its ``standin_*`` modules) is an executable (``python -m elynav_nb.sandbox.claude_standin`` or the ``elynav-claude-standin``
console script) that speaks the claude CLI stream-json protocol byte for byte, so the agent
runner can be driven with no account and no network. ``fake_model_api`` (with ``fake_model_script``
and the ``fake_wire_*`` modules) is a loopback model API speaking the Anthropic, OpenAI Responses and
Gemini streaming APIs from a script, so the real claude, codex and gemini CLIs run whole turns
offline. Importing this package loads nothing.
"""

from __future__ import annotations

__all__: list[str] = []
