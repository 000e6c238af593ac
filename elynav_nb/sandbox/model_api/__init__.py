"""A fake model API on loopback, so the real claude, codex and gemini CLIs run whole turns offline.

What: ``fake_model_api.FakeModelApi`` (a Starlette app under uvicorn on ``127.0.0.1``) speaks the
Anthropic Messages, OpenAI Responses and Gemini streaming APIs; ``fake_model_script`` holds the script
(``Reply``, ``ModelRequest``) and ``fake_wire_anthropic`` / ``fake_wire_openai`` / ``fake_wire_gemini``
each API's request reading and reply frames. Its own part, apart from ``sandbox.claude``: it serves
all three CLIs and shares no code with the stand-in.

Where it sits: ``elynav_nb/sandbox/model_api``; imported by nothing in the library. Used by notebook 01,
the real-binary tests (``tests/real_cli``) and the benchmarks (why it ships in the package: see
``elynav_nb.sandbox``).

How data flows: CLI request -> ``FakeModelApi`` (which API) -> the wire module's ``describe_request`` ->
``ModelRequest`` recorded -> next ``Reply`` of the script -> the wire module's ``render_reply`` -> SSE
frames back to the CLI. Importing this package loads nothing.
"""

from __future__ import annotations

__all__: list[str] = []
