"""Who calls the office socket: identified (the office's process, ancestry, an agent's token, the user
token) or refused ``CALLER_UNKNOWN``; never the user by default (issue 28, item 2).

The hostile caller is real: a process connects to the socket, forks, and its connecting parent exits;
the child, re-parented, sends the request on the inherited connection.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from elynav_nb.agents import AgentDefinition
from elynav_nb.office.wire import encode_cancel_request
from elynav_nb.office.workspace import USER_TOKEN_FILE

from .conftest import worker
from .helpers import wait_until
from .test_office_socket import run_elynav

pytestmark = pytest.mark.anyio

FORKER = r"""
import os, socket, sys, time
path, request, out = sys.argv[1], sys.argv[2], sys.argv[3]
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
connection.connect(path)
parent = os.getpid()
if os.fork() > 0:
    os._exit(0)  # the process that connected leaves; its child keeps the connection
deadline = time.monotonic() + 10
while os.getppid() == parent and time.monotonic() < deadline:
    time.sleep(0.01)
connection.settimeout(15)
connection.sendall(request.encode() + b"\n")
connection.shutdown(socket.SHUT_WR)
data = b""
while chunk := connection.recv(65536):
    data += chunk
with open(out + ".part", "wb") as handle:
    handle.write(data)
os.rename(out + ".part", out)
"""


def shell_worker(name: str) -> AgentDefinition:
    """A test agent whose Bash may run any command (the forker)."""
    return AgentDefinition(
        name=name, description=f"test agent {name}", tools=("Bash",), prompt=f"You are {name}."
    )


async def forked_request(
    tmp_path: Path, socket_path: Path, request: bytes, *, environment: dict[str, str]
) -> dict:
    """Run the forker with ``environment``; the office's answer to its child."""
    script = tmp_path / "forker.py"
    script.write_text(FORKER)
    out = tmp_path / f"answer-{os.urandom(4).hex()}.json"
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(socket_path), request.decode().strip(), str(out), env=environment
    )
    assert await asyncio.wait_for(process.wait(), 15) == 0  # the parent left at once
    assert await wait_until(out.exists, timeout=20)
    return json.loads(out.read_text().splitlines()[0])


def environment_without_tokens() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("ELYNAV_OFFICE_")}


async def users_running_ask(office):
    ask = office.submit("w-b", "@standin slow 30\nlong work")
    assert await wait_until(lambda: ask.status == "running")
    return ask


async def test_a_forked_child_of_an_agent_is_that_agent_not_the_user(make_office, tmp_path):
    office = await make_office([worker("w-a"), worker("w-b")])
    ask = await users_running_ask(office)
    environment = {**environment_without_tokens(), "ELYNAV_OFFICE_TOKEN": office.employee("w-a").token}
    answer = await forked_request(
        tmp_path, office.socket_path, encode_cancel_request(ask.id), environment=environment
    )
    assert answer["type"] == "error" and answer["code"] == "NOT_ALLOWED", answer
    assert "w-a may not cancel" in answer["message"]
    assert ask.status == "running" and not ask.cancelling
    refused = office.history().query("outcome == 'refused'")
    assert list(refused["sender"]) == ["w-a"] and list(refused["target_id"]) == [ask.id]
    office.cancel(ask)
    assert (await ask).cancelled_by == "user"


async def test_a_forked_caller_with_no_token_is_refused_caller_unknown(make_office, tmp_path):
    office = await make_office([worker("w-a"), worker("w-b")])
    ask = await users_running_ask(office)
    answer = await forked_request(
        tmp_path, office.socket_path, encode_cancel_request(ask.id), environment=environment_without_tokens()
    )
    assert answer["type"] == "error" and answer["code"] == "CALLER_UNKNOWN", answer
    assert ask.status == "running" and not ask.cancelling
    office.cancel(ask)
    await ask


async def test_a_forked_caller_that_gives_the_user_token_is_the_user(make_office, tmp_path):
    office = await make_office([worker("w-a"), worker("w-b")])
    ask = await users_running_ask(office)
    token = (office.socket_path.parent / USER_TOKEN_FILE).read_text()
    assert (
        token == office.user_token
        and oct(os.stat(office.socket_path.parent / USER_TOKEN_FILE).st_mode)[-3:] == "600"
    )
    request = encode_cancel_request(ask.id, token=token)
    answer = await forked_request(
        tmp_path, office.socket_path, request, environment=environment_without_tokens()
    )
    assert answer["type"] == "cancelled", answer
    reply = await ask
    assert reply.outcome == "cancelled" and reply.cancelled_by == "user"


async def test_an_agents_tool_that_forks_away_keeps_the_agents_rights(make_office, tmp_path):
    """The issue's scenario end to end: agent w-a's own Bash runs the forker (its CLI's token in its environment)."""
    office = await make_office([shell_worker("w-a"), worker("w-b")])
    ask = await users_running_ask(office)
    script = tmp_path / "forker.py"
    script.write_text(FORKER)
    out = tmp_path / "agent-answer.json"
    request = encode_cancel_request(ask.id).decode().strip()
    command = f"{sys.executable} {script} $ELYNAV_OFFICE_SOCKET '{request}' {out}"
    reply = await asyncio.wait_for(office.ask("w-a", f"@standin bash {command}"), 60)
    assert reply.outcome == "done", reply.error
    assert await wait_until(out.exists, timeout=20)
    answer = json.loads(out.read_text().splitlines()[0])
    assert answer["type"] == "error" and answer["code"] == "NOT_ALLOWED", answer
    assert ask.status == "running"
    office.cancel(ask)
    assert (await ask).cancelled_by == "user"


async def test_elynav_ask_from_a_terminal_without_the_token_file_is_refused(make_office, tmp_path):
    office = await make_office([worker("w-a")])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "office.sock").symlink_to(office.socket_path)  # the socket, without the token beside it
    code, stdout, stderr = await run_elynav("ask", "w-a", "hello", socket_path=elsewhere / "office.sock")
    assert code == 2 and stdout == ""
    assert stderr.startswith("CALLER_UNKNOWN:")
    assert office.history().empty or "w-a" not in set(office.history().query("outcome != 'refused'")["agent"])


async def test_a_request_from_the_office_process_is_the_users(make_office):
    office = await make_office([worker("w-a")])
    caller = office.identify([os.getpid()])
    assert caller.is_user and caller.via == "office"
