"""Local stand-ins that let every notebook, test and demo of elynav_nb run offline: the index.

Where it sits: beside the capabilities, never imported by them. Three unrelated parts, one
subpackage each; importing this package (or any of the three) loads nothing:

* ``claude/``: the claude CLI stand-in. ``claude_standin`` (with the modules beside it) is an
  executable (``python -m elynav_nb.sandbox.claude.claude_standin`` or the ``elynav-claude-standin``
  console script) that speaks the claude CLI stream-json protocol byte for byte, so the agent runner
  can be driven with no account and no network.
* ``model_api/``: ``fake_model_api`` (with ``fake_model_script`` and the ``fake_wire_*`` modules), a
  loopback model API speaking the Anthropic, OpenAI Responses and Gemini streaming APIs from a script,
  so the *real* claude, codex and gemini CLIs run whole turns offline. A part of its own: it serves
  all three CLIs, not only claude, and shares no code with the stand-in.
* ``docs/``: ``DocsSandbox`` (``docs.server``), the local La Suite Docs server (REST + Hocuspocus
  WebSocket with the real y-provider's checks) and ``elynav sandbox docs`` (``docs.command``).

Why the fake model API ships in the package and not under ``tests/``: notebook 01 imports
``FakeModelApi`` and ``fake_model_script.Reply`` to run the real claude, codex and gemini CLIs against
it offline (each CLI that is installed; a missing one is skipped and the cell says so). The notebooks
run wherever the package is installed, Binder included (``binder/requirements.txt`` installs
``-e .[lab]``, no test extras), so what a notebook imports must be importable from the package, and
its dependencies (``starlette``, ``uvicorn``) are core dependencies. The real-binary tests
(``tests/real_cli``) and the benchmarks use the same server.
"""

from __future__ import annotations

__all__: list[str] = []
