"""The deadlines and size limits of the Docs client (``limits``), on the REST client and the connection.

In-process: the hostile server of ``hostile_server`` on loopback for what needs real sockets (a
drip, a lying ``Content-Length``), ``httpx.MockTransport`` for the rest, a small websockets server
for collaboration messages. The only timed assertions say "ended within the deadline plus a margin".
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable

import httpx
import pytest
from pycrdt import Doc
from websockets.asyncio.server import ServerConnection, serve

from elynav_nb.docs._limits import (
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_RESPONSE_BYTES,
    MAX_RETRY_AFTER,
    Deadline,
    retry_after_seconds,
    retry_wait,
)
from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.live.connection import DocsConnection
from elynav_nb.docs.rest import DocsRestClient, RequestThrottle
from elynav_nb.docs.session import DocsSession
from elynav_nb.errors import (
    DeadlineExceeded,
    DocNotFound,
    InvalidInput,
    OperationTimeout,
    RateLimited,
    ResponseTooLarge,
    ServiceError,
)
from tests.docs.hostile_server import HostileDocs

pytestmark = pytest.mark.anyio

INSTANCE = "https://docs.example.org"
DOCUMENT_ID = str(uuid.uuid4())
MARGIN_SECONDS = 5.0


def mock_client(handler: Callable[[httpx.Request], httpx.Response], **options: object) -> DocsRestClient:
    def routed(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1.0/config/":
            return httpx.Response(200, json={"RELEASE_VERSION": "v5.4.1"})
        return handler(request)

    credentials = DocsCredentials("session-secret-123", "csrf-secret-456", instance=INSTANCE)
    return DocsRestClient(
        INSTANCE,
        credentials,
        transport=httpx.MockTransport(routed),
        throttle=RequestThrottle(limit=10_000),
        **options,  # type: ignore[arg-type]
    )


def hostile_client(server: HostileDocs, **options: object) -> DocsRestClient:
    credentials = DocsCredentials("session-secret-123", instance=server.instance)
    return DocsRestClient(
        server.instance,
        credentials,
        throttle=RequestThrottle(limit=10_000),
        **options,  # type: ignore[arg-type]
    )


# --- the rules alone -----------------------------------------------------------------------------


async def test_retry_after_is_honoured_up_to_its_cap_and_never_past_the_deadline() -> None:
    roomy = Deadline.start(60, "test")
    assert retry_wait(0, 0.5, None, roomy) == 0.5  # plain exponential backoff
    assert retry_wait(1, 0.5, None, roomy) == 1.0
    assert retry_wait(0, 0.5, 3.0, roomy) == 3.0  # the server's wait, when longer
    assert retry_wait(0, 0.5, MAX_RETRY_AFTER + 1, roomy) is None  # longer than we wait: give up now
    assert retry_wait(0, 0.5, 86_400, roomy) is None
    tight = Deadline.start(1, "test")
    assert retry_wait(0, 0.5, 3.0, tight) is None  # it would pass the deadline
    assert retry_wait(3, 0.5, None, tight) is None


def test_retry_after_reads_seconds_and_http_dates_and_ignores_the_rest() -> None:
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("9" * 40) == float("inf")
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    for unreadable in (None, "", "soon", "-3", "1.5e9", "Wed, 99 Foo"):
        assert retry_after_seconds(unreadable) is None


async def test_a_deadline_cancels_what_outlives_it_with_a_typed_error_naming_the_step() -> None:
    deadline = Deadline.start(0.2, "open this document")
    deadline.step = "load the saved content"
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded) as raised:
        await deadline.run(asyncio.sleep(30))
    assert time.monotonic() - started <= 0.2 + MARGIN_SECONDS
    assert isinstance(raised.value, OperationTimeout) and raised.value.code == "DEADLINE_EXCEEDED"
    assert raised.value.details == {"deadline_seconds": 0.2, "step": "load the saved content"}
    assert "0.2 s" in raised.value.message and "load the saved content" in raised.value.message


async def test_deadlines_and_limits_must_be_positive() -> None:
    for bad in ({"deadline": 0}, {"deadline": float("inf")}, {"deadline": "30"}, {"max_response_bytes": 0}):
        with pytest.raises(InvalidInput):
            mock_client(lambda request: httpx.Response(200), **bad)
    with pytest.raises(InvalidInput):
        await DocsSession.open(f"{INSTANCE}/docs/{DOCUMENT_ID}/", deadline=-1)


def test_the_defaults_are_the_documented_ones() -> None:
    client = DocsRestClient(INSTANCE, throttle=RequestThrottle())
    assert client.deadline == 30.0 and client.max_response_bytes == DEFAULT_MAX_RESPONSE_BYTES == 32 * 2**20
    assert DEFAULT_MAX_MESSAGE_BYTES == 24 * 2**20
    connection = DocsConnection(
        Doc(), url="ws://127.0.0.1:1/", document_name=DOCUMENT_ID, origin=INSTANCE, cookie="c=1"
    )
    assert connection.max_message_bytes == DEFAULT_MAX_MESSAGE_BYTES


# --- deadlines on the REST client ----------------------------------------------------------------


@pytest.mark.parametrize("case", ["drip-headers", "drip-body"])
async def test_a_dripping_server_ends_the_call_at_its_deadline(case: str) -> None:
    async with HostileDocs(case) as server:
        async with hostile_client(server, deadline=1.0) as client:
            started = time.monotonic()
            with pytest.raises(DeadlineExceeded) as raised:
                if case == "drip-headers":
                    await client.retrieve(server.document_id)
                else:
                    await client.load_content(server.document_id)
            assert time.monotonic() - started <= 1.0 + MARGIN_SECONDS
    assert raised.value.details["deadline_seconds"] == 1.0
    assert "session-secret-123" not in str(raised.value)


async def test_a_long_retry_after_ends_the_call_at_once_with_the_servers_error() -> None:
    async with HostileDocs("retry-after") as server:
        async with hostile_client(server) as client:
            started = time.monotonic()
            with pytest.raises(ServiceError) as raised:
                await client.retrieve(server.document_id)
            assert time.monotonic() - started <= MARGIN_SECONDS  # not 2 x 10 s of sleep as before
    assert raised.value.details == {"status": 503, "retry_after_seconds": 86_400.0}
    assert server.requests.count(f"GET /api/v1.0/documents/{server.document_id}/") == 1


async def test_retries_stop_when_their_wait_would_pass_the_deadline() -> None:
    calls = []

    def throttled(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(429, headers={"Retry-After": "2"})

    async with mock_client(throttled, deadline=1.0) as client:
        with pytest.raises(RateLimited) as raised:
            await client.retrieve(DOCUMENT_ID)
    assert len(calls) == 1 and raised.value.details["retry_after_seconds"] == 2.0


async def test_a_short_retry_after_is_waited_and_the_retry_succeeds() -> None:
    calls = []

    def once_throttled(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) == 1:
            return httpx.Response(503, headers={"Retry-After": "0"})
        return httpx.Response(200, json={"id": DOCUMENT_ID, "title": "T"})

    async with mock_client(once_throttled, retry_backoff=0.01) as client:
        assert (await client.retrieve(DOCUMENT_ID)).title == "T"
    assert len(calls) == 2


# --- the body limit ----------------------------------------------------------------------------


async def test_a_body_over_the_limit_is_refused_while_it_streams() -> None:
    async with HostileDocs("huge-body") as server:
        async with hostile_client(server, max_response_bytes=2 * 2**20) as client:
            with pytest.raises(ResponseTooLarge) as raised:
                await client.load_content(server.document_id)
    assert raised.value.details["limit_bytes"] == 2 * 2**20
    assert raised.value.details["setting"] == "max_response_bytes"
    assert server.requests.count(f"GET /api/v1.0/documents/{server.document_id}/content/") == 1  # no retry


async def test_an_announced_length_over_the_limit_is_refused_before_reading() -> None:
    async with HostileDocs("claimed-huge-length") as server:
        async with hostile_client(server) as client:
            started = time.monotonic()
            with pytest.raises(ResponseTooLarge) as raised:
                await client.load_content(server.document_id)
            assert time.monotonic() - started <= MARGIN_SECONDS
    assert raised.value.details["declared_bytes"] == 10 * 2**30


async def test_a_body_of_exactly_the_limit_is_read_and_one_byte_more_is_not() -> None:
    size = 4096

    def content(request: httpx.Request) -> httpx.Response:
        encoded = "A" * (size if request.url.params.get("n") is None else size + 1)
        return httpx.Response(200, text=encoded)

    async with mock_client(content, max_response_bytes=size) as client:
        assert len(await client.load_content(DOCUMENT_ID)) == size * 3 // 4
        with pytest.raises(ResponseTooLarge):
            await client.http.request(
                "GET", f"/api/v1.0/documents/{DOCUMENT_ID}/content/", "load", params={"n": 1}
            )


async def test_a_large_error_answer_keeps_its_status_error() -> None:
    async with mock_client(
        lambda request: httpx.Response(404, text="x" * 10_000_000), max_response_bytes=1024
    ) as client:
        with pytest.raises(DocNotFound):
            await client.retrieve(DOCUMENT_ID)


async def test_a_gzipped_body_is_counted_once_decompressed() -> None:
    import gzip

    packed = gzip.compress(b"A" * 4_000_000)

    def zipped(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200, content=packed, headers={"Content-Encoding": "gzip", "Content-Type": "text/plain"}
        )

    async with mock_client(zipped, max_response_bytes=1_000_000) as client:
        with pytest.raises(ResponseTooLarge):
            await client.load_content(DOCUMENT_ID)
    async with mock_client(zipped) as client:
        assert len(await client.load_content(DOCUMENT_ID)) == 3_000_000


# --- untyped decoding errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        b'{"id": ' + b"1" * 5000 + b"}",
    ],
)
async def test_json_too_deep_or_too_long_to_read_is_a_service_error(body: bytes) -> None:
    async with mock_client(lambda request: httpx.Response(200, content=body)) as client:
        with pytest.raises(ServiceError):
            await client.retrieve(DOCUMENT_ID)


async def test_fields_of_the_wrong_type_are_read_as_missing() -> None:
    wrong = {"id": 12, "title": ["t"], "abilities": "all", "link_reach": {"a": 1}, "created_at": []}
    async with mock_client(lambda request: httpx.Response(200, json=wrong)) as client:
        info = await client.retrieve(DOCUMENT_ID)
    assert (info.id, info.title, info.abilities, info.link_reach, info.created_at) == ("", "", {}, None, None)


# --- collaboration messages ----------------------------------------------------------------------


async def test_a_collaboration_message_over_the_limit_ends_the_connection_typed() -> None:
    async def oversized(websocket: ServerConnection) -> None:
        await websocket.recv()
        await websocket.send(b"\x00" * (2 * 2**20))
        await websocket.wait_closed()

    async with serve(oversized, "127.0.0.1", 0, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        connection = DocsConnection(
            Doc(),
            url=f"ws://127.0.0.1:{port}/collaboration/ws/",
            document_name=DOCUMENT_ID,
            origin=INSTANCE,
            cookie="docs_sessionid=secret-value",
            max_message_bytes=2**20,
        )
        with pytest.raises(ResponseTooLarge) as raised:
            await asyncio.wait_for(connection.open(), 10)
    assert (
        raised.value.details["limit_bytes"] == 2**20
        and raised.value.details["setting"] == "max_message_bytes"
    )
    assert "secret-value" not in str(raised.value)
