"""A kill -9 in the middle of a write, and two processes updating at once: consistent store, nothing lost."""

from __future__ import annotations

import multiprocessing
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from elynav_nb.templates.service import TemplateService

from .workers import update_with_retries

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


def _run_crashing_writer(
    home: Path, crash_at: int, operation: str, template_id: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.templates.workers", str(home), str(crash_at), operation, template_id],
        cwd=REPOSITORY_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _state(service: TemplateService) -> dict[str, tuple[str, str, int]]:
    return {
        template.id: (template.name, template.content_md, template.version)
        for template in service.list_templates()
    }


def _leftovers(home: Path) -> list[str]:
    names: list[str] = []
    for path in (home / "templates").rglob("*"):
        if path.name.endswith((".tmp", ".next", ".deleting")):
            names.append(path.name)
    return names


@pytest.mark.parametrize("operation", ["update", "create", "delete"])
@pytest.mark.parametrize("crash_at", [1, 2, 3, 4])
def test_kill_9_at_any_rename_leaves_a_consistent_store(home: Path, operation: str, crash_at: int) -> None:
    service = TemplateService.open(home)
    template = service.create("Old name", "old content\n")
    keeper = service.create("Keeper", "keep me\n")
    old_state = _state(service)

    completed = _run_crashing_writer(home, crash_at, operation, template.id)
    finished = completed.returncode == 0
    if not finished:
        assert completed.returncode == -signal.SIGKILL, completed.stderr

    # 1. a reader, before any writer has cleaned up, sees either the old state or the new one, whole
    state_seen_by_reader = _state(TemplateService.open(home))
    # the second os.replace of every write is the index: the commit point
    committed = crash_at > 2 or finished
    if operation == "update":
        new_state = {**old_state, template.id: ("New name", "new content\n", 2)}
    elif operation == "delete":
        new_state = {key: value for key, value in old_state.items() if key != template.id}
    else:
        new_state = {**old_state, "created-3": ("Created", "created content\n", 1)}
    assert state_seen_by_reader == (new_state if committed else old_state)

    # 2. the next writer finishes or undoes the dead one's work, and nothing is lost
    writer = TemplateService.open(home)
    writer.update(keeper.id, content="keep me too\n")
    assert _leftovers(home) == []
    expected_after = {**state_seen_by_reader, keeper.id: ("Keeper", "keep me too\n", 2)}
    assert _state(writer) == expected_after
    md_files = sorted(path.name for path in (home / "templates" / "md").iterdir())
    assert md_files == sorted(f"{template_id}.md" for template_id in expected_after)


@pytest.mark.slow
def test_two_processes_updating_at_once_lose_nothing(home: Path) -> None:
    service = TemplateService.open(home)
    template = service.create("Shared", "")
    updates_per_process = 40
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        pending = [
            pool.apply_async(update_with_retries, (str(home), template.id, label, updates_per_process))
            for label in ("first", "second")
        ]
        reports = [result.get(timeout=120) for result in pending]
    final = service.read(template.id)
    lines = final.content_md.splitlines()
    assert final.version == 1 + 2 * updates_per_process
    assert len(lines) == 2 * updates_per_process
    for label in ("first", "second"):
        own_lines = [line for line in lines if line.startswith(label)]
        # each process's updates are all there, in its own order
        assert own_lines == [f"{label}-{number}" for number in range(updates_per_process)]
    assert all(report["conflicts"] >= 0 for report in reports)
    assert _leftovers(home) == []
