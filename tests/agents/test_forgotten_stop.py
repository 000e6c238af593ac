"""A script that forgets ``await runner.stop()``: the CLI is stopped as ``asyncio.run`` ends, without noise.

Before, the CLI lived on until the interpreter's exit (the reaper ended it then) and its subprocess
transport was closed by the garbage collector on a closed loop: "Event loop is closed" on stderr, or
not, depending on the collection order. Now the runner stops its CLI while ``asyncio.run`` ends.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    import psutil
    from elynav_nb.agents import AgentRunner, install_agents

    runners = []

    async def main():
        install_agents(sys.argv[1])
        runner = await AgentRunner("elynav-sdr", sys.argv[1], executable="standin").start()
        runners.append(runner)
        print((await runner.send("Bonjour")).outcome, flush=True)   # and no runner.stop()

    asyncio.run(main())
    pid = runners[0].pid
    alive = psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    print(runners[0].status, "alive" if alive else "gone", flush=True)
    """
)


def test_a_forgotten_stop_ends_the_cli_when_asyncio_run_ends_quietly(tmp_path: Path) -> None:
    script = tmp_path / "forgot_to_stop.py"
    script.write_text(SCRIPT, encoding="utf-8")
    finished = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "workspace")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.split() == ["completed", "closed", "gone"]
    assert finished.stderr.strip() == "", finished.stderr  # no "Event loop is closed", no traceback
