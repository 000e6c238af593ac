"""The Docs MCP server (``elynav mcp docs``): thin tools over ``DocsSession`` and the REST clients.

Where it sits: the MCP edge of ``elynav_nb.docs``. ``server`` builds the server and registers the
tool groups (``content_tools``, ``tree_tools``, and the credential tools), all over one
``service.DocsToolService``; ``common`` shapes results and errors. Importing this package does not
import the ``mcp`` SDK: ``elynav_nb.docs.mcp.server`` does.
"""
