"""Property: whatever JSON a server answers, every failure of the Docs REST client is an ``ElynavError``.

Hypothesis draws answers (random JSON of every type and shape, documents and pages whose fields have
random types, JSON nested tens of thousands deep, numbers too long to read, bytes that are not JSON,
any status) and one call of the REST client or its tree client, or one of the pure decoders
(``DocumentInfo.from_json``, ``DocumentNode.from_json``, ``nodes_from_nested``, the anonymous check),
and the results' own views (``to_frame``, ``levels``). The call may succeed or fail; a failure must
carry a code. Before this rule, deep JSON raised ``RecursionError`` and a string ``abilities`` a bare
``ValueError``.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elynav_nb.docs.credentials import DocsCredentials, check_anonymous_access
from elynav_nb.docs.rest import DocsRestClient, DocumentInfo, RequestThrottle
from elynav_nb.docs.rest.tree import DocumentList, DocumentNode, DocumentTree, nodes_from_nested
from elynav_nb.errors import ElynavError

INSTANCE = "https://docs.example.org"
DOCUMENT_ID = str(uuid.uuid4())
OTHER_ID = str(uuid.uuid4())
MAX_ANSWERED_REQUESTS = 12
"""After these, the mock answers 500: a listing that follows ``next`` for ever still ends."""

FIELDS = [
    "id",
    "title",
    "abilities",
    "link_reach",
    "link_role",
    "computed_link_reach",
    "computed_link_role",
    "created_at",
    "updated_at",
    "deleted_at",
    "path",
    "depth",
    "numchild",
    "user_role",
    "is_favorite",
    "parent",
    "children",
    "results",
    "next",
    "count",
    "RELEASE_VERSION",
    "COLLABORATION_WS_URL",
    "content",
    "message",
    "detail",
    "target_document_id",
    "retrieve",
    "update",
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from([DOCUMENT_ID, OTHER_ID, "0000001", "00000010000002", "v5.4.1", "v4.8", "ws://x/"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=4), inner, max_size=6)
    ),
    max_leaves=24,
)
documents = st.fixed_dictionaries(
    {"id": st.sampled_from([DOCUMENT_ID, OTHER_ID]) | json_values},
    optional={field: json_values for field in FIELDS if field != "id"},
)
pages = st.fixed_dictionaries(
    {"results": st.lists(documents | json_values, max_size=4) | json_values},
    optional={"count": json_values, "next": json_values},
)
deep_bodies = st.builds(
    lambda depth, opener, closer: (opener * depth + closer * depth).encode(),
    st.integers(min_value=1, max_value=60_000),
    st.just("["),
    st.just("]"),
) | st.builds(
    lambda depth: ('{"id":' * depth + "1" + "}" * depth).encode(), st.integers(min_value=1, max_value=60_000)
)
odd_bodies = st.sampled_from(
    [
        b"",
        b"not json",
        b'{"id": ' + b"1" * 5000 + b"}",
        b"\xff\xfe\x00",
        b'"' + b"QUFB" * 10 + b'"',
        b"QUFB",
        b"!!!",
    ]
) | st.binary(max_size=40)
bodies = (
    json_values.map(lambda value: json.dumps(value).encode())
    | documents.map(lambda value: json.dumps(value).encode())
    | pages.map(lambda value: json.dumps(value).encode())
    | deep_bodies
    | odd_bodies
)
answers = st.tuples(
    st.sampled_from([200, 200, 200, 201, 204, 304, 400, 401, 403, 404, 429, 500, 503]),
    bodies,
    st.sampled_from(["", "0", "86400", "soon", "Wed, 21 Oct 2015 07:28:00 GMT", "9" * 30]),
    st.sampled_from(
        ["application/json", "text/plain", "text/plain; charset=utf-16", "text/html; charset=nope"]
    ),
)

Call = Callable[[DocsRestClient], Awaitable[Any]]
CALLS: dict[str, Call] = {
    "config": lambda client: client.config(),
    "major_version": lambda client: client.major_version(),
    "websocket_url": lambda client: client.websocket_url(),
    "list_documents": lambda client: client.list_documents(max_pages=3),
    "retrieve": lambda client: client.retrieve(DOCUMENT_ID),
    "create_document": lambda client: client.create_document("Title"),
    "load_content": lambda client: client.load_content(DOCUMENT_ID),
    "save_content": lambda client: client.save_content(DOCUMENT_ID, b"\x00\x00"),
    "tree.list_documents": lambda client: client.tree.list_documents(),
    "tree.all_documents": lambda client: client.tree.all_documents(),
    "tree.search": lambda client: client.tree.search("q"),
    "tree.retrieve": lambda client: client.tree.retrieve(DOCUMENT_ID),
    "tree.children": lambda client: client.tree.children(DOCUMENT_ID),
    "tree.descendants": lambda client: client.tree.descendants(DOCUMENT_ID),
    "tree.descendants_shallow": lambda client: client.tree.descendants(DOCUMENT_ID, max_depth=1),
    "tree.tree": lambda client: client.tree.tree(DOCUMENT_ID),
    "tree.ancestors": lambda client: client.tree.ancestors(DOCUMENT_ID),
    "tree.workspace_tree": lambda client: client.tree.workspace_tree(max_depth=2),
    "tree.trash": lambda client: client.tree.trash(),
    "tree.favorites": lambda client: client.tree.favorites(),
    "tree.create": lambda client: client.tree.create("Title", parent=DOCUMENT_ID),
    "tree.update_title": lambda client: client.tree.update_title(DOCUMENT_ID, "Title"),
    "tree.move": lambda client: client.tree.move(DOCUMENT_ID, OTHER_ID),
    "tree.duplicate": lambda client: client.tree.duplicate(DOCUMENT_ID),
    "tree.delete": lambda client: client.tree.delete(DOCUMENT_ID),
    "tree.restore": lambda client: client.tree.restore(DOCUMENT_ID),
    "tree.add_favorite": lambda client: client.tree.add_favorite(DOCUMENT_ID),
}


def use_result(result: Any) -> None:
    """Touch what a caller would: frames, levels, tops, metadata."""
    if isinstance(result, (DocumentList, DocumentTree)):
        result.to_frame()
        list(result)
    if isinstance(result, DocumentTree):
        result.levels()
        result.tops()
    if isinstance(result, DocumentNode):
        result.to_frame()
    if isinstance(result, DocumentInfo):
        result.as_metadata()
        _ = result.can_read, result.can_edit
        check_anonymous_access(result.raw)


async def run_call(call: Call, served: list[tuple[int, bytes, str, str]]) -> None:
    answered = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal answered
        answered += 1
        if answered > MAX_ANSWERED_REQUESTS:
            return httpx.Response(500)
        status, body, retry_after, content_type = served[(answered - 1) % len(served)]
        headers = {"Content-Type": content_type}
        if retry_after:
            headers["Retry-After"] = retry_after
        return httpx.Response(status, content=body, headers=headers)

    credentials = DocsCredentials("session-secret", "csrf-secret", instance=INSTANCE)
    client = DocsRestClient(
        INSTANCE,
        credentials,
        transport=httpx.MockTransport(handler),
        throttle=RequestThrottle(limit=1_000_000),
        retry_backoff=0.0,
        deadline=20.0,
    )
    async with client:
        use_result(await call(client))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(name=st.sampled_from(sorted(CALLS)), served=st.lists(answers, min_size=1, max_size=4))
def test_every_failure_of_the_rest_client_is_typed(
    name: str, served: list[tuple[int, bytes, str, str]]
) -> None:
    try:
        asyncio.run(run_call(CALLS[name], served))
    except ElynavError as error:
        assert error.code and error.code == error.code.upper()
        assert "session-secret" not in str(error) and "csrf-secret" not in str(error)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=json_values | documents | pages, parent_id=st.none() | st.sampled_from([DOCUMENT_ID]))
def test_every_failure_of_the_pure_decoders_is_typed(data: Any, parent_id: str | None) -> None:
    decoders: list[Callable[[], Any]] = [
        lambda: DocumentInfo.from_json(data),
        lambda: DocumentNode.from_json(data, instance=INSTANCE, parent_id=parent_id),
        lambda: nodes_from_nested(data, instance=INSTANCE),
        lambda: check_anonymous_access(data) if isinstance(data, dict) else None,
    ]
    for decode in decoders:
        try:
            result = decode()
            use_result(DocumentTree.from_nodes(result) if isinstance(result, list) else result)
        except ElynavError:
            continue
