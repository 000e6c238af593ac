"""The issue's "done when" scenario: open a sandbox document from Python, insert a bold heading, see
it in a real ``@hocuspocus/provider`` peer (a browser stand-in), read a person's edit back live."""

from __future__ import annotations

import pytest

from elynav_nb.docs.session import DocsSession
from elynav_nb.sandbox.docs.server import DocsSandbox
from tests.interop.conftest import ProviderPeer

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


async def test_bold_heading_round_trip_between_python_and_a_browser_peer(node_peer: object) -> None:
    async with DocsSandbox() as sandbox:
        document = sandbox.create_document("Réunion d'équipe")
        async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
            heading_id = await doc.insert_block("Ordre du **jour**", type="heading", level=1)
            peer = await ProviderPeer.start()
            try:
                connected = await peer.call(
                    "connect",
                    url=sandbox.ws_url,
                    room=document.id,
                    origin=sandbox.url,
                    cookie=sandbox.cookie,
                    user={"name": "Alice"},
                )
                assert connected == {"ok": True, "scope": "read-write"}
                seen = await peer.call("blocks")
                assert seen["markdown"].strip() == "# Ordre du **jour**"
                assert seen["blocks"][0]["props"]["level"] == 1

                changes = doc.watch(timeout=5)
                typed = await peer.call("text_insert", block_id=heading_id, offset=0, text="1. ")
                assert typed["ok"]
                change = await changes.__anext__()
                await changes.aclose()
                assert heading_id in change.changed_block_ids
                assert doc.blocks[0].text == "1. Ordre du **jour**"
            finally:
                await peer.stop()
        saved = await _reload(sandbox, document.id)
        assert saved == "# 1. Ordre du **jour**\n"


async def _reload(sandbox: DocsSandbox, document_id: str) -> str:
    async with DocsSession.open(sandbox.document_link(document_id), sandbox.credentials()) as reopened:
        return reopened.to_markdown()
