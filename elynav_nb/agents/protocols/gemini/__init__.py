"""gemini, a process per turn: ``codec`` (``-o stream-json`` lines -> events), ``launch`` (the command line
and ``settings.json``), ``adapter`` (its home, each turn), ``hooks`` (its command hooks), ``launcher``."""
