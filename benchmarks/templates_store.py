"""Benchmark of the template store: list/read at 10,000 templates, and two processes updating at once.

Run: ``python benchmarks/templates_store.py [--templates 10000] [--updates 500]``. It works in a
temporary folder and prints two tables.

Peers: a *naive* store with the same files but no lock, no hash check and no fsync (what a
quick implementation would do), and, for updates, the same naive store doing read-modify-write
without a lock or ``expected_version``: that is where lost updates come from. Ratios are ours
divided by the naive peer's time.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from elynav_nb.errors import VersionConflict
from elynav_nb.templates.domain import AgentTemplate
from elynav_nb.templates.index_format import IndexEntry, StoreIndex, encode_index
from elynav_nb.templates.service import TemplateService


def build_store(home: Path, count: int) -> list[str]:
    """Write ``count`` templates straight in the store's format (creating them one by one is O(n^2))."""
    md_folder = home / "templates" / "md"
    md_folder.mkdir(parents=True)
    entries: list[IndexEntry] = []
    for number in range(1, count + 1):
        content = f"# Template {number}\n\nYou are agent number {number}. " + "Be precise. " * 40 + "\n"
        template = AgentTemplate.new(f"template-{number}", f"Template {number}", content, "claude-sonnet")
        (md_folder / f"{template.id}.md").write_text(content, encoding="utf-8")
        entries.append(IndexEntry.for_template(template))
    (home / "templates" / "index.json").write_bytes(encode_index(StoreIndex(count + 1, tuple(entries))))
    return [entry.id for entry in entries]


def naive_list(home: Path) -> list[dict[str, object]]:
    index = json.loads((home / "templates" / "index.json").read_text(encoding="utf-8"))
    templates: list[dict[str, object]] = []
    for entry in index["templates"]:
        content = (home / "templates" / "md" / f"{entry['id']}.md").read_text(encoding="utf-8")
        templates.append({**entry, "contentMd": content})
    return templates


def naive_read(home: Path, template_id: str) -> dict[str, object]:
    index = json.loads((home / "templates" / "index.json").read_text(encoding="utf-8"))
    for entry in index["templates"]:
        if entry["id"] == template_id:
            content = (home / "templates" / "md" / f"{template_id}.md").read_text(encoding="utf-8")
            return {**entry, "contentMd": content}
    raise KeyError(template_id)


def best_time(action: Callable[[], object], repeats: int) -> float:
    timings: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return min(timings)


# --- concurrent updates -------------------------------------------------------------------------


def locked_updater(home: str, template_id: str, label: str, count: int) -> tuple[int, float]:
    service = TemplateService.open(home)
    conflicts = 0
    started = time.perf_counter()
    for number in range(count):
        while True:
            current = service.read(template_id)
            try:
                service.update(
                    template_id,
                    content=current.content_md + f"{label}-{number}\n",
                    expected_version=current.version,
                )
                break
            except VersionConflict:
                conflicts += 1
    return conflicts, time.perf_counter() - started


def naive_updater(home: str, template_id: str, label: str, count: int) -> tuple[int, float]:
    """Read-modify-write without lock or version check (rename keeps files whole, updates still get lost)."""
    content_path = Path(home) / "templates" / "md" / f"{template_id}.md"
    started = time.perf_counter()
    for number in range(count):
        content = content_path.read_text(encoding="utf-8")
        temp_path = content_path.with_name(f".{label}.tmp")
        temp_path.write_text(content + f"{label}-{number}\n", encoding="utf-8")
        os.replace(temp_path, content_path)
    return 0, time.perf_counter() - started


def run_two_processes(
    updater: Callable[[str, str, str, int], tuple[int, float]], home: Path, template_id: str, count: int
) -> tuple[int, float]:
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        pending = [pool.apply_async(updater, (str(home), template_id, label, count)) for label in ("a", "b")]
        results = [result.get(timeout=600) for result in pending]
    conflicts = sum(result[0] for result in results)
    slowest = max(result[1] for result in results)
    return conflicts, slowest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--templates", type=int, default=10_000)
    parser.add_argument("--updates", type=int, default=500)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder) / "home"
        started = time.perf_counter()
        ids = build_store(home, options.templates)
        print(f"built a store of {options.templates} templates in {time.perf_counter() - started:.1f} s\n")
        service = TemplateService.open(home)
        sample_ids = random.Random(7).sample(ids, 100)

        rows: list[tuple[str, float, float]] = []
        rows.append(
            (
                "list (all, with content)",
                best_time(service.list_templates, 3),
                best_time(lambda: naive_list(home), 3),
            )
        )
        cold_service = TemplateService.open(home)
        cold_read = best_time(lambda: cold_service.read(ids[-1]), 1)
        rows.append(
            ("read 1, first call (decode index)", cold_read, best_time(lambda: naive_read(home, ids[-1]), 1))
        )

        def read_sample() -> None:
            for template_id in sample_ids:
                service.read(template_id)

        def naive_read_sample() -> None:
            for template_id in sample_ids:
                naive_read(home, template_id)

        rows.append(("read 100 (index cached)", best_time(read_sample, 3), best_time(naive_read_sample, 3)))
        update_timings: list[float] = []
        for number in range(5):
            started = time.perf_counter()
            service.update(sample_ids[number], content=f"changed {number}\n")
            update_timings.append(time.perf_counter() - started)
        rows.append(("update 1 (rewrites the index, fsync)", statistics.median(update_timings), float("nan")))

        print(f"Store with {options.templates} templates (best of 3; ratio = ours / naive)")
        print(f"{'operation':<40} {'ours (ms)':>10} {'naive (ms)':>11} {'ratio':>7}")
        for label, ours, naive in rows:
            ratio = float("nan") if math.isnan(naive) or naive <= 0 else ours / naive
            print(f"{label:<40} {ours * 1000:>10.1f} {naive * 1000:>11.1f} {ratio:>7.2f}")

    print()
    print(f"Two processes x {options.updates} updates of one template")
    print(f"{'store':<36} {'updates':>8} {'kept':>6} {'lost':>6} {'conflicts':>10} {'wall (s)':>9}")
    for label, updater in (
        ("ours (lock + expected_version)", locked_updater),
        ("naive (no lock, no version)", naive_updater),
    ):
        with tempfile.TemporaryDirectory() as folder:
            home = Path(folder) / "home"
            shared = TemplateService.open(home).create("Shared", "")
            conflicts, wall = run_two_processes(updater, home, shared.id, options.updates)
            final_content = (home / "templates" / "md" / f"{shared.id}.md").read_text(encoding="utf-8")
            kept = len(final_content.splitlines())
            attempted = 2 * options.updates
            print(f"{label:<36} {attempted:>8} {kept:>6} {attempted - kept:>6} {conflicts:>10} {wall:>9.2f}")


if __name__ == "__main__":
    main()
