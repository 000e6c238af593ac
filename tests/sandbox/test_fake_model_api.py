"""The fake model API: each wire format, the script, the records, errors and cut streams (no CLI needed)."""

from __future__ import annotations

import json

import httpx
import pytest

from elynav_nb.errors import InvalidInput, OperationTimeout
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import (
    McpCall,
    ModelScript,
    NativeToolCall,
    Reply,
    ShellCall,
)

pytestmark = pytest.mark.anyio


def sse_events(body: str) -> list[dict]:
    """The JSON ``data:`` payloads of an SSE body (either line ending)."""
    return [
        json.loads(line[len("data: ") :])
        for line in body.replace("\r\n", "\n").split("\n")
        if line.startswith("data: ")
    ]


ANTHROPIC_REQUEST = {
    "model": "claude-test",
    "stream": True,
    "system": [{"type": "text", "text": "You are the agent."}],
    "tools": [{"name": "Bash"}, {"name": "mcp__crm__search_accounts"}],
    "messages": [{"role": "user", "content": [{"type": "text", "text": "hello there"}]}],
}
OPENAI_REQUEST = {
    "model": "gpt-test",
    "stream": True,
    "instructions": "",
    "input": [
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "You are the agent."}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello there"}]},
    ],
    "tools": [{"type": "function", "name": "exec_command"}, {"type": "web_search"}],
}
GEMINI_REQUEST = {
    "contents": [
        {"role": "user", "parts": [{"text": "<session_context>x</session_context>"}, {"text": "hello there"}]}
    ],
    "systemInstruction": {"parts": [{"text": "You are the agent."}]},
    "tools": [{"functionDeclarations": [{"name": "run_shell_command"}, {"name": "mcp_crm_search_accounts"}]}],
}
GEMINI_PATH = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"


async def test_the_three_apis_stream_one_reply_each_and_requests_are_recorded():
    script = [Reply.say("Hel", "lo.", thinking="hmm")] * 3
    async with FakeModelApi(script) as api, httpx.AsyncClient(base_url=api.url) as client:
        anthropic = await client.post(
            "/v1/messages?beta=true", json=ANTHROPIC_REQUEST, headers={"x-api-key": "sk-secret"}
        )
        openai = await client.post(
            "/v1/responses", json=OPENAI_REQUEST, headers={"authorization": "Bearer sk-secret"}
        )
        gemini = await client.post(GEMINI_PATH, json=GEMINI_REQUEST, headers={"x-goog-api-key": "secret"})
        requests = api.requests
        assert api.script.remaining == 0 and api.streams_finished == 3

    assert anthropic.headers["content-type"].startswith("text/event-stream")
    events = sse_events(anthropic.text)
    assert next(event["type"] for event in events) == "message_start" and events[-1]["type"] == "message_stop"
    deltas = [event["delta"] for event in events if event["type"] == "content_block_delta"]
    assert [delta.get("text") for delta in deltas if delta["type"] == "text_delta"] == ["Hel", "lo."]
    assert [delta["thinking"] for delta in deltas if delta["type"] == "thinking_delta"] == ["hmm"]

    events = sse_events(openai.text)
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"
    assert [event["delta"] for event in events if event["type"] == "response.output_text.delta"] == [
        "Hel",
        "lo.",
    ]
    done = [event["item"] for event in events if event["type"] == "response.output_item.done"]
    assert [item["type"] for item in done] == ["reasoning", "message"]
    assert done[1]["content"][0]["text"] == "Hello."

    chunks = sse_events(gemini.text)
    parts = [part for chunk in chunks for part in chunk["candidates"][0]["content"]["parts"]]
    assert parts == [{"text": "hmm", "thought": True}, {"text": "Hel"}, {"text": "lo."}]
    assert (
        chunks[-1]["candidates"][0]["finishReason"] == "STOP"
        and chunks[-1]["usageMetadata"]["promptTokenCount"] == 100
    )
    assert "\r\n\r\n" in gemini.text

    assert [request.api for request in requests] == ["anthropic", "openai", "gemini"]
    assert [request.reply_index for request in requests] == [0, 1, 2]
    for request in requests:
        assert request.system_prompt == "You are the agent." and request.last_user_text == "hello there"
    assert requests[0].tool_names == ("Bash", "mcp__crm__search_accounts")
    assert requests[1].tool_names == ("exec_command", "web_search") and requests[1].model == "gpt-test"
    assert requests[2].model == "gemini-test" and requests[2].tool_names == (
        "run_shell_command",
        "mcp_crm_search_accounts",
    )
    assert "secret" not in repr(requests) and requests[0].headers["x-api-key"] == "[redacted]"


async def test_tool_calls_become_each_clis_own_tools():
    calls = (
        ShellCall("echo hi"),
        McpCall("crm", "get_account", {"account_id": 1}),
        NativeToolCall("Read", {"file_path": "a"}),
    )
    async with (
        FakeModelApi([Reply(tool_calls=calls)] * 2) as api,
        httpx.AsyncClient(base_url=api.url) as client,
    ):
        anthropic = sse_events((await client.post("/v1/messages", json=ANTHROPIC_REQUEST)).text)
        gemini = sse_events((await client.post(GEMINI_PATH, json=GEMINI_REQUEST)).text)

    starts = [event["content_block"] for event in anthropic if event["type"] == "content_block_start"]
    assert [block["name"] for block in starts] == ["Bash", "mcp__crm__get_account", "Read"]
    inputs = [
        json.loads(event["delta"]["partial_json"])
        for event in anthropic
        if event["type"] == "content_block_delta"
    ]
    assert inputs[0]["command"] == "echo hi" and inputs[1] == {"account_id": 1}
    assert (
        next(event for event in anthropic if event["type"] == "message_delta")["delta"]["stop_reason"]
        == "tool_use"
    )
    function_calls = [part["functionCall"] for part in gemini[-1]["candidates"][0]["content"]["parts"]]
    assert [call["name"] for call in function_calls] == ["run_shell_command", "mcp_crm_get_account", "Read"]


async def test_codex_searches_for_a_deferred_mcp_tool_before_calling_it():
    script = [Reply.mcp("crm", "search_accounts", {"query": "x"}), Reply.say("done")]
    async with FakeModelApi(script) as api, httpx.AsyncClient(base_url=api.url) as client:
        first = sse_events((await client.post("/v1/responses", json=OPENAI_REQUEST)).text)
        [search] = [event["item"] for event in first if event["type"] == "response.output_item.done"]
        assert search["type"] == "tool_search_call" and search["arguments"] == {"query": "search_accounts"}
        assert api.script.remaining == 2  # the reply waits for the search result
        found = {
            "type": "namespace",
            "name": "mcp__crm",
            "tools": [{"type": "function", "name": "search_accounts"}],
        }
        second_body = {
            **OPENAI_REQUEST,
            "input": [
                *OPENAI_REQUEST["input"],
                {**search},
                {"type": "tool_search_output", "call_id": search["call_id"], "tools": [found]},
            ],
        }
        second = sse_events((await client.post("/v1/responses", json=second_body)).text)
        [call] = [event["item"] for event in second if event["type"] == "response.output_item.done"]
        assert (
            call["type"] == "function_call"
            and call["namespace"] == "mcp__crm"
            and call["name"] == "search_accounts"
        )
        assert json.loads(call["arguments"]) == {"query": "x"}
        assert api.script.remaining == 1
        assert "mcp__crm__search_accounts" in api.requests[1].tool_names


async def test_an_unanswered_search_does_not_loop_forever():
    async with FakeModelApi([Reply.mcp("crm", "nope")]) as api, httpx.AsyncClient(base_url=api.url) as client:
        search = next(
            e["item"]
            for e in sse_events((await client.post("/v1/responses", json=OPENAI_REQUEST)).text)
            if "item" in e
        )
        body = {
            **OPENAI_REQUEST,
            "input": [
                *OPENAI_REQUEST["input"],
                search,
                {"type": "tool_search_output", "call_id": search["call_id"], "tools": []},
            ],
        }
        items = [
            e["item"] for e in sse_events((await client.post("/v1/responses", json=body)).text) if "item" in e
        ]
    assert [item["type"] for item in items] == ["function_call"]  # the CLI refuses it; the script moves on


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        (
            "/v1/messages",
            ANTHROPIC_REQUEST,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
        ),
        (
            "/v1/responses",
            OPENAI_REQUEST,
            {"error": {"message": "slow down", "type": "invalid_request_error", "code": None}},
        ),
        (
            GEMINI_PATH,
            GEMINI_REQUEST,
            {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}},
        ),
    ],
)
async def test_http_errors_use_each_apis_error_body(path, body, expected):
    async with (
        FakeModelApi([Reply.http_error(429, "slow down")]) as api,
        httpx.AsyncClient(base_url=api.url) as client,
    ):
        response = await client.post(path, json=body)
    assert response.status_code == 429 and response.json() == expected


async def test_a_cut_stream_drops_the_connection_after_the_given_frames():
    async with (
        FakeModelApi([Reply.cut("a", "b", "c", after_frames=2)]) as api,
        httpx.AsyncClient(base_url=api.url) as client,
    ):
        received = []
        with pytest.raises(httpx.RemoteProtocolError):
            async with client.stream("POST", GEMINI_PATH, json=GEMINI_REQUEST) as response:
                async for chunk in response.aiter_text():
                    received.append(chunk)
        assert len(sse_events("".join(received))) == 2
        # the server keeps serving after a cut
        assert (await client.post(GEMINI_PATH, json=GEMINI_REQUEST)).status_code == 200


async def test_side_requests_get_fixed_answers_and_leave_the_script_alone():
    schema = {
        "type": "object",
        "properties": {"complexity_reasoning": {"type": "string"}, "complexity_score": {"type": "integer"}},
    }
    router_body = {**GEMINI_REQUEST, "generationConfig": {"responseJsonSchema": schema}}
    async with FakeModelApi([Reply.say("scripted")]) as api, httpx.AsyncClient(base_url=api.url) as client:
        router = await client.post("/v1beta/models/gemini-lite:generateContent", json=router_body)
        tokens = await client.post("/v1/messages/count_tokens", json=ANTHROPIC_REQUEST)
        unstreamed = await client.post("/v1/messages", json={**ANTHROPIC_REQUEST, "stream": False})
        models = await client.get("/v1/models")
        unknown = await client.get("/nothing/here")
        assert api.script.remaining == 1 and api.model_requests() == []
        assert [request.api for request in api.requests] == [
            "gemini",
            "anthropic",
            "anthropic",
            "other",
            "other",
        ]
    answer = json.loads(router.json()["candidates"][0]["content"]["parts"][0]["text"])
    assert answer == {"complexity_reasoning": "fake", "complexity_score": 1}
    assert tokens.json() == {"input_tokens": 100}
    assert unstreamed.json()["content"][0]["text"] == "OK."
    assert models.status_code == 200 and unknown.status_code == 404


async def test_an_empty_script_answers_the_default_reply_and_a_chooser_goes_first():
    def chooser(request):
        return Reply.say("chosen") if "pick me" in request.last_user_text else None

    pick_me = {**ANTHROPIC_REQUEST, "messages": [{"role": "user", "content": "pick me"}]}
    async with (
        FakeModelApi([Reply.say("queued")], chooser=chooser) as api,
        httpx.AsyncClient(base_url=api.url) as client,
    ):
        texts = []
        for body in (pick_me, ANTHROPIC_REQUEST, ANTHROPIC_REQUEST):
            events = sse_events((await client.post("/v1/messages", json=body)).text)
            texts.append("".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta"))
        assert [request.reply_index for request in api.requests] == [None, 0, None]
    assert texts == ["chosen", "queued", "OK."]


async def test_waiting_for_requests_is_bounded():
    async with FakeModelApi() as api, httpx.AsyncClient(base_url=api.url) as client:
        await client.post("/v1/responses", json=OPENAI_REQUEST)
        assert len(await api.wait_for_requests(1, timeout=5)) == 1
        with pytest.raises(OperationTimeout):
            await api.wait_for_requests(2, timeout=0.2)


def test_a_synchronous_caller_runs_it_on_its_own_thread():
    with FakeModelApi([Reply.say("from a thread")]) as api:
        response = httpx.post(f"{api.openai_base_url}/responses", json=OPENAI_REQUEST)
        assert "from a thread" in response.text
        assert repr(api).startswith(f"<FakeModelApi {api.url} requests=1")
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{api.url}/v1/responses", json=OPENAI_REQUEST, timeout=2)


def test_bad_scripts_are_refused_early():
    with pytest.raises(InvalidInput):
        Reply(text="not a tuple")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        Reply(chunk_delay=-1)
    with pytest.raises(InvalidInput):
        ModelScript(["text"])  # type: ignore[list-item]
    with pytest.raises(InvalidInput):
        FakeModelApi().url  # noqa: B018 - not started
