"""Structured results on the real CLIs, offline against the fake model API.

claude 2.1.332: ``--json-schema`` -> the model is offered a ``StructuredOutput`` tool whose
``input_schema`` is the schema; its call's input comes back as ``structured_output``; a schema change
between turns restarts claude on the same session (``--resume``) and the conversation goes on.
codex 0.171.0 (app-server ``outputSchema``, exec ``--output-schema FILE``): the schema reaches the
Responses API request as ``text.format`` (``json_schema``, strict); the final message is the JSON.
gemini 0.61.0 has no schema option: the schema is in the prompt the model receives, and we validate.
"""

from __future__ import annotations

import dataclasses
import json
import time
import typing

import pytest
from pydantic import BaseModel

from elynav_nb.agents import AgentRunner
from elynav_nb.sandbox.model_api.fake_model_api import FakeModelApi
from elynav_nb.sandbox.model_api.fake_model_script import NativeToolCall, Reply

from .runner_setups import make_runner
from .setups import plain_workspace
from .test_claude_real import _definition, _environment

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]


class Account(BaseModel):
    name: str
    score: int


class Contact(typing.TypedDict):
    email: str


ROWS = {"result": [{"name": "Acme", "score": 3}, {"name": "Globex", "score": 5}]}


def _structured_tool(request) -> dict:
    [tool] = [tool for tool in request.body["tools"] if tool["name"] == "StructuredOutput"]
    return tool


async def test_claude_a_structured_turn_is_validated_into_data(
    claude_cli, says_version, isolated_home, tmp_path
):
    says_version(claude_cli)
    script = [Reply(text=("Here they are.",), tool_calls=(NativeToolCall("StructuredOutput", ROWS),))]
    async with FakeModelApi(script) as api:
        runner = AgentRunner(
            _definition(tools=("Read",)),
            plain_workspace(tmp_path),
            executable=claude_cli.argv[0],
            fallback_to_standin=False,
            environment=_environment(api, isolated_home),
        )
        async with runner:
            result = await runner.send("the top accounts", output_schema=list[Account])
        requests = api.model_requests("anthropic")
    assert result.outcome == "completed", result.error
    assert result.data == [Account(name="Acme", score=3), Account(name="Globex", score=5)]
    assert list(result.to_frame()["name"]) == ["Acme", "Globex"]
    assert result.ended is not None and result.ended.structured_output == ROWS
    [request] = requests  # claude ends the turn on the tool call itself: no second request
    assert _structured_tool(request)["input_schema"] == result.output_schema.wire_schema


async def test_claude_refuses_a_bad_call_itself_then_we_get_output_invalid(
    claude_cli, says_version, isolated_home, tmp_path
):
    says_version(claude_cli)
    bad = Reply(tool_calls=(NativeToolCall("StructuredOutput", {"email": 5}),))
    async with FakeModelApi([bad] * 5) as api:
        runner = AgentRunner(
            _definition(tools=("Read",)),
            plain_workspace(tmp_path),
            executable=claude_cli.argv[0],
            fallback_to_standin=False,
            environment=_environment(api, isolated_home),
        )
        async with runner:
            result = await runner.send("who", output_schema=Contact)
        requests = api.model_requests("anthropic")
    assert result.outcome == "failed" and result.error_code == "OUTPUT_INVALID" and result.data is None
    assert result.ended is not None and result.ended.subtype == "error_max_structured_output_retries"
    assert len(requests) == 5  # claude asked the model again after each refused call
    assert "Output does not match required schema" in json.dumps(requests[1].body["messages"][-1])


async def test_claude_a_schema_change_restarts_on_the_same_session(
    claude_cli, says_version, isolated_home, tmp_path
):
    says_version(claude_cli)
    script = [
        Reply.say("plain one"),
        Reply.say("plain two"),
        Reply(tool_calls=(NativeToolCall("StructuredOutput", {"email": "a@b.c"}),)),
        Reply.say("plain again"),
    ]
    async with FakeModelApi(script) as api:
        runner = AgentRunner(
            _definition(tools=("Read",)),
            plain_workspace(tmp_path),
            executable=claude_cli.argv[0],
            fallback_to_standin=False,
            environment=_environment(api, isolated_home),
        )
        async with runner:
            first = await runner.send("one")
            pid = runner.pid
            second = await runner.send("two")  # same process: the cost of a turn without restart
            structured = await runner.send("three", output_schema=Contact)
            restarted_pid, argv = runner.pid, list(runner.command_line)
            back = await runner.send("four")
        requests = api.model_requests("anthropic")
    assert [r.outcome for r in (first, second, structured, back)] == ["completed"] * 4, structured.error
    assert structured.data == {"email": "a@b.c"}
    assert restarted_pid != pid and f"--resume={first.session_id}" in argv and "--json-schema" in argv
    assert {r.session_id for r in (first, second, structured, back)} == {first.session_id}
    assert "StructuredOutput" not in requests[1].tool_names and "StructuredOutput" in requests[2].tool_names
    assert "StructuredOutput" not in requests[3].tool_names
    history = json.dumps(requests[3].body["messages"])
    assert "plain one" in history and "three" in history  # the resumed process kept the conversation
    print(
        f"claude {claude_cli.version}: turn without restart {second.duration_s:.2f} s, "
        f"with the --json-schema restart {structured.duration_s:.2f} s, back {back.duration_s:.2f} s"
    )


def _text_format(request) -> dict:
    return request.body.get("text", {}).get("format", {})


async def test_codex_the_schema_reaches_the_request_and_the_final_message_is_validated(
    codex_cli, says_version, isolated_home, tmp_path
):
    says_version(codex_cli)
    for mode in ("app-server", "exec"):
        cli = dataclasses.replace(codex_cli, mode=mode)
        (tmp_path / mode).mkdir()
        answer = json.dumps(ROWS)
        async with FakeModelApi([Reply.say(answer), Reply.say('{"result": [{"name": "x"}]}')]) as api:
            runner = make_runner(cli, api, plain_workspace(tmp_path / mode), isolated_home)
            async with runner:
                good = await runner.send("the top accounts", output_schema=list[Account])
                bad = await runner.send("again", output_schema=list[Account])
            requests = [request for request in api.model_requests("openai") if request.conversational]
        assert good.outcome == "completed", (mode, good.error)
        assert list(good.to_frame()["score"]) == [3, 5]
        assert bad.outcome == "failed" and bad.error_code == "OUTPUT_INVALID" and "score" in bad.error
        assert bad.text.strip() == '{"result": [{"name": "x"}]}'
        text_format = _text_format(requests[0])
        assert text_format.get("type") == "json_schema", (mode, requests[0].body.get("text"))
        sent = text_format["schema"]
        assert sent["required"] == ["result"] and "Account" in json.dumps(sent), (mode, sent)


async def test_gemini_gets_the_schema_in_the_prompt_and_we_validate(
    gemini_cli, says_version, isolated_home, tmp_path
):
    says_version(gemini_cli)
    async with FakeModelApi([Reply.say('{"email": "a@b.c"}'), Reply.say("not JSON, sorry")]) as api:
        runner = make_runner(gemini_cli, api, plain_workspace(tmp_path), isolated_home)
        async with runner:
            good = await runner.send("who to call", output_schema=Contact)
            bad = await runner.send("again", output_schema=Contact)
        requests = [request for request in api.model_requests("gemini") if request.conversational]
    assert good.outcome == "completed" and good.data == {"email": "a@b.c"}, good.error
    assert bad.outcome == "failed" and bad.error_code == "OUTPUT_INVALID" and bad.text == "not JSON, sorry"
    prompt = requests[0].last_user_text
    assert prompt.startswith("who to call") and '"email"' in prompt and "JSON Schema" in prompt
    body = json.dumps(requests[0].body.get("generationConfig", {}))
    assert "responseSchema" not in body and "responseJsonSchema" not in body  # the limitation, asserted
    assert any("no schema option" in note for note in runner.limitations)


async def test_the_restart_cost_on_the_standin(tmp_path):
    """The same restart as on the real claude, on the stand-in (the figure is printed)."""
    runner = AgentRunner(None, plain_workspace(tmp_path), executable="standin")
    async with runner:
        await runner.send("warm up")
        started = time.monotonic()
        await runner.send("no restart")
        plain = time.monotonic() - started
        started = time.monotonic()
        result = await runner.send("restart", output_schema=Contact)
        restarted = time.monotonic() - started
    assert result.outcome == "completed"
    print(f"stand-in: turn without restart {plain:.2f} s, with the --json-schema restart {restarted:.2f} s")
