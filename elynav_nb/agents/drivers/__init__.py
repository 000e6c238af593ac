"""The conversation drivers and the process supervision under ``AgentRunner`` (internal).

``base.Driver`` (what both share: the loop, the turn in flight, the background stop, the one place a
``TurnResult`` is made), ``persistent.PersistentDriver`` (one process per conversation, spoken to
through a wire) and ``per_turn.PerTurnDriver`` (a process per turn, through an adapter); ``process``
(``CliProcess``: spawn, pipes, bounded stop steps), ``process_tree`` (the descendants a CLI's tools
leave) and ``reaper`` (no CLI outlives its Python process). A driver gets the runner's
``RunnerContext`` and its protocol's launcher; it never names a CLI, and imports no runner.
"""
