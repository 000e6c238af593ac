"""Code run in child processes by the crash and concurrency tests (importable, so spawn can find it)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from elynav_nb.errors import VersionConflict
from elynav_nb.templates.service import TemplateService


def update_with_retries(home: str, template_id: str, label: str, count: int) -> dict[str, int]:
    """Append ``count`` lines ``<label>-<i>`` to the template, each with expected_version, retrying on conflict."""
    service = TemplateService.open(home)
    conflicts = 0
    for number in range(count):
        while True:
            current = service.read(template_id)
            new_content = current.content_md + f"{label}-{number}\n"
            try:
                service.update(template_id, content=new_content, expected_version=current.version)
                break
            except VersionConflict:
                conflicts += 1
    return {"conflicts": conflicts}


def _install_crash_on_replace(crash_at_call: int) -> None:
    """SIGKILL this process just before its ``crash_at_call``-th ``os.replace`` (temp written, not renamed)."""
    real_replace = os.replace
    calls = {"count": 0}

    def replace_then_maybe_die(source: Any, target: Any) -> None:
        calls["count"] += 1
        if calls["count"] == crash_at_call:
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(source, target)

    os.replace = replace_then_maybe_die  # type: ignore[assignment]


def crash_main() -> None:
    """``python -m tests.templates.workers HOME CRASH_AT OPERATION TEMPLATE_ID``."""
    home, crash_at, operation, template_id = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    service = TemplateService.open(home)
    _install_crash_on_replace(crash_at)
    if operation == "update":
        service.update(template_id, content="new content\n", name="New name")
    elif operation == "create":
        service.create("Created", "created content\n")
    elif operation == "delete":
        service.delete(template_id)
    print("finished")


if __name__ == "__main__":
    crash_main()
