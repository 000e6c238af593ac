"""The BlockNote document inside a ``pycrdt.Doc``: read it as blocks, edit it block by block.

Where it sits: the pure document model of ``elynav_nb.docs`` (design note §4, §5); no I/O. This
package's face (``from elynav_nb.docs.blocknote import read_blocks, insert_block, ...``) is the
names below; its modules:

- ``schema``: node, attribute and mark names BlockNote 0.51.4 knows, ``Block`` records;
- ``reader``: ``read_blocks`` (the tree as ``Block`` records, text as inline markdown);
- ``writers``: ``insert_block``, ``update_block_text``, ``delete_block`` (one transaction each);
- ``builder``: whole markdown as blocks (``insert_markdown``), ``section_diff``: ``replace_section``;
- internal: ``_location`` (a block by id, the insertion point), ``_inline_writer`` (runs with marks),
  ``_text_diff`` (the minimal character edit), ``_ids`` (UUID v4 block ids), ``_yxml_writer``
  (the fast pycrdt writer).
"""

from elynav_nb.docs.blocknote._location import (
    BlockLocation,
    document_fragment,
    find_block,
    locate_block,
    root_for_writing,
    root_group,
)
from elynav_nb.docs.blocknote.reader import read_blocks
from elynav_nb.docs.blocknote.schema import DOCUMENT_FRAGMENT, WRITABLE_BLOCK_TYPES, Block
from elynav_nb.docs.blocknote.writers import (
    MAX_BLOCK_TEXT_BYTES,
    delete_block,
    insert_block,
    mark_attributes,
    update_block_text,
)
from elynav_nb.docs.markdown.render import blocks_to_markdown

__all__ = [
    "DOCUMENT_FRAGMENT",
    "MAX_BLOCK_TEXT_BYTES",
    "WRITABLE_BLOCK_TYPES",
    "Block",
    "BlockLocation",
    "blocks_to_markdown",
    "delete_block",
    "document_fragment",
    "find_block",
    "insert_block",
    "locate_block",
    "mark_attributes",
    "read_blocks",
    "root_for_writing",
    "root_group",
    "update_block_text",
]
