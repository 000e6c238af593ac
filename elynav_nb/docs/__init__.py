"""Live sessions on La Suite Docs documents: the pure layers (addressing, frames, inline markdown, blocks).

Where it sits: the ``elynav_nb.docs`` capability. This package exports the pure building blocks the
session, the sandbox and the MCP server use: link parsing (``addressing``), the Hocuspocus frame
codec (``frames``), inline markdown both ways (``inline_markdown``) and the BlockNote tree in a
``pycrdt.Doc`` (``blocknote``). The WebSocket connection, REST client and session API build on them.
"""

from elynav_nb.docs.addressing import DocAddress, is_uuid_v4, normalize_instance_origin, parse_docs_url
from elynav_nb.docs.blocknote import (
    DOCUMENT_FRAGMENT,
    MAX_BLOCK_TEXT_BYTES,
    WRITABLE_BLOCK_TYPES,
    Block,
    blocks_to_markdown,
    delete_block,
    document_fragment,
    find_block,
    insert_block,
    read_blocks,
    update_block_text,
)
from elynav_nb.docs.frames import Message, decode_message, encode_message
from elynav_nb.docs.inline_markdown import InlineRun, normalize, parse_inline, render_inline

__all__ = [
    "DOCUMENT_FRAGMENT",
    "MAX_BLOCK_TEXT_BYTES",
    "WRITABLE_BLOCK_TYPES",
    "Block",
    "DocAddress",
    "InlineRun",
    "Message",
    "blocks_to_markdown",
    "decode_message",
    "delete_block",
    "document_fragment",
    "encode_message",
    "find_block",
    "insert_block",
    "is_uuid_v4",
    "normalize",
    "normalize_instance_origin",
    "parse_docs_url",
    "parse_inline",
    "read_blocks",
    "render_inline",
    "update_block_text",
]
