"""Live sessions on La Suite Docs documents: ``DocsSession`` and the layers under it.

Where it sits: the ``elynav_nb.docs`` capability. The public face is ``DocsSession`` (open a link,
read blocks, write acknowledged edits, saved over REST) with ``DocsCredentials`` and
``DocsSessionPool``. Under it: the pure layers (link parsing ``addressing``, the Hocuspocus frame
codec ``live.frames``, inline markdown ``markdown.inline``, the BlockNote tree in a ``pycrdt.Doc``
``blocknote``) and the I/O layers (``live.connection.DocsConnection`` over WebSocket,
``rest.DocsRestClient`` over HTTP). The document tree and lifecycle (list, search, children,
descendants, create, rename, move, duplicate, trash, restore, favourites) are
``DocsRestClient(...).tree`` (``rest.tree_client``), with the typed records of ``rest.tree``
(``DocumentNode``, ``DocumentList``, ``DocumentTree``, ``DocumentChange``). Whole markdown:
``DocsSession.insert_markdown`` and ``replace_section`` (which answers a ``SectionChange``), over
``markdown.blocks.parse_markdown``. Comment threads are ``doc.comments`` (``comments``,
``rest.threads``, anchors in ``blocknote.comments``), versions ``doc.versions()`` / ``diff()``
(``rest.versions``, ``blocknote.version_diff``), presence ``doc.people()`` (``live.presence``), and
OIDC sign-in ``DocsCredentials.oidc(...)`` (``oidc``). The MCP server is ``elynav_nb.docs.mcp.server`` (``elynav mcp docs``).

Layers, one folder each (issue 29): ``live/`` (frames, connection, presence), ``blocknote/`` (the
document model in a ``pycrdt.Doc``), ``markdown/`` (inline and block markdown), ``rest/`` (the
shared HTTP, documents, the tree), ``mcp/`` (``elynav mcp docs``); above them ``session/``
(``DocsSession`` and its parts, ``DocsSessionPool``). Of the flat paths of before, only the one
users were taught keeps working: ``elynav_nb.docs.frames`` (notebook 03), a thin alias of ``live.frames``.
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
from elynav_nb.docs.blocknote.section_diff import SectionChange
from elynav_nb.docs.blocknote.version_diff import DocumentState, VersionDiff
from elynav_nb.docs.comments import DocumentComments
from elynav_nb.docs.credentials import DocsCredentials, check_anonymous_access
from elynav_nb.docs.live.connection import REMOTE_ORIGIN, DocsConnection
from elynav_nb.docs.live.frames import Message, decode_message, encode_message
from elynav_nb.docs.live.presence import Person
from elynav_nb.docs.markdown.blocks import BlockSpec, parse_markdown
from elynav_nb.docs.markdown.inline import InlineRun, normalize, parse_inline, render_inline
from elynav_nb.docs.oidc import OidcCredentials
from elynav_nb.docs.rest.documents import DocsRestClient, DocumentInfo
from elynav_nb.docs.rest.threads import Comment, Thread, Threads
from elynav_nb.docs.rest.tree import MOVE_POSITIONS, DocumentChange, DocumentList, DocumentNode, DocumentTree
from elynav_nb.docs.rest.tree_client import DocsTreeClient
from elynav_nb.docs.rest.versions import Version, Versions
from elynav_nb.docs.session import DocsSession, RemoteChange, SaveResult
from elynav_nb.docs.session.pool import DocsSessionPool

__all__ = [
    "DOCUMENT_FRAGMENT",
    "MAX_BLOCK_TEXT_BYTES",
    "MOVE_POSITIONS",
    "REMOTE_ORIGIN",
    "WRITABLE_BLOCK_TYPES",
    "Block",
    "BlockSpec",
    "Comment",
    "DocAddress",
    "DocsConnection",
    "DocsCredentials",
    "DocsRestClient",
    "DocsSession",
    "DocsSessionPool",
    "DocsTreeClient",
    "DocumentChange",
    "DocumentComments",
    "DocumentInfo",
    "DocumentList",
    "DocumentNode",
    "DocumentState",
    "DocumentTree",
    "InlineRun",
    "Message",
    "OidcCredentials",
    "Person",
    "RemoteChange",
    "SaveResult",
    "SectionChange",
    "Thread",
    "Threads",
    "Version",
    "VersionDiff",
    "Versions",
    "blocks_to_markdown",
    "check_anonymous_access",
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
    "parse_markdown",
    "read_blocks",
    "render_inline",
    "update_block_text",
]
