"""codex, two modes: ``app-server`` (``app_codec``, ``app_wire``: one JSON-RPC process per conversation) and
``exec`` (``exec_codec``: a process per turn); both plan from ``launch``, write ``CODEX_HOME`` through
``adapter`` and start from ``launcher``; ``hooks`` are exec's command hooks."""
