"""``elynav ask`` / ``elynav cancel`` as real subprocesses, and bad input on the office socket."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import socket
import sys
from pathlib import Path

import pytest

from elynav_nb.office.wire import MAX_REQUEST_BYTES, decode_answer

from .conftest import worker
from .helpers import wait_until

pytestmark = pytest.mark.anyio

ELYNAV = [sys.executable, "-m", "elynav_nb.cli"]


async def run_elynav(*arguments: str, socket_path: Path | None, timeout: float = 30.0):
    """Run ``elynav ...`` to completion: (exit code, stdout, stderr)."""
    extra = ["--socket", str(socket_path)] if socket_path is not None else []
    process = await asyncio.create_subprocess_exec(
        *ELYNAV, *arguments, *extra, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=timeout)
    return process.returncode, stdout.decode(), stderr.decode()


async def start_elynav(*arguments: str, socket_path: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *ELYNAV,
        *arguments,
        "--socket",
        str(socket_path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


def raw_request(socket_path: Path, payload: bytes, *, close_after_send: bool = False) -> list[dict]:
    """Send raw bytes to the office socket; the decoded answers until it closes."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(15)
        connection.connect(str(socket_path))
        connection.sendall(payload)
        if close_after_send:
            return []
        connection.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    return [decode_answer(line) for line in data.splitlines()]


async def test_elynav_ask_from_a_subprocess_prints_the_reply_and_exits_zero(make_office):
    office = await make_office([worker("w-a")])
    code, stdout, stderr = await run_elynav(
        "ask", "w-a", "Bonjour", "à", "tous", socket_path=office.socket_path
    )
    assert code == 0, stderr
    assert stdout.strip().endswith("You said: Bonjour à tous")
    history = office.history()
    assert stderr.startswith(f"elynav ask: ask {history['ask_id'].iloc[0]} to w-a")
    assert list(history["sender"]) == ["user"] and list(history["outcome"]) == ["done"]  # no agent above it


@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
async def test_killing_elynav_ask_cancels_its_ask(make_office, signal_number):
    office = await make_office([worker("w-a")])
    process = await start_elynav("ask", "w-a", "@standin slow 20\nlong", socket_path=office.socket_path)
    assert await wait_until(lambda: office.employee("w-a").current is not None)
    ask = office.employee("w-a").current
    process.send_signal(signal_number)
    await asyncio.wait_for(process.communicate(), timeout=30)  # also closes the pipes
    reply = await asyncio.wait_for(ask, timeout=30)
    assert reply.outcome == "cancelled" and "the asking process went away" in reply.error
    assert reply.cancelled_by == "user" and office.employee("w-a").status == "idle"
    if signal_number == signal.SIGINT:
        assert process.returncode == 130
    assert (await office.ask("w-a", "still serving")).outcome == "done"


async def test_the_exit_code_says_the_outcome(make_office):
    office = await make_office([worker("w-a")])
    code, _, stderr = await run_elynav(
        "ask", "w-a", "@standin slow 20\nslow", "--timeout", "0.5", socket_path=office.socket_path
    )
    assert code == 4 and "timeout" in stderr and "AGENT_TIMEOUT" in stderr
    process = await start_elynav("ask", "w-a", "@standin slow 20\nslow", socket_path=office.socket_path)
    assert await wait_until(lambda: office.employee("w-a").current is not None)
    running_id = office.employee("w-a").current.id
    code, stdout, _ = await run_elynav("cancel", running_id, socket_path=office.socket_path)
    assert code == 0 and stdout.strip() == f"ask {running_id}: cancelling"
    _, stderr_bytes = await asyncio.wait_for(process.communicate(), timeout=10)
    assert process.returncode == 3 and "cancelled by user" in stderr_bytes.decode()
    code, stdout, stderr = await run_elynav("ask", "nobody", "hi", socket_path=office.socket_path)
    assert code == 2 and stdout == "" and stderr.startswith("AGENT_NOT_FOUND:")
    code, _, stderr = await run_elynav("ask", "w-a", " ", socket_path=office.socket_path)
    assert code == 2 and stderr.startswith("INVALID_INPUT:")
    code, _, stderr = await run_elynav("cancel", "no-such-ask", socket_path=office.socket_path)
    assert code == 2 and stderr.startswith("ASK_NOT_FOUND:")


async def test_without_an_office_elynav_ask_says_so(tmp_path):
    code, _, stderr = await run_elynav("ask", "w-a", "hi", socket_path=None)
    assert code == 2 and stderr.startswith("OFFICE_UNREACHABLE:") and "ELYNAV_OFFICE_SOCKET" in stderr
    code, _, stderr = await run_elynav("ask", "w-a", "hi", socket_path=tmp_path / "gone.sock")
    assert code == 2 and stderr.startswith("OFFICE_UNREACHABLE:")


async def test_bad_bytes_on_the_socket_get_typed_errors_and_the_office_keeps_serving(make_office):
    office = await make_office([worker("w-a")], max_text_chars=1000)
    path = office.socket_path
    cases = [
        (b"garbage\n", "PROTOCOL_ERROR"),
        (b'{"op": "ask", "agent": "w-a"}\n', "PROTOCOL_ERROR"),  # no text: not a request
        (b'{"op": "ask", "agent": "w-a", "text": ""}\n', "INVALID_INPUT"),
        (b'{"op": "ask", "agent": "w-a", "text": "' + b"x" * 1001 + b'"}\n', "INVALID_INPUT"),
        (b'{"op": "ask", "agent": "nobody", "text": "hi"}\n', "AGENT_NOT_FOUND"),
        (b"x" * (MAX_REQUEST_BYTES + 10), "PROTOCOL_ERROR"),
    ]
    for payload, code in cases:
        answers = await asyncio.to_thread(raw_request, path, payload)
        assert [answer.get("code") for answer in answers] == [code], payload[:60]
    await asyncio.to_thread(raw_request, path, b'{"op": "ask", "agent": "w-a", "te', close_after_send=True)
    await asyncio.sleep(0.2)  # a caller that hung up mid-request queued nothing
    assert office.asks == []
    history = office.history()  # a refused request leaves a row; an undecodable line is only logged
    assert set(history["outcome"]) == {"refused"} and set(history["sender"]) == {"user"}
    assert list(history["error_code"]) == ["INVALID_INPUT", "INVALID_INPUT", "AGENT_NOT_FOUND"]
    assert list(history["agent"]) == ["w-a", "w-a", "nobody"]
    assert office.socket_server.connections_served == len(cases) + 1
    code, stdout, _ = await run_elynav("ask", "w-a", "after all that", socket_path=path)
    assert code == 0 and "You said: after all that" in stdout


async def test_any_undecodable_request_is_answered_protocol_error_and_logged_in_one_line(make_office, caplog):
    office = await make_office([worker("w-a")])
    path = office.socket_path
    undecodable = [
        b"[" * 100_000 + b"]" * 100_000 + b"\n",  # was: no answer, a RecursionError traceback at ERROR
        b'{"op": "ask", "agent": "w-a", "text": ' + b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"}\n",
        b'{"op": "ask", "agent": "w-a", "text": "hi", "timeout": 1' + b"0" * 400 + b"}\n",  # beyond a float
        b'{"op": "ask", "agent": "w-a", "text": "caf\xe9"}\n',  # Latin-1, not UTF-8
        b'{"op": "ask", "agent": "w-a", "text": "\\ud800"}\n',  # a lone surrogate
        b'"ask w-a hi"\n',
        b'{"op": "ask", "agent": ["w-a"], "text": "hi"}\n',
        b'{"op": "ask", "agent": "w-a", "text": "hi", "timeout": "soon"}\n',
        b'{"op": "cancel", "ask_id": 5}\n',
    ]
    with caplog.at_level(logging.DEBUG):
        for payload in undecodable:
            answers = await asyncio.to_thread(raw_request, path, payload)
            assert [(answer["type"], answer["code"]) for answer in answers] == [
                ("error", "PROTOCOL_ERROR")
            ], payload[:60]
    socket_records = [record for record in caplog.records if record.name == "elynav_nb.office.socket_server"]
    assert len(socket_records) == len(undecodable)  # one line per refused request
    for record in socket_records:
        assert record.levelno == logging.WARNING and record.exc_info is None
        assert record.getMessage().startswith("office socket: refused a request from ")
        assert "\n" not in record.getMessage()
    assert [record for record in caplog.records if record.levelno >= logging.ERROR] == []
    assert office.asks == [] and office.socket_server.connections_served == len(undecodable)
    code, stdout, _ = await run_elynav("ask", "w-a", "still serving", socket_path=path)
    assert code == 0 and "You said: still serving" in stdout


async def test_the_socket_lives_in_a_private_directory(make_office):
    office = await make_office([worker("w-a")])
    assert (office.socket_path.parent.stat().st_mode & 0o777) == 0o700
    assert (office.socket_path.stat().st_mode & 0o777) == 0o600
    runner_environment = office.employee("w-a").runner.environment_overrides
    assert runner_environment["ELYNAV_OFFICE_SOCKET"] == str(office.socket_path)
    assert len(runner_environment["ELYNAV_OFFICE_TOKEN"]) == 32
    assert shutil.which("elynav", path=runner_environment.get("PATH", os.environ["PATH"])) is not None
    assert runner_environment["BASH_DEFAULT_TIMEOUT_MS"] == str(int(office.ask_timeout * 1000))
