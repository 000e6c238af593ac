"""DocsSandbox's REST rules (design note §9.1-§9.3) as a client meets them."""

from __future__ import annotations

import base64
import uuid
from typing import Any

import httpx
import pytest
from pycrdt import Doc

from elynav_nb.docs.blocknote import insert_block
from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.rest import DocsRestClient
from elynav_nb.errors import AuthRequired, NotAllowed, RateLimited
from elynav_nb.sandbox.docs.server import DocsSandbox

pytestmark = pytest.mark.anyio


@pytest.fixture
async def sandbox() -> Any:
    async with DocsSandbox() as running:
        yield running


def saved_state(text: str) -> bytes:
    doc: Doc[Any] = Doc()
    insert_block(doc, text)
    return doc.get_update()


async def test_writes_need_the_csrf_token_and_a_matching_origin(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("CSRF")
    body = {"content": base64.b64encode(saved_state("x")).decode(), "websocket": True}
    url = f"{sandbox.url}/api/v1.0/documents/{document.id}/content/"
    async with httpx.AsyncClient() as client:
        cookies = f"docs_sessionid={sandbox.session_id}; csrftoken=abc"
        no_token = await client.patch(url, json=body, headers={"Cookie": cookies, "Origin": sandbox.url})
        bad_origin = await client.patch(
            url,
            json=body,
            headers={"Cookie": cookies, "X-CSRFToken": "abc", "Origin": "https://evil.example"},
        )
        good = await client.patch(
            url, json=body, headers={"Cookie": cookies, "X-CSRFToken": "abc", "Origin": sandbox.url}
        )
        bearer = await client.get(f"{sandbox.url}/api/v1.0/users/me/", headers={"Authorization": "Bearer x"})
    assert (no_token.status_code, bad_origin.status_code, good.status_code) == (403, 403, 204)
    assert bearer.status_code == 401  # only the session cookie authenticates


async def test_content_is_stored_only_by_patch_and_validated(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Content")
    async with DocsRestClient(sandbox.url, sandbox.credentials()) as rest:
        assert await rest.load_content(document.id) == b""
        state = saved_state("stored")
        await rest.save_content(document.id, state)
        assert await rest.load_content(document.id) == state
    headers = {"Cookie": sandbox.cookie, "X-CSRFToken": sandbox.csrf_token, "Origin": sandbox.url}
    url = f"{sandbox.url}/api/v1.0/documents/{document.id}/content/"
    async with httpx.AsyncClient() as client:
        not_base64 = await client.patch(url, json={"content": "%%%", "websocket": True}, headers=headers)
        not_yjs = await client.patch(
            url, json={"content": base64.b64encode(b"\x05junk").decode(), "websocket": True}, headers=headers
        )
        first = await client.get(url, headers={"Cookie": sandbox.cookie})
        cached = await client.get(
            url, headers={"Cookie": sandbox.cookie, "If-None-Match": first.headers["ETag"]}
        )
    assert (not_base64.status_code, not_yjs.status_code, cached.status_code) == (400, 400, 304)


async def test_not_connected_means_read_only_for_a_second_rest_editor(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Lock")
    bob, bob_session = sandbox.create_user("Bob Durand")
    document.accesses[bob.id] = "editor"
    state = saved_state("x")
    async with DocsRestClient(sandbox.url, sandbox.credentials()) as alice:
        await alice.save_content(document.id, state, websocket=False)  # first REST editor takes the lock
    async with DocsRestClient(sandbox.url, sandbox.credentials(bob_session)) as bob_rest:
        with pytest.raises(NotAllowed):
            await bob_rest.save_content(document.id, state, websocket=False)
        await bob_rest.save_content(document.id, state, websocket=True)  # connected clients skip the check


async def test_anonymous_requests_that_need_a_user_get_401(sandbox: DocsSandbox) -> None:
    sandbox.create_document("Alice's")
    async with DocsRestClient(sandbox.url, DocsCredentials.anonymous()) as rest:
        assert await rest.list_documents() == []  # Docs 5.4.1 lists nothing to anonymous callers (200)
        with pytest.raises(AuthRequired):
            await rest.create_document("nope")


async def test_lists_are_paginated_and_created_ids_are_uuid_v4(sandbox: DocsSandbox) -> None:
    async with DocsRestClient(sandbox.url, sandbox.credentials()) as rest:
        for number in range(25):
            created = await rest.create_document(f"doc {number}")
            assert uuid.UUID(created.id).version == 4
        documents = await rest.list_documents(page_size=20)
    assert len(documents) == 25


async def test_the_document_throttle_answers_429() -> None:
    async with DocsSandbox(throttle_per_minute=3) as sandbox:
        document = sandbox.create_document("Busy")
        async with DocsRestClient(sandbox.url, sandbox.credentials(), max_retries=0) as rest:
            for _ in range(3):
                await rest.retrieve(document.id)
            with pytest.raises(RateLimited):
                await rest.retrieve(document.id)


async def test_v4_mode_serves_content_as_a_field() -> None:
    async with DocsSandbox(api_version=4) as sandbox:
        document = sandbox.create_document("Old")
        async with DocsRestClient(sandbox.url, sandbox.credentials()) as rest:
            assert not await rest.content_endpoint()
            state = saved_state("v4")
            await rest.save_content(document.id, state)
            assert await rest.load_content(document.id) == state


async def test_link_configuration_resets_live_connections(sandbox: DocsSandbox) -> None:
    document = sandbox.create_document("Reset")
    from elynav_nb.docs.session import DocsSession

    async with DocsSession.open(sandbox.document_link(document.id), sandbox.credentials()) as doc:
        headers = {"Cookie": sandbox.cookie, "X-CSRFToken": sandbox.csrf_token, "Origin": sandbox.url}
        async with httpx.AsyncClient() as client:
            response = await client.put(
                f"{sandbox.url}/api/v1.0/documents/{document.id}/link-configuration/",
                json={"link_reach": "public", "link_role": "editor"},
                headers=headers,
            )
        assert response.status_code == 200
        await doc.insert_block("after the reset")
        assert doc.connection is not None and doc.connection.reset_count == 1
