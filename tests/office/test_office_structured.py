"""Structured answers through the office: ``office.ask(..., output_schema=)`` and ``elynav ask --schema FILE``.

On the stand-in (``@standin json <text>`` chooses its ``StructuredOutput`` value): the validated data on
the ``Reply`` and its rows, ``OUTPUT_INVALID`` with the raw answer kept, a bad schema refused before
anything is queued, and the command printing the validated JSON.
"""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, field_validator

from elynav_nb.errors import InvalidInput, OutputInvalid

from .conftest import worker
from .test_office_socket import run_elynav

pytestmark = pytest.mark.anyio


class Lead(BaseModel):
    name: str
    score: int

    @field_validator("score")
    @classmethod
    def positive(cls, value: int) -> int:
        if value < 0:
            raise ValueError("a score is never negative")
        return value


LEADS = {"result": [{"name": "Acme", "score": 3}, {"name": "Globex", "score": 5}]}


async def test_office_ask_gives_validated_data_and_rows(make_office):
    office = await make_office([worker("w-a")])
    reply = await office.ask("w-a", f"the leads\n@standin json {json.dumps(LEADS)}", output_schema=list[Lead])
    assert reply.ok, reply.error
    assert reply.data == [Lead(name="Acme", score=3), Lead(name="Globex", score=5)]
    assert list(reply.to_frame()["name"]) == ["Acme", "Globex"]


async def test_office_ask_with_an_invalid_answer_fails_output_invalid(make_office):
    office = await make_office([worker("w-a")])
    reply = await office.ask("w-a", '@standin json {"name": "Acme", "score": -1}', output_schema=Lead)
    assert reply.outcome == "failed" and reply.error_code == "OUTPUT_INVALID" and reply.data is None
    assert "never negative" in reply.error
    with pytest.raises(OutputInvalid):
        reply.raise_for_outcome()
    plain = await office.ask("w-a", "and now in words")  # the same employee goes on, without a schema
    assert plain.ok and plain.data is None and "kind" in plain.to_frame().columns


async def test_office_refuses_a_bad_schema_before_queueing(make_office):
    office = await make_office([worker("w-a")])
    with pytest.raises(InvalidInput):
        office.submit("w-a", "hi", output_schema={"type": "bogus"})
    assert office.history().empty


async def test_elynav_ask_schema_prints_the_validated_json(make_office, tmp_path):
    office = await make_office([worker("w-a")])
    schema_file = tmp_path / "lead.json"
    schema_file.write_text(json.dumps(Lead.model_json_schema()))
    code, stdout, stderr = await run_elynav(
        "ask",
        "w-a",
        '@standin json {"name": "Acme", "score": 7}',
        "--schema",
        str(schema_file),
        socket_path=office.socket_path,
    )
    assert code == 0, stderr
    assert json.loads(stdout) == {"name": "Acme", "score": 7}
    code, stdout, stderr = await run_elynav(
        "ask",
        "w-a",
        '@standin json {"name": 3}',
        "--schema",
        str(schema_file),
        socket_path=office.socket_path,
    )
    assert code == 1 and stdout == "" and "OUTPUT_INVALID" in stderr


async def test_elynav_ask_refuses_a_schema_file_that_is_no_schema(make_office, tmp_path):
    office = await make_office([worker("w-a")])
    not_json = tmp_path / "bad.json"
    not_json.write_text("{nope")
    code, stdout, stderr = await run_elynav(
        "ask", "w-a", "hi", "--schema", str(not_json), socket_path=office.socket_path
    )
    assert code == 2 and stdout == "" and "INVALID_INPUT" in stderr
    bad_schema = tmp_path / "bogus.json"
    bad_schema.write_text('{"type": "bogus"}')
    code, stdout, stderr = await run_elynav(
        "ask", "w-a", "hi", "--schema", str(bad_schema), socket_path=office.socket_path
    )
    assert code == 2 and "INVALID_INPUT" in stderr and "not a valid JSON Schema" in stderr
