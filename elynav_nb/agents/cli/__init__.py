"""Pure codecs and command lines of the agent CLIs (claude stream-json first). No I/O here."""
