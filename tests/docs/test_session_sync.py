"""The blocking ``*_sync`` calls a script uses: the session lives on elynav_nb's private loop."""

from __future__ import annotations

import pytest

from elynav_nb._sync import private_loop, run_sync
from elynav_nb.docs.session import DocsSession
from elynav_nb.errors import BlockNotFound, SyncCallInsideLoop
from elynav_nb.sandbox.docs.server import DocsSandbox


def test_a_script_edits_saves_and_closes_with_blocking_calls() -> None:
    sandbox = run_sync(DocsSandbox().start(), owner_loop=private_loop())
    try:
        document = sandbox.create_document("Script")
        doc = DocsSession.open_sync(sandbox.document_link(document.id), sandbox.credentials())
        heading_id = doc.insert_block_sync("Plan **B**", type="heading", level=2)
        note_id = doc.insert_block_sync("à faire", after=heading_id)
        doc.update_block_sync(note_id, "à faire demain")
        extra_id = doc.insert_block_sync("brouillon", after=note_id)
        doc.delete_block_sync(extra_id)
        with pytest.raises(BlockNotFound):
            doc.delete_block_sync(extra_id)
        assert doc.save_sync().saved

        async def from_the_session_loop() -> None:
            doc.insert_block_sync("never sent")

        with pytest.raises(SyncCallInsideLoop) as raised:
            run_sync(from_the_session_loop(), owner_loop=private_loop())
        assert raised.value.code == "SYNC_CALL_INSIDE_LOOP"

        doc.close_sync()
        assert doc.close_sync() is None  # safe twice
        reopened = DocsSession.open_sync(sandbox.document_link(document.id), sandbox.credentials())
        try:
            assert reopened.to_markdown() == "## Plan **B**\n\nà faire demain\n"
        finally:
            reopened.close_sync()
    finally:
        run_sync(sandbox.stop(), owner_loop=private_loop())
