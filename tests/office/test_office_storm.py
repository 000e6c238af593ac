"""A storm of asks and random cancels (user, senders, third parties): nothing pending, stale or running after."""

from __future__ import annotations

import asyncio
import random

import psutil
import pytest

from elynav_nb.errors import Deadlock, NotAllowed
from elynav_nb.office import USER

from .conftest import worker
from .helpers import tool_processes

pytestmark = pytest.mark.anyio

NAMES = ["w-a", "w-b", "w-c", "w-d"]


@pytest.mark.parametrize("seed", [2026, 7])
async def test_random_cancels_leave_no_pending_ask_no_busy_flag_and_no_process(make_office, seed):
    rng = random.Random(seed)
    office = await make_office([worker(name) for name in NAMES])
    asks = []
    counts = {"allowed": 0, "refused": 0, "deadlock": 0, "from_cancelling": 0}
    for step in range(240):
        if rng.random() < 0.5 or not asks:
            to, sender = rng.choice(NAMES), rng.choice([USER, *NAMES])
            delay = rng.choice([0, 0.05, 0.3])
            try:
                asks.append(office.submit(to, f"@standin slow {delay}\nstorm {step}", sender=sender))
            except Deadlock:  # an agent asking itself, or a cycle through running asks
                counts["deadlock"] += 1
            except NotAllowed:  # the sender's running ask is being cancelled: its turn asks no one
                counts["from_cancelling"] += 1
        else:
            ask, caller = rng.choice(asks), rng.choice([USER, *NAMES])
            before = (ask.status, ask.cancelling, ask.cancelled_by)
            try:
                office.cancel(ask.id, by=caller)
                counts["allowed"] += 1
            except NotAllowed:
                counts["refused"] += 1
                assert (ask.status, ask.cancelling, ask.cancelled_by) == before  # a refusal changes nothing
                assert caller not in (USER, ask.sender)
        await asyncio.sleep(rng.choice([0, 0, 0.005, 0.03]))

    replies = await asyncio.wait_for(asyncio.gather(*asks), timeout=90)
    assert all(ask.settled().done() for ask in asks) and office.asks == []
    outcomes = {reply.outcome for reply in replies}
    assert {"done", "cancelled"} <= outcomes <= {"done", "cancelled"}
    assert counts["allowed"] > 10 and counts["refused"] > 10 and counts["deadlock"] > 0, counts
    for employee in office.employees.values():
        assert employee.status == "idle" and not employee.queue and not employee.runner.busy
    history = office.history()
    assert len(history) == len(asks) and history["outcome"].notna().all()
    assert await _no_tool_process_left(office)
    cli_pids = [employee.runner.pid for employee in office.employees.values() if employee.runner.is_running]
    await office.stop()
    assert not [
        pid for pid in cli_pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"
    ]


async def _no_tool_process_left(office) -> bool:
    for _ in range(100):
        if tool_processes(office) == []:
            return True
        await asyncio.sleep(0.05)
    return False
