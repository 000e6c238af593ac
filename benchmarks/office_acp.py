"""The office as a service: a turn through ``elynav acp``, and 100 asks from three clients at once.

Where it sits: a plain benchmark script (not a test). The office is hosted in this process on the
embedded claude stand-in (``executable="standin"``), one employee ``w-a``.

1. ``turn``: one turn of the employee, two ways, alternating in blocks:
     direct  the employee's own runner called directly: ``await employee.runner.send(text)`` (the floor)
     acp     the same turn as a chat sends it: the official ACP SDK's client -> ``elynav acp --agent w-a``
             (attached to this office) -> the office socket (a streamed ask) -> the same runner, every
             text delta back as a ``session/update`` to the client
   Three turns: a short one (one sentence: the fixed cost of the two extra hops), a long one
   (``@standin flood N``: N text deltas as fast as the stand-in writes them: the cost per delta), and a
   paced one (``@standin slow 2``: the answer streamed over 2 s, as a model streams it).
   Printed: ms per turn (median), the share of the floor (direct / acp; goal >= 0.9).
2. ``codec``: the agent side's cost per ``session/update``: the SDK (a typed ``AgentMessageChunk`` +
   ``SessionNotification``, dumped by alias, ``json.dumps``: what ``elynav acp`` does) against a plain
   dict and ``json.dumps`` (what an own codec would do), and ``import acp`` in a fresh process.
3. ``clients``: 100 asks at once from three clients: two "kernels" (each a process with an ``Office``
   attached to this one, ``submit`` x 33) and "the chat" (``elynav acp`` driven by the SDK client,
   34 prompts on 34 sessions at once). Checked: every ask answered, and the employee started them in
   exactly the order the office queued them (a listener records both). Printed: the total, and the
   overhead per ask against 100 sequential ``runner.send`` on the same runner (office_queue.py's
   figure for in-process asks: +105 µs per ask).

Run:  python benchmarks/office_acp.py [--turns 20] [--flood 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from office_common import isolated_standin_home, processes_left, report_processes_left, run_script, worker

AGENT = "w-a"
KERNEL = """
import asyncio, sys, time
from elynav_nb.office import Office
async def main():
    office = await Office(sys.argv[1]).start()
    print("ready", flush=True)
    sys.stdin.readline()
    asks = [office.submit("w-a", f"{sys.argv[2]} {i}") for i in range(int(sys.argv[3]))]
    replies = await asyncio.gather(*asks)
    print(sum(reply.ok for reply in replies), flush=True)
    await office.stop()
asyncio.run(main())
"""


async def acp_client(workspace: Path) -> tuple[Any, Any, Any]:
    """``elynav acp --agent w-a`` and the SDK client connected to it (the process, the connection, the client)."""
    import acp

    class Client:
        def __init__(self) -> None:
            self.chunks = 0

        def on_connect(self, connection: Any) -> None:
            return None

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            self.chunks += 1

        async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
            raise acp.RequestError.method_not_found("session/request_permission")

    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "elynav_nb.cli",
        "acp",
        "--agent",
        AGENT,
        "--workspace",
        str(workspace),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,
    )
    client = Client()
    assert process.stdin is not None and process.stdout is not None
    connection = acp.connect_to_agent(client, process.stdin, process.stdout)
    await connection.initialize(protocol_version=1)
    return process, connection, client


async def stop_process(process: Any, connection: Any = None) -> None:
    if connection is not None:
        await connection.close()
    if process.returncode is None:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 20)
        except TimeoutError:
            process.kill()
            await process.wait()


async def turns(workspace: Path, office: Any, count: int, flood: int, repeat: int) -> None:
    from acp import schema

    runner = office.employee(AGENT).runner
    process, connection, _client = await acp_client(workspace)
    session_id = (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
    try:
        for label, text, rounds in (
            ("short", "Bonjour", count),
            (f"flood {flood}", f"@standin flood {flood}\nx", count),
            ("paced 2 s", "@standin slow 2\na paced answer, as a model streams it", max(1, count // 5)),
        ):
            direct: list[float] = []
            through: list[float] = []
            await runner.send(text)  # warm both paths
            await connection.prompt(
                session_id=session_id, prompt=[schema.TextContentBlock(type="text", text=text)]
            )
            for _ in range(repeat):
                for _ in range(rounds):
                    started = time.perf_counter()
                    result = await runner.send(text)
                    direct.append(time.perf_counter() - started)
                    assert result.outcome == "completed"
                for _ in range(rounds):
                    started = time.perf_counter()
                    answer = await connection.prompt(
                        session_id=session_id, prompt=[schema.TextContentBlock(type="text", text=text)]
                    )
                    through.append(time.perf_counter() - started)
                    assert answer.stop_reason == "end_turn"
            ours, floor = statistics.median(through), statistics.median(direct)
            print(
                f"turn {label:>11}: direct {floor * 1000:7.2f} ms  elynav acp {ours * 1000:7.2f} ms  "
                f"share of the floor {floor / ours:.2f}  (+{(ours - floor) * 1000:.2f} ms a turn)"
            )
    finally:
        await stop_process(process, connection)


def codec(messages: int) -> None:
    import acp
    from acp import schema

    text = "a few words of the answer "
    started = time.perf_counter()
    for _ in range(messages):
        notification = schema.SessionNotification(session_id="s", update=acp.update_agent_message_text(text))
        json.dumps(notification.model_dump(mode="json", by_alias=True, exclude_none=True))
    sdk = (time.perf_counter() - started) / messages
    started = time.perf_counter()
    for _ in range(messages):
        json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": "s",
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": text},
                    },
                },
            }
        )
    plain = (time.perf_counter() - started) / messages
    imports = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import acp"], check=True)
        imports.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        imports[-1] -= time.perf_counter() - started
    print(
        f"codec: a session/update through the SDK {sdk * 1e6:.1f} µs, a plain dict {plain * 1e6:.1f} µs "
        f"({sdk / plain:.1f}x); import acp {statistics.median(imports) * 1000:.0f} ms"
    )


async def clients(workspace: Path, office: Any, total: int) -> None:
    from acp import schema

    runner = office.employee(AGENT).runner
    started = time.perf_counter()
    for index in range(total):
        await runner.send(f"floor {index}")
    floor = time.perf_counter() - started

    queued: list[str] = []
    begun: list[str] = []

    def listen(event: str, ask: Any) -> None:
        if event == "queued":
            queued.append(ask.id)
        elif event == "started":
            begun.append(ask.id)

    each = total // 3
    kernels = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            KERNEL,
            str(workspace),
            f"kernel{number}",
            str(each),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        for number in (1, 2)
    ]
    for kernel in kernels:
        assert (await asyncio.wait_for(kernel.stdout.readline(), 60)).strip() == b"ready"
    process, connection, _client = await acp_client(workspace)
    chat_count = total - 2 * each
    sessions = [
        (await connection.new_session(cwd=str(workspace), mcp_servers=[])).session_id
        for _ in range(chat_count)
    ]
    office.add_listener(listen)
    try:
        started = time.perf_counter()
        for kernel in kernels:
            kernel.stdin.write(b"go\n")
            await kernel.stdin.drain()
        chat = asyncio.gather(
            *(
                connection.prompt(
                    session_id=session, prompt=[schema.TextContentBlock(type="text", text=f"chat {index}")]
                )
                for index, session in enumerate(sessions)
            )
        )
        answers = await asyncio.wait_for(chat, 600)
        answered = [
            int((await asyncio.wait_for(kernel.stdout.readline(), 600)).strip()) for kernel in kernels
        ]
        elapsed = time.perf_counter() - started
    finally:
        office.remove_listener(listen)
        await stop_process(process, connection)
        for kernel in kernels:
            await asyncio.wait_for(kernel.wait(), 60)
    done = sum(answer.stop_reason == "end_turn" for answer in answers) + sum(answered)
    fifo = queued == begun and len(queued) == total
    print(
        f"clients: {total} asks from two kernels and the chat: {elapsed:.2f} s, {done}/{total} answered, "
        f"exact FIFO {'yes' if fifo else 'NO'}; {total} runner.send {floor:.2f} s; "
        f"overhead per ask {(elapsed - floor) / total * 1e6:+.0f} µs (office_queue.py, in-process: +105 µs)"
    )


async def main(arguments: argparse.Namespace) -> int:
    from elynav_nb.office import Office

    with isolated_standin_home("elynav-office-acp-") as folder:
        workspace = folder / "workspace"
        office = await Office(workspace, [worker(AGENT)], executable="standin").start()
        try:
            await office.ask(AGENT, "warm up")
            await turns(workspace, office, arguments.turns, arguments.flood, arguments.repeat)
            await clients(workspace, office, arguments.asks)
        finally:
            await office.stop()
    codec(arguments.messages)
    report_processes_left(processes_left())
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--flood", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--asks", type=int, default=100)
    parser.add_argument("--messages", type=int, default=20000)
    run_script(lambda: asyncio.run(main(parser.parse_args())))
