"""Comment threads on a live document (issue 31): opened on a block or a span, marked in the document
as BlockNote marks them, replied to, resolved, reacted to, watched; Docs' refusals typed.
Against the sandbox's threads (``discussion_routes``, from Docs 5.4.1's viewsets)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from pycrdt import XmlFragment, XmlText

from elynav_nb.docs.blocknote.comments import comment_anchors, comment_mark_key
from elynav_nb.docs.markdown.comment_body import body_from_markdown, markdown_from_body
from elynav_nb.docs.session import DocsSession
from elynav_nb.errors import ElynavError
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sandbox() -> AsyncIterator[DocsSandbox]:
    async with DocsSandbox() as running:
        yield running


def marks_of(doc: DocsSession) -> list[tuple[str, dict[str, object]]]:
    """Every (text, attributes) run of the document's text nodes."""
    runs = []
    fragment = doc.ydoc.get("document-store", type=XmlFragment)
    for node in fragment.children[0].children[0].children[0].children:
        if isinstance(node, XmlText):
            runs.extend((chunk, dict(attributes or {})) for chunk, attributes in node.diff())
    return runs


async def test_a_thread_on_a_span_is_marked_replied_resolved_and_listed(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Avis")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        block_id = await doc.append_block("Le budget **2027** est à revoir.")
        thread = await doc.comments.open(block_id, "Quel *montant* ?", quote="budget 2027")
        assert thread.block_id == block_id and thread.anchor_text == "budget 2027"
        key = comment_mark_key(thread.id)
        assert marks_of(doc) == [
            ("Le ", {}),
            ("budget ", {key: {"orphan": False, "threadId": thread.id}}),
            ("2027", {"bold": {}, key: {"orphan": False, "threadId": thread.id}}),
            (" est à revoir.", {}),
        ]
        assert doc.blocks[0].text == "Le budget **2027** est à revoir."  # the mark is not text
        reply = await doc.comments.reply(thread.id, "Environ **12 k€**")
        await doc.comments.react(thread.id, reply.id, "👍")
        await doc.comments.resolve(thread.id)
        threads = await doc.comments.threads()
    [listed] = threads
    assert listed.resolved and listed.anchor_text == "budget 2027" and listed.block_id == block_id
    assert [comment.text for comment in listed.comments] == ["Quel *montant* ?", "Environ **12 k€**"]
    assert [comment.author for comment in listed.comments] == ["Alice Martin", "Alice Martin"]
    frame = threads.to_frame()
    assert frame["reactions"].tolist() == ["", "👍 1"] and frame["resolved"].all()
    saved = sandbox.store.get_document(document.id)
    assert saved is not None and saved.content is not None  # the mark was saved with the document


async def test_a_whole_block_thread_and_the_anchors_read_back(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Whole")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        block_id = await doc.append_block("line one\nline *two*")
        thread = await doc.comments.open(block_id, "Both lines")
        anchors = comment_anchors(doc.ydoc)
    assert anchors[thread.id].block_id == block_id and anchors[thread.id].text == "line oneline two"


async def test_bad_anchors_are_refused_before_anything_is_sent(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Refusals")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        block_id = await doc.append_block("present")
        await doc.delete_block(block_id)
        for call, code in [
            (doc.comments.open(block_id, "on a deleted block"), "BLOCK_NOT_FOUND"),
            (doc.comments.open(doc.blocks[0].id, "on an empty block"), "INVALID_INPUT"),
            (doc.comments.open(doc.blocks[0].id, " "), "INVALID_INPUT"),
            (doc.comments.reply("not-a-uuid", "x"), "INVALID_INPUT"),
        ]:
            with pytest.raises(ElynavError) as refused:
                await call
            assert refused.value.code == code
        other = await doc.append_block("other text")
        with pytest.raises(ElynavError) as absent:
            await doc.comments.open(other, "x", quote="missing")
        assert absent.value.code == "INVALID_INPUT"
    assert sandbox.store.threads.get(document.id, []) == []  # no thread was opened on the way


async def test_docs_own_refusals_are_typed(sandbox: DocsSandbox) -> None:
    bob, bob_session = sandbox.create_user("Bob Durand")
    document = sandbox.create_document("Shared", link_reach="authenticated", link_role="reader")
    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as alice_doc:
        block_id = await alice_doc.append_block("Texte")
        thread = await alice_doc.comments.open(block_id, "Alice's thread")
    async with DocsSession.open(
        sandbox.document_link(document.id), sandbox.credentials(bob_session)
    ) as bob_doc:
        assert bob_doc.read_only
        with pytest.raises(ElynavError) as reader:  # a reader may not comment: Docs says 403
            await bob_doc.comments.reply(thread.id, "Bob's reply")
        assert reader.value.code == "NOT_ALLOWED" and reader.value.details["status"] == 403
    sandbox.share(document.id, bob, "editor")
    async with DocsSession.open(
        sandbox.document_link(document.id), sandbox.credentials(bob_session)
    ) as bob_doc:
        await bob_doc.comments.reply(thread.id, "Bob can reply now")
        with pytest.raises(ElynavError) as not_creator:  # only its creator or an owner resolves it
            await bob_doc.comments.resolve(thread.id)
        assert not_creator.value.code == "NOT_ALLOWED"


async def test_watch_yields_new_comments_as_a_browser_pings(sandbox: DocsSandbox) -> None:
    bob, bob_session = sandbox.create_user("Bob Durand")
    document = sandbox.create_document("Watched")
    sandbox.share(document.id, bob, "editor")
    async with (
        DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as agent,
        DocsSession.open(sandbox.document_link(document.id), sandbox.credentials(bob_session)) as person,
    ):
        block_id = await agent.append_block("À relire")
        thread = await agent.comments.open(block_id, "Relis ce paragraphe ?")
        watcher = agent.comments.watch(poll=30, timeout=60)

        async def first() -> object:
            return await anext(watcher)

        waiting = asyncio.ensure_future(first())
        await asyncio.sleep(0.3)
        await person.comments.reply(thread.id, "Oui, c'est fait")  # pings the room, as Docs' frontend
        comment = await asyncio.wait_for(waiting, 20)  # far sooner than the 30 s poll
        await watcher.aclose()
    assert (
        getattr(comment, "text", None) == "Oui, c'est fait"
        and getattr(comment, "author", None) == "Bob Durand"
    )


def test_comment_bodies_are_blocknote_json_and_read_back_as_inline_markdown() -> None:
    body = body_from_markdown("**Gras** et [lien](https://example.org)\nseconde ligne")
    assert [block["type"] for block in body] == ["paragraph", "paragraph"]
    assert body[0]["content"][0] == {"type": "text", "text": "Gras", "styles": {"bold": True}}
    assert body[0]["content"][2]["type"] == "link" and body[0]["content"][2]["href"] == "https://example.org"
    assert markdown_from_body(body) == "**Gras** et [lien](https://example.org)\nseconde ligne"
    assert markdown_from_body({"weird": 1}) == "" and markdown_from_body(None) == ""
