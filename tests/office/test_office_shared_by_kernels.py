"""One office shared by two real kernels and a terminal; a kernel restarted with asks queued.

Kernel A hosts the office (``Office(".").start()``), kernel B attaches to it with the same call, a
terminal asks through ``elynav ask``: one FIFO, one board, one history. Then kernel B restarts with
asks queued (they are cancelled: nobody waits for them any more), and kernel A restarts while B's new
asks wait (they fail ``OFFICE_UNREACHABLE`` at once; the next office marks them in the history).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.kernel import Kernel

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HOST = """
import os
os.chdir({workspace!r})
from elynav_nb.office import Office
office = await Office(".", ["elynav-sdr"], executable="standin").start()
print("HOST", office.attachment is None)
"""

ATTACH = """
import os
os.chdir({workspace!r})
from elynav_nb.office import Office
office = await Office(".").start()
print("ATTACHED", office.attachment is not None, list(office.employees))
"""


def wait_for(kernel: Kernel, code: str, expected: str, timeout: float = 60.0) -> list[str]:
    """Run ``code`` in ``kernel`` until a stdout line holds ``expected`` (bounded)."""
    deadline = time.monotonic() + timeout
    while True:
        lines, errors = kernel.run(code)
        assert not errors, errors
        if any(expected in line for line in lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.3)


@pytest.fixture
def kernels(monkeypatch, tmp_path):
    monkeypatch.setenv("ELYNAV_STANDIN_HOME", str(tmp_path / "standin-home"))
    started: list[Kernel] = []

    def start() -> Kernel:
        kernel = Kernel()
        started.append(kernel)
        return kernel

    yield start
    for kernel in started:
        kernel.shutdown()


async def test_two_kernels_and_a_terminal_share_one_office(kernels, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    host, other = kernels(), kernels()
    assert "HOST True" in host.run(HOST.format(workspace=str(workspace)))[0]
    assert "ATTACHED True ['elynav-sdr']" in other.run(ATTACH.format(workspace=str(workspace)))[0][0]

    host.run('first = office.submit("sdr", "@standin slow 4\\nfrom kernel A")')
    wait_for(other, 'print("BUSY", office.employee("sdr").busy)', "BUSY True")
    other.run('second = office.submit("sdr", "from kernel B")')
    wait_for(other, 'print("ID", second.id != "")', "ID True")
    socket_path = host.run("print(office.socket_path)")[0][0]
    terminal = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elynav_nb.cli", "ask", "sdr", "from the terminal", "--socket", socket_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={key: value for key, value in os.environ.items() if not key.startswith("ELYNAV_OFFICE_")},
    )  # fmt: skip
    board = wait_for(host, 'print("QUEUE", office.employee("sdr").queue_length)', "QUEUE 2")
    assert "QUEUE 2" in board[0]
    same = wait_for(other, 'print("QUEUE", office.employee("sdr").queue_length)', "QUEUE 2")
    assert "QUEUE 2" in same[0]  # kernel B's board says what kernel A's says

    stdout, stderr = await asyncio.wait_for(terminal.communicate(), 90)
    assert terminal.returncode == 0, stderr
    assert stdout.decode().strip().endswith("You said: from the terminal")
    lines = wait_for(other, 'print("B", second.done and second.reply.outcome)', "B done", timeout=90)
    assert "B done" in lines[0]
    history_code = 'print("ORDER", json.dumps(list(office.history()["prompt"].str.split().str[-1])))'
    order_a = host.run("import json\n" + history_code)[0][0]
    order_b = other.run("import json\n" + history_code)[0][0]
    assert order_a == order_b == 'ORDER ["A", "B", "terminal"]'  # one FIFO, one history


async def test_a_restarted_kernel_and_a_restarted_host_and_what_their_asks_become(kernels, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    host, other = kernels(), kernels()
    host.run(HOST.format(workspace=str(workspace)))
    other.run(ATTACH.format(workspace=str(workspace)))
    host.run('busy = office.submit("sdr", "@standin slow 30\\nlong work")')
    other.run('queued = [office.submit("sdr", f"queued {i}") for i in range(2)]')
    wait_for(host, 'print("QUEUE", office.employee("sdr").queue_length)', "QUEUE 2")

    other.manager.restart_kernel(now=True)  # kernel B restarts: its two queued asks lose their caller
    other.client.wait_for_ready(timeout=60)
    lines = wait_for(host, 'print("QUEUE", office.employee("sdr").queue_length)', "QUEUE 0")
    assert "QUEUE 0" in lines[0]
    outcomes = json.loads(
        host.run('import json\nprint(json.dumps(office.history().set_index("prompt")["outcome"].to_dict()))')[
            0
        ][0]
    )
    assert outcomes["queued 0"] == outcomes["queued 1"] == "cancelled"

    other.run(ATTACH.format(workspace=str(workspace)))  # the restarted kernel attaches again
    other.run('late = office.submit("sdr", "after the restart")')
    wait_for(other, 'print("ID", late.id != "")', "ID True")
    pid_code = (
        'cli = office.employee("sdr").to_row()["cli_pid"]\nprint(f"PID {cli}" if cli else "no CLI yet")'
    )
    cli_pid = int(wait_for(other, pid_code, "PID ")[0].split()[1])
    host.manager.restart_kernel(now=True)  # the host restarts: the office dies with it
    host.client.wait_for_ready(timeout=60)
    lines = wait_for(
        other, 'print("LATE", late.done and late.reply.error_code)', "LATE OFFICE_UNREACHABLE", timeout=60
    )
    assert "LATE OFFICE_UNREACHABLE" in lines[0]
    lines = other.run(
        'await office.stop()\noffice = await Office(".", executable="standin").start()\nprint("HOST", office.attachment is None)'
    )[0]
    assert "HOST True" in lines[-1]  # kernel B now hosts the office of the workspace
    rows, errors = other.run(
        'import json\nh = office.history().set_index("prompt")\n'
        'print(json.dumps(h.loc[["@standin slow 30\\nlong work", "after the restart"], "error_code"].tolist()))'
    )
    assert not errors and rows[0] == '["OFFICE_STOPPED", "OFFICE_STOPPED"]', (rows, errors)
    other.run("await office.stop()")
    assert Path(workspace / ".elynav" / "history.jsonl").exists()
    with contextlib.suppress(ProcessLookupError):
        os.kill(cli_pid, signal.SIGKILL)  # the dead host's CLI would finish its turn, then exit
