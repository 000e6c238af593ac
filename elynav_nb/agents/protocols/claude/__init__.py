"""claude's stream-json protocol: ``codec`` (lines -> events), ``wire`` (the control protocol, no I/O),
``launch`` (the command line), ``launcher`` (the agent file, the kernel tools' SDK server, the hooks)."""
