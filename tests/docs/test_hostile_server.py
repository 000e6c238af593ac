"""DocsSession.open against a hostile Docs server: each case ends typed, in time, in bounded memory.

Each case of ``hostile_server.CASES`` is served on loopback by this test process while a child Python
(``hostile_probe``) opens the document with ``deadline=2``, so the peak RSS it reports is the
client's alone. Before the deadlines and limits of ``elynav_nb.docs._limits``: a dripping server held
``open`` for ever, a 503 with a long Retry-After took 21.6 s, a claimed 10 GiB body 46.7 s, a
300 MiB body and a 300 MiB collaboration message peaked at 1.2 GB and 640 MB, deep JSON and fields of
the wrong type raised RecursionError and ValueError.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.docs.hostile_server import CASES, HostileDocs

pytestmark = pytest.mark.anyio

REPOSITORY = Path(__file__).resolve().parents[2]
DEADLINE_SECONDS = 2.0
MARGIN_SECONDS = 6.0
"""Generous: the child's own scheduling on a shared machine, and up to 2 s to close a socket."""
MEMORY_BOUND_KIB = 96 * 1024
"""Growth of the child's peak RSS while opening: three times the largest limit (32 MiB of REST body)."""
CHILD_TIMEOUT_SECONDS = 60.0

EXPECTED_CODES: dict[str, set[str]] = {
    "drip-headers": {"DEADLINE_EXCEEDED"},
    "drip-body": {"DEADLINE_EXCEEDED"},
    "retry-after": {"SERVICE_ERROR"},
    "huge-body": {"RESPONSE_TOO_LARGE"},
    "claimed-huge-length": {"RESPONSE_TOO_LARGE"},
    "short-body": {"SERVICE_ERROR"},
    "absurd-length": {"SERVICE_ERROR", "RESPONSE_TOO_LARGE"},
    "deep-json": {"SERVICE_ERROR"},
    "deep-json-config": {"SERVICE_ERROR"},
    "wrong-types": {"DOC_NOT_PUBLIC"},
    "ws-drip-upgrade": {"DEADLINE_EXCEEDED"},
    "ws-invalid-yjs": {"PROTOCOL_ERROR"},
    "ws-frame-claims-more": {"DEADLINE_EXCEEDED"},
    "ws-oversized-frame": {"RESPONSE_TOO_LARGE"},
    "ws-oversized-message": {"RESPONSE_TOO_LARGE"},
    "ws-lying-length": {"PROTOCOL_ERROR"},
}


def test_every_hostile_case_has_an_expected_ending() -> None:
    assert set(EXPECTED_CODES) == set(CASES)


async def run_probe(server: HostileDocs) -> dict[str, Any]:
    arguments = [server.link, str(DEADLINE_SECONDS)]
    if server.behaviour.anonymous:
        arguments.append("anonymous")
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.docs.hostile_probe",
        *arguments,
        cwd=REPOSITORY,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        output, errors = await asyncio.wait_for(child.communicate(), CHILD_TIMEOUT_SECONDS)
    except TimeoutError:
        child.kill()
        await child.wait()
        pytest.fail(f"the client never ended against {server.case!r} ({CHILD_TIMEOUT_SECONDS:g} s)")
    assert child.returncode == 0, errors.decode(errors="replace")[-2000:]
    report: dict[str, Any] = json.loads(output.decode().strip().splitlines()[-1])
    return report


@pytest.mark.parametrize("case", sorted(CASES))
async def test_a_hostile_server_ends_the_opening_typed_in_time_and_bounded_memory(case: str) -> None:
    async with HostileDocs(case) as server:
        report = await run_probe(server)
    assert report["outcome"] == "typed", report
    assert report["code"] in EXPECTED_CODES[case], report
    assert report["elapsed_seconds"] <= DEADLINE_SECONDS + MARGIN_SECONDS, report
    growth_kib = report["peak_rss_after_kib"] - report["peak_rss_before_kib"]
    assert growth_kib <= MEMORY_BOUND_KIB, report
    assert "hostile-probe-session" not in json.dumps(report)  # the cookie never shows


async def test_limit_errors_name_the_limit_and_the_setting() -> None:
    async with HostileDocs("huge-body") as server:
        rest_report = await run_probe(server)
    async with HostileDocs("ws-oversized-message") as server:
        websocket_report = await run_probe(server)
    assert rest_report["details"]["setting"] == "max_response_bytes"
    assert rest_report["details"]["limit_bytes"] == 32 * 1024 * 1024
    assert websocket_report["details"]["setting"] == "max_message_bytes"
    assert websocket_report["details"]["limit_bytes"] == 24 * 1024 * 1024
    assert str(32 * 1024 * 1024) in rest_report["message"]


async def test_the_deadline_error_names_the_step_in_progress() -> None:
    async with HostileDocs("drip-body") as server:
        report = await run_probe(server)
    assert report["code"] == "DEADLINE_EXCEEDED"
    assert report["details"] == {
        "deadline_seconds": DEADLINE_SECONDS,
        "step": "load the saved content over REST",
    }
