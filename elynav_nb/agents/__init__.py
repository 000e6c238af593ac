"""elynav_nb.agents: headless AI CLIs as awaitable, streaming, cancellable runners."""
