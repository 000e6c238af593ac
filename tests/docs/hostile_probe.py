"""The client side of the hostile-server tests, run in a child Python so its peak memory is its own.

Where it sits: ``test_hostile_server.py`` starts ``HostileDocs`` in the test process and runs
``python -m tests.docs.hostile_probe <link> <deadline> [anonymous]`` against it. The child opens the
document with ``DocsSession.open(link, deadline=...)`` and prints one JSON line: how the opening
ended (``outcome``: ``opened``, ``typed`` with the error ``code``, or ``untyped`` with the exception
type), the seconds it took, and its peak RSS before and after (``resource.getrusage``, KiB).
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from typing import Any

from elynav_nb.docs.credentials import DocsCredentials
from elynav_nb.docs.session import DocsSession
from elynav_nb.errors import ElynavError


def peak_rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def probe(link: str, deadline: float, anonymous: bool) -> dict[str, Any]:
    instance = link.split("/docs/", 1)[0]
    if anonymous:
        credentials = DocsCredentials.anonymous(instance=instance)
    else:
        credentials = DocsCredentials("hostile-probe-session", "hostile-probe-csrf", instance=instance)
    report: dict[str, Any] = {"peak_rss_before_kib": peak_rss_kib()}
    started = time.monotonic()
    try:
        session = await DocsSession.open(link, credentials, deadline=deadline)
    except ElynavError as error:
        report.update(outcome="typed", code=error.code, message=error.message, details=error.details)
    except BaseException as error:  # noqa: BLE001 - what the test must see is exactly this
        report.update(outcome="untyped", code=None, message=f"{type(error).__name__}: {error}"[:300])
    else:
        report.update(outcome="opened", code=None, message="")
        await session.close(raise_save_error=False)
    report["elapsed_seconds"] = time.monotonic() - started
    report["peak_rss_after_kib"] = peak_rss_kib()
    return report


def main() -> None:
    link, deadline = sys.argv[1], float(sys.argv[2])
    anonymous = len(sys.argv) > 3 and sys.argv[3] == "anonymous"
    report = asyncio.run(probe(link, deadline, anonymous))
    print(json.dumps(report, default=str), flush=True)


if __name__ == "__main__":
    main()
