"""The REST client: headers, error mapping, retries of GETs only, throttle, v4/v5 detection."""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Callable

import httpx
import pytest

from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.rest import DocsRestClient, RequestThrottle
from elynav_nb.errors import (
    AuthRequired,
    DocNotFound,
    ElynavError,
    InstanceMismatch,
    InvalidInput,
    NotAllowed,
    RateLimited,
    ServiceError,
)

pytestmark = pytest.mark.anyio

INSTANCE = "https://docs.example.org"
DOCUMENT_ID = str(uuid.uuid4())


def client_with(
    handler: Callable[[httpx.Request], httpx.Response], release: str = "v5.4.1"
) -> DocsRestClient:
    def routed(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1.0/config/":
            return httpx.Response(200, json={"RELEASE_VERSION": release})
        return handler(request)

    credentials = DocsCredentials("session-secret-123", "csrf-secret-456", instance=INSTANCE)
    return DocsRestClient(INSTANCE, credentials, transport=httpx.MockTransport(routed), retry_backoff=0.001)


async def test_writes_carry_cookie_content_type_origin_referer_and_csrf_token() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    async with client_with(handler) as client:
        await client.save_content(DOCUMENT_ID, b"\x00\x00")
    patch = seen[-1]
    assert patch.method == "PATCH" and patch.url.path == f"/api/v1.0/documents/{DOCUMENT_ID}/content/"
    assert patch.headers["Cookie"] == "docs_sessionid=session-secret-123; csrftoken=csrf-secret-456"
    assert patch.headers["X-CSRFToken"] == "csrf-secret-456"
    assert patch.headers["Origin"] == INSTANCE and patch.headers["Referer"] == INSTANCE + "/"
    assert patch.headers["Content-Type"] == "application/json"
    assert json.loads(patch.content) == {"content": base64.b64encode(b"\x00\x00").decode(), "websocket": True}


async def test_v4_instances_use_the_content_field() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "GET":
            return httpx.Response(
                200, json={"id": DOCUMENT_ID, "content": base64.b64encode(b"state").decode()}
            )
        return httpx.Response(200, json={"id": DOCUMENT_ID})

    async with client_with(handler, release="v4.8.6") as client:
        assert await client.load_content(DOCUMENT_ID) == b"state"
        await client.save_content(DOCUMENT_ID, b"new")
    assert [request.url.path for request in seen] == [f"/api/v1.0/documents/{DOCUMENT_ID}/"] * 2


@pytest.mark.parametrize(
    ("status", "error_class"),
    [
        (401, AuthRequired),
        (403, NotAllowed),
        (404, DocNotFound),
        (429, RateLimited),
        (503, ServiceError),
        (400, InvalidInput),
    ],
)
async def test_statuses_map_to_typed_errors(status: int, error_class: type[Exception]) -> None:
    async with client_with(lambda request: httpx.Response(status, text="session-secret-123")) as client:
        with pytest.raises(error_class) as raised:
            await client.retrieve(DOCUMENT_ID)
    assert "session-secret-123" not in str(raised.value) and "session-secret-123" not in repr(raised.value)


async def test_only_idempotent_gets_are_retried() -> None:
    calls = {"GET": 0, "PATCH": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        calls[request.method] += 1
        if request.method == "GET" and calls["GET"] < 3:
            return httpx.Response(503)
        if request.method == "PATCH":
            return httpx.Response(503)
        return httpx.Response(200, json={"id": DOCUMENT_ID, "title": "T", "abilities": {"update": True}})

    async with client_with(handler) as client:
        info = await client.retrieve(DOCUMENT_ID)
        assert info.title == "T" and info.can_edit
        with pytest.raises(ServiceError):
            await client.save_content(DOCUMENT_ID, b"x")
    assert calls == {"GET": 3, "PATCH": 1}


async def test_a_non_docs_host_is_a_typed_error() -> None:
    def html_everywhere(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>not docs</html>")

    client = DocsRestClient(INSTANCE, transport=httpx.MockTransport(html_everywhere))
    async with client:
        with pytest.raises(ServiceError) as raised:
            await client.load_content(DOCUMENT_ID)
    assert "not JSON" in str(raised.value)


async def test_the_throttle_keeps_requests_under_the_limit() -> None:
    throttle = RequestThrottle(limit=3, period=0.3)
    for _ in range(7):
        await throttle.acquire()
    assert throttle.waited_seconds >= 0.5  # 7 requests at 3 per 0.3 s need two full waits


async def test_clients_of_one_user_share_one_throttle() -> None:
    alice = DocsCredentials("alice-session-secret", instance=INSTANCE)
    first = DocsRestClient(INSTANCE, alice)
    second = DocsRestClient(INSTANCE, DocsCredentials("alice-session-secret", instance=INSTANCE))
    bob = DocsRestClient(INSTANCE, DocsCredentials("bob-session-secret", instance=INSTANCE))
    anonymous = DocsRestClient(INSTANCE)
    try:
        assert first.throttle is second.throttle  # Docs counts 80/min per user, not per client
        assert bob.throttle is not first.throttle and anonymous.throttle is not first.throttle
        assert "alice-session-secret" not in alice.identity_key()
    finally:
        for client in (first, second, bob, anonymous):
            await client.aclose()


async def test_the_throttle_is_shared_across_event_loops_and_threads() -> None:
    throttle = RequestThrottle(limit=4, period=0.4)

    def in_another_loop() -> None:
        async def take_two() -> None:
            for _ in range(2):
                await throttle.acquire()

        asyncio.run(take_two())

    await asyncio.to_thread(in_another_loop)  # the private loop of the *_sync calls, say
    for _ in range(3):
        await throttle.acquire()
    assert throttle.waited_seconds >= 0.3  # 5 requests at 4 per 0.4 s: the 5th waited for the window


async def test_cookies_are_never_sent_to_another_instance() -> None:
    credentials = DocsCredentials("session-secret-123", instance=INSTANCE)
    with pytest.raises(InstanceMismatch):
        DocsRestClient("https://evil.example.org", credentials)
    with pytest.raises(InstanceMismatch):
        credentials.cookie_header("https://evil.example.org")


async def test_bad_document_ids_are_refused_before_any_request() -> None:
    def never(request: httpx.Request) -> httpx.Response:
        raise AssertionError("no request expected")

    async with client_with(never) as client:
        for bad in ["not-a-uuid", str(uuid.uuid1())]:
            with pytest.raises(InvalidInput):
                await client.retrieve(bad)


async def test_a_server_that_never_answers_gives_a_typed_error_in_bounded_time() -> None:
    async def accept_and_sit(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(30)

    server = await asyncio.start_server(accept_and_sit, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    instance = f"http://127.0.0.1:{port}"
    client = DocsRestClient(
        instance, DocsCredentials("session-secret-123", instance=instance), timeout=0.2, retry_backoff=0.01
    )
    try:
        with pytest.raises(ElynavError) as raised:  # 3 GETs of 0.2 s and backoff: never a hang
            await asyncio.wait_for(client.retrieve(DOCUMENT_ID), 10)
        assert raised.value.code == "SERVICE_ERROR" and "did not answer in time" in raised.value.message
        assert "session-secret-123" not in str(raised.value)
    finally:
        await client.aclose()
        server.close()
