"""Any Agent Client Protocol agent over stdio: ``codec`` (JSON-RPC lines -> events), ``wire`` (the
session, prompts, permission options, no I/O), ``launch`` (MCP servers in ACP's form), ``launcher``, and
the client's services the agent calls: ``files`` (confined to the workspace) and ``terminals``."""
