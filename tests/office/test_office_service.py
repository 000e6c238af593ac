"""The office as a service of its workspace: a second Office attaches to the one serving it, sees the
same board and history, asks in the same FIFO, and what its asks become when it or the host goes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys

import pytest

from elynav_nb.agents.events import TextDelta
from elynav_nb.errors import InvalidInput, OfficeUnreachable
from elynav_nb.office import Office
from elynav_nb.office.client import OfficeClient, Position, Started

from .conftest import FAST_STOP, worker
from .helpers import wait_until

pytestmark = pytest.mark.anyio


async def attach(office: Office) -> Office:
    attached = Office(office.workspace, executable="standin")
    return await asyncio.wait_for(attached.start(), 30)


async def test_a_second_office_attaches_and_shares_the_fifo_board_and_history(make_office):
    host = await make_office([worker("w-a")])
    second = await attach(host)
    try:
        assert second.attachment is not None and host.attachment is None
        assert list(second.employees) == ["w-a"] and "attached" in repr(second)
        first = host.submit("w-a", "@standin slow 3\nfirst")
        assert await wait_until(lambda: first.status == "running")
        from_second = second.submit("w-a", "second")
        assert await wait_until(lambda: from_second.id != "")  # in the host's FIFO once accepted
        third = host.submit("w-a", "third")
        assert await wait_until(lambda: [ask.sender for ask in second.asks] == ["user", "user", "user"])
        assert await wait_until(
            lambda: second.employee("w-a").queue_length == 2 and second.employee("w-a").busy
        )
        replies = await asyncio.wait_for(asyncio.gather(first, from_second, third), 60)
        assert [reply.outcome for reply in replies] == ["done"] * 3
        history = second.history()
        assert list(history["prompt"].str.split().str[-1]) == ["first", "second", "third"]
        assert list(history["ended_at"]) == sorted(history["ended_at"])  # one FIFO: in the order sent
        assert history.equals(host.history())
        assert await wait_until(
            lambda: second.to_frame()["asks_served"].iloc[0] == 3
        )  # snapshots: 0.1 s apart
        assert list(second.to_frame()["agent"]) == ["w-a"]
    finally:
        await second.stop()
    assert host.status == "open"  # leaving does not stop the host


async def test_an_attached_cancel_is_the_users_and_cascades(make_office):
    host = await make_office([worker("w-a"), worker("w-b")])
    second = await attach(host)
    try:
        running = second.submit("w-a", "@standin slow 30\nlong")
        assert await wait_until(lambda: running.status == "running")
        queued = second.submit("w-a", "queued")
        assert await wait_until(lambda: queued.id != "" and host.get_ask(queued.id).status == "queued")
        second.cancel(queued.id)
        reply = await asyncio.wait_for(queued, 20)
        assert reply.outcome == "cancelled" and reply.cancelled_by == "user"
        second.cancel(running)
        assert (await asyncio.wait_for(running, 20)).cancelled_by == "user"
        with pytest.raises(InvalidInput):
            second.cancel(running.id, by="w-b")
    finally:
        await second.stop()


async def test_the_asks_of_an_attached_office_that_leaves_are_cancelled(make_office):
    host = await make_office([worker("w-a")])
    second = await attach(host)
    ask = second.submit("w-a", "@standin slow 30\nlong")
    assert await wait_until(lambda: ask.id != "" and host.get_ask(ask.id).status == "running")
    queued = second.submit("w-a", "queued")
    assert await wait_until(lambda: queued.id != "")
    on_host, queued_on_host = host.get_ask(ask.id), host.get_ask(queued.id)
    await second.stop()  # a kernel that restarts: its connections close
    assert (await asyncio.wait_for(on_host, 20)).outcome == "cancelled"
    reply = await asyncio.wait_for(queued_on_host, 20)
    assert reply.outcome == "cancelled" and "went away" in reply.error


async def test_when_the_host_stops_attached_asks_end_and_the_attachment_says_so(make_office):
    host = await make_office([worker("w-a")])
    second = await attach(host)
    running = second.submit("w-a", "@standin slow 30\nlong")
    queued = second.submit("w-a", "queued")
    assert await wait_until(lambda: queued.id != "" and running.status == "running")
    await host.stop()
    replies = await asyncio.wait_for(asyncio.gather(running, queued), 30)
    assert [reply.outcome for reply in replies] == ["cancelled", "cancelled"]
    assert all("office stopped" in reply.error for reply in replies)
    assert await wait_until(lambda: second.attachment.status == "host gone")
    with pytest.raises(Exception) as caught:
        second.submit("w-a", "anyone?")
    assert getattr(caught.value, "code", "") == "RUNNER_CLOSED"
    await second.stop()


async def test_the_client_streams_place_start_text_and_reply(make_office):
    host = await make_office([worker("w-a")])
    client = OfficeClient.for_workspace(host.workspace)
    blocker = host.submit("w-a", "@standin slow 2\nfirst")
    remote = await client.submit("w-a", "Bonjour")
    updates = [update async for update in remote.updates()]
    await remote.close()
    await blocker
    assert updates[0] == Position(1, "user")
    assert any(isinstance(update, Started) for update in updates)
    text = "".join(update.text for update in updates if isinstance(update, TextDelta))
    assert text.endswith("You said: Bonjour") and updates[-1].ok and updates[-1].text == text


async def test_no_office_for_a_workspace_is_office_unreachable(tmp_path):
    with pytest.raises(OfficeUnreachable):
        OfficeClient.for_workspace(tmp_path)


HOST = """
import asyncio, os, sys
sys.path.insert(0, os.getcwd())
from elynav_nb.office import Office
from tests.office.conftest import worker
async def main():
    office = await Office({workspace!r}, [worker('w-a')], executable='standin').start()
    print(office.socket_path, flush=True)
    await asyncio.sleep(120)
asyncio.run(main())
"""


async def test_a_host_killed_mid_ask_fails_attached_asks_and_the_next_host_marks_them(tmp_path, make_office):
    """The process that hosts the office dies (kill -9): a running and a queued ask of an attached
    kernel end failed OFFICE_UNREACHABLE at once; the next host marks both failed in the history."""
    workspace = tmp_path / "shared"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HOST.format(workspace=str(workspace)),
        stdout=asyncio.subprocess.PIPE,
        cwd=os.getcwd(),
    )
    try:
        await asyncio.wait_for(process.stdout.readline(), 30)
        second = await asyncio.wait_for(Office(workspace, executable="standin").start(), 30)
        running = second.submit("w-a", "@standin slow 60\nlong")
        queued = second.submit("w-a", "queued")
        assert await wait_until(lambda: running.status == "running" and queued.id != "")
        assert await wait_until(lambda: second.employee("w-a").to_row()["cli_pid"] is not None)
        cli_pid = second.employee("w-a").to_row()["cli_pid"]
        process.kill()
        replies = await asyncio.wait_for(asyncio.gather(running, queued), 30)
        assert [reply.error_code for reply in replies] == ["OFFICE_UNREACHABLE"] * 2
        assert await wait_until(lambda: second.attachment.status == "host gone")
        await second.stop()
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    with contextlib.suppress(ProcessLookupError):
        os.kill(cli_pid, signal.SIGKILL)  # the dead host's CLI would finish its turn, then exit
    host = await make_office([worker("w-a")], workspace=workspace, stop_bounds=FAST_STOP)
    history = host.history().set_index("ask_id")
    assert list(history.loc[[running.id, queued.id], "error_code"]) == ["OFFICE_STOPPED"] * 2


async def test_connect_attaches_only(make_office, tmp_path):
    with pytest.raises(OfficeUnreachable):
        await Office.connect(tmp_path / "nobody")
    host = await make_office([worker("w-a")])
    connected = await asyncio.wait_for(Office.connect(host.workspace), 30)
    try:
        assert connected.attachment is not None
        assert (await asyncio.wait_for(connected.ask("w-a", "hi"), 30)).outcome == "done"
    finally:
        await connected.stop()


async def test_elynav_office_serve_runs_headless_until_sigterm(tmp_path):
    workspace = tmp_path / "served"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "elynav_nb.cli",
        "office",
        "serve",
        "--workspace",
        str(workspace),
        "--executable",
        "standin",
        "--agents",
        "elynav-sdr",
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        line = (await asyncio.wait_for(process.stderr.readline(), 30)).decode()
        assert line.startswith(f"elynav office: serving {workspace} (elynav-sdr)")
        attached = await asyncio.wait_for(Office(workspace).start(), 30)
        blocker = attached.submit("sdr", "@standin slow 30\nlong")
        queued = attached.submit("sdr", "queued")
        assert await wait_until(lambda: queued.id != "" and blocker.status == "running")
        process.send_signal(signal.SIGTERM)
        replies = await asyncio.wait_for(asyncio.gather(blocker, queued), 30)
        assert [reply.outcome for reply in replies] == ["cancelled", "cancelled"]
        assert all(reply.error == "the office stopped" for reply in replies)
        assert await asyncio.wait_for(process.wait(), 30) == 0
        await attached.stop()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
